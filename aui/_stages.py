"""`aui verify / rollout / dashboard / comment`: one stage at a time, thin wrappers over the roles.

    aui verify     judge one app's tasks, print FC and the per-task verdicts, write verdicts.json
    aui rollout    one agent, one task, one app: print the termination reason and step count
    aui dashboard  render a trajectory's dashboard (`dashboard_render`)
    aui comment    comment on a trajectory (`commenter`)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import typer
from rich.console import Console
from rich.table import Table

from apps_prompts import load_app, reference_html_path
from commenter import get_commenter
from cua import BrowserConfig, RolloutConfig, Trajectory, Viewport, clear_rollout, rollout, write_tuples
from cua.policies import get_policy
from dashboard_render import DASHBOARD_FILE, account_trajectory, render_trajectory
from experiment import CommenterMode, is_offline_provider
from llm import ModelClient, ModelConfigError, UnknownNameError, get_client
from verifier import LLMVerifierConfig, function_completeness, function_completeness_proven, rollout_checker, verify_app

from ._options import APP_HTML, APP_ID, COMMENTER, COMMENTER_MODE, CUA, CUA_MODEL, MODELS_REGISTRY, SPECS, TRAJECTORY_DIR
from ._options import VERIFIER, VIEWPORT
from ._output import _fail, err_console, exit_on, failed, in_browser, read_html

console = Console()

_HTML_NAMES = ("app.html", "index.html")


def verify_command(
    app_id: str = APP_ID,
    apps: Path = SPECS,
    html: Path = APP_HTML,
    model: str = VERIFIER,
    out: Path = typer.Option(..., "--out", help="Folder for verdicts.json."),
    models_config: Path = MODELS_REGISTRY,
    batch_size: int = typer.Option(10, "--batch-size", min=1, help="Tasks per model conversation."),
    screenshot: bool = typer.Option(False, "--screenshot", help="Show the model a screenshot of the loaded app."),
) -> None:
    """Decide per task whether the app supports it, gate each checker, and report Function Completeness."""
    with exit_on(KeyError, FileNotFoundError, ValueError):
        spec = load_app(app_id, apps)
    text = read_html(html) if html is not None else None
    client = None
    if not is_offline_provider("verifier", model):
        with exit_on(ModelConfigError, offline="--verifier offline"):
            client = get_client(models_config)
            client.registry.get(model).check_usable()
    config = LLMVerifierConfig(batch_size=batch_size, screenshot=screenshot)
    try:
        verdicts = in_browser(verify_app(spec, text, verifier=model, client=client, config=config, out_dir=out))
    except ValueError as exc:  # no HTML to judge; a model entry or ${ENV} key missing
        raise failed(exc, offline="--verifier offline")
    except RuntimeError as exc:  # llm.ModelCallError: the model failed for good after retries
        err_console.print(f"[red]model call failed:[/] {exc}", soft_wrap=True)
        raise typer.Exit(1)

    table = Table("task", "solvable", "kind", "gate", "proof", "reasons / warnings", title=f"{spec.id} — verifier: {verdicts.verifier}")
    proof_style = {"proven": "[green]proven[/]", "claimed": "[yellow]claimed[/]", "unsupported": "[red]unsupported[/]"}
    for verdict in verdicts.verdicts:
        gate = "—" if verdict.gate is None else ("[green]pass[/]" if verdict.gate.accepted else "[red]fail[/]")
        notes = "; ".join(verdict.reasons + [f"[yellow]{w}[/]" for w in verdict.warnings])
        table.add_row(
            verdict.task_id,
            "[green]yes[/]" if verdict.valid else "[red]no[/]",
            verdict.checker_kind or "—",
            gate,
            proof_style.get(verdict.proof, verdict.proof),
            notes if verdict.proven else "; ".join(filter(None, [notes, verdict.proof_reason])),
        )
    console.print(table)
    rate = function_completeness(verdicts)
    tokens = verdicts.tokens
    spent = f", {tokens.total_tokens} tokens in {tokens.calls} call(s)" if tokens.calls else ""
    console.print(f"Function Completeness: [bold]{rate}[/] · proven: [bold]{function_completeness_proven(verdicts)}[/]{spent}")
    console.print(f"wrote {out / 'verdicts.json'}")


def rollout_command(
    app_id: str = APP_ID,
    task_id: str = typer.Option(..., "--task", help="Task id within the app."),
    policy: str = CUA,
    out: Path = typer.Option(..., "--out", help="Folder for trajectory.json and the step screenshots (an earlier "
                             "rollout's files there are replaced; other files stay)."),
    model: str = CUA_MODEL,
    html: Path = APP_HTML,
    apps: Path = SPECS,
    models: Path = MODELS_REGISTRY,
    max_steps: int = typer.Option(20, "--max-steps", min=1, help="Step limit (the paper uses 20)."),
    trace: bool = typer.Option(False, "--trace", help="Also record a Playwright trace.zip."),
    viewport: Viewport = VIEWPORT,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary instead of text."),
) -> None:
    """Run one rollout of a task with its reference checker and print how it ended."""
    try:
        spec = load_app(app_id, apps)
        task = spec.task(task_id)
    except (KeyError, FileNotFoundError, ValueError) as exc:
        raise failed(exc)
    html_path = html or reference_html_path(spec)
    if html is None and (html_path is None or not Path(html_path).is_file()):
        raise _fail(f"no app HTML for '{app_id}': give --html PATH (the spec has no reference_html)")
    app_html = read_html(html_path)
    if not task.checker:
        err_console.print(f"[yellow]warning:[/] task '{task_id}' has no reference checker; it cannot succeed")

    if model and is_offline_provider("cua", policy):
        raise _fail(f"--cua-model {model}: the {policy} policy calls no model; name one that does, e.g. --cua uitars")
    try:
        agent = get_policy(policy, model=model, models_path=str(models) if models else None)
        checker = rollout_checker(task.checker)  # reference checkers may be rules: compiled here
    except Exception as exc:  # unknown name, bad model entry, missing key variable, a checker that does not compile
        raise _fail(f"policy '{policy}': {exc}")

    config = RolloutConfig(max_steps=max_steps, trace=trace, browser=BrowserConfig(viewport=viewport))
    out.mkdir(parents=True, exist_ok=True)  # a file where it goes: one line naming it (`aui._entry`)
    clear_rollout(out)  # an earlier rollout's screenshots there would sit beside this one's, named by nothing
    (out / DASHBOARD_FILE).unlink(missing_ok=True)  # `aui dashboard` drew it of the earlier trajectory
    trajectory = in_browser(rollout(app_html, task.description, agent, checker, out,
                                    config, app_id=spec.id, task_id=task.id, expected_outcome=task.expected_outcome))
    tuples = write_tuples(trajectory, out)  # the transition tuples (before, action, after) of every step
    summary = {
        "app": spec.id,
        "task": task.id,
        "policy": policy,
        "offline": is_offline_provider("cua", policy),
        "termination": trajectory.termination.value if trajectory.termination else None,
        "success": trajectory.success,
        "steps": len(trajectory.steps),
        "error": trajectory.error,
        "trajectory": str(out / "trajectory.json"),
        "tuples": str(tuples),
    }
    if as_json:
        print(json.dumps(summary))
    else:
        colour = "green" if trajectory.success else "yellow"
        console.print(
            f"[{colour}]{summary['termination']}[/] after {summary['steps']} step(s) — {spec.id}/{task.id} "
            f"with {policy}{' (offline)' if summary['offline'] else ''}; trajectory: {summary['trajectory']}",
            soft_wrap=True,
        )
        if trajectory.error:
            console.print(f"  reason: {trajectory.error}", soft_wrap=True)
    raise typer.Exit(1 if summary["termination"] == "error" else 0)


def _load_trajectory_or_exit(folder: Path):
    """The trajectory in `folder`, every screenshot it names there; else one error line naming what is wrong."""
    with exit_on(FileNotFoundError, ValueError):
        trajectory = Trajectory.load(folder)
    # The dashboard draws "no screenshot" where a step kept none, and the commenter reads without it: a file
    # trajectory.json names but the folder lacks would pass the same way (and its tokens be left out), hiding a damaged folder.
    for name in [trajectory.initial_screenshot, *(step.screenshot for step in trajectory.steps)]:
        if name and not (folder / name).is_file():
            raise _fail(f"{folder / name}: no such screenshot (trajectory.json names it)")
    return trajectory


def dashboard_command(
    trajectory_dir: Path = TRAJECTORY_DIR,
    out: Path = typer.Option(None, "--out", help="PNG to write; default TRAJECTORY_DIR/dashboard.png."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary (path, steps, grid, min_crop_scale, tokens) instead of text."),
) -> None:
    """Render a trajectory as one 1920×1080 dashboard PNG and report its visual-token savings."""
    trajectory = _load_trajectory_or_exit(trajectory_dir)
    target = out or trajectory_dir / DASHBOARD_FILE
    rendered = render_trajectory(trajectory, trajectory_dir, target)
    account = account_trajectory(trajectory_dir)
    summary = {
        "path": str(rendered.path),
        "steps": len(trajectory.steps),
        "grid": f"{rendered.layout.columns}x{rendered.layout.rows}",
        "min_crop_scale": rendered.layout.min_action_scale,
        # raw_qwen, dashboard_qwen, reduction_qwen, then the same for openai (round leaves the token counts ints)
        "tokens": {f"{kind}_{rule}": round(getattr(account, f"{kind}_{rule}"), 4)
                   for rule in ("qwen", "openai") for kind in ("raw", "dashboard", "reduction")},
    }
    if as_json:
        print(json.dumps(summary))
        return
    console.print(f"wrote [bold]{rendered.path}[/] — {summary['steps']} steps, grid {summary['grid']}", soft_wrap=True)
    console.print(
        f"visual tokens: Qwen2.5-VL {account.raw_qwen} → {account.dashboard_qwen} ({_fewer(account.reduction_qwen)}), "
        f"OpenAI high-detail {account.raw_openai} → {account.dashboard_openai} ({_fewer(account.reduction_openai)})"
    )


def _fewer(reduction: float) -> str:
    """A short trajectory's dashboard can cost more tokens than its few screenshots: say so, not "-12.5% fewer"."""
    return f"{reduction:.1%} fewer" if reduction >= 0 else f"{-reduction:.1%} more"


def comment_command(
    trajectory_dir: Path = TRAJECTORY_DIR,
    model: str = COMMENTER,
    mode: str = COMMENTER_MODE,
    html: Path = typer.Option(
        None, "--html", help="The app's HTML (the offline commenter measures it); default app.html/index.html in the folder."
    ),
    models_config: Path = MODELS_REGISTRY,
    out: Path = typer.Option(None, "--out", help="Write the comment JSON here instead of printing it."),
) -> None:
    """Comment on one trajectory: JSON with issues, actionable_changes, fit_within_screen, avoid_regressions."""
    if mode not in get_args(CommenterMode):  # the offline commenter reads facts whatever the mode: say a typo anyway
        raise _fail(f"--commenter-mode {mode!r}: not one of {', '.join(get_args(CommenterMode))}")
    _load_trajectory_or_exit(trajectory_dir)
    html_path = html or next((trajectory_dir / n for n in _HTML_NAMES if (trajectory_dir / n).is_file()), None)
    app_html = read_html(html_path) if html_path else None
    with exit_on(UnknownNameError, ModelConfigError, offline="--commenter offline"):
        client = None if is_offline_provider("commenter", model) else ModelClient(models_config)
        commenter = get_commenter(model, client=client, mode=mode)
    if commenter.offline and html_path is None:
        err_console.print("[yellow]note:[/] no app HTML (--html): the offline commenter uses the trajectory only")

    with exit_on(ModelConfigError, offline="--commenter offline"):  # a key variable unset: found at the first call
        result = in_browser(commenter.comment(trajectory_dir, html=app_html))
    text = result.model_dump_json(indent=2, exclude={"raw_replies"} if result.comment is not None else set())
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {out}")
    else:
        print(text)
    if result.comment is None:
        err_console.print(f"[red]no valid comment:[/] {result.error}", soft_wrap=True)
        raise typer.Exit(1)
