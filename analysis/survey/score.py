"""Score a survey run: one composition that reads the run store once and writes every scoring output.

:func:`score_run` (``pvsst survey score``) reads the run once (:func:`pvsst.analysis.survey.units.read_scored_run`:
the instrument, the scoring settings, the human answers, the personas, the responses of the complete
units, the cells of a cell run), computes every output from that one read (:func:`survey_scores`) and only
then writes them to ``RUN/analysis/``, so bad input leaves nothing behind:

==============================================  =====================================================
``fidelity.csv``                                every run (:func:`pvsst.analysis.survey.scoring.score_fidelity`)
``estimates.csv`` and, with ``data.geography``,  a cell run (:func:`pvsst.analysis.survey.cells.states.cell_analysis`)
``state_scores.csv``, ``state_correlations.csv``,
``state_pairs.csv``, ``group_scores.csv``,
``election_scores.csv`` (the CCES vote question),
``cell_notes.json``
``audit.csv``, ``audit_shares.csv``,            an instrument with an ``audit`` section
``audit_groups.csv``                            (:func:`pvsst.analysis.survey.audit.score_audit`)
``consistency.csv``, ``consistency_personas.csv``  a stated condition paired with an enacted one
                                                (:func:`pvsst.analysis.survey.consistency.score_consistency`)
``scenario_shares.csv``,                        an instrument with a ``scenarios`` section
``scenario_effects.csv``,                       (:func:`pvsst.analysis.scenarios.report.scenario_report`)
``scenario_rates.csv``,
``scenario_households.csv``
==============================================  =====================================================

Every bootstrap takes its draws from the instrument's ``analysis.bootstrap_draws``, or from ``draws``
(``--draws``) for all of them alike.

Examples
--------
>>> scores = score_run("RUN")  # doctest: +SKIP
>>> scores.summary().columns[:3].tolist()  # doctest: +SKIP
['question', 'model', 'condition']
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from pvsst.analysis.scenarios.report import ScenarioReport, scenario_report, write_scenario_report
from pvsst.analysis.survey.audit import SurveyAudit, score_audit, write_audit
from pvsst.analysis.survey.cells.states import cell_analysis, write_cell_analysis
from pvsst.analysis.survey.consistency import SurveyConsistency, score_consistency, write_consistency
from pvsst.analysis.survey.scoring import question_summary, score_fidelity, write_fidelity
from pvsst.analysis.survey.units import ScoredRun, read_scored_run


@dataclass(frozen=True)
class SurveyScores:
    """Everything ``pvsst survey score`` computes for one run, and (after :func:`score_run`) where it went.

    ``cells`` (a cell run) maps each cell-run table's file name to its frame, with ``cell_notes`` saying
    what could not be computed and why; ``audit`` and ``consistency`` are None where the run has none.
    ``files`` maps each output (``fidelity``, ``cells``, ``audit``, ``consistency``) to the paths written.
    """

    fidelity: pd.DataFrame
    cells: dict[str, pd.DataFrame] | None = None
    cell_notes: tuple[str, ...] = ()
    audit: SurveyAudit | None = None
    consistency: SurveyConsistency | None = None
    scenarios: ScenarioReport | None = None
    files: dict[str, list[Path]] = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """One row per question x model x condition (:func:`pvsst.analysis.survey.scoring.question_summary`)."""
        return question_summary(self.fidelity)

    def write(self, run_dir: str | Path) -> dict[str, list[Path]]:
        """Write every output to ``RUN/analysis/`` (each file atomically); return the paths by output."""
        files = {"fidelity": [write_fidelity(self.fidelity, run_dir)]}
        if self.cells is not None:
            files["cells"] = write_cell_analysis(self.cells, list(self.cell_notes), run_dir)
        if self.audit is not None:
            files["audit"] = write_audit(self.audit, run_dir)
        if self.consistency is not None:
            files["consistency"] = write_consistency(self.consistency, run_dir)
        if self.scenarios is not None:
            files["scenarios"] = write_scenario_report(self.scenarios, run_dir)
        return files


def survey_scores(run: ScoredRun) -> SurveyScores:
    """Every scoring output of a run read once (see the module docstring); writes nothing."""
    cells, notes = cell_analysis(run) if run.population is not None else (None, [])
    return SurveyScores(score_fidelity(run), cells, tuple(notes), score_audit(run), score_consistency(run),
                        scenario_report(run.responses, run.personas, run.spec,
                                        None if run.population is None else run.population.counts))


def score_run(run_dir: str | Path, draws: int | None = None) -> SurveyScores:
    """Read a survey run once, score it and write every output (see the module docstring).

    Parameters
    ----------
    run_dir : a survey run directory written by ``pvsst survey run``.
    draws : bootstrap draws for every interval instead of the instrument's (at least 10).

    Returns
    -------
    SurveyScores
        The tables computed, with ``files`` naming what was written.

    Raises
    ------
    InputError
        Bad input (not a survey run, a malformed file, ``draws`` below 10): raised before anything is
        written.
    """
    run = read_scored_run(run_dir).with_draws(draws)
    scores = survey_scores(run)
    return replace(scores, files=scores.write(run_dir))
