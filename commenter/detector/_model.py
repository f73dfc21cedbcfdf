"""The model detector: one transition tuple (before, action, after; optionally the task) → a validated answer.

The reply is untrusted: parsed as JSON (a code fence or a sentence around the object is
tolerated; NaN and Infinity are not JSON) and validated against `DETECTION_SCHEMA`. A reply that
fails is asked for once more, quoting what was wrong; a second failure is recorded as an error
with `defect=None` — never guessed. A failed model call is recorded the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cua import PageTransform, TransitionTuple
from llm import CALL_FAILURES, JsonReplyError, ModelClient, Repair, RoleClient, ask_json, parse_json_reply

from ._prompts import DETECTION_SCHEMA, PROMPT_VERSION, REPAIR, build_messages, prompt_sha256
from ._records import Detection

DEFAULT_ROLE = "detector"
MAX_REPAIRS = 1
MAX_EVIDENCE_CHARS = 1_000


class DetectionError(ValueError):
    """A reply that is not a usable detection; the message says what is wrong (quoted in the re-ask)."""


def parse_detection(text: str) -> dict[str, Any]:
    """The detection in a model reply, validated against `DETECTION_SCHEMA` (read by `llm.parse_json_reply`).

    Raises:
        DetectionError: no JSON object, not valid JSON, or the object breaks the schema (naming the field),
            or it says `defect: false` with a type.
    """
    try:
        data = parse_json_reply(text, DETECTION_SCHEMA)
    except JsonReplyError as error:
        raise DetectionError(str(error)) from error
    if data["defect"] is False and data["type"] is not None:
        raise DetectionError(f"type: {data['type']!r} given with defect false (a type goes with defect true only)")
    return data


class ModelDetector:
    """Detects GUI defects in tuples through a VLM named by registry role or model name (default: `detector`).

        detector = ModelDetector(ModelClient())
        detection = await detector.detect(item, trajectory_folder, trajectory_id=trajectory_id, task=task)

    Raises (constructor): UnknownModelError when `model` is neither a role nor a model of the registry.
    """

    offline = False
    uses_reference = False
    """The model is shown the transition only, never the defect-free version."""

    def __init__(self, client: ModelClient, model: str = DEFAULT_ROLE, max_repairs: int = MAX_REPAIRS, **params: Any):
        self.client = RoleClient(client, model)
        self.model = model
        self.name = self.client.model
        self.max_repairs = max(0, max_repairs)
        self.params = params
        self.prompt_version = PROMPT_VERSION
        self.prompt_sha256 = prompt_sha256()

    async def detect(self, item: TransitionTuple, folder: Path | str, *, trajectory_id: str,
                     task: str | None = None) -> Detection:
        """The detection for `item` of the trajectory in `folder`. Never raises for the tuple or the model."""
        detection = Detection(trajectory=trajectory_id, step=item.step, detector=self.name, truth=item.defect,
                              prompt_version=self.prompt_version)
        try:
            before, after = (_image(Path(folder), name) for name in (item.before, item.after))
        except (FileNotFoundError, OSError) as exc:
            detection.error = f"nothing to judge: {exc}"
            return detection
        asked = build_messages(item, before, after, task)
        # The images go with every repair: the first reply may hold no judgement to keep.
        answer = await ask_json(self.client, asked, parse=parse_detection, repair=Repair(REPAIR, resend="question"),
                                attempts=1 + self.max_repairs, params=self.params, call_errors=CALL_FAILURES)
        detection.tokens, detection.error = answer.tokens, answer.error
        if not answer.ok:
            return detection
        detection.defect, detection.type = answer.value["defect"], answer.value["type"]
        detection.evidence = answer.value["evidence"].strip()[:MAX_EVIDENCE_CHARS]
        return detection

    async def detect_trajectory(self, folder: Path | str, html: str, *, trajectory_id: str,
                                transform: PageTransform | None, reference_html: str | None,
                                tuples: list[TransitionTuple], task: str | None) -> list[Detection]:
        """One detection per tuple, in order (the `Detector` protocol of `get_detector`); `html`,
        `transform` and `reference_html` are not shown to the model."""
        return [await self.detect(item, folder, trajectory_id=trajectory_id, task=task) for item in tuples]


def _image(folder: Path, name: str | None) -> bytes:
    if not name:
        raise FileNotFoundError(f"{folder}: the tuple names no screenshot")
    return (folder / name).read_bytes()
