"""``pvsst report``: paper figures and the preregistration report of a run (or of a published table).

A survey run (``RUN/survey.json``, written by ``pvsst survey run``) gets the survey report of
:mod:`pvsst.analysis.report.survey.build`: answer shares, a Jensen-Shannon heatmap, subgroup gaps, definitions.

``pvsst report RUN [--format md,html] [--figures png,pdf]`` writes ``RUN/report/`` (computing
``RUN/analysis/`` first when it is missing); ``pvsst report --from-table TABLE.csv [--out DIR]`` reports a
published per-trial table such as PV-SST's core panel. See :mod:`pvsst.analysis.report.build`.
"""
from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from pvsst.core.errors import InputError
from pvsst.experiments.cli.folder_options import out_option, run_argument


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
    from pvsst.analysis.figures.style import FIGURE_FORMATS
    from pvsst.analysis.report.build import REPORT_FORMATS, build_run_report, build_table_report, parse_formats
    from pvsst.analysis.report.survey.build import build_survey_report
    from pvsst.analysis.store.reader import is_survey_run

    if (run is None) == (from_table is None):
        raise InputError("pvsst report", "RUN", "give a run directory or --from-table TABLE (exactly one)")
    if out is not None and from_table is None:
        raise InputError("pvsst report", "--out", "only with --from-table (a run's report goes to RUN/report)")
    report_formats = parse_formats(formats, REPORT_FORMATS, "--format")
    figure_formats = parse_formats(figures, FIGURE_FORMATS, "--figures")
    console = Console(highlight=False, soft_wrap=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("report", total=None)

        def advance(label: str) -> None:
            progress.update(task, advance=1, description=f"report: {label}")

        if from_table is not None:
            target = out or Path(f"{from_table.stem}_report")
            result = build_table_report(from_table, target, formats=report_formats, figure_formats=figure_formats,
                                        progress=advance)
        elif is_survey_run(run):
            result = build_survey_report(run, formats=report_formats, figure_formats=figure_formats, progress=advance)
        else:
            result = build_run_report(run, formats=report_formats, figure_formats=figure_formats,
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
