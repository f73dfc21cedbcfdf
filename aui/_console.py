"""What `aui run` / `aui sweep` show while they run, and where Prefect's log lines go.

On a terminal: a live display (stages done / expected per kind, the round, elapsed, an ETA). Without
one (CI, a pipe): one plain line per finished app round. Either way Prefect's log lines — hundreds
per run — go to the Prefect UI and to `runs/<name>/log.txt`, and to the console only with `-v`.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from experiment import ExperimentConfig, Plan, expected_stages
from flows import OPTIONAL_KINDS, LimitSampler, RunProgress, format_duration, watching
from results import track_text

LOG_FILE = "log.txt"


def _is_console_handler(handler: logging.Handler) -> bool:
    return isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)


class RunDisplay:
    """Inside the block: the run's progress is drawn, and Prefect's log goes to log.txt (and the console if verbose)."""

    def __init__(self, console: Console, config: ExperimentConfig, plan: Plan, verbose: bool = False):
        self.console, self.config, self.verbose = console, config, verbose
        totals, app_rounds = expected_stages(config, plan.tasks)
        self.live = console.is_terminal
        self.progress = RunProgress(totals, app_rounds, config.rounds, offline=plan.offline,
                                    on_round=None if self.live else self._plain_line)
        self.log_path = Path(config.run_dir) / LOG_FILE
        self._stack = ExitStack()
        self.limits = LimitSampler()

    # ---- logging --------------------------------------------------------------------------------

    def _route_logs(self) -> None:
        """Prefect's log to log.txt, and off the console unless verbose; undone when the block's stack closes."""
        root = logging.getLogger()
        formatter = next((h.formatter for h in root.handlers if _is_console_handler(h) and h.formatter), None)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        file = logging.FileHandler(self.log_path, encoding="utf-8")
        file.setLevel(logging.INFO)
        file.setFormatter(formatter or logging.Formatter("%(asctime)s | %(levelname)-7s | %(name)s - %(message)s"))
        root.addHandler(file)
        self._stack.callback(file.close)
        self._stack.callback(root.removeHandler, file)
        removed = [] if self.verbose else [h for h in root.handlers if _is_console_handler(h)]
        for handler in removed:
            root.removeHandler(handler)
        self._stack.callback(lambda: [root.addHandler(handler) for handler in removed])  # in their order

    # ---- drawing --------------------------------------------------------------------------------

    def _plain_line(self, result, progress: RunProgress) -> None:
        snap = progress.snapshot()
        track = track_text(result.track_key)
        self.console.print(
            f"[{snap.app_rounds_done}/{snap.app_rounds_total}] {result.app_id} · {track} · round {result.round}: "
            f"FC {100 * result.fc:.1f}% SR {100 * result.sr:.1f}% ({len(result.tasks)} tasks) · "
            f"{format_duration(snap.elapsed_s)} elapsed, ETA {format_duration(snap.eta_s)} · limited by "
            f"{self.limits.now()}",
            soft_wrap=True, highlight=False, markup=False)

    def render(self) -> Group:
        snap = self.progress.snapshot()
        head = Text.assemble(
            ("AUI loop ", "bold"), f"run '{self.config.name}' · round {snap.round} of 0–{snap.rounds} · ",
            f"{snap.app_rounds_done}/{snap.app_rounds_total} app rounds · elapsed {format_duration(snap.elapsed_s)} · ",
            ("ETA " + format_duration(snap.eta_s), "bold"))
        grid = Table.grid(padding=(0, 2))
        for _ in range(3):
            grid.add_column()
        for kind in snap.kinds:
            if kind.kind in OPTIONAL_KINDS and not (kind.total or kind.done):
                continue
            running = f" ({kind.running} running)" if kind.running else ""
            grid.add_row(kind.kind, ProgressBar(total=max(kind.total, 1), completed=kind.done, width=36),
                         f"{kind.done}/{kind.total}{running}")
        limit = Text.assemble(("limited by ", "dim"), self.limits.now())
        note = Text(f"Prefect's log: {self.log_path}", style="dim")
        return Group(head, grid, limit, note)

    # ---- the block ------------------------------------------------------------------------------

    def __enter__(self) -> "RunDisplay":
        self._route_logs()  # undone last: the display and the watching end first
        self._stack.enter_context(watching(self.config.run_dir, self.progress))
        if self.live:
            self._stack.enter_context(Live(get_renderable=self.render, console=self.console, refresh_per_second=4,
                                           transient=False))
        else:
            self.console.print(f"Prefect's log lines go to {escape(str(self.log_path))} (-v shows them here too).",
                               soft_wrap=True, highlight=False)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
