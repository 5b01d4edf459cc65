"""`pvsst analyze RUN`: trial outcomes, per-round metrics, planned contrasts and homophily of a run.

Writes ``RUN/analysis/`` (see :mod:`pvsst.analysis.study.run_analysis`) and prints the preregistered headline table.
"""
from __future__ import annotations

from pathlib import Path

import typer

from pvsst.core.run_folder import holds_run_folder
from pvsst.experiments.cli.folder_options import run_argument
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
rich_progress = lazy_module("rich.progress")
rich_table = lazy_module("rich.table")
run_analysis = lazy_module("pvsst.analysis.study.run_analysis")
store = lazy_module("pvsst.analysis.store.reader")
thread_tables = lazy_module("pvsst.analysis.threads.run_tables")
thread_analysis = lazy_module("pvsst.analysis.threads.run_analysis")


@holds_run_folder
def analyze_command(
    run: Path = run_argument("A run directory (with manifest.json and trials/)."),
    homophily_replicates: int = typer.Option(200, "--homophily-replicates", min=2,
                                             help="Null replicates per homophily comparison."),
) -> None:
    """Analyse a run as its frozen spec's plan says (PV-SST's plan when the spec has none); a thread run:
    thread shape, reply homophily, lexical convergence and attribute inference."""
    console = _console()
    if thread_tables.is_thread_run(run):
        _analyze_threads(console, run, homophily_replicates)
        return
    with rich_progress.Progress(console=console, transient=True) as progress:
        task = progress.add_task("trials", total=len(store.completed_trial_dirs(run)))
        result = run_analysis.analyze_run(run, progress=lambda: progress.advance(task),
                             homophily_replicates=homophily_replicates)
    plan = result.plan
    excluded = result.contrasts.excluded_blocks
    if len(excluded):
        console.print(f"[yellow]warning:[/] excluded {len(excluded)} incomplete block-contrast-metric rows "
                      f"(listed in {result.out_dir / 'excluded_blocks.csv'})")
    if "parse_error_rate" in result.trial_outcomes:
        rate = float(result.trial_outcomes["parse_error_rate"].astype(float).mean())
        threshold = plan.settings.parse_failure_threshold
        if rate > threshold:
            console.print(f"[yellow]warning:[/] parse-failure rate {rate:.3f} exceeds the preregistered "
                          f"threshold {threshold:.3f}")
    table = rich_table.Table(title=f"Preregistered headline: {plan.primary_metric} (overall)")
    for column in ("contrast", "blocks", "mean diff", "95% CI", "+/-/0", "sign p", "perm p",
                   f"adj. p ({plan.settings.multiplicity})",
                   "consistent", "mixed coef"):
        table.add_column(column, justify="left" if column == "contrast" else "right")
    for row in result.headline.to_dict("records"):
        table.add_row(row["contrast"], str(row["n_blocks"]), f"{row['mean_difference']:+.4f}",
                      f"[{row['ci95_low']:+.4f}, {row['ci95_high']:+.4f}]",
                      f"{row['positive']}/{row['negative']}/{row['ties']}", f"{row['sign_test_p']:.4f}",
                      f"{row['randomization_p']:.4f}", f"{row['adjusted_p']:.4f}",
                      f"{'yes' if row['consistency_pass'] else 'no'} ({row['models_positive']} models, "
                      f"{row['topics_positive']} topics)", f"{row['mixed_coefficient']:+.4f}")
    console.print(table)
    written = sorted(p.name for p in result.out_dir.iterdir() if not p.name.startswith("."))
    console.print(f"wrote {', '.join(written)} to {result.out_dir}")


def _analyze_threads(console, run: Path, replicates: int) -> None:
    result = thread_analysis.analyze_thread_run(run, replicates=replicates)
    shape = result.shape
    console.print(f"{len(shape)} threads, {int(shape['n_comments'].sum())} comments; max depth "
                  f"{int(shape['max_depth'].max())}, direct replies to the post "
                  f"{float(shape['direct_reply_share'].mean()):.3f} of comments (mean over threads)", markup=False)
    for row in result.homophily.to_dict("records"):
        console.print(f"reply homophily {row['measure']}: {row['observed']:+.4f} (null {row['null_mean']:+.4f}, "
                      f"p {row['p_value']:.3f})", markup=False)
    written = sorted(p.name for p in result.out_dir.iterdir() if not p.name.startswith("."))
    console.print(f"wrote {', '.join(written)} to {result.out_dir}", markup=False)


def _console():
    # Tables are wide; when writing to a file or pipe do not wrap them at rich's default 80 columns.
    probe = rich_console.Console()
    return rich_console.Console(highlight=False, soft_wrap=True, width=None if probe.is_terminal else 200)


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_command)
