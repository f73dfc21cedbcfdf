"""The openai SDK is imported when a model client is made, not when the packages are: an offline run's processes
(the run itself, the dashboard-drawing process) and a Gymnasium user's `import environments` never pay for it."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["llm", "cua", "dashboard_render", "environments"])
def test_importing_a_package_does_not_import_the_openai_sdk(package):
    done = subprocess.run([sys.executable, "-c", f"import sys, {package}; print('openai' in sys.modules)"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_an_attempts_error_is_classified_once_the_sdk_is_in_use():
    import httpx
    import openai

    from llm._retry import classify

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    refused = openai.APIStatusError("slow down", response=httpx.Response(429, request=request), body=None)
    assert classify(refused).retryable and classify(refused).status == 429
    assert classify(openai.APIConnectionError(request=request)).retryable
    assert classify(ValueError("not a call failure")) is None
