"""Model entries as written in `configs/models.yaml`, with lazy `${ENV}` interpolation."""

from __future__ import annotations

import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

Provider = Literal["openai", "azure", "openai-compatible", "offline"]

ROLES: tuple[str, ...] = ("coder", "proposer", "verifier", "commenter", "cua", "judge", "translator", "detector")
"""The roles the design loop asks models to play (design.md §2), the judge of trajectories (`verifier/judge/`),
the translator of the `german` variation and the GUI defect detector (`commenter/detector/`)."""

# ${VAR} or ${VAR:-default}; the default may be empty.
_ENV_PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ModelConfigError(ValueError):
    """The model configuration is unusable: bad YAML, a missing field, an unknown name or role,
    or an environment variable a model needs is not set. The message names the file/model/field."""


class MissingEnvironmentVariableError(ModelConfigError):
    """A `${VAR}` in a model entry refers to a variable that is not set, found when the model is used."""

    def __init__(self, model: str, field: str, variable: str) -> None:
        self.model = model
        self.field = field
        self.variable = variable
        super().__init__(
            f"model {model!r} field {field!r} needs environment variable {variable}, which is not set; "
            f"export {variable}=... or choose another model for this role"
        )


def interpolate(value: str, *, model: str, field: str) -> str:
    """`value` with every `${VAR}` / `${VAR:-default}` replaced from the environment.

    Raises:
        MissingEnvironmentVariableError: a variable without a default is not set.
    """

    def substitute(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        found = os.environ.get(variable)
        if found:  # set and not empty
            return found
        if default is not None:
            return default
        raise MissingEnvironmentVariableError(model, field, variable)

    return _ENV_PATTERN.sub(substitute, value)


class ModelParams(BaseModel):
    """Request parameters sent with every call to a model; only the ones set are sent.

    Anything not listed here (e.g. vLLM's `top_k`, `repetition_penalty`) is passed through as is.
    """

    model_config = ConfigDict(extra="allow")

    temperature: float | None = None
    """Sampling temperature. Reasoning models (gpt-5) reject anything but the default."""
    top_p: float | None = None
    """Nucleus sampling mass."""
    max_tokens: int | None = None
    """Completion token cap (vLLM, older OpenAI chat models)."""
    max_completion_tokens: int | None = None
    """Completion token cap for OpenAI reasoning models, which reject `max_tokens`."""
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    """Reasoning effort for OpenAI reasoning models."""
    verbosity: Literal["low", "medium", "high"] | None = None
    """Answer verbosity for gpt-5 family models."""
    seed: int | None = None
    """Sampling seed, where the server honours it."""

    def to_request(self) -> dict[str, Any]:
        """The parameters that are set, as request-body keys."""
        return self.model_dump(exclude_none=True)


class Prices(BaseModel):
    """What a model costs, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input_usd_per_1m: float = Field(ge=0)
    """Price of one million prompt tokens."""
    output_usd_per_1m: float = Field(ge=0)
    """Price of one million completion tokens (reasoning tokens included)."""
    cached_input_usd_per_1m: float | None = Field(default=None, ge=0)
    """Price of one million prompt tokens served from the provider's prompt cache; defaults to the input price."""

    def cost_usd(self, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0) -> float:
        """The cost of one call with these token counts."""
        cached = min(cached_prompt_tokens, prompt_tokens)
        cached_price = self.input_usd_per_1m if self.cached_input_usd_per_1m is None else self.cached_input_usd_per_1m
        return (
            (prompt_tokens - cached) * self.input_usd_per_1m
            + cached * cached_price
            + completion_tokens * self.output_usd_per_1m
        ) / 1_000_000


class ModelConfig(BaseModel):
    """One entry of `models:` in `configs/models.yaml`.

    String fields may contain `${VAR}` or `${VAR:-default}`. They are kept as written and only
    resolved by `resolved()` when a client for this model is created, so a file mentioning a key
    you do not have still loads.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
    """The name configs and roles refer to, e.g. `gpt-5` or `uitars-1.5-7b`."""
    provider: Provider
    """`openai`, `azure`, `openai-compatible` (vLLM, SGLang, ...) or `offline` (no endpoint)."""
    model: str = ""
    """The model id the endpoint expects, e.g. `gpt-5` or `ByteDance-Seed/UI-TARS-1.5-7B`."""
    base_url: str | None = None
    """API base URL. openai: optional (SDK default); openai-compatible: required, e.g.
    `http://localhost:8002/v1`; azure: the resource endpoint `https://NAME.openai.azure.com`."""
    api_key: SecretStr | None = None
    """API key, normally `${SOME_ENV_VAR}`. Required for openai/azure; `EMPTY` is sent to
    openai-compatible servers when unset. Never logged, never part of a cache key."""
    api_version: str | None = None
    """Azure only: the API version, e.g. `2025-04-01-preview`."""
    deployment: str | None = None
    """Azure only: the deployment name requests are routed to."""
    params: ModelParams = Field(default_factory=ModelParams)
    """Request parameters sent with every call; per-call keyword arguments override them."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Time limit of one HTTP attempt, in seconds."""
    max_retries: int = Field(default=3, ge=0, le=20)
    """Retries after the first attempt on 429, 5xx, timeouts and connection errors."""
    prices: Prices | None = None
    """Token prices; without them the model's calls are counted as unpriced (cost 0)."""
    max_reply_bytes: int | None = Field(default=None, gt=0)
    """Largest reply body accepted from this model, in bytes, whatever role it plays; a larger
    one fails the call (`ReplyTooLargeError`, not retried). Unset: the role's cap (`reply_caps:`
    in the registry, else `llm.DEFAULT_REPLY_CAPS`). A call's `max_reply_bytes=` overrides it."""
    max_concurrency: int | None = Field(default=None, ge=1, le=10_000)
    """Requests to this model's endpoint in flight at once, across every role, client and event loop
    of the process (and across processes when the flows use Prefect global concurrency limits);
    further calls wait for a slot. Unset: no limit."""
    description: str = ""
    """Free text for people reading the config."""

    @field_validator("api_key", mode="before")
    @classmethod
    def _key_as_text(cls, value: Any) -> Any:
        # YAML turns an unquoted numeric-looking key into an int; keep it as text.
        return str(value) if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _check_provider_fields(self) -> ModelConfig:
        if self.provider != "offline" and not self.model:
            raise ValueError(f"provider {self.provider!r} needs 'model' (the id the endpoint expects)")
        if self.provider == "openai-compatible" and not self.base_url:
            raise ValueError("provider 'openai-compatible' needs 'base_url', e.g. http://localhost:8001/v1")
        if self.provider == "azure":
            missing = [f for f in ("base_url", "api_version", "deployment") if not getattr(self, f)]
            if missing:
                raise ValueError(f"provider 'azure' needs {', '.join(repr(f) for f in missing)}")
        elif self.api_version or self.deployment:
            raise ValueError("'api_version' and 'deployment' only apply to provider 'azure'")
        return self

    @property
    def is_offline(self) -> bool:
        """True when this entry names no endpoint and callers must use their offline path."""
        return self.provider == "offline"

    def resolved(self, field: Literal["model", "base_url", "api_key", "api_version", "deployment"]) -> str | None:
        """The value of `field` with `${ENV}` interpolated now.

        Raises:
            MissingEnvironmentVariableError: the field refers to an unset variable (the message
                names this model, the field and the variable).
        """
        value = getattr(self, field)
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if value is None:
            return None
        return interpolate(value, model=self.name, field=field)

    def check_usable(self) -> None:
        """Raise now what the first call would: an unset `${VAR}` in any field, or an empty key its provider needs.

        Raises:
            ModelConfigError: naming this model and the field (MissingEnvironmentVariableError: the variable too).
        """
        if self.is_offline:
            return
        for part in ("base_url", "api_key", "api_version", "deployment"):
            self.resolved(part)
        if self.provider in ("openai", "azure") and not self.resolved("api_key"):
            raise ModelConfigError(f"model {self.name!r} field 'api_key' is empty")

    def endpoint(self) -> str:
        """The base URL requests go to, for errors, logs and cache keys (never contains the key).

        Raises:
            MissingEnvironmentVariableError: the base URL refers to an unset variable.
        """
        if self.provider == "offline":
            return "offline"
        base = self.resolved("base_url")
        if self.provider == "azure":
            return f"{(base or '').rstrip('/')}/openai/deployments/{self.resolved('deployment')}"
        return (base or "https://api.openai.com/v1").rstrip("/")
