"""Trajectory → one 1920×1080 dashboard PNG, and visual-token accounting (design.md §6).

    rendered = render_dashboard(trajectory_dir, out=trajectory_dir / "dashboard.png")
    account = account_trajectory(trajectory_dir)            # raw screenshots vs dashboard tokens
    blind = render_trajectory(trajectory, folder, hide_verdict=True)   # for judges: no checker verdict drawn

Pure drawing (Pillow): no browser, no model. The commenter (`commenter/`) reads what this draws.
"""

from ._layout import CANVAS_HEIGHT, CANVAS_WIDTH, DashboardLayout
from ._render import (
    DASHBOARD_FILE,
    RenderedDashboard,
    draw_dashboard_file,
    plan_dashboard,
    render_dashboard,
    render_trajectory,
)
from ._tile import first_failure_signal
from ._tokens import (
    TokenAccount,
    TokenSummary,
    account_images,
    account_trajectory,
    openai_resized,
    openai_visual_tokens,
    qwen_visual_tokens,
    summarize,
)

# The public functions, and the types they return.
__all__ = [
    "CANVAS_HEIGHT",
    "CANVAS_WIDTH",
    "DASHBOARD_FILE",
    "DashboardLayout",
    "RenderedDashboard",
    "TokenAccount",
    "TokenSummary",
    "account_images",
    "account_trajectory",
    "draw_dashboard_file",
    "first_failure_signal",
    "openai_resized",
    "openai_visual_tokens",
    "plan_dashboard",
    "qwen_visual_tokens",
    "render_dashboard",
    "render_trajectory",
    "summarize",
]
