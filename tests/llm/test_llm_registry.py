"""The model registry: YAML loading, lazy ${ENV}, roles, and clear errors."""

from __future__ import annotations

import textwrap

import pytest

from llm import (
    DEFAULT_MODELS_PATH,
    ROLES,
    MissingEnvironmentVariableError,
    ModelClient,
    ModelConfigError,
    Registry,
    UnknownModelError,
    UnknownNameError,
    load_model_registry,
    user_message,
)
from llm.testing import ScriptedOpenAIServer, reply_text

ENV_VARS = [
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_DEPLOYMENT",
    "UITARS_BASE_URL",
    "QWEN_CODER_BASE_URL",
    "VLLM_API_KEY",
]


@pytest.fixture
def no_env(monkeypatch):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def write(tmp_path, text: str):
    path = tmp_path / "models.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_committed_config_loads_without_any_environment_variables(no_env):
    registry = load_model_registry(DEFAULT_MODELS_PATH)
    providers = {config.provider for config in registry.models.values()}
    assert providers == {"openai", "azure", "openai-compatible", "offline"}
    assert set(ROLES) <= set(registry.roles)
    assert registry.get("uitars-1.5-7b").endpoint() == "http://localhost:8002/v1"
    assert registry.get("qwen3-coder-30b").endpoint() == "http://localhost:8001/v1"
    assert registry.is_offline("offline") and not registry.is_offline("coder")


def test_missing_environment_variable_fails_only_when_the_model_is_used(no_env, monkeypatch):
    registry = load_model_registry(DEFAULT_MODELS_PATH)
    azure = registry.get("azure-gpt-5")
    with pytest.raises(MissingEnvironmentVariableError) as caught:
        azure.endpoint()
    message = str(caught.value)
    assert "azure-gpt-5" in message and "base_url" in message and "AZURE_OPENAI_ENDPOINT" in message

    with pytest.raises(MissingEnvironmentVariableError) as caught:
        registry.get("gpt-5").resolved("api_key")
    assert caught.value.variable == "OPENAI_API_KEY" and caught.value.field == "api_key"

    monkeypatch.setenv("UITARS_BASE_URL", "http://gpu-box:9000/v1")
    assert registry.get("cua").endpoint() == "http://gpu-box:9000/v1"


async def test_client_raises_the_env_error_before_sending_anything(tmp_path, monkeypatch, cache_dir):
    monkeypatch.delenv("AUI_TEST_MISSING_KEY", raising=False)
    with ScriptedOpenAIServer([reply_text("never sent")]) as server:
        path = write(
            tmp_path,
            f"""
            roles: {{coder: needs-key}}
            models:
              - name: needs-key
                provider: openai
                model: gpt-5
                base_url: {server.base_url}
                api_key: ${{AUI_TEST_MISSING_KEY}}
            """,
        )
        client = ModelClient(path, cache=cache_dir)  # loading and constructing must not fail
        with pytest.raises(MissingEnvironmentVariableError, match="needs-key.*api_key.*AUI_TEST_MISSING_KEY"):
            await client.chat([user_message("hi")], role="coder")
        assert server.requests == []


def test_env_default_syntax_is_used_when_the_variable_is_unset(tmp_path, monkeypatch):
    monkeypatch.delenv("AUI_TEST_URL", raising=False)
    path = write(
        tmp_path,
        """
        models:
          - {name: local, provider: openai-compatible, model: m, base_url: "${AUI_TEST_URL:-http://localhost:9/v1}"}
        """,
    )
    registry = load_model_registry(path)
    assert registry.get("local").endpoint() == "http://localhost:9/v1"
    monkeypatch.setenv("AUI_TEST_URL", "http://elsewhere/v1")
    assert registry.get("local").endpoint() == "http://elsewhere/v1"


def test_unknown_model_or_role_lists_the_known_names(no_env):
    registry = load_model_registry(DEFAULT_MODELS_PATH)
    with pytest.raises(UnknownModelError) as caught:
        registry.get("gpt-6")
    message = str(caught.value)
    assert "'gpt-6'" in message and "gpt-5" in message and "uitars-1.5-7b" in message and "coder (role)" in message
    assert isinstance(caught.value, LookupError) and isinstance(caught.value, ModelConfigError)


def test_with_roles_overrides_for_one_run_and_leaves_the_original_alone(no_env):
    registry = load_model_registry(DEFAULT_MODELS_PATH)
    offline_coder = registry.with_roles({"coder": "offline", "proposer": "cua"})
    assert offline_coder.is_offline("coder")
    assert offline_coder.model_name("proposer") == "uitars-1.5-7b"
    assert registry.model_name("coder") == "gpt-5"
    with pytest.raises(UnknownModelError, match="nope"):
        registry.with_roles({"coder": "nope"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("models: [\n  - name: x\n    provider: openai\n  bad indent", "not valid YAML"),
        ("models:\n  - name: x\n    model: m\n", r"models\[0\] \(x\): field 'provider': Field required"),
        ("models:\n  - {name: x, provider: openai, model: m, temprature: 1}\n", "field 'temprature'"),
        ("models:\n  - {name: az, provider: azure, model: m, base_url: http://a}\n", "'api_version', 'deployment'"),
        ("models:\n  - {name: v, provider: openai-compatible, model: m}\n", "needs 'base_url'"),
        ("models:\n  - {name: x, provider: offline}\n  - {name: x, provider: offline}\n", "defined twice"),
        ("roles: {coder: ghost}\nmodels:\n  - {name: x, provider: offline}\n", "'ghost'"),
        ("roles: {x: x}\nmodels:\n  - {name: x, provider: offline}\n", "same name as a model"),
        ("modles: []\n", "unknown top-level key"),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_malformed_config_errors_name_the_file_and_the_field(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(ModelConfigError, match=expected) as caught:
        load_model_registry(path)
    assert str(path) in str(caught.value)


def test_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ModelConfigError, match="cannot read model config"):
        load_model_registry(tmp_path / "absent.yaml")


def test_params_pass_through_unknown_keys_and_only_set_values(tmp_path):
    path = write(
        tmp_path,
        """
        models:
          - name: local
            provider: openai-compatible
            model: m
            base_url: http://localhost:1/v1
            params: {temperature: 0.2, top_k: 20}
        """,
    )
    assert load_model_registry(path).get("local").params.to_request() == {"temperature": 0.2, "top_k": 20}


def test_api_key_is_hidden_in_reprs(tmp_path):
    path = write(tmp_path, "models:\n  - {name: x, provider: openai, model: m, api_key: sk-literal-SECRET}\n")
    config = load_model_registry(path).get("x")
    assert "SECRET" not in repr(config) and "SECRET" not in str(config.model_dump())


def test_generic_registry_registers_by_decorator_and_lists_known_names_on_error():
    policies: Registry[type] = Registry("policy")

    @policies.register("heuristic")
    class Heuristic:
        pass

    policies.register_lazy("json-dumps", "json:dumps")
    assert policies.get("heuristic") is Heuristic
    assert policies.get("json-dumps").__name__ == "dumps"
    assert "heuristic" in policies and policies.names() == ["heuristic", "json-dumps"]
    with pytest.raises(UnknownNameError) as caught:
        policies.get("uitars")
    assert str(caught.value) == "unknown policy 'uitars'; known policy names: 'heuristic', 'json-dumps'"
    with pytest.raises(ValueError, match="already registered"):
        policies.add("heuristic", object)
    policies.add("heuristic", int, replace=True)
    assert policies.get("heuristic") is int
