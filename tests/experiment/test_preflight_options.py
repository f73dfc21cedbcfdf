"""`cua_options` are checked before a run starts: each names a policy of the run, and the policy accepts it."""

from __future__ import annotations

import pickle

import pytest

from experiment import ConfigError, check_config, make_config


@pytest.mark.parametrize(("policies", "options", "expected"), [
    (["uitars"], {"uitars": {"prompt": "nope"}}, "cua_options.uitars': unknown UI-TARS prompt 'nope'"),
    (["uitars"], {"uitars": {"history_images": 0}}, "history_images must be at least 1"),
    (["heuristic"], {"heuristic": {"speed": 2}}, "cua_options.heuristic'"),
    (["heuristic"], {"uitars": {"prompt": "compact"}}, "not among cua_policies"),
])
def test_bad_cua_options_fail_before_the_run_naming_the_field(policies, options, expected):
    config = make_config({"cua_policies": policies, "cua_options": options})
    with pytest.raises(ConfigError, match=expected.replace("(", r"\(")):
        check_config(config, probe_endpoints=False)


def test_good_cua_options_pass():
    config = make_config({"cua_policies": ["uitars"], "cua_options": {"uitars": {"prompt": "compact", "history_images": 3}}})
    assert check_config(config, probe_endpoints=False)


def test_a_config_error_keeps_the_field_at_fault_through_a_pickle():
    # the pre-flight blames the flag that set `field`; a sweep's error may cross a process boundary
    copy = pickle.loads(pickle.dumps(ConfigError("unknown model 'gpt-9'", field="coders")))
    assert (str(copy), copy.field) == ("field 'coders': unknown model 'gpt-9'", "coders")
    assert str(ConfigError("config file not found: x.yaml")) == "config file not found: x.yaml"
