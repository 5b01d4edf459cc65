"""The survey report's scenario section: one decomposition figure per question of a scenario run.

Reads ``RUN/analysis/scenario_shares.csv`` and ``scenario_effects.csv`` (written by ``pvsst survey
score``, :mod:`pvsst.analysis.scenarios.report`) and plans
:func:`~pvsst.analysis.figures.decomposition.decomposition_figure` for each question, named
``scenario_decomposition_<question>``. A run without those tables gets no plan.

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
from pvsst.analysis.scenarios.report import EFFECTS_FILE, SHARES_FILE
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
