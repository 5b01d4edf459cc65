"""The report of an epidemic run (``pvsst report RUN`` on a ``schedule: epidemic`` run).

Reads the run store only (the manifest, the bank and the replicates' region-day and decision tables,
:mod:`pvsst.analysis.epidemic.run_tables`) and writes ``RUN/report/``: ``report.md``, ``report.html``,
``regions.csv`` (the per-region summary), ``household_agreement.csv`` (with a chained bank: the
within-household agreement of the decisions made against its exact expectation,
:mod:`pvsst.analysis.epidemic.households`) and ``figures/reports_vs_infections.*``: new infections
against reports per day, averaged over replicates, for all regions together and for the largest
regions (:func:`pvsst.analysis.figures.epidemic.reports_vs_infections_figure`). The sections: the run
(spec, seed, replicates, agents, the bank run), the parameters, deviations, the per-region table, the
figure, the within-household agreement.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from pvsst.analysis.epidemic.households import decision_agreement
from pvsst.analysis.epidemic.run_tables import (
    is_epidemic_run,
    mean_region_days,
    read_bank,
    read_decisions,
    read_region_days,
    region_summary,
)
from pvsst.analysis.figures.epidemic import reports_vs_infections_figure
from pvsst.analysis.figures.style import FIGURE_FORMATS
from pvsst.analysis.report.build import REPORT_FORMATS, ReportResult, draw_figures, figure_markdown, write_report
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import deviations_markdown, markdown_table
from pvsst.core.atomic import check_replaceable
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.run_layout import MANIFEST, REPORT

ALL_REGIONS = "all regions"
MAX_PANELS = 6
"""Panels of the figure: all regions together, then the most populous regions."""


def figure_days(days: pd.DataFrame, panels: int = MAX_PANELS) -> pd.DataFrame:
    """The rows the figure draws: the replicate means of all regions summed (``all regions``), then those
    of the ``panels - 1`` most populous regions (all of them when there are at most ``panels - 1``).

    Examples
    --------
    >>> days = pd.DataFrame({"region": ["a", "b"], "day": 0, "population": [1, 2], "new_infections": [1, 2],
    ...                      "reports": [0, 1], "expected_reports": [0.5, 0.5]})
    >>> figure_days(days)["region"].tolist()
    ['all regions', 'b', 'a']
    """
    columns = ["new_infections", "reports", "expected_reports"]
    total = days.groupby("day", sort=True)[columns].sum().reset_index().assign(region=ALL_REGIONS)
    largest = days.groupby("region")["population"].first().sort_values(ascending=False, kind="stable")
    chosen = list(largest.index[:panels - 1])
    parts = [total] if len(largest) > 1 else []
    parts += [days[days["region"] == region] for region in chosen]
    return pd.concat(parts, ignore_index=True)[["region", "day", *columns]]


def agreement_markdown(agreement: pd.DataFrame | None) -> list[str]:
    """The section on within-household agreement (a line saying why there is none without a chained bank)."""
    parts = ["## Within-household agreement", ""]
    if agreement is None:
        return parts + ["The bank has no household levels: every decision was independent.", ""]
    row = agreement.iloc[0]
    return parts + [
        "The first member of a household to decide drew from the independent bank, every later member from the "
        "bank given that decision. Over the within-household pairs of agents who decided (all replicates), the "
        f"share of pairs that made the same decision is {row['observed_agreement']:.4f} (standard error "
        f"{row['observed_agreement_se']:.4f}) against an exact {row['exact_agreement']:.4f} given who decided and "
        f"at which case level; the pair correlation is {row['observed_correlation']:.4f} against "
        f"{row['exact_correlation']:.4f}.", "", markdown_table(agreement), ""]


def epidemic_markdown(manifest: dict, summary: pd.DataFrame, drawn: Sequence[str], figures,
                      figure_formats: Sequence[str], notes: Sequence[str],
                      agreement: pd.DataFrame | None = None) -> str:
    """The report's Markdown (see the module docstring)."""
    spec = manifest.get("spec") or {}
    bank = spec.get("bank") or {}
    settings = spec.get("epidemic") or {}
    parameters = pd.DataFrame({"parameter": list(settings), "value": [str(v) for v in settings.values()]})
    population = int(summary["population"].sum())
    reports = summary["reports"].sum()
    infections = summary["infections"].sum()
    fixed = ", ".join(f"{factor} = {level}" for factor, level in (bank.get("fixed") or {}).items()) or "none"
    parts = [f"# Epidemic run: {spec.get('title') or spec.get('id', '')}", "",
             f"Spec `{spec.get('id')}`, master seed {spec.get('seed')}, {spec.get('replicates')} replicate(s) "
             f"({int(summary['replicates'].min())} complete), {population} agents in {len(summary)} region(s) "
             f"(`{(spec.get('population') or {}).get('region')}`). Reporting bank: question "
             f"`{bank.get('question') or '(first)'}` of the survey run `{manifest.get('bank_run')}`, case level from "
             f"`{bank.get('case_factor')}`, household level from `{bank.get('household_factor')}`, other factors "
             f"fixed: {fixed}.", "",
             "Parameters (defaults and their sources: the scenarios page of the documentation):", "",
             markdown_table(parameters), "",
             deviations_markdown(manifest.get("deviations") or [], manifest.get("frozen_sha256"),
                                 manifest.get("spec_sha256")), "",
             "## Reports against true infections", "",
             f"Over the epidemic, {reports:.1f} reports for {infections:.1f} infections "
             f"({reports / infections if infections else float('nan'):.4f} reports per infection; means over "
             "replicates). Per region: infections (day 0's seeded ones included), symptom onsets, reports, the "
             "expected reports (the deciding agents' bank probabilities summed), the reporting rate (reports / "
             "population), reports per infection and per symptomatic agent, the day with the most infectious "
             "agents and the reported share of the truly infectious averaged over the days with any:", "",
             markdown_table(summary), "",
             f"The figure draws {', '.join(drawn)}.", "", figure_markdown(figures, figure_formats), "",
             *agreement_markdown(agreement)]
    if notes:
        parts += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(parts)


def build_epidemic_report(run_dir: str | Path, *, formats: Sequence[str] = REPORT_FORMATS,
                          figure_formats: Sequence[str] = FIGURE_FORMATS,
                          progress: Callable[[str], None] | None = None) -> ReportResult:
    """Write ``RUN/report/`` for an epidemic run (see the module docstring).

    Parameters
    ----------
    run_dir : an epidemic run's folder.
    formats, figure_formats : report formats (``md``, ``html``) and figure formats (``png``, ``pdf``).
    progress : called with a label after each step.

    Returns
    -------
    ReportResult
        The report folder, the files written and the figures.

    Examples
    --------
    >>> import tempfile
    >>> try:
    ...     build_epidemic_report(tempfile.mkdtemp())
    ... except InputError as err:
    ...     print(err.problem)
    not an epidemic run (run `pvsst run` on a `schedule: epidemic` spec)
    """
    run_dir = Path(run_dir)
    check_replaceable(run_dir / REPORT)
    step = progress or (lambda label: None)
    if not is_epidemic_run(run_dir):
        raise InputError(str(run_dir), MANIFEST, "not an epidemic run (run `pvsst run` on a `schedule: epidemic` "
                                                 "spec)")
    manifest = read_json(run_dir / MANIFEST, "manifest")
    days = read_region_days(run_dir)
    summary = region_summary(days)
    bank = read_bank(run_dir)
    agreement = decision_agreement(read_decisions(run_dir), bank) if "household" in bank.columns else None
    step("region table")
    drawn = figure_days(mean_region_days(days))
    regions = list(dict.fromkeys(drawn["region"]))
    plans = [FigurePlan("Reports against true infections", lambda: reports_vs_infections_figure(drawn),
                        "reports vs infections")]
    figures, notes = draw_figures(plans, step)
    markdown = epidemic_markdown(manifest, summary, regions, figures, figure_formats, notes, agreement)
    step("writing")
    spec = manifest.get("spec") or {}
    files = write_report(run_dir / REPORT, markdown, figures, formats, figure_formats,
                         title=f"pvsst epidemic report: {spec.get('title') or run_dir.name}",
                         extra_tables={"regions.csv": summary,
                                       **({"household_agreement.csv": agreement} if agreement is not None else {})})
    return ReportResult(run_dir / REPORT, files, figures, [], notes)
