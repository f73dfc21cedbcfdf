"""What `aui run` shows while it runs: a live display on a terminal, plain lines without one, the log in log.txt."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from apps_prompts import load_app
from aui._console import RunDisplay
from aui._tables import levels_table, results_table
from experiment import check_config, make_config
from results import AppRoundResult, TaskOutcome, table_rows

ROOT = Path(__file__).resolve().parents[2]
AUI = Path(sys.executable).parent / "aui"
APP = "unit-converter"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _two_tasks(folder: Path) -> Path:
    tasks = [t.model_dump(mode="json", exclude_none=True) for t in load_app(APP).tasks[:2]]
    path = folder / "tasks.yaml"
    path.write_text(yaml.safe_dump({APP: tasks}, sort_keys=False))
    return path


def _env(folder: Path) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTEST_", "AUI_", "COLUMNS", "LINES"))}
    env.update({"PREFECT_HOME": str(folder / "prefect-home"), "PREFECT_API_URL": PREFECT_API_URL.value(),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "AUI_CACHE_DIR": str(folder / "cache")})
    return env


def _command(folder: Path, name: str) -> list[str]:
    return [str(AUI), "run", "--offline", "--app", APP, "--tasks-file", str(_two_tasks(folder)), "--rounds", "0",
            "--max-steps", "5", "--name", name, "--out", str(folder / "runs")]


def test_without_a_terminal_each_app_round_is_one_plain_line_and_prefects_log_goes_to_log_txt(prefect_server, tmp_path):
    done = subprocess.run(_command(tmp_path, "plain"), cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    rounds = [line for line in lines if line.startswith("[")]
    assert len(rounds) == 1, done.stdout
    assert re.fullmatch(rf"\[1/1\] {APP} · offline · heuristic · integrated · dashboard · round 0: FC 100\.0% "
                        r"SR (0\.0|50\.0|100\.0)% \(2 tasks\) · \S+ elapsed, ETA \S+ · limited by "
                        r"(CPU|nothing saturated|browser slots) \(.+\)", rounds[0]), rounds[0]
    output = done.stdout + done.stderr
    assert "Task run" not in output and "Flow run" not in output  # Prefect's per-task lines stay off the console
    log = (tmp_path / "runs" / "plain" / "log.txt").read_text()
    assert "Task run 'rollout unit-converter/" in log and "Finished in state Completed()" in log
    assert "FC / FC proven / SR" in done.stdout
    # the roles offline providers played, by the rule every output uses (a tasks file is an offline proposer)
    assert ("All roles ran on offline providers: coder, proposer, verifier, commenter, judge, cua (heuristic) "
            "(no model endpoint).") in done.stdout


def test_on_a_terminal_the_run_draws_a_live_progress_display(prefect_server, tmp_path):
    controller, terminal = pty.openpty()
    env = {**_env(tmp_path), "COLUMNS": "120", "LINES": "40", "TERM": "xterm-256color"}
    process = subprocess.Popen(_command(tmp_path, "live"), cwd=ROOT, env=env, stdin=terminal, stdout=terminal,
                               stderr=terminal, close_fds=True)
    os.close(terminal)
    received = bytearray()
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the other end closed: the run is over
                    break
                if not chunk:
                    break
                received += chunk
            elif process.poll() is not None:
                break
        assert process.wait(timeout=60) == 0, received.decode(errors="replace")[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    text = ANSI.sub("", received.decode("utf-8", errors="replace"))
    for kind in ("generate", "verify", "roll out", "comment", "revise"):
        assert kind in text, text[-3000:]
    assert re.search(r"roll out\s+\S+\s+2/2", text), text[-3000:]  # both rollouts counted done
    assert "ETA" in text and "app rounds" in text and "limited by " in text
    assert "Task run" not in text
    table = text[text.index("FC / FC proven / SR"):]
    assert max(len(line) for line in table.splitlines()) <= 120


def _result(app_id: str, domain: str, round_: int, success: bool) -> AppRoundResult:
    return AppRoundResult(app_id=app_id, domain=domain, coder="gpt-5", cua="uitars", mode="integrated",
                          commenter_mode="dashboard", round=round_, html="x.html", html_sha="0",
                          tasks=[TaskOutcome(task_id="t", solvable=True, checker_valid=True, proof="proven", success=success)])


def test_the_final_table_of_six_domains_fits_a_120_column_terminal_without_cutting_a_figure():
    domains = ["app", "landing", "game", "interactive", "tool", "utility"]
    results = [_result(f"a-{d}", d, r, r == 1) for d in domains for r in (0, 1)]
    console = Console(record=True, width=120)
    console.print(results_table(table_rows(results), width=120))
    console.print(levels_table(table_rows(results)))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "…" not in text
    # every figure of every domain and overall is shown whole: round 0's FC and FC proven, round 1's four
    # (FC, FC proven, SR, weighted), then round 1's SR sup. and SR prov. and the levels table's one SR
    assert text.count("100.0") == 7 * (2 + 4) + 2 + 1
    assert "each domain cell: FC, FC proven, SR, weighted (top to bottom)" in " ".join(text.split())
    wide = Console(record=True, width=320)
    wide.print(results_table(table_rows(results), width=320))
    assert "100.0 / 100.0 / 100.0 / 100.0" in wide.export_text()  # one line per row when there is room


def test_progress_counts_a_shared_stage_once_and_shrinks_totals_as_verification_says(tmp_path):
    config = make_config({"app_ids": [APP], "rounds": 1, "out_dir": str(tmp_path), "commenter_modes": ["dashboard", "text-only"]})
    display = RunDisplay(Console(file=open(os.devnull, "w")), config, check_config(config, probe_endpoints=False))
    progress = display.progress
    # round 0 is shared by the two tracks (one per commenter mode); rounds 1 are their own
    assert progress.totals == {"generate": 1, "verify": 3, "vary": 0, "roll out": 7 + 14, "comment": 2, "revise": 2}
    for _ in range(2):  # both tracks ask for the same round-0 rollout: counted once
        with progress.stage("roll out", "apps/x/round-0/rollouts/heuristic/t1", round_=0):
            pass
    progress.fewer("roll out", "apps/x/round-0/rollouts/heuristic", 2)
    progress.fewer("roll out", "apps/x/round-0/rollouts/heuristic", 2)  # said once per version
    snapshot = progress.snapshot()
    rollouts = next(k for k in snapshot.kinds if k.kind == "roll out")
    assert (rollouts.done, rollouts.total, rollouts.running) == (1, 19, 0)
    assert snapshot.eta_s is not None and snapshot.eta_s >= 0


def test_variations_add_a_vary_stage_per_version_and_their_rollouts(tmp_path):
    config = make_config({"app_ids": [APP], "rounds": 1, "out_dir": str(tmp_path), "variations": ["dark", "popup"]})
    progress = RunDisplay(Console(file=open(os.devnull, "w")), config, check_config(config, probe_endpoints=False)).progress
    # two versions (round 0 and the revision), each proven in two other variations; every look rolled out
    assert progress.totals["vary"] == 2 * 2 and progress.totals["roll out"] == 7 * 2 * 3
    plain_config = make_config({"app_ids": [APP], "out_dir": str(tmp_path)})
    plain = RunDisplay(Console(file=open(os.devnull, "w")), plain_config, check_config(plain_config, probe_endpoints=False))
    drawn = Console(record=True, width=120)
    drawn.print(plain.render())
    assert not any(line.startswith("vary") for line in drawn.export_text().splitlines())  # no row without variations


@pytest.mark.parametrize("usage", [{}, {"by_role": {}, "calls": {"calls": 0}}])
def test_an_offline_report_says_no_model_calls_instead_of_zeros(tmp_path, usage):
    from results import write_report

    results = [_result("a", "app", 0, True)]
    html = write_report(tmp_path, table_rows(results), results, ["cua"], usage).read_text()
    assert "No model calls" in html


def test_a_report_with_model_usage_shows_calls_tokens_and_cost_per_role_as_a_table(tmp_path):
    """The usage ledger of a run with model calls, stored in results.json as a run stores it, rebuilt into
    report.html as `aui report` does: one table row per role (and per commenter mode), never a JSON dump."""
    from llm import CallRecord, Usage, UsageLedger
    from results import read_results, write_report, write_results

    ledger = UsageLedger()
    for role, prompt, completion, cost in (("coder", 12000, 3400, 0.0188), ("coder", 9000, 2600, 0.0142),
                                           ("cua", 5000, 60, 0.0051), ("commenter", 7000, 800, 0.0086)):
        ledger.record(CallRecord(role=role, model="scripted", api="chat", cost_usd=cost,
                                 usage=Usage(prompt_tokens=prompt, completion_tokens=completion)))
    by_role = {role: usage.model_dump() for role, usage in ledger.by_role().items()}
    # the commenter's calls were all in the dashboard mode: its row and the mode's row are the same figures
    usage = {"by_role": by_role, "by_commenter_mode": {"dashboard": by_role["commenter"]}, "calls": {"calls": 4}}
    write_results(tmp_path, [_result("a", "app", 0, True)], usage=usage)
    stored = read_results(tmp_path)
    html = write_report(tmp_path, table_rows(stored.apps), stored.apps, stored.offline_roles, stored.usage).read_text()
    section = html.split("<h2>Token use and cost per role</h2>")[1].split("<h2>")[0]
    assert section.startswith('<table class="summary"><thead><tr><th>role</th><th>calls</th><th>prompt tokens</th>'
                              "<th>completion tokens</th><th>cost (USD)</th></tr></thead>")
    assert "<tr><td>coder</td><td>2</td><td>21000</td><td>6000</td><td>0.0330</td></tr>" in section
    assert "<tr><td>cua</td><td>1</td><td>5000</td><td>60</td><td>0.0051</td></tr>" in section
    for row in ("commenter", "commenter (dashboard)"):
        assert f"<tr><td>{row}</td><td>1</td><td>7000</td><td>800</td><td>0.0086</td></tr>" in section
    assert "No model calls" not in html and "prompt_tokens" not in html


def test_the_display_says_what_limits_the_run():
    from flows import LimitSampler, what_limits

    assert what_limits(1.9, 2, 3, 2, 0, 0).startswith("CPU (1.9 of 2 cores busy)")
    assert what_limits(0.4, 2, 0, 8, 2, 6).startswith("model endpoint (6 calls in flight, 2 waiting")
    assert what_limits(0.4, 2, 4, 8, 0, 8) == "model latency (8 calls awaiting replies; 4 rollouts wait for a browser slot (--concurrency))"
    assert what_limits(0.5, 2, 3, 2, 0, 0).startswith("browser slots (2 rollouts in flight, 3 waiting")
    assert what_limits(0.2, 4, 0, 0, 0, 0) == "nothing saturated (0.2 of 4 cores busy)"
    # A sampler reads this process's counters: nothing in flight here
    assert LimitSampler(every_s=0).now().startswith(("nothing saturated", "CPU"))
