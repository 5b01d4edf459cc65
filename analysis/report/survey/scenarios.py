"""The survey report's scenario section: the decomposition and the decision rates of a scenario run.

Reads ``RUN/analysis/scenario_shares.csv``, ``scenario_effects.csv`` and ``scenario_rates.csv`` (written
by ``pvsst survey score``, :mod:`pvsst.analysis.scenarios.report`), plans
:func:`~pvsst.analysis.figures.decomposition.decomposition_figure` for each question, named
``scenario_decomposition_<question>``, and writes the section's Markdown: the decomposition table (each
factor's contribution to McFadden's R-squared and share of the explained part, with intervals) and the
decision rate of every level of every factor and Census region (:func:`scenario_markdown`). A run without
those tables gets no plan and no section.

Examples
--------
>>> from pathlib import Path
>>> scenario_figure_plans(Path("no-such-run"))
[]
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.analysis.figures.decomposition import decomposition_figure
from pvsst.analysis.figures.style import PaperFigure
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import markdown_table
from pvsst.analysis.scenarios.report import EFFECTS_FILE, RATES_FILE, SHARES_FILE
from pvsst.core.run_layout import ANALYSIS

SECTION = "Scenario decomposition"


def _figure(shares: pd.DataFrame, effects: pd.DataFrame, question: str) -> PaperFigure:
    interval = str(shares["interval"].iloc[0]) if "interval" in shares.columns else ""
    figure = decomposition_figure(shares, effects, caption_note=f"question {question}; {interval}")
    figure.name = f"scenario_decomposition_{question}"
    return figure


def scenario_figure_plans(run_dir: Path) -> list[FigurePlan]:
    """One decomposition figure plan per question of the run's scenario tables (none without them).

    Parameters
    ----------
    run_dir
        The survey run directory.

    Returns
    -------
    list of FigurePlan

    Examples
    --------
    >>> scenario_figure_plans(Path("no-such-run"))
    []
    """
    folder = Path(run_dir) / ANALYSIS
    if not (folder / SHARES_FILE).is_file() or not (folder / EFFECTS_FILE).is_file():
        return []
    shares, effects = pd.read_csv(folder / SHARES_FILE), pd.read_csv(folder / EFFECTS_FILE)
    return [FigurePlan(SECTION, lambda q=question: _figure(shares[shares["question"] == q],
                                                            effects[effects["question"] == q], q),
                       f"scenario decomposition of {question}") for question in dict.fromkeys(shares["question"])]


SHARE_COLUMNS = ["question", "factor", "df", "contribution", "contribution_low", "contribution_high", "share",
                 "share_low", "share_high", "lr_statistic"]


def scenario_markdown(run_dir: Path) -> str:
    """The scenario section of a survey report: the decomposition table and the decision rates ("" without
    the scenario tables).

    Parameters
    ----------
    run_dir
        The survey run directory (scored).

    Returns
    -------
    str
        Markdown, ``### Scenario decomposition`` and ``### Decision rates by factor and region``.

    Examples
    --------
    >>> scenario_markdown(Path("no-such-run"))
    ''
    """
    folder = Path(run_dir) / ANALYSIS
    if not (folder / SHARES_FILE).is_file():
        return ""
    shares = pd.read_csv(folder / SHARES_FILE)
    method = str(shares["method"].iloc[0]) if "method" in shares.columns else ""
    interval = str(shares["interval"].iloc[0]) if "interval" in shares.columns else ""
    parts = ["### Scenario decomposition", "",
             "How much of the variation in each decision (the question's first option) every factor explains: "
             "its contribution to McFadden's R-squared and its share of the explained part "
             f"(method `{method}`; intervals: {interval}); `all factors` is the whole model. Marginal effects "
             "per level: `analysis/scenario_effects.csv`.", "",
             markdown_table(shares[[c for c in SHARE_COLUMNS if c in shares.columns]]), ""]
    if (folder / RATES_FILE).is_file():
        rates = pd.read_csv(folder / RATES_FILE)
        parts += ["### Decision rates by factor and region", "",
                  "The share choosing the question's first option at each level of each factor (cell attributes "
                  "such as income and education, scenario factors such as the framing), population-weighted over "
                  "cells and averaged over the other factors' scenarios, and per Census region (each cell "
                  "weighted by its personas there); `population`: the personas behind the level.", "",
                  markdown_table(rates), ""]
    return "\n".join(parts)
