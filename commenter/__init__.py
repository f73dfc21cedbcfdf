"""The commenter: failed trajectories (as dashboards) → feedback JSON for the coder (design.md §7).

    commenter = get_commenter("offline")                     # or "commenter" / "gpt-5" (a model)
    feedback = await comment_app(app_id, trajectory_dirs, commenter, html=html)   # → the coder

The model commenter sees the app and each failed rollout's 1920×1080 dashboard (drawn by
`dashboard_render`); the offline commenter measures the page in Chromium (off-viewport and small
targets, axe-core contrast and names, no-effect steps, …) and writes the same JSON.
"""

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
from ._model import COMMENT_MODES, PROMPT_VERSION, CommentInputs, ModelCommenter, parse_reply
from ._offline import OfflineCommenter
from ._registry import COMMENTERS, Commenter, comment_app, get_commenter

__all__ = [
    "COMMENT_MODES",
    "COMMENT_SCHEMA",
    "COMMENTERS",
    "PRINCIPLES",
    "PROMPT_VERSION",
    "AnimationFact",
    "Comment",
    "Commenter",
    "CommentInputs",
    "CommentSource",
    "CommentValidationError",
    "ElementFact",
    "Feedback",
    "ModelCommenter",
    "NoEffectStep",
    "OfflineCommenter",
    "OfflineFacts",
    "TaskComment",
    "collect_facts",
    "comment_app",
    "get_commenter",
    "merge_comments",
    "parse_reply",
    "validate_comment",
]
