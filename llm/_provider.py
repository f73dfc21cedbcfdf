"""Who plays one role of a run: the name it was given, whether it is an offline provider, the registry model it
calls through. `experiment` resolves every role's once before a run; the stages are given it and build from it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RoleProvider(BaseModel):
    """Who plays one role of the run, resolved once before it starts (`experiment.resolve_roles`): what the stages
    are given. Here, beside the model registry, so a stage taking one imports nothing of the experiment."""

    model_config = ConfigDict(frozen=True)

    role: str
    name: str = Field(description="As the config names it: a model (or role), a policy, the role's own implementation.")
    offline: bool = Field(description="An offline provider (`experiment.is_offline_provider`; a proposer given a tasks "
                          "file too).")
    model: str | None = Field(default=None, description="The registry model (or role) it calls through; None: the role's "
                              "own implementation, or a policy that calls no model.")
    used: bool = Field(default=True, description="Whether the run uses the role (`experiment.resolve_roles`).")
    policy: type[Any] | None = Field(default=None, exclude=True, description="The CUA's policy class, as the plan looked "
                                     "its name up (the one look-up; the rollout stage builds from it). None for the "
                                     "other roles. Not among what is written: a class is no data.")
