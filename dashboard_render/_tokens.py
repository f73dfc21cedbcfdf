"""Visual-token accounting: what a trajectory's raw screenshots cost a VLM versus its dashboard.

Two rules (design.md §6):

- Qwen2.5-VL (UI-TARS-1.5): `cua.smart_resize` rounds each side to a multiple of 28 and keeps the
  pixel count within [min_pixels, max_pixels]; every 28×28 patch is one token (14-px ViT patches
  merged 2×2), so tokens = (h/28)·(w/28). The vision start/end marker tokens are not counted.
- OpenAI high detail: fit within 2048×2048, then scale down so the shortest side is 768 (images
  are never scaled up), then 170 tokens per 512-px tile plus 85.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from PIL import Image
from pydantic import BaseModel, Field

# One implementation of Qwen's resize rule, shared with the agent's coordinate space: one token per
# IMAGE_FACTOR² (28×28) patch (14-px ViT patches merged 2×2); MIN_PIXELS is UI-TARS-1.5's setting (stock
# Qwen2.5-VL uses 4·28²).
from cua import IMAGE_FACTOR, MAX_PIXELS, MIN_PIXELS, Trajectory, smart_resize


def qwen_visual_tokens(width: int, height: int, min_pixels: int = MIN_PIXELS, max_pixels: int = MAX_PIXELS) -> int:
    """Visual tokens of one image under the Qwen2.5-VL rule: 1280×720 → 1288×728 → 46·26 = 1196."""
    w_bar, h_bar = smart_resize(width, height, min_pixels=min_pixels, max_pixels=max_pixels)
    return (h_bar // IMAGE_FACTOR) * (w_bar // IMAGE_FACTOR)


def openai_resized(width: int, height: int) -> tuple[int, int]:
    """(width, height) after OpenAI's high-detail scaling: fit in 2048², shortest side at most 768."""
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}×{height}")
    w, h = float(width), float(height)
    for limit, side in ((2048, max), (768, min)):
        if side(w, h) > limit:
            ratio = limit / side(w, h)
            w, h = w * ratio, h * ratio
    return int(math.floor(w)), int(math.floor(h))


def openai_visual_tokens(width: int, height: int) -> int:
    """Tokens of one image at detail=high: 170 per 512-px tile + 85 (1280×720 → 3·2 tiles → 1105)."""
    w, h = openai_resized(width, height)
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return 170 * tiles + 85


class TokenAccount(BaseModel):
    """Visual tokens of one trajectory's raw screenshots and of its dashboard, under both rules."""

    trajectory: str = Field(description="Folder of the trajectory (or a label).")
    steps: int
    raw_images: int = Field(description="Screenshots the trajectory holds: the initial state and one per step.")
    raw_qwen: int
    raw_openai: int
    dashboard_qwen: int
    dashboard_openai: int

    @property
    def reduction_qwen(self) -> float:
        return _reduction(self.dashboard_qwen, self.raw_qwen)

    @property
    def reduction_openai(self) -> float:
        return _reduction(self.dashboard_openai, self.raw_openai)


class TokenSummary(BaseModel):
    """Token accounting over many dashboards: the mean of per-dashboard reductions and pooled totals."""

    n_trajectories: int
    mean_reduction_qwen: float
    mean_reduction_openai: float
    pooled_reduction_qwen: float = Field(description="1 − Σ dashboard / Σ raw tokens.")
    pooled_reduction_openai: float
    raw_qwen: int
    raw_openai: int
    dashboard_qwen: int
    dashboard_openai: int


def _reduction(after: int, before: int) -> float:
    return 0.0 if before <= 0 else 1.0 - after / before


def account_images(label: str, steps: int, raw_sizes: Sequence[tuple[int, int]]) -> TokenAccount:
    """Token account from image sizes (width, height): the raw screenshots and the dashboard."""
    return TokenAccount(
        trajectory=label,
        steps=steps,
        raw_images=len(raw_sizes),
        raw_qwen=sum(qwen_visual_tokens(w, h) for w, h in raw_sizes),
        raw_openai=sum(openai_visual_tokens(w, h) for w, h in raw_sizes),
        dashboard_qwen=qwen_visual_tokens(1920, 1080),
        dashboard_openai=openai_visual_tokens(1920, 1080),
    )


def account_trajectory(folder: Path | str) -> TokenAccount:
    """Token account of a trajectory folder; image sizes are read from the PNG headers only."""
    folder = Path(folder)
    trajectory = Trajectory.load(folder)
    sizes = []
    for name in [trajectory.initial_screenshot] + [step.screenshot for step in trajectory.steps]:
        if name and (folder / name).is_file():
            with Image.open(folder / name) as image:  # lazy: reads the header, not the pixels
                sizes.append(image.size)
    return account_images(str(folder), len(trajectory.steps), sizes)


def summarize(accounts: Iterable[TokenAccount]) -> TokenSummary:
    """Mean and pooled reductions over `accounts` (zeros when there are none)."""
    accounts = list(accounts)
    n = len(accounts)
    totals = {key: sum(getattr(a, key) for a in accounts) for key in ("raw_qwen", "raw_openai", "dashboard_qwen", "dashboard_openai")}
    return TokenSummary(
        n_trajectories=n,
        mean_reduction_qwen=sum(a.reduction_qwen for a in accounts) / n if n else 0.0,
        mean_reduction_openai=sum(a.reduction_openai for a in accounts) / n if n else 0.0,
        pooled_reduction_qwen=_reduction(totals["dashboard_qwen"], totals["raw_qwen"]),
        pooled_reduction_openai=_reduction(totals["dashboard_openai"], totals["raw_openai"]),
        **totals,
    )
