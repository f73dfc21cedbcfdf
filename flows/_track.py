"""One track's calls to the stages (one app × coder × CUA × mode), and what the loop needs around them.

`design_loop` reads like the paper's Figure 4 because everything else lives here:

- a model stage that still fails after its retries (the client's, then Prefect's) degrades to a
  recorded error (`attempt`) instead of ending the track — the round's result names it, and a
  failed stage is not cached, so a re-run of the sweep tries it again;
- work shared between tracks (round 0 is the same for every mode and CUA of an app) is done once:
  the second caller waits for the first and then gets Prefect's cached result;
- results of a round, and of rounds that could not be judged at all.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from apps_prompts import ProposerError, Task, load_apps
from coder import CoderError, Regression
from experiment import ExperimentConfig, Plan, check_config
from llm import BudgetReached, ModelCallError, current_budget
from perturb import TranslationError, needed_roles
from results import AppRoundResult, GamingSuspect, RepeatOutcomes, TaskOutcome, Track
from verifier import read_verdicts

from ._progress import progress_for
from ._refs import (
    AgentSettings,
    FeedbackRef,
    FileRef,
    RolloutRef,
    RunContext,
    TasksRef,
    VariantRef,
    VerifyRef,
    VersionRef,
)
from ._revision import comment_failures, revise_version
from ._rollouts import rollout_task, use_browser_slots
from ._round_result import by_repeat, first_screenshot, gaming_suspects, regression, task_outcomes, variation_result
from ._stages import generate_initial, propose_tasks, read_tasks, slug, verify_version
from ._variations import prove_variation, translate_version

T = TypeVar("T")


@dataclass(frozen=True)
class Stages:
    """The loop's stages: Prefect tasks (cached, visible in the UI) or their plain functions."""

    generate: Callable[..., Awaitable[VersionRef]]
    propose: Callable[..., Awaitable[TasksRef]]
    verify: Callable[..., Awaitable[VerifyRef]]
    rollout: Callable[..., Awaitable[RolloutRef]]
    comment: Callable[..., Awaitable[FeedbackRef | None]]
    revise: Callable[..., Awaitable[VersionRef]]
    translate: Callable[..., Awaitable[FileRef]]
    prove_variation: Callable[..., Awaitable[VariantRef]]


PREFECT_STAGES = Stages(generate_initial, propose_tasks, verify_version, rollout_task, comment_failures, revise_version,
                        translate_version, prove_variation)
PLAIN_STAGES = Stages(*(getattr(PREFECT_STAGES, field.name).fn for field in fields(Stages)))

_stage_locks: dict[tuple, asyncio.Lock] = {}


def _one_at_a_time(*key: object) -> asyncio.Lock:
    """A lock per identical stage call (per event loop).

    Round 0 is shared by every revision mode and CUA of an app (same version, same folders): with
    the lock, the second track waits for the first and then gets its cached result, instead of
    repeating the work (and its model calls) concurrently into the same files.
    """
    return _stage_locks.setdefault((id(asyncio.get_running_loop()), *key), asyncio.Lock())


@dataclass
class Judged:
    """One round as the loop saw it: the version, its verdicts, the feedback on its failures, its result."""

    version: VersionRef
    verdicts: VerifyRef | None
    feedback: FeedbackRef | None = None
    result: AppRoundResult | None = None
    rollouts: dict[str, RolloutRef] = field(default_factory=dict)


def _note_refusal(error: BudgetReached) -> None:
    """A stage's call was refused by the run's budget — perhaps in another process (a Dask worker), whose
    refusal this process's budget has not seen: it records it, and no new round starts here either."""
    if (budget := current_budget()) is not None:
        budget.note_reached(str(error))


class TrackSteps:
    """The stages as one track calls them; `errors` collects the failures of the round being made."""

    def __init__(self, config: ExperimentConfig, run: RunContext, app_id: str, track: Track, stages: Stages,
                 logger: Any = None, plan: Plan | None = None):
        self.config, self.run, self.app_id, self.track, self.stages = config, run, app_id, track, stages
        # who plays each role, resolved once before the run (`experiment.check_config`); nothing is looked up here
        self.plan = plan if plan is not None else check_config(config, probe_endpoints=False)
        self.logger = logger or logging.getLogger("flows")
        self.domain = next(a.domain.value for a in load_apps(config.apps).apps if a.id == app_id)
        self.errors: list[str] = []
        self.verify_error: str | None = None  # this round's, if its verification failed
        cua = self.plan.provider("cua", track.cua)
        self.agent = AgentSettings(policy=track.cua, model=config.cua_model, calls=cua.model, policy_class=cua.policy,
                                   max_steps=config.most_steps,
                                   viewport=config.viewport, options=config.cua_options.get(track.cua, {}),
                                   trace=config.trace, fixed_clock=config.fixed_clock)
        self.offline_roles = self.plan.offline_roles(track)  # labelled on every result of the track
        self.judged: dict[int, Judged] = {}  # every round so far: what `carry: best` may go back to
        self.progress = progress_for(run.run_dir)  # what the console draws (stages shared by tracks count once)
        self.repeated: dict[int, list[RolloutRef]] = {}  # per round: the rollouts of repeats 1…N−1
        # per round: each other variation's proven variant and its rollouts (every repeat)
        self.varied: dict[int, dict[str, tuple[VariantRef, list[RolloutRef]]]] = {}

    async def attempt(self, doing: str, work: Awaitable[T], then: str = "") -> T | None:
        """`work`'s result; a model fault that outlived its retries becomes a recorded error (None)."""
        try:
            return await work
        except Exception as error:
            # What a model endpoint and its replies can do to a stage after every bounded retry: a failed call, no
            # usable HTML, no usable tasks. Anything else is a bug or a broken setup, which stops the sweep rather
            # than hiding in the results.
            if not isinstance(error, ModelCallError | CoderError | ProposerError | TranslationError):
                raise
            text = f"{doing} failed: {type(error).__name__}: {error}{then}"
            self.logger.warning("%s: %s", self.app_id, text)
            self.errors.append(text)
            if isinstance(error, BudgetReached):
                _note_refusal(error)
            return None

    def out_of_budget(self) -> bool:
        """Whether this process's budget refused a model call: no further round is started."""
        budget = current_budget()
        return budget is not None and budget.reached is not None

    # ---- the stages ----------------------------------------------------------------------------

    async def generate(self) -> VersionRef | None:
        async with _one_at_a_time("generate", self.run.run_dir, self.app_id, self.track.coder):
            with self.progress.stage("generate", (self.app_id, self.track.coder), round_=0):
                return await self.attempt("generating the first version", self.stages.generate(
                    run=self.run, app_id=self.app_id, coder=self.plan.provider("coder", self.track.coder),
                    viewport=self.config.viewport))

    async def propose(self) -> TasksRef | None:
        tasks_file = self.run.ref(Path(self.config.tasks_file).resolve()) if self.config.tasks_file else None
        async with _one_at_a_time("propose", self.run.run_dir, self.app_id, self.config.proposer):
            return await self.attempt("proposing tasks", self.stages.propose(
                run=self.run, app_id=self.app_id, proposer=self.plan.provider("proposer"), tasks_file=tasks_file,
                tasks_per_app=self.config.tasks_per_app))

    def tasks(self, tasks: TasksRef) -> list[Task]:
        return read_tasks(self.run, tasks.file)

    async def verify(self, version: VersionRef, tasks: TasksRef) -> VerifyRef | None:
        async with _one_at_a_time("verify", self.run.run_dir, version.html.path, self.config.verifier):
            with self.progress.stage("verify", version.html.path, round_=version.round):
                verdicts = await self.attempt(f"verifying round {version.round}", self.stages.verify(
                    run=self.run, app_id=self.app_id, round=version.round, html=version.html, tasks=tasks.file,
                    verifier=self.plan.provider("verifier")))
        self.verify_error = self.errors[-1] if verdicts is None else None
        return verdicts

    async def roll_out(self, version: VersionRef, tasks: TasksRef, verdicts: VerifyRef | None) -> dict[str, RolloutRef]:
        """Every task with a valid checker, `repeats` times, concurrently on this process's browser (→ SR, dashboards).

        Returns repeat 0's rollouts by task id (what comments, regressions and revisions read); the
        further repeats are kept for `record`. Each task's step budget comes from its level (or the
        run's `max_steps`); each repeat has its own seed (the run's seed + the repeat's number).
        """
        if verdicts is None:
            return {}
        supported = [t for t in self.tasks(tasks) if verdicts.valid.get(t.id)]
        refs = await self._roll_out_tasks(version, supported, verdicts, None, len(self.tasks(tasks)))
        self.repeated[version.round] = [ref for ref in refs if ref.repeat > 0]
        return {ref.task_id: ref for ref in refs if ref.repeat == 0}

    async def roll_out_variations(self, version: VersionRef, tasks: TasksRef,
                                  verdicts: VerifyRef | None) -> dict[str, dict[str, RolloutRef]]:
        """The same tasks on every other variation of this version (OpenApps' axis → SR per variation).

        Each variant is proven first (`prove_variation`: a task it breaks is excluded for it, with the
        reason); its kept tasks are rolled out `repeats` times like the default's. Returns, per
        variation, repeat 0's rollouts by task id; everything else waits in `self.varied` for `record`.
        """
        others = [name for name in self.config.variations if name != "default"]
        self.varied[version.round] = {}
        if verdicts is None or not others:
            return {}
        tasks_list = self.tasks(tasks)

        async def one(variation: str) -> tuple[str, dict[str, RolloutRef]]:
            variant = await self._variant(version, verdicts, variation)
            kept = [t for t in tasks_list if t.id in set(variant.kept)] if variant.error is None else []
            refs = await self._roll_out_tasks(version, kept, verdicts, variant, len(tasks_list)) if kept else []
            self.varied[version.round][variation] = (variant, refs)
            return variation, {ref.task_id: ref for ref in refs if ref.repeat == 0}

        return dict(await asyncio.gather(*(one(name) for name in others)))

    def revised_on(self, rollouts: dict[str, RolloutRef],
                   varied: dict[str, dict[str, RolloutRef]]) -> dict[str, RolloutRef]:
        """The rollouts the commenter sees: the default look's, or `revise_on`'s variation's."""
        return varied.get(self.config.revise_on, rollouts) if self.config.revise_on != "default" else rollouts

    async def _variant(self, version: VersionRef, verdicts: VerifyRef, variation: str) -> VariantRef:
        """The proven variant (shared by every track judging this version: proven once, then Prefect's cache)."""
        async with _one_at_a_time("vary", self.run.run_dir, version.html.path, variation):
            with self.progress.stage("vary", (version.html.path, variation), round_=version.round):
                translations = None
                if "translator" in needed_roles(variation):
                    translations = await self.attempt(
                        f"translating round {version.round} for {variation}", self.stages.translate(
                            run=self.run, app_id=self.app_id, round=version.round, html=version.html,
                            translator=self.config.translator, viewport=self.config.viewport),
                        then=f"; the {variation} variation is left out of this round")
                    if translations is None:
                        return VariantRef(app_id=self.app_id, round=version.round, variation=variation, transform=None,
                                          error=self.errors[-1])
                return await self.stages.prove_variation(
                    run=self.run, app_id=self.app_id, round=version.round, html=version.html, verdicts=verdicts.file,
                    variation=variation, seed=self.config.seed, viewport=self.config.viewport, translations=translations)

    async def _roll_out_tasks(self, version: VersionRef, tasks: list[Task], verdicts: VerifyRef,
                              variant: VariantRef | None, all_tasks: int) -> list[RolloutRef]:
        """`tasks` × `repeats` on the default look (`variant` None) or a proven variant, concurrently."""
        judged = read_verdicts(self.run.file(verdicts.file))
        use_browser_slots(self.plan.rollout_slots)
        variation = variant.variation if variant else "default"
        for repeat in range(self.config.repeats):
            self.progress.fewer("roll out", self._rollouts_folder(version, repeat, variation), all_tasks - len(tasks))

        async def one(task: Task, repeat: int) -> RolloutRef | None:
            out_path = str(self._rollouts_folder(version, repeat, variation) / task.id)
            verdict = judged.verdict(task.id)
            agent = self.agent.model_copy(update={"max_steps": self.config.step_budget(task),
                                                  "seed": self.config.seed + repeat})
            try:
                # A track waiting for another's identical rollout (round 0 is shared) gets its cached result.
                async with _one_at_a_time("rollout", self.run.run_dir, out_path):
                    with self.progress.stage("roll out", out_path, round_=version.round):
                        ref = await self.stages.rollout(
                            run=self.run, app_id=self.app_id, round=version.round, task=task, checker=verdict.checker,
                            checks=[entry.check for entry in verdict.checks] or list(task.checks), html=version.html,
                            agent=agent, out_path=out_path, judge=self.plan.provider("judge"),
                            **({"variation": variation, "transform": variant.transform} if variant else {}))
            except BudgetReached as error:
                _note_refusal(error)
                return None  # not rolled out (nothing of it is kept): a re-run with a higher budget does it
            return ref.model_copy(update={"repeat": repeat})

        found = await asyncio.gather(*(one(t, r) for r in range(self.config.repeats) for t in tasks))
        refs = [ref for ref in found if ref is not None]
        if len(refs) < len(found):
            where = f" in the {variation} variation" if variant else ""
            self.errors.append(f"rolling out round {version.round}{where}: {len(found) - len(refs)} rollout(s) not "
                               "finished: budget reached")
        return refs

    def _rollouts_folder(self, version: VersionRef, repeat: int, variation: str = "default") -> Path:
        """Repeat 0 of the default look where rollouts have always been; repeat k beside it, in `repeat-k/`;
        another variation's in `variations/<name>/` beside them, with its repeats inside."""
        folder = version.folder / "rollouts" / self.track.cua
        if variation != "default":
            folder = folder / "variations" / slug(variation)
        return folder / f"repeat-{repeat}" if repeat else folder

    async def comment(self, version: VersionRef, verdicts: VerifyRef | None,
                      rollouts: dict[str, RolloutRef]) -> FeedbackRef | None:
        if verdicts is None:
            return None  # nothing was judged, so there is nothing to comment on
        with self.progress.stage("comment", (self.app_id, self.track, version.round)):
            feedback = await self.attempt(f"commenting on round {version.round}", self.stages.comment(
                run=self.run, app_id=self.app_id, round=version.round, html=version.html,
                trajectories=[r.trajectory for r in rollouts.values() if not r.success],
                commenter=self.plan.provider("commenter"),
                track=self.track, **self._feedback_sources()), then="; revised without CUA feedback")
        if feedback is not None and feedback.errors:
            self.errors.append(f"commenting on round {version.round}: {len(feedback.errors)} comment(s) failed and "
                               f"were left out of the feedback: {'; '.join(feedback.errors)}")
        if version.round in self.judged:
            self.judged[version.round].feedback = feedback
        return feedback

    def _feedback_sources(self) -> dict[str, Any]:
        """The comment stage's extra arguments for `feedback` other than the commenter's alone (`--feedback +defects`);
        none by default, so the stage's cache key is what it always was."""
        if self.config.feedback == ["commenter"]:
            return {}
        return {"sources": list(self.config.feedback), "detector": self.plan.provider("detector")}

    async def revise(self, version: VersionRef, verdicts: VerifyRef | None, tasks: TasksRef,
                     feedback: FeedbackRef | None) -> VersionRef:
        """The next round's version: a revision of the latest version (or, with `carry: best`, of the best
        so far), or — its verification or revision failed — the same version kept."""
        next_round = version.round + 1
        if verdicts is None:
            self.errors.append(f"round {next_round} keeps the round-{version.round} version unrevised: its verification failed")
            return self._kept(version, next_round, self.errors[-1])
        base = self._carried() or Judged(version, verdicts, feedback)
        with self.progress.stage("revise", (self.app_id, self.track, next_round)):
            revised = await self.attempt(f"revising to round {next_round}", self.stages.revise(
                run=self.run, app_id=self.app_id, round=next_round, html=base.version.html, verdicts=base.verdicts.file,
                tasks=tasks.file, feedback=base.feedback.file if base.feedback else None, track=self.track,
                style_block=self.config.style_block, regressions=self._regressions(version.round, tasks),
                viewport=self.config.viewport, coder=self.plan.provider("coder", self.track.coder)),
                then=f"; round {next_round} keeps the round-{base.version.round} version")
        if revised is None:
            return self._kept(base.version, next_round, self.errors[-1])
        return revised.model_copy(update={"revised_from": base.version.round})

    def _carried(self) -> Judged | None:
        """With `carry: best`, the round to revise: the highest SR over all tasks so far (ties: the later round)."""
        if self.config.carry != "best" or not self.judged:
            return None
        best = max(self.judged.values(), key=lambda judged: (judged.result.sr, judged.version.round))
        return best if best.verdicts is not None else None

    def _regressions(self, round_: int, tasks: TasksRef) -> list[Regression]:
        """Round `round_`'s regressions, for the next revision: what worked before and how the agent failed now."""
        judged = self.judged.get(round_)
        if judged is None or not judged.result.regressions:
            return []
        descriptions = {task.id: task.description for task in self.tasks(tasks)}
        ran = judged.rollouts
        return [regression(task_id, descriptions.get(task_id, ""),
                           (ran[task_id].termination, ran[task_id].steps, ran[task_id].error) if task_id in ran else None)
                for task_id in judged.result.regressions]

    def _kept(self, version: VersionRef, round_: int, why: str) -> VersionRef:
        """`version` again, as round `round_`'s own copy (own folder, so its rollouts never overwrite
        another round's); `revision.json` says why it was not revised."""
        folder = Path("apps", self.app_id, self.track.folder, f"round-{round_}")
        html = self.run.write(folder / "index.html", self.run.file(version.html).read_bytes())
        self.run.write(folder / "revision.json",
                       json.dumps({"kept": version.html.path, "changed": False, "error": why}, indent=1))
        return version.model_copy(update={"round": round_, "html": html, "contract": None, "revised_from": None,
                                          "transforms": [], "usage": {}})

    # ---- results -------------------------------------------------------------------------------

    def record(self, version: VersionRef, tasks: TasksRef, verdicts: VerifyRef | None,
               rollouts: dict[str, RolloutRef]) -> AppRoundResult:
        """This round's result; it takes the errors recorded since the last one."""
        errors, self.errors = self.errors, []
        reasons = verdicts.reasons if verdicts is not None else {t.id: self.verify_error for t in self.tasks(tasks)}

        def outcomes(refs: dict[str, RolloutRef]) -> list[TaskOutcome]:
            return task_outcomes(self.tasks(tasks), verdicts, reasons, refs)

        result = self._result(version, outcomes(rollouts), errors)
        result.repeats = [RepeatOutcomes(repeat=repeat, tasks=outcomes(refs))
                          for repeat, refs in sorted(by_repeat(self.repeated.pop(version.round, [])).items())]
        varied = self.varied.pop(version.round, {})
        result.variations = [variation_result(*varied[name], outcomes, self.run.root)
                             for name in self.config.variations if name in varied]  # the config's order
        previous = self.judged.get(version.round - 1)
        if previous is not None:
            before = {t.task_id for t in previous.result.tasks if t.success}
            result.regressions = [t.task_id for t in result.tasks if t.task_id in before and not t.success]
        self.judged[version.round] = Judged(version, verdicts, None, result, rollouts)
        result.gaming_suspects = self._audit(version, verdicts, result)
        result.screenshot = first_screenshot(rollouts.values(), self.run.root)
        self.logger.info("%s round %d: FC %.1f%% SR %.1f%%", self.app_id, version.round, 100 * result.fc, 100 * result.sr)
        self.progress.round_finished(result)
        return result

    def _audit(self, version: VersionRef, verdicts: VerifyRef | None, result: AppRoundResult) -> list[GamingSuspect]:
        """Tasks that flipped to success with this version, whose revision changed what their checker reads
        without changing the code that writes it (a static audit: `verifier.audit_revision`)."""
        before = self.judged.get(version.revised_from) if version.revised_from is not None else None
        if before is None or verdicts is None:
            return []
        suspects = gaming_suspects(self.run, before.version, before.result, version, verdicts, result)
        for suspect in suspects:
            self.logger.warning("%s round %d: %s may be gamed: %s", self.app_id, version.round, suspect.task_id,
                                suspect.reason)
        return suspects

    def unjudged(self, version: VersionRef | None, tasks: TasksRef | None) -> list[AppRoundResult]:
        """Every round of a track that could not be judged (no first version, or no task list): each task says why."""
        errors, self.errors = self.errors, []
        reason = "; ".join(errors)
        outcomes = [TaskOutcome(task_id=t.id, solvable=False, checker_valid=False, reason=reason,
                                level=t.level.value if t.level else None)
                    for t in (self.tasks(tasks) if tasks else [])]
        results = [self._result(version, outcomes, errors, round_) for round_ in range(self.config.rounds + 1)]
        for result in results:
            self.progress.round_finished(result)
        return results

    def _result(self, version: VersionRef | None, outcomes: list[TaskOutcome], errors: list[str],
                round_: int | None = None) -> AppRoundResult:
        judged = version is not None and round_ is None
        return AppRoundResult(
            app_id=self.app_id, domain=self.domain, coder=self.track.coder, cua=self.track.cua, mode=self.track.mode,
            commenter_mode=self.track.commenter_mode, round=version.round if round_ is None else round_,
            html=version.html.path if version else "", html_sha=version.html.sha if version else "", tasks=outcomes,
            contract=version.contract if judged else None, revised_from=version.revised_from if judged else None,
            offline_roles=self.offline_roles, errors=list(errors))
