"""`--feedback +defects`: the GUI defects a detector finds in the failed rollouts, as statements for the coder.

The detector (offline rules, or a model of the `detector` role) answers every transition tuple of
each failed rollout; each tuple it calls defective becomes one statement naming the element, the
step and what was seen, e.g. "`#save` (step 3, click(640,360)): no-response — … changed nothing
in the DOM". Statements are deduplicated by element and type and capped, so the coder reads a
short list. Rollouts here ran on the app as it is (no defect injected, no defect-free version to
compare with), so the detector's reference-based rules stay off.
"""

from __future__ import annotations

from pathlib import Path

from commenter.detector import TrajectoryInput, detect_trajectories, get_detector
from cua import TUPLES_FILE, Trajectory, read_tuples, write_tuples
from llm import RoleProvider

from ._refs import RunContext

MAX_DEFECTS = 8


async def detected_defects(run: RunContext, html: str, trajectories: list[str], detector: RoleProvider) -> list[str]:
    """Statements about the defects `detector` finds in the tuples of `trajectories` (folders under the run)."""
    from ._stages import model_client

    for path in sorted(run.root / folder for folder in trajectories):
        if not (path / TUPLES_FILE).is_file():  # a rollout made before tuples were kept
            write_tuples(Trajectory.load(path), path)
    inputs = [TrajectoryInput(folder=folder, html=html) for folder in sorted(trajectories)]
    # a detector that calls no model by its own name; any other through the `detector` role (its registry decides:
    # a model the registry marks offline gets the offline rules)
    own = detector.model is None
    chosen = get_detector(detector.name if own else "detector", None if own else model_client(run, {"detector": detector.name}))
    detections = await detect_trajectories(run.root, inputs, chosen)
    tuples = {(folder, item.step): item for folder in trajectories for item in read_tuples(run.root / folder)}
    statements: dict[tuple[str, str], str] = {}
    for found in detections:
        if not found.defect:
            continue
        item = tuples.get(found.key)
        element = item.element if item else None
        name = f"`{element.selector}`" if element and element.selector else (f"#{element.id}" if element and element.id
                                                                              else "the page")
        key = (name, found.type or "defect")
        if key not in statements and len(statements) < MAX_DEFECTS:
            action = item.action_text if item else "?"
            statements[key] = (f"{name} (task {Path(found.trajectory).name}, step {found.step}, {action}): "
                               f"{found.type or 'a GUI defect'} — {found.evidence}")
    return list(statements.values())
