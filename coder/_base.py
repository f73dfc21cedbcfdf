"""What a coder is: the interface every coder implements (the registry is in `_registry.py`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from apps_prompts import AppSpec
from cua import DEFAULT_VIEWPORT, Viewport

from ._models import GenerationResult, RevisionRequest, RevisionResult


class Coder(ABC):
    """Writes an app's first version and revises it. One instance may serve many apps."""

    offline: ClassVar[bool] = False
    name: str

    @abstractmethod
    async def generate(self, app: AppSpec, *, viewport: Viewport = DEFAULT_VIEWPORT) -> GenerationResult:
        """The first version of `app`, for an agent working in `viewport` (the run's).

        Raises:
            CoderError: no usable HTML could be produced (the message names the model or file).
        """

    @abstractmethod
    async def revise(self, request: RevisionRequest) -> RevisionResult:
        """The next version (fitting `request.viewport`), with the non-regression contract checked and recorded.

        Raises:
            CoderError: no usable HTML could be produced.
        """
