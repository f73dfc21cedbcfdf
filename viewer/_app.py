"""The viewer's web app: routes over a `RunIndex` (FastAPI + Jinja2; no CDN, no build step).

    /                                   runs: config, date, tracks, FC / FC proven / SR per round, tokens and cost
    /runs/{run}                         one run: its table, apps × rounds, label progress, agreement
    /runs/{run}/apps/{app}?track=…      an app: versions side by side, feedback, contract, HTML diff, task × round grid
    /runs/{run}/t/{trajectory}          a trajectory step by step (←/→ steps, j/k trajectories, s/f/u labels)
    /runs/{run}/compare?a=R&b=R         two rounds of a run;  /compare?a=RUN&b=RUN[&ra=R&rb=R]  two runs
    POST /runs/{run}/labels             a label → the run's labels.jsonl (the only write)
    /files/{run}/{path}                 a file inside the run folder, nothing outside it
    /defects, /defects/{run}            GUI defect runs and their detectors' figures (`_defects.py`)

`serve_viewer` serves it on this machine (uvicorn, 127.0.0.1 by default: labels are the only write, but still).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field

from verifier.judge import Label, append_labels

from ._defects import add_defect_routes
from ._files import CONTENT_TYPES, SANDBOX_CSP, inside
from ._insights import add_insights_routes
from ._pages import Side, ViewerSettings, app_page, checker_verdict, compare_page, disagrees, label_progress, run_page
from ._pages import runs_page, trajectory_page
from ._runs import Run, RunIndex

HERE = Path(__file__).parent
# The viewer's own pages load nothing from elsewhere; images and scripts come from this server only.
PAGE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-src 'self'"


class LabelRequest(BaseModel):
    trajectory_id: str = Field(min_length=1)
    label: Literal["success", "failure", "unsure"]
    note: str = Field(default="", max_length=4_000)


def create_app(roots: list[Path], who: str, blind: bool = True) -> FastAPI:
    """The viewer over the run folders (or folders of runs) in `roots`; labels are written as `who`."""
    index = RunIndex(roots)
    settings = ViewerSettings(who=who, blind=blind)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    # Static files are cached for good under a URL that names their content.
    templates.env.globals["version"] = hashlib.sha256(b"".join(
        path.read_bytes() for path in sorted((HERE / "static").iterdir()))).hexdigest()[:12]
    app = FastAPI(title="AUI loop viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    def page(request: Request, template: str, context: dict, status: int = 200) -> HTMLResponse:
        response = templates.TemplateResponse(request, template, {"settings": settings, **context}, status_code=status)
        response.headers["Content-Security-Policy"] = PAGE_CSP
        return response

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        if request.method != "GET" or request.url.path.startswith("/files/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return page(request, "error.html", {"message": exc.detail}, status=exc.status_code)

    @app.middleware("http")
    async def _cache_static(request: Request, call_next):
        response = await call_next(request)
        if request.url.path.startswith("/static/") and request.query_params.get("v"):
            response.headers["Cache-Control"] = "private, max-age=31536000, immutable"
        return response

    _add_page_routes(app, index, settings, page)
    _add_label_and_file_routes(app, index, settings)
    add_defect_routes(app, [Path(root) for root in roots], page)
    add_insights_routes(app, lambda name: _run_or_404(index, name), page)

    @app.get("/healthz")
    def health():
        return Response("ok", media_type="text/plain")

    return app


def _run_or_404(index: RunIndex, name: str) -> Run:
    run = index.run(name)
    if run is None:
        raise HTTPException(404, f"no run '{name}' here")
    return run


def _add_page_routes(app: FastAPI, index: RunIndex, settings: ViewerSettings, page) -> None:
    """The pages: runs, a run, an app, a trajectory, and the two comparisons."""

    @app.get("/", response_class=HTMLResponse)
    def runs(request: Request):
        return page(request, "runs.html", runs_page(index))

    @app.get("/runs/{name}", response_class=HTMLResponse)
    def run(request: Request, name: str):
        return page(request, "run.html", run_page(_run_or_404(index, name), settings))

    @app.get("/runs/{name}/apps/{app_id}", response_class=HTMLResponse)
    def app_view(request: Request, name: str, app_id: str, track: str | None = None, a: int | None = None,
                 b: int | None = None):
        return page(request, "app.html", app_page(_run_or_404(index, name), app_id, track, a, b))

    @app.get("/runs/{name}/t/{trajectory_id:path}", response_class=HTMLResponse)
    def trajectory(request: Request, name: str, trajectory_id: str, reveal: bool = False):
        return page(request, "trajectory.html",
                    trajectory_page(_run_or_404(index, name), trajectory_id, settings, reveal))

    @app.get("/runs/{name}/compare", response_class=HTMLResponse)
    def compare_rounds(request: Request, name: str, a: int | None = None, b: int | None = None):
        run = _run_or_404(index, name)
        rounds = run.rounds
        if not rounds:
            raise HTTPException(404, f"run '{name}' has no results to compare")
        return page(request, "compare.html", compare_page(Side(run, a if a is not None else rounds[0]),
                                                         Side(run, b if b is not None else rounds[-1])))

    @app.get("/compare", response_class=HTMLResponse)
    def compare_runs(request: Request, a: str, b: str, ra: int | None = None, rb: int | None = None):
        left, right = _run_or_404(index, a), _run_or_404(index, b)
        if not left.rounds or not right.rounds:
            raise HTTPException(404, "both runs need results to be compared")
        return page(request, "compare.html", compare_page(Side(left, ra if ra is not None else left.rounds[-1]),
                                                         Side(right, rb if rb is not None else right.rounds[-1])))


def _add_label_and_file_routes(app: FastAPI, index: RunIndex, settings: ViewerSettings) -> None:
    """The one write (a label) and the run folder's files (nothing outside it)."""

    @app.post("/runs/{name}/labels")
    async def label(request: Request, name: str, body: LabelRequest):
        # JSON only: a cross-site form cannot send it, so another page open in the browser cannot label.
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise HTTPException(415, "labels are sent as application/json")
        run = _run_or_404(index, name)
        entry = run.entry(body.trajectory_id)
        if entry is None:
            raise HTTPException(404, f"run '{name}' has no trajectory '{body.trajectory_id}'")
        append_labels(run.path, [Label(trajectory_id=body.trajectory_id, label=body.label, note=body.note.strip(),
                                       who=settings.who)])
        checker = checker_verdict(entry)
        return {"label": body.label, "checker": checker, "progress": label_progress(run, settings.who),
                "disagrees": disagrees(checker, body.label)}

    @app.get("/files/{name}/{relative:path}")
    def files(request: Request, name: str, relative: str):
        target = inside(_run_or_404(index, name).path, relative)
        kind = CONTENT_TYPES.get(target.suffix.lower()) if target else None
        if target is None or kind is None:
            raise HTTPException(404, "not found")
        headers = {"X-Content-Type-Options": "nosniff"}
        if request.query_params.get("v"):  # a versioned URL (see `file_url`): its content never changes
            headers["Cache-Control"] = "private, max-age=31536000, immutable"
        if target.suffix.lower() == ".html":
            headers["Content-Security-Policy"] = SANDBOX_CSP
        return FileResponse(target, media_type=kind, headers=headers)


def serve_viewer(roots: list[Path], who: str, host: str = "127.0.0.1", port: int = 8765, blind: bool = True,
                 on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; `on_ready(url)` is called once the socket listens."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(create_app(roots, who=who, blind=blind), host=host, port=port,
                                           log_level="warning", access_log=False))
    if on_ready is not None:
        original = server.startup

        async def startup(sockets=None):
            await original(sockets)
            if server.started:
                on_ready(f"http://{host}:{port}/")

        server.startup = startup
    server.run()
