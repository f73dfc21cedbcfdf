"""How big a run is before it starts: rollouts, steps, model calls and, with prices, a cost range.

A tasks file with 10,000 tasks once started 10,000 rollouts without a word. Preflight now says
what a run will do and refuses past `max_rollouts` unless told `--yes`; a single app may have at
most `max_tasks_per_app` tasks.

The figures are bounds, not predictions: every task is counted as supported (only tasks with a
valid checker are rolled out), a model agent is counted from one step per rollout (it may finish
at once) to `max_steps`, and the commenter from no failure to every rollout failing. Tokens per
call are rough per-role figures (`TOKENS_PER_CALL`, from the prompts' sizes and the apps'), so
the cost range is an order of magnitude to plan with, priced from the model registry.

Its size also bounds what a run can show: `describe_power` says how small a difference in SR
between two rounds or tracks it can still tell from noise (`results._intervals`).
"""

from __future__ import annotations

import itertools
import math

from pydantic import BaseModel, Field

from apps_prompts import Task, load_apps, load_tasks_file
from llm import RoleProvider, load_model_registry
from results import Track, minimum_detectable_difference

from ._config import ExperimentConfig
from ._players import resolve_roles

# (prompt tokens, completion tokens) per call, low and high, per role. Rough on purpose; see above.
TOKENS_PER_CALL: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "coder": ((1_500, 4_000), (12_000, 16_000)),        # a prompt (+ the app when revising) → a whole HTML file
    "proposer": ((800, 1_500), (1_500, 5_000)),
    "verifier": ((4_000, 500), (14_000, 4_000)),        # the app's HTML and the tasks → one checker per task
    "commenter": ((2_500, 200), (5_000, 600)),          # two images (≈ 1.2 k tokens each) and the task
    "cua": ((1_500, 30), (9_000, 200)),                 # the prompt, the history, up to 5 screenshots
    "translator": ((800, 600), (4_000, 4_000)),         # an app's visible texts in, the same count out
    "detector": ((2_600, 60), (3_200, 200)),            # two screenshots (≈ 1.2 k tokens each) and one action
}
VERIFIER_BATCH = 10  # tasks per verifier call (see verifier/_llm.py)


class RoleCalls(BaseModel):
    model: str
    calls_low: int
    calls_high: int
    cost_low_usd: float | None = None
    cost_high_usd: float | None = None


class RunSize(BaseModel):
    """What a run will do, at most (and at least, for model calls)."""

    apps: int
    tasks: int = Field(description="Tasks over all apps (each app's own count times one).")
    tracks_per_app: int
    rounds: int
    repeats: int = 1
    variations: int = Field(default=1, description="Looks every version is rolled out in (the default one included).")
    rollouts: int = Field(description="At most: every task rolled out in round 0 per coder × CUA and per track after, "
                          "in every variation and repeat.")
    steps: int = Field(description="At most: rollouts × max_steps.")
    by_role: dict[str, RoleCalls] = Field(default_factory=dict, description="Model calls per role (offline roles: none).")

    @property
    def calls(self) -> tuple[int, int]:
        return sum(r.calls_low for r in self.by_role.values()), sum(r.calls_high for r in self.by_role.values())

    @property
    def cost(self) -> tuple[float, float] | None:
        """The cost range in USD, or None when a model of the run has no prices."""
        if any(r.cost_low_usd is None for r in self.by_role.values()):
            return None
        return (sum(r.cost_low_usd for r in self.by_role.values()), sum(r.cost_high_usd for r in self.by_role.values()))

    @property
    def detectable_difference(self) -> float | None:
        """The smallest SR difference between two rounds (or two tracks) of this run a 95 % test detects with 80 %
        power (`results._intervals.minimum_detectable_difference` over the tasks a round judges); None without tasks."""
        return minimum_detectable_difference(self.tasks) if self.tasks else None

    def describe_power(self) -> str:
        """What the run's size can tell apart, e.g. "with 103 tasks per round, a change in SR smaller than ≈ 19.5
        points …" — the bound of two independent rates at 50 %, the worst case; pairing the same tasks does better."""
        difference = self.detectable_difference
        if difference is None:
            return "no tasks: nothing to compare"
        repeats = f" (the {self.repeats} repeats average out rollout noise, not the choice of tasks)" if self.repeats > 1 else ""
        return (f"with {self.tasks} task(s) per round{repeats}, a change in SR smaller than ≈ {100 * difference:.1f} points "
                "between two rounds or tracks may not be told from noise (95 %, 80 % power; the two-proportion bound "
                "at SR 50 %; pairing the same tasks detects less when few of them change)")

    def describe(self) -> str:
        line = (f"run size: {self.apps} app(s), {self.tasks} task(s), {self.tracks_per_app} track(s) per app, "
                f"rounds 0–{self.rounds}" + (f", {self.repeats} repeats" if self.repeats > 1 else "") +
                (f", {self.variations} variations" if self.variations > 1 else "") +
                f" → at most {self.rollouts:,} rollouts, {self.steps:,} steps")
        if not self.by_role:
            return line + "; no model calls (offline providers)"
        low, high = self.calls
        line += f"; model calls {low:,}–{high:,} (" + ", ".join(
            f"{role} {r.calls_low:,}–{r.calls_high:,}" for role, r in self.by_role.items()) + ")"
        cost = self.cost
        if cost is not None:
            line += f"; cost ≈ ${cost[0]:,.2f}–${cost[1]:,.2f} (rough: tokens per call are estimates)"
        else:
            line += "; cost unknown (a model has no prices in the registry)"
        return line


def sweep_tracks(config: ExperimentConfig) -> list[Track]:
    """coders × CUAs × revision modes × commenter modes; the `unsupported` mode, which does not
    comment, once (commenter mode None)."""
    tracks = []
    for coder, cua, mode in itertools.product(config.coders, config.cua_policies, config.revision_modes):
        commenter_modes = [None] if mode == "unsupported" else config.commenter_modes
        tracks += [Track(coder=coder, cua=cua, mode=mode, commenter_mode=commenter) for commenter in commenter_modes]
    return tracks


def known_tasks(config: ExperimentConfig, app_ids: list[str],
                providers: list[RoleProvider] | None = None) -> dict[str, list[Task]] | None:
    """Each app's tasks, from its tasks file entry or its spec; None when a model proposes them. `providers`: the
    run's, resolved (default: resolved from `config`).

    Raises:
        TasksFileError: the tasks file has no usable entry for an app.
    """
    if config.tasks_file is not None:
        return {app_id: load_tasks_file(config.tasks_file, app_id) for app_id in app_ids}
    if not _provider(providers or resolve_roles(config), "proposer", config.proposer).offline:
        return None
    specs = {spec.id: spec for spec in load_apps(config.apps).apps}
    return {app_id: specs[app_id].tasks for app_id in app_ids}


def tasks_per_app(config: ExperimentConfig, app_ids: list[str],
                  providers: list[RoleProvider] | None = None) -> dict[str, int]:
    """How many tasks each app will have: its tasks file entry, its spec's tasks, or `tasks_per_app` proposed."""
    known = known_tasks(config, app_ids, providers)
    return {app_id: config.tasks_per_app if known is None else len(known[app_id]) for app_id in app_ids}


def _provider(providers: list[RoleProvider], role: str, name: str) -> RoleProvider:
    return next(p for p in providers if p.role == role and p.name == name)


def run_size(config: ExperimentConfig, counts: dict[str, int], providers: list[RoleProvider] | None = None) -> RunSize:
    """The bounds of a run over apps with `counts` tasks each (`providers`: the run's, default resolved from `config`)."""
    providers = providers or resolve_roles(config)
    tracks, (stages, _) = sweep_tracks(config), expected_stages(config, counts)
    tasks, apps, variations, rollouts = sum(counts.values()), len(counts), len(config.variations), stages["roll out"]
    steps = rollouts * config.most_steps
    commenting = sum(1 for t in tracks if t.commenter_mode is not None)
    # One verification (and translation) per app version: a first version per coder, then one per track and round.
    versions_per_app = len({t.coder for t in tracks}) + len(tracks) * config.rounds
    verifier_calls = sum(math.ceil(n / VERIFIER_BATCH) for n in counts.values() if n) * versions_per_app
    calls: dict[str, tuple[str, int, int]] = {}
    model_coders = [c for c in config.coders if not _provider(providers, "coder", c).offline]
    if model_coders:
        per_app = len(model_coders) + sum(1 for t in tracks if t.coder in model_coders) * config.rounds
        calls["coder"] = (",".join(model_coders), apps * per_app, 2 * apps * per_app)  # a contract retry at most
    # The other roles' calls (at least, at most) where a model plays them and the run uses them (a tasks file
    # proposes; no commenter or detector without their feedback, no translator unless a variation translates).
    rounds_failing = tasks * commenting * config.rounds  # the last round is not commented on
    bounds = {"proposer": (apps, 2 * apps), "verifier": (verifier_calls, 2 * verifier_calls),  # one repair at most
              "commenter": (0, 2 * rounds_failing),
              # every step of every failed rollout commented on is one tuple, one call (one repair at most)
              "detector": (0, 2 * rounds_failing * config.most_steps),
              # one translation per app version (composed variations share it), one repair at most
              "translator": (apps * versions_per_app, 2 * apps * versions_per_app)}
    for player in providers:
        if player.role in bounds and player.used and not player.offline:
            calls[player.role] = (player.name, *bounds[player.role])
    model_agents = [p.model for p in providers if p.role == "cua" and p.model]
    if model_agents:
        agent_rollouts = rollouts * len(model_agents) // len(config.cua_policies)
        calls["cua"] = (",".join(model_agents), agent_rollouts, agent_rollouts * config.most_steps)
    return RunSize(apps=apps, tasks=tasks, tracks_per_app=len(tracks), rounds=config.rounds, repeats=config.repeats,
                   variations=variations, rollouts=rollouts,
                   steps=steps, by_role={role: _priced(config, role, *entry) for role, entry in calls.items()})


def _priced(config: ExperimentConfig, role: str, model: str, low: int, high: int) -> RoleCalls:
    entry = RoleCalls(model=model, calls_low=low, calls_high=high)
    try:
        prices = load_model_registry(config.models_config).get(model.split(",")[0]).prices
    except Exception:  # preflight has already named any unknown model; here only prices are looked up
        prices = None
    if prices is not None:
        (low_in, low_out), (high_in, high_out) = TOKENS_PER_CALL[role]
        entry.cost_low_usd = round(low * prices.cost_usd(low_in, low_out), 4)
        entry.cost_high_usd = round(high * prices.cost_usd(high_in, high_out), 4)
    return entry


def expected_stages(config: ExperimentConfig, counts: dict[str, int]) -> tuple[dict[str, int], int]:
    """Each kind's stage count at most (every task supported), and the app rounds, for apps with `counts` tasks."""
    tracks = sweep_tracks(config)
    apps = len(counts)
    tasks = sum(counts.values())
    coders = {t.coder for t in tracks}
    pairs = {(t.coder, t.cua) for t in tracks}  # round 0 is shared by the tracks of one coder × CUA
    commenting = sum(1 for t in tracks if t.commenter_mode is not None)
    versions = apps * (len(coders) + len(tracks) * config.rounds)
    totals = {
        "generate": apps * len(coders),
        "verify": versions,
        "vary": versions * (len(config.variations) - 1),
        "roll out": tasks * (len(pairs) + len(tracks) * config.rounds) * config.repeats * len(config.variations),
        "comment": apps * commenting * config.rounds,
        "revise": apps * len(tracks) * config.rounds,
    }
    return totals, apps * len(tracks) * (config.rounds + 1)
