"""Prefect flows of the design loop (generate → propose → verify → roll out → dashboard → comment
→ revise, for R rounds), the sweep over apps × coders × CUAs × modes, results, report and CLI."""

from ._prefect_env import configure_prefect_env

configure_prefect_env()
