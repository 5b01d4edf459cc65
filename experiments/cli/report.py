"""``pvsst report``: paper figures and the preregistration report of a run (or of a published table).

An epidemic run (``schedule: epidemic``) gets the report of :mod:`pvsst.analysis.report.epidemic`: the
per-region table and the reports-vs-infections figure. A survey run (``RUN/survey.json``, written by
``pvsst survey run``) gets the survey report of :mod:`pvsst.analysis.report.survey.build`: answer
shares, a Jensen-Shannon heatmap, subgroup gaps, definitions.

``pvsst report RUN [--format md,html] [--figures png,pdf]`` writes ``RUN/report/`` (computing
``RUN/analysis/`` first when it is missing); ``pvsst report --from-table TABLE.csv [--out DIR]`` reports a
published per-trial table such as PV-SST's core panel. See :mod:`pvsst.analysis.report.build`.
"""
from __future__ import annotations

from pathlib import Path

import typer

from pvsst.core.errors import InputError
from pvsst.experiments.cli.folder_options import out_option, run_argument
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
rich_progress = lazy_module("rich.progress")
figure_style = lazy_module("pvsst.analysis.figures.style")
build = lazy_module("pvsst.analysis.report.build")
survey_report = lazy_module("pvsst.analysis.report.survey.build")
run_store = lazy_module("pvsst.analysis.store.reader")
thread_report = lazy_module("pvsst.analysis.report.threads")
thread_tables = lazy_module("pvsst.analysis.threads.run_tables")
epidemic_tables = lazy_module("pvsst.analysis.epidemic.run_tables")
epidemic_report = lazy_module("pvsst.analysis.report.epidemic")


def report_command(
    run: Path = run_argument("A run directory (an experiment run with trials/, or a survey run).", None),
    formats: str = typer.Option("md,html", "--format", help="Report formats, comma-separated: md, html."),
    figures: str = typer.Option("png,pdf", "--figures", help="Figure formats, comma-separated: png, pdf."),
    from_table: Path = typer.Option(None, "--from-table",
                                    help="Report a published per-trial table (CSV/Parquet) instead of a run."),
    out: Path = out_option("Output folder for --from-table (default: ./<table>_report).", None),
    homophily_replicates: int = typer.Option(200, "--homophily-replicates", min=2,
                                             help="Null replicates when the analysis must be computed first."),
) -> None:
    """Write figures and a Markdown + self-contained HTML report (plan beside results, audits)."""
    if (run is None) == (from_table is None):
        raise InputError("pvsst report", "RUN", "give a run directory or --from-table TABLE (exactly one)")
    if out is not None and from_table is None:
        raise InputError("pvsst report", "--out", "only with --from-table (a run's report goes to RUN/report)")
    report_formats = build.parse_formats(formats, build.REPORT_FORMATS, "--format")
    figure_formats = build.parse_formats(figures, figure_style.FIGURE_FORMATS, "--figures")
    console = rich_console.Console(highlight=False, soft_wrap=True)
    with rich_progress.Progress(rich_progress.SpinnerColumn(), rich_progress.TextColumn("{task.description}"),
                                rich_progress.BarColumn(), rich_progress.TimeElapsedColumn(),
                                console=console, transient=True) as progress:
        task = progress.add_task("report", total=None)

        def advance(label: str) -> None:
            progress.update(task, advance=1, description=f"report: {label}")

        if from_table is not None:
            target = out or Path(f"{from_table.stem}_report")
            result = build.build_table_report(from_table, target, formats=report_formats, figure_formats=figure_formats,
                                        progress=advance)
        elif thread_tables.is_thread_run(run):
            result = thread_report.build_thread_report(run, formats=report_formats, figure_formats=figure_formats,
                                                       replicates=homophily_replicates, progress=advance)
        elif epidemic_tables.is_epidemic_run(run):
            result = epidemic_report.build_epidemic_report(run, formats=report_formats, figure_formats=figure_formats,
                                                           progress=advance)
        elif run_store.is_survey_run(run):
            result = survey_report.build_survey_report(run, formats=report_formats, figure_formats=figure_formats,
                                                       progress=advance)
        else:
            result = build.build_run_report(run, formats=report_formats, figure_formats=figure_formats,
                                      homophily_replicates=homophily_replicates, progress=advance)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    for verdict in result.verdicts:
        console.print(f"{verdict.id}{' (primary)' if verdict.primary else ''}: {verdict.contrast} on "
                      f"{verdict.metric}: {verdict.mean_difference:+.4f} [{verdict.ci_low:.4f}, "
                      f"{verdict.ci_high:.4f}] -> {verdict.verdict}")
    for name in ("report.md", "report.html"):
        if (result.out_dir / name).exists():
            console.print(f"wrote {result.out_dir / name}")
    console.print(f"wrote {len(result.figures)} figure(s) to {result.out_dir / 'figures'}")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
