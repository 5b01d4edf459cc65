"""`pvsst stats paired TABLE`: paired-block statistics on any per-trial table.

With no ``--contrast`` / ``--metric`` options it runs PV-SST's four contrasts and six metrics; on
``tests/data/pvsst_reference/pvsst_v1_core_results.csv`` the output equals the published
``pvsst_v1_core_confirmatory_analysis.csv`` (same columns and rows, floats within 1e-12).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import typer

from pvsst.core.atomic import atomic_file
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
rich_table = lazy_module("rich.table")
contrast_table = lazy_module("pvsst.analysis.stats.contrast_table")
paired = lazy_module("pvsst.analysis.stats.paired")
plan = lazy_module("pvsst.analysis.stats.plan")
store = lazy_module("pvsst.analysis.store.reader")

stats_app = command_group("Statistics on per-trial tables.")


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


@stats_app.command("paired")
def paired_command(
    table: Path = typer.Argument(..., help="Per-trial table (CSV or Parquet)."),
    out: Path = typer.Option(..., "--out", help="Where to write the results CSV."),
    contrast: list[str] = typer.Option([], "--contrast", help="NAME=TREATMENT-BASELINE (repeatable)."),
    metric: list[str] = typer.Option([], "--metric", help="Outcome column (repeatable)."),
    block: str = typer.Option("model,topic_id,seed", "--block", help="Columns that define a block."),
    strata: str = typer.Option("model,topic_id", "--strata", help="Columns to stratify by ('' for none)."),
    condition: str = typer.Option("condition", "--condition", help="The arm column."),
    draws: int = typer.Option(BOOTSTRAP_DRAWS, "--draws", min=1, help="Bootstrap draws."),
    seed: int = typer.Option(ANALYSIS_SEED, "--seed", help="Seed of every fresh generator."),
) -> None:
    """Mean/median paired differences, bootstrap CI, sign test and sign-flip test per contrast x metric x stratum."""
    contrasts = [plan.Contrast.parse(text) for text in contrast] or list(plan.PVSST_CONTRASTS)
    metrics = list(metric) or list(plan.PVSST_METRICS)
    block_columns, strata_columns = _columns(block), _columns(strata)
    frame = store.load_trial_table(table, required=[*block_columns, condition, *strata_columns, *metrics])
    console = _console()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", paired.IncompleteBlocksWarning)
        analysis = contrast_table.paired_contrast_table(frame, contrasts, metrics, block=block_columns,
                                                        strata=strata_columns,
                                         condition=condition, draws=draws, seed=seed, source=str(table))
    for warning in caught:
        if issubclass(warning.category, paired.IncompleteBlocksWarning):
            console.print(f"[yellow]warning:[/] {warning.message}")
    _write_csv_atomically(analysis.frame, out)
    if len(analysis.excluded_blocks):
        excluded_path = out.with_name(out.stem + ".excluded_blocks.csv")
        _write_csv_atomically(analysis.excluded_blocks, excluded_path)
        console.print(f"excluded blocks listed in {excluded_path}")
    overall = analysis.frame[analysis.frame["stratum_type"] == "overall"]
    summary = rich_table.Table(title=f"Paired contrasts (overall); {len(analysis.frame)} rows written to {out}")
    for column in ("contrast", "metric", "n", "mean diff", "95% CI", "+/-/0", "sign p", "perm p"):
        summary.add_column(column, justify="left" if column in ("contrast", "metric") else "right")
    for row in overall.itertuples():
        summary.add_row(row.contrast, row.metric, str(row.n_blocks), f"{row.mean_difference:+.4f}",
                        f"[{row.ci95_low:+.4f}, {row.ci95_high:+.4f}]",
                        f"{row.positive}/{row.negative}/{row.ties}", f"{row.sign_test_p:.4f}",
                        f"{row.randomization_p:.4f}")
    console.print(summary)


def _write_csv_atomically(frame, path: Path) -> None:
    with atomic_file(path) as temp:
        frame.to_csv(temp, index=False)


def _console():
    # Tables are wide; when writing to a file or pipe do not wrap them at rich's default 80 columns.
    probe = rich_console.Console()
    return rich_console.Console(highlight=False, soft_wrap=True, width=None if probe.is_terminal else 200)


def register(app: typer.Typer) -> None:
    app.add_typer(stats_app, name="stats")
