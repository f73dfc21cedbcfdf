"""The run viewer: a local web app over run folders, for researchers who want to know *why*.

    aui view runs/                                   # every run under runs/, on http://127.0.0.1:8765
    app = create_app([Path("runs")], who="ada")      # the same app, e.g. under a test client

Pages: runs (config, tracks, FC / FC proven / SR per round, tokens and cost) → a run (its table,
apps × rounds, label progress, agreement between judges) → an app (versions side by side, the
commenter's feedback, the non-regression outcome, an HTML diff between rounds, tasks × rounds) → a
trajectory, one step at a time (the action drawn where the agent pointed, its reply and thought,
the element under the pointer, timings, tokens; ←/→ steps, j/k trajectories) with blind labelling
(s / f / u) into the run's `labels.jsonl`; and a comparison of two rounds or two runs.

It reads run folders through the models the flows write (`flows.read_results`, `cua.Trajectory`,
`commenter.Feedback`, `verifier.judge.Label`); it writes nothing but labels; it serves no file outside the
run folders, and app versions only in a sandbox. No CDN, no build step: Jinja2 templates and one
small script (`static/viewer.js`).
"""

from ._app import create_app, serve_viewer
from ._pages import ViewerSettings
from ._runs import Run, load_run

__all__ = [
    "Run",
    "ViewerSettings",
    "create_app",
    "load_run",
    "serve_viewer",
]
