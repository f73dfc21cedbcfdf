"""Trajectory → 1920×1080 dashboard, visual-token accounting, and the commenter (VLM and offline).

    rendered = render_dashboard(trajectory_dir, out=trajectory_dir / "dashboard.png")
    account = account_trajectory(trajectory_dir)            # raw screenshots vs dashboard tokens
    commenter = get_commenter("offline")                     # or "commenter" / "gpt-5" (a model)
    feedback = await comment_app(app_id, trajectory_dirs, commenter, html=html)   # → the coder
"""

from ._commenter import COMMENT_MODES, PROMPT_VERSION, CommentInputs, ModelCommenter, build_messages, parse_reply
from ._facts import AnimationFact, ElementFact, NoEffectStep, OfflineFacts, collect_facts
from ._feedback import (
    COMMENT_SCHEMA,
    PRINCIPLES,
    Comment,
    CommentSource,
    CommentValidationError,
    Feedback,
    TaskComment,
    merge_comments,
    validate_comment,
)
from ._layout import CANVAS_HEIGHT, CANVAS_WIDTH, DashboardLayout, Rect, Region, TileLayout, plan_layout
from ._offline_commenter import comment_from_facts, offline_comment
from ._registry import COMMENTERS, Commenter, OfflineCommenter, comment_app, get_commenter
from ._render import DASHBOARD_FILE, RenderedDashboard, plan_dashboard, render_dashboard, render_trajectory
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

__all__ = [
    "CANVAS_HEIGHT",
    "CANVAS_WIDTH",
    "COMMENTERS",
    "COMMENT_MODES",
    "COMMENT_SCHEMA",
    "DASHBOARD_FILE",
    "PRINCIPLES",
    "PROMPT_VERSION",
    "AnimationFact",
    "Comment",
    "CommentInputs",
    "CommentSource",
    "CommentValidationError",
    "Commenter",
    "DashboardLayout",
    "ElementFact",
    "Feedback",
    "ModelCommenter",
    "NoEffectStep",
    "OfflineCommenter",
    "OfflineFacts",
    "Rect",
    "Region",
    "RenderedDashboard",
    "TaskComment",
    "TileLayout",
    "TokenAccount",
    "TokenSummary",
    "account_images",
    "account_trajectory",
    "build_messages",
    "collect_facts",
    "comment_app",
    "comment_from_facts",
    "first_failure_signal",
    "get_commenter",
    "merge_comments",
    "offline_comment",
    "openai_resized",
    "openai_visual_tokens",
    "parse_reply",
    "plan_dashboard",
    "plan_layout",
    "qwen_visual_tokens",
    "render_dashboard",
    "render_trajectory",
    "summarize",
    "validate_comment",
]
