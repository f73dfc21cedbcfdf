"""The variation stages (OpenApps' axis): translate an app version when a variation needs it, prove each variant.

A variant is an app version served under a variation's transform (`perturb`): never a new app
file. Before any rollout uses it, `prove_variation` replays every task's reference solution on it
and keeps only the tasks it does not break; what it kept and why the rest were excluded is in
`<version>/variations/<name>/proof.json` and in the round's results. Both stages are cached on
their inputs like every other stage, so a re-run of a variation sweep proves and translates nothing again.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from cua import BrowserConfig, Viewport
from perturb import Translations, checker_reads, prove_variant, translate_app, variation_transform
from verifier import read_verdicts

from ._cache import stage_cache
from ._dask import on_worker_loop
from ._refs import FileRef, RunContext, VariantRef
from ._stages import MODEL_RETRIES, model_client, slug

PROOF_FILE = "proof.json"
TRANSLATIONS_FILE = "translations.json"


@task(cache_policy=stage_cache("translate"), persist_result=True, task_run_name="translate {app_id} r{round} ({translator})", **MODEL_RETRIES)
@on_worker_loop
async def translate_version(*, run: RunContext, app_id: str, round: int, html: FileRef, translator: str,
                            viewport: Viewport) -> FileRef:
    """The version's visible texts translated by `translator` (a model or role), written to translations.json."""
    translations = await translate_app(run.read_text(html), model_client(run), translator,
                                       config=BrowserConfig(viewport=viewport))
    folder = Path(html.path).parent / "variations"
    return run.write(folder / f"{slug(translator)}-{TRANSLATIONS_FILE}", translations.model_dump_json(indent=1))


@task(cache_policy=stage_cache("prove_variation"), persist_result=True, task_run_name="prove {app_id} r{round} as {variation}")
@on_worker_loop
async def prove_variation(*, run: RunContext, app_id: str, round: int, html: FileRef, verdicts: FileRef,
                          variation: str, seed: int, viewport: Viewport,
                          translations: FileRef | None = None) -> VariantRef:
    """The variant's transform, and which tasks still pass their reference solutions on it."""
    judged = read_verdicts(run.file(verdicts))
    texts = Translations.model_validate_json(run.read_text(translations)).texts if translations else None
    transform = variation_transform(variation, seed, texts, keep=checker_reads(judged))
    proof = await prove_variant(run.read_text(html), judged, variation, transform, BrowserConfig(viewport=viewport))
    file = run.write(Path(html.path).parent / "variations" / slug(variation) / PROOF_FILE,
                     proof.model_dump_json(indent=1))
    return VariantRef(app_id=app_id, round=round, variation=variation, transform=transform, proof=file,
                      kept=proof.kept, excluded=proof.excluded,
                      unproven=[t.task_id for t in proof.tasks if t.status == "unproven"])
