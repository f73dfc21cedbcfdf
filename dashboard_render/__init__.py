"""Trajectory → 1920×1080 dashboard, visual-token accounting, and the commenter (VLM and offline)."""

from ._layout import CANVAS_HEIGHT, CANVAS_WIDTH, DashboardLayout, Rect, Region, TileLayout, plan_layout
from ._render import (
    DASHBOARD_FILE,
    RenderedDashboard,
    first_failure_signal,
    plan_dashboard,
    render_dashboard,
    render_trajectory,
)
from ._tokens import (
    TokenAccount,
    TokenSummary,
    account_images,
    account_trajectory,
    openai_resized,
    openai_visual_tokens,
    qwen_visual_tokens,
    smart_resize,
    summarize,
)

__all__ = [
    "CANVAS_HEIGHT",
    "CANVAS_WIDTH",
    "DASHBOARD_FILE",
    "DashboardLayout",
    "Rect",
    "Region",
    "RenderedDashboard",
    "TileLayout",
    "TokenAccount",
    "TokenSummary",
    "account_images",
    "account_trajectory",
    "first_failure_signal",
    "openai_resized",
    "openai_visual_tokens",
    "plan_dashboard",
    "plan_layout",
    "qwen_visual_tokens",
    "render_dashboard",
    "render_trajectory",
    "smart_resize",
    "summarize",
]
