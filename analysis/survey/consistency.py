"""Stated against enacted answers in a survey run: which conditions pair, and the tables scoring writes.

A condition elicited as ``verbalized`` (the model states a probability per option) is the *stated*
side; a condition elicited as ``sample`` or ``logprobs`` is an *enacted* side. Two conditions pair
when they show the same persona card with the same diversity request and temperature (only the
elicitation differs), for the same persona x question x model
(:func:`pvsst.analysis.survey.stated_enacted.stated_enacted_consistency`); the controls' reference
conditions (``reference_verbalized`` against ``reference`` and ``reference_logprobs``) pair likewise.

Writes ``RUN/analysis/consistency.csv`` (model x stated x enacted x question x metric:
``mean_tv_distance``, the mean over personas of the per-persona total-variation distance, and
``population_tv_distance``, the distance between the mean stated and the mean enacted distribution,
with percentile bootstrap intervals over personas; ``question = all``: per persona the mean over
questions) and ``RUN/analysis/consistency_personas.csv`` (one row per model x pair x question x persona).

Examples
--------
>>> spec = {"conditions": [{"id": "said", "persona_card": "profile", "elicitation": "verbalized"},
...                        {"id": "did", "persona_card": "profile"}, {"id": "plain"}]}
>>> consistency_pairs(spec, ["said", "did", "plain", "reference", "reference_verbalized"])
[('said', 'did'), ('reference_verbalized', 'reference')]
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.survey.stated_enacted import ENACTED_METHODS, STATED_METHODS, stated_enacted_consistency
from pvsst.analysis.survey.units import ScoredRun
from pvsst.core.atomic import write_csv_tables
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS

CONSISTENCY_FILES = {"summary": "consistency.csv", "per_persona": "consistency_personas.csv"}
REFERENCE = "reference"


@dataclass(frozen=True)
class SurveyConsistency:
    """The run's stated-vs-enacted tables (see the module docstring)."""

    summary: pd.DataFrame
    per_persona: pd.DataFrame


def _conditions(spec: Mapping, present: Sequence[str]) -> dict[str, tuple[str, tuple]]:
    """condition id -> (elicitation, what must match for a pair) of the conditions present in the run."""
    out = {}
    for condition in spec.get("conditions") or []:
        key = (condition.get("persona_card"), bool(condition.get("diversity_request")), condition.get("temperature"))
        out[condition["id"]] = (condition.get("elicitation", "sample"), key)
    for name in present:  # the controls' reference conditions: reference (sampled), reference_<method>
        if name == REFERENCE or name.startswith(REFERENCE + "_"):
            method = "sample" if name == REFERENCE else name.removeprefix(REFERENCE + "_")
            out.setdefault(name, (method, (REFERENCE,)))
    return {name: value for name, value in out.items() if name in set(present)}


def consistency_pairs(spec: Mapping, present: Sequence[str]) -> list[tuple[str, str]]:
    """(stated, enacted) condition pairs of a run: same card, diversity request and temperature."""
    conditions = _conditions(spec, present)
    return [(stated, enacted) for stated, (s_method, s_key) in conditions.items() if s_method in STATED_METHODS
            for enacted, (e_method, e_key) in conditions.items() if e_method in ENACTED_METHODS and e_key == s_key]


def score_consistency(run: ScoredRun) -> SurveyConsistency | None:
    """Stated-vs-enacted tables of a run (None when no stated condition pairs with an enacted one)."""
    pairs = consistency_pairs(run.spec, list(pd.unique(run.responses["condition"])))
    if not pairs:
        return None
    settings = run.settings
    codes = {scale.question: list(scale.codes) for scale in run.scales}
    summaries, personas = [], []
    for stated, enacted in pairs:
        rows = run.responses[run.responses["condition"].isin([stated, enacted])]
        try:
            per_persona, summary = stated_enacted_consistency(
                rows, codes, stated=stated, enacted=enacted, draws=settings.bootstrap_draws,
                seed=settings.bootstrap_seed, level=settings.ci_level)
        except InputError:  # e.g. every call of one side failed: nothing to compare for this pair
            continue
        for frame, out in ((summary, summaries), (per_persona, personas)):
            out.append(frame.assign(stated=stated, enacted=enacted)[["model", "stated", "enacted",
                                                                     *[c for c in frame.columns if c != "model"]]])
    if not summaries:
        return None
    return SurveyConsistency(pd.concat(summaries, ignore_index=True), pd.concat(personas, ignore_index=True))


def write_consistency(consistency: SurveyConsistency, run_dir: str | Path) -> list[Path]:
    """Write the consistency tables to ``RUN/analysis/`` atomically; return their paths."""
    return write_csv_tables({file: getattr(consistency, name) for name, file in CONSISTENCY_FILES.items()},
                            Path(run_dir) / ANALYSIS)
