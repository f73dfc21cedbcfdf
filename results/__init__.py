"""What a run folder holds and how to read and write it: the results' records, tables and report.

The flows write a run through this package; the viewer, the benchmarks and the CLI read it through
it, so none of them needs the orchestration to read a results file. A run folder
(`runs/<name>/`, the README's "What a run folder holds"):

    manifest.json          how to reproduce the run (written by `flows.write_manifest`; `read_manifest`)
    results.json/.csv/.md  every app version's outcomes and the paper's tables (`write_results`, `read_results`)
    report.html            the same, readable from disk, with the plot `fc_sr_by_round.png` (`write_report`)
    agreement.json         judges against people's labels, when the run has either (`write_report` writes it)
    defect-metrics-*.json  a detector's GTArena figures on a defect run (`read_defect_metrics`)

and how run folders leave as a dataset (`export_dataset`: steps, tasks and revisions as Parquet tables in
Hugging Face's folder convention, with a dataset card).

    results = read_results("runs/quickstart")
    print(markdown_table(results.table))
"""

from ._error_bars import (
    COMPARISON_NOTE,
    ERROR_BARS,
    INTERVAL_NOTE,
    TaskTally,
    comparison_lines,
    Comparison,
    comparisons,
    interval_text,
    percent,
    rounded,
    with_interval,
)
from ._dataset_card import COLUMNS as DATASET_COLUMNS
from ._export import ExportReport, export_dataset
from ._export_rows import ExportError
from ._files import RunResults, read_manifest, read_results, write_results
from ._format import p_value, pct, track_text
from ._insight_records import (
    ABLATION_FILE,
    ABLATION_SELECTION,
    ASSOCIATION_NOTE,
    CHANGE_STATUSES,
    INSIGHTS_FILE,
    PAGE_WIDE,
    PRINCIPLE_COLUMNS,
    AblatedRevision,
    Ablation,
    Change,
    ChangeStatus,
    ElementCrop,
    Insights,
    PrincipleRow,
    TaskFlip,
    ablations_markdown,
    principle_cells,
    principles_markdown,
    read_ablations,
    read_insights,
)
from ._intervals import (
    bootstrap_ratio_interval,
    mcnemar_exact_p,
    minimum_detectable_difference,
    paired_difference_interval,
    wilson_interval,
)
from ._outcomes import (
    DOMAINS,
    AppRoundResult,
    GamingSuspect,
    RepeatOutcomes,
    TaskOutcome,
    Track,
    VariationResult,
    revised_pairs,
)
from ._report import PLOT_FILE, write_report
from ._report_agreement import agreement_records, read_agreement
from ._report_defects import METRICS_GLOB, read_defect_metrics, write_defects_report
from ._report_variations import heat_class
from ._tables import (
    DEFAULT_WEIGHTS,
    SCORING_NOTE,
    TableRow,
    best_rounds,
    by_commenter_mode_table,
    cell_figures,
    comparisons_markdown,
    csv_table,
    markdown_table,
    pass_counts,
    records_markdown,
    scoring_table,
    table_rows,
)
from ._variation_table import GAP_FACTOR, VARIATION_NOTE, VariationRow, gap_label, variation_markdown, variation_rows

__all__ = [
    "ABLATION_FILE", "CHANGE_STATUSES", "COMPARISON_NOTE", "DATASET_COLUMNS", "DOMAINS", "GAP_FACTOR",
    "INSIGHTS_FILE", "INTERVAL_NOTE", "PAGE_WIDE", "PRINCIPLE_COLUMNS", "AblatedRevision", "Ablation",
    "AppRoundResult", "Change", "ChangeStatus", "ElementCrop", "ExportError", "ExportReport", "GamingSuspect",
    "Insights", "PrincipleRow", "RepeatOutcomes", "RunResults", "TableRow", "TaskFlip", "TaskOutcome", "Track",
    "VariationResult", "VariationRow", "ablations_markdown", "agreement_records", "best_rounds",
    "bootstrap_ratio_interval", "by_commenter_mode_table", "cell_figures", "comparison_lines", "comparisons",
    "comparisons_markdown", "csv_table", "export_dataset", "gap_label", "heat_class", "interval_text", "markdown_table",
    "mcnemar_exact_p", "minimum_detectable_difference", "p_value", "paired_difference_interval", "pass_counts", "pct",
    "principle_cells", "principles_markdown", "read_ablations", "read_agreement", "read_defect_metrics",
    "read_insights", "read_manifest", "read_results", "records_markdown", "revised_pairs", "rounded", "scoring_table",
    "table_rows", "track_text", "variation_markdown", "variation_rows", "with_interval",
    "write_defects_report", "write_report", "write_results",
    "ABLATION_SELECTION", "ASSOCIATION_NOTE", "DEFAULT_WEIGHTS", "ERROR_BARS", "METRICS_GLOB", "PLOT_FILE",
    "SCORING_NOTE", "VARIATION_NOTE", "Comparison", "TaskTally", "percent", "wilson_interval",
]
