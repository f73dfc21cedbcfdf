"""Exceptions with keyword-only fields pickle with them (`llm.PicklesKeywordFields`): a stage's error
crosses process boundaries (Dask workers) and persisted failures are read back later."""

from __future__ import annotations

import pickle

from llm import ModelCallError, PicklesKeywordFields


class _QuotaError(ModelCallError):
    def __init__(self, message: str, *, model: str, endpoint: str, quota: int) -> None:
        super().__init__(message, model=model, endpoint=endpoint, retryable=True)
        self.quota = quota


class _Refused(PicklesKeywordFields, ValueError):
    def __init__(self, message: str, code: int, *, reason: str = "") -> None:
        super().__init__(message, code)
        self.reason = reason


def test_a_subclass_pickles_the_fields_it_adds_without_code_of_its_own():
    error = _QuotaError("over", model="m", endpoint="http://e", quota=7)
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.args, copy.model, copy.endpoint, copy.quota, copy.retryable) == (
        _QuotaError, ("over",), "m", "http://e", 7, True)


def test_a_mixed_in_exception_outside_llm_keeps_its_fields_and_positional_args():
    copy = pickle.loads(pickle.dumps(_Refused("no", 3, reason="policy")))
    assert (type(copy), copy.args, copy.reason, isinstance(copy, ValueError)) == (_Refused, ("no", 3), "policy", True)


def test_pickles_written_under_either_name_of_the_rebuilding_function_still_load():
    # Persisted failures name the function by module and name; both names it ever had must resolve.
    data = pickle.dumps(ModelCallError("gone", model="m", endpoint="e", status=503, attempts=3, retryable=True), 0)
    assert b"llm._results\nrebuild_exception\n" in data
    for written in (data, data.replace(b"\nrebuild_exception\n", b"\n_rebuild_error\n")):
        copy = pickle.loads(written)
        assert (copy.args, copy.status, copy.attempts, copy.retryable) == (("gone",), 503, 3, True)
