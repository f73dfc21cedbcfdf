"""The offline heuristic agent: reads the page like a user, matches the task to controls, acts by coordinates.

    from cua.policies import get_policy
    agent = get_policy("heuristic")

Built only on `cua`'s public API (observations, actions, the isolated world), like any outside
policy would be. See `_policy.py` for what it can and cannot do.
"""

from ._page import PageView, read_page
from ._policy import HeuristicPolicy

__all__ = ["HeuristicPolicy", "PageView", "read_page"]
