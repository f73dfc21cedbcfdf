"""Test doubles of the loop's model roles, for tests and benchmarks: nothing on the product path imports them.

- `ScriptedRoles` (`_scripted.py`): every role scripted from a bundled app's own files, so the online
  path runs end to end through the real `openai` client with no endpoint and no key (`ONLINE_ROLES`
  sends a config's roles to it).
- `LatencyRoles` (`_latency.py`): every role played on real apps at a model's speed (coder ≈ 30 s,
  CUA 1 s a step) by a `llm.testing.LatencyOpenAIServer`, for benchmarks (`LATENCY_ROLES`,
  `write_latency_models`).

Both tell requests apart by their system prompts (`role_of`).

- `prefect_server` / `postgres_database` (`_servers.py`): a real Prefect server in its own process, on
  SQLite or on a PostgreSQL cluster of its own (many writers at once: a large run's resume).
"""

from ._latency import (
    LATENCY_ROLES,
    ROLE_MODELS,
    LatencyRoles,
    plan_apps,
    role_latencies,
    write_latency_models,
)
from ._scripted import (
    COMMENT,
    ONLINE_ROLES,
    REVISION_MARK,
    ROLE_MARKERS,
    TRANSLATED_PREFIX,
    ScriptedRoles,
    click_point,
    role_of,
    user_text,
)
from ._servers import (
    free_port,
    postgres_database,
    postgres_installed,
    prefect_server,
    stop_process_group,
    stop_process_groups,
)

__all__ = [
    "free_port", "postgres_database", "postgres_installed", "prefect_server", "stop_process_group",
    "stop_process_groups", "COMMENT", "LATENCY_ROLES", "ONLINE_ROLES", "REVISION_MARK", "ROLE_MARKERS", "ROLE_MODELS",
    "TRANSLATED_PREFIX", "LatencyRoles", "ScriptedRoles", "click_point", "plan_apps", "role_latencies", "role_of",
    "user_text", "write_latency_models",
]
