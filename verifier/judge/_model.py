"""The model judge: task + expected outcome + an image of the attempt → a validated verdict.

`screenshot` mode shows the trajectory's last screenshot, `flow` mode its dashboard drawn without
the checker's verdict. The reply is untrusted: parsed as JSON (a code fence or a sentence around
the object is tolerated; NaN and Infinity are not JSON) and validated against `VERDICT_SCHEMA`.
A reply that fails is asked for once more, quoting what was wrong; a second failure is recorded
as an error with `success=None` — never guessed. A model call that fails for good is recorded the
same way, so one bad trajectory does not cost the others.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from cua import Trajectory
from dashboard_render import render_trajectory
from llm import CALL_FAILURES, JsonReplyError, ModelClient, Repair, RoleClient, ask_json, parse_json_reply

from ._prompts import MODES, PROMPT_VERSION, REPAIR, VERDICT_SCHEMA, build_messages, prompt_sha256
from ._records import Judgement, JudgeMode, TrajectoryJudge

DEFAULT_ROLE = "judge"
MAX_REPAIRS = 1
MAX_REASON_CHARS = 2_000  # a verdict's reason is a sentence or two; a runaway one is cut, not stored whole


class VerdictError(ValueError):
    """A reply that is not a usable verdict; the message says what is wrong (quoted in the re-ask)."""


def parse_verdict(text: str) -> dict[str, Any]:
    """The verdict in a model reply, validated against `VERDICT_SCHEMA` (read by `llm.parse_json_reply`).

    Raises:
        VerdictError: no JSON object, not valid JSON (NaN/Infinity included), or the object breaks
            the schema — naming the field and the value at fault.
    """
    try:
        return parse_json_reply(text, VERDICT_SCHEMA)
    except JsonReplyError as error:
        raise VerdictError(str(error)) from error


def last_screenshot(trajectory: Trajectory, folder: Path) -> Path:
    """The last screenshot of the attempt on disk: the latest step's that exists, else the initial one.

    Raises:
        FileNotFoundError: the trajectory has no screenshot on disk, naming the folder.
    """
    names = [step.screenshot for step in reversed(trajectory.steps)] + [trajectory.initial_screenshot]
    if found := next((name for name in names if name and (folder / name).is_file()), None):
        return folder / found
    raise FileNotFoundError(f"{folder}: the trajectory has no screenshot on disk")


class ModelJudge(TrajectoryJudge):
    """Judges trajectories through a VLM named by registry role or model name (default: the `judge` role).

        judge = ModelJudge(ModelClient(), mode="flow")
        judgement = await judge.judge(ref, run_dir)      # a `Judgement`; failures are in `.error`

    Raises (constructor):
        ValueError: `mode` is not 'screenshot' or 'flow'.
        UnknownModelError: `model` is neither a role nor a model of the client's registry.
    """

    offline = False

    def __init__(self, client: ModelClient, model: str = DEFAULT_ROLE, mode: JudgeMode = "screenshot"):
        if mode not in MODES:
            raise ValueError(f"judge mode {mode!r} is not one of {', '.join(MODES)}")
        self.client = RoleClient(client, model)
        self.name = self.client.model
        """The registry model name behind `model`: the `judge` field of every judgement."""
        self.mode: JudgeMode = mode
        self.prompt_version = PROMPT_VERSION
        self.prompt_sha256 = prompt_sha256(mode)

    async def decide_on(self, judgement: Judgement, trajectory: Trajectory, folder: Path, shown: bytes) -> None:
        """Ask the model about the trajectory and `shown` (its image); a model that fails is recorded, not raised."""
        asked = build_messages(self.mode, trajectory.viewport, trajectory.task, trajectory.expected_outcome, shown)
        # The image goes with every repair: the first reply may hold no judgement at all, and one without it would be a guess.
        answer = await ask_json(self.client, asked, parse=parse_verdict, repair=Repair(REPAIR, resend="question"),
                                attempts=1 + MAX_REPAIRS, call_errors=CALL_FAILURES)
        judgement.tokens, judgement.error = answer.tokens, answer.error
        if not answer.ok:
            return
        reason = answer.value["reason"].strip()
        judgement.success = answer.value["success"]
        judgement.reason = reason[:MAX_REASON_CHARS] + ("…" if len(reason) > MAX_REASON_CHARS else "")
        judgement.confidence = float(answer.value["confidence"])

    async def shown(self, trajectory: Trajectory, folder: Path) -> bytes:
        if self.mode == "screenshot":
            return last_screenshot(trajectory, folder).read_bytes()
        # The dashboard as flows store it says SUCCESS or FAILURE: the judge is shown one without the verdict.
        rendered = await asyncio.to_thread(render_trajectory, trajectory, folder, hide_verdict=True)
        return rendered.png
