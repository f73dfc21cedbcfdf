"""`aui variations [--show APP_ID]`, and the compact table of SR per variation `aui run` prints.

    aui variations                               # each variation: kind, what it does, what it needs
    aui variations --show unit-converter --out pictures/   # a PNG of the app in every offline variation
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from apps_prompts import load_app, reference_html_path
from cua import BrowserConfig, capture_png, open_app, settle, write_atomic
from perturb import (
    DEFAULT,
    VARIATIONS,
    VariationError,
    needed_roles,
    offline_variation_names,
    resolve,
    variation_transform,
)
from results import GAP_FACTOR, gap_label, pct

from ._output import _fail, console, exit_on
from ._tables import one_line_width, track_cells, track_columns


def variation_table(rows, width: int | None = None) -> Table:
    """SR per variation over the common tasks, the spread across variations and the gap flag, one line per
    coder × CUA × mode × round (`results.VariationRow`).

    With many variations one column each would not fit `width` (a 120-column terminal): then each
    row stacks instead — its track's parts, its variations with their figures, and its spread, each
    on lines of one cell, as the results table's domains do — and nothing is cut.
    """
    labels = track_columns(rows)
    names = list(dict.fromkeys(name for row in rows for name in row.variations))
    spread_headers = ("mean ± std", "MAD", "min–max", "within", "gap", "common")
    records = [(track_cells(row, labels), str(row.round), row,
                (f"{pct(row.mean)} ± {pct(row.std)}", pct(row.mad), f"{pct(row.min)}–{pct(row.max)}",
                 pct(row.std_within), gap_label(row), f"{row.tasks_common}/{row.tasks_valid}")) for row in rows]
    stacked = width is not None and one_line_width((*labels, "round", *names, *spread_headers), [
        [*label_cells, round_, *(pct(row.sr.get(name)) for name in names), *spread]
        for label_cells, round_, row, spread in records]) > width
    table = Table(title="SR per variation (%) over the common tasks — OpenApps' axis", show_lines=stacked,
                  caption="common = the tasks with a valid checker on the default look that every variant kept (n of "
                          "them); repeats pooled · " + ("kept = SR over the variation's own kept tasks, excl. = tasks "
                                                       "its proof excluded · " if stacked else "")
                          + "mean ± std, MAD, min–max across variations · within = std across repeats · gap = std "
                          f"across > {GAP_FACTOR:g} × within ('?' with one repeat) · failure modes and exclusions: "
                          "results.md, report.html")
    if stacked:
        for column in ("track", "round", "variation", "SR", "kept", "excl.", "spread", "common"):
            table.add_column(column, justify="left" if column in ("track", "variation", "spread") else "right",
                             overflow="fold")
        for label_cells, round_, row, spread in records:
            mean_std, mad, min_max, within, gap, common = spread
            table.add_row("\n".join(label_cells), round_, "\n".join(row.variations),
                          "\n".join(pct(row.sr.get(n)) for n in row.variations),
                          "\n".join(pct(row.sr_kept.get(n)) for n in row.variations),
                          "\n".join(str(row.excluded.get(n, 0)) for n in row.variations),
                          f"mean {mean_std}\nMAD {mad}\nmin–max {min_max}\nwithin {within}\ngap {gap}", common)
        return table
    for column in (*labels, "round", *names, *spread_headers):
        table.add_column(column, justify="left" if column in (*labels, "gap") else "right", overflow="fold")
    for label_cells, round_, row, spread in records:
        table.add_row(*label_cells, round_, *(pct(row.sr.get(n)) if n in row.variations else "" for n in names),
                      *spread)
    return table


def variations_command(
    ctx: typer.Context,
    show: str = typer.Option(None, "--show", metavar="APP_ID", help="Write a PNG of this bundled app in each offline "
                             "variation (default first)."),
    out: Path = typer.Option(None, "--out", help="Folder for the PNGs (default: variations-APP_ID)."),
    only: list[str] = typer.Option(None, "--variation", help="Only these variations (repeatable; compose with '+')."),
    seed: int = typer.Option(0, "--seed", help="The seed the content variations draw with (a run's `seed`)."),
    width: int = typer.Option(None, "--width", min=1, help="Scale each PNG to this width (default: the viewport's, 1280)."),
) -> None:
    """List the variations (name, kind, what it does, what it needs), or draw one app in each of them."""
    if show is None:
        # The other flags only shape --show's pictures: without it they would be dropped unsaid. (The source goes
        # by its name: recent typer bundles its own click and does not export its ParameterSource.)
        given = [param.opts[0] for param in ctx.command.params
                 if ctx.get_parameter_source(param.name).name == "COMMANDLINE"]
        if given:
            raise _fail(f"{', '.join(given)}: only with --show APP_ID (they shape its pictures)")
        table = Table(title="Variations (compose with '+', e.g. dark+long; `variations:` in a config, --variations on "
                            "aui run)")
        for column in ("name", "kind", "what it does", "needs"):
            table.add_column(column, overflow="fold")
        table.add_row(DEFAULT, "—", "the app as it is (always evaluated; the loop revises on it unless revise_on says "
                      "otherwise)", "—")
        # Appearance first (CSS only), then content (a script): the catalogue's grouping.
        for name in sorted(VARIATIONS.names(), key=lambda n: VARIATIONS.get(n).kind != "appearance"):
            variation = VARIATIONS.get(name)
            needs = f"a model: the {variation.needs_role} role (refused offline)" if variation.needs_role else "—"
            table.add_row(name, variation.kind, variation.summary, needs)
        console.print(table)
        console.print("See one app in each: aui variations --show APP_ID [--out DIR]", highlight=False)
        return

    try:
        app = load_app(show)
    except KeyError as exc:  # names the known ids
        raise _fail(exc.args[0]) from None
    names = list(only) if only else offline_variation_names()
    with exit_on(VariationError):
        for name in names:
            resolve(name)
            if needed_roles(name):
                raise VariationError(f"variation {name!r} needs the {', '.join(needed_roles(name))} role (a model); "
                                     "--show draws offline variations only")
    target = out or Path(f"variations-{app.id}")
    written = asyncio.run(write_variation_pictures(app, names, target, seed=seed, width=width))
    for path in written:
        console.print(escape(str(path)), highlight=False)


async def write_variation_pictures(app, names: list[str], folder: Path, seed: int = 0,
                                   width: int | None = None) -> list[Path]:
    """`folder/<variation>.png` for each name: the app's reference HTML served in that variation, at load (settled).

    Raises:
        FileNotFoundError: the app has no reference HTML to draw.
    """
    from PIL import Image

    reference = reference_html_path(app)
    if reference is None or not reference.is_file():
        raise FileNotFoundError(f"app '{app.id}' has no reference HTML to draw")
    html = reference.read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        async with open_app(html, BrowserConfig(transform=variation_transform(name, seed=seed)), seed=seed,
                            fixed_clock=True) as loaded:
            await settle(loaded.page)
            png = await capture_png(loaded.page)
        if width is not None:
            picture = Image.open(io.BytesIO(png)).convert("RGB")
            height = round(picture.height * width / picture.width)
            # A palette of 128 colours keeps a README picture small (tens of KB) and still readable.
            small = picture.resize((width, height), Image.Resampling.LANCZOS).convert(
                "P", palette=Image.Palette.ADAPTIVE, colors=128)
            buffer = io.BytesIO()
            small.save(buffer, format="PNG", optimize=True)
            png = buffer.getvalue()
        written.append(write_atomic(folder / f"{name}.png", png))
    return written
