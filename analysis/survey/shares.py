"""Answer shares of a survey run: the human distribution of every question beside every simulated one,
for the whole population and for every group of every grouping axis, with bootstrap intervals.

One row per question x source x group x option, where a source is the real survey (``human``,
weighted when the data has weights) or one provider x condition x elicitation of the run, and a group
is ``all`` or ``axis=level``. Shares are computed from the same resampling units the fidelity table
scores (:func:`pvsst.analysis.survey.scoring.human_units` and :func:`~pvsst.analysis.survey.scoring.model_units`),
so a share drawn in a figure is the distribution its Jensen-Shannon distance was measured on: for
sampled answers the share of answers, for ``logprobs`` / ``verbalized`` the mean of the personas'
distributions. An option nobody chose has share 0. Intervals come from the very resamples the
fidelity table uses (same seeds; clusters within strata where the data has a design), percentile
intervals extended to 0 or 1 where the observed share lies beyond them (a share of 0 or 1).
``n_units`` is the number of respondents or personas in the group.

Examples
--------
>>> shares = answer_shares(read_scored_run("RUN"))  # doctest: +SKIP
>>> list(shares.columns)  # doctest: +SKIP
['question', 'source', 'provider', 'condition', 'elicitation', 'group', 'option', 'position', 'share', 'ci_low',
 'ci_high', 'n_units']
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.survey.fidelity import bootstrap_tables, bounded_interval, percentile_interval
from pvsst.analysis.survey.plan import SurveyAnalysisPlan
from pvsst.analysis.survey.units import QuestionScale, ScoredRun, UnitAnswers, human_units, model_units

SHARE_COLUMNS = ("question", "source", "provider", "condition", "elicitation", "group", "option", "position", "share",
                 "ci_low", "ci_high", "n_units")
HUMAN = "human"


def source_label(provider: str, condition: str, elicitation: str) -> str:
    """How a simulated source is named in figures: ``provider | condition`` (elicitation added unless sample).

    >>> source_label("embedded/smollm2-135m", "persona_profile", "logprobs")
    'embedded/smollm2-135m | persona_profile (logprobs)'
    """
    label = f"{provider} | {condition}"
    return label if elicitation in ("sample", "", None) else f"{label} ({elicitation})"


def _share_rows(scale: QuestionScale, units: UnitAnswers, settings: SurveyAnalysisPlan, seed, **fields) -> list[dict]:
    """Share rows of one side of one question: whole population, then every group level."""
    index = units.resample(settings.bootstrap_draws, np.random.default_rng(seed))
    n = len(units.counts)
    parts = [("all", np.zeros(n, np.int64), ["all"])]
    for axis, labels in units.groups.items():
        names = sorted({str(v) for v in labels if not pd.isna(v)})
        position = {name: i for i, name in enumerate(names)}
        groups = np.array([-1 if pd.isna(v) else position[str(v)] for v in labels], dtype=np.int64)
        parts.append((axis, groups, [f"{axis}={name}" for name in names]))
    rows = []
    for _, groups, names in parts:
        tables = bootstrap_tables(units.counts, groups, len(names), index)
        sizes = np.bincount(groups[groups >= 0], minlength=len(names))
        for g, name in enumerate(names):
            total = tables[:, g].sum(axis=-1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(total > 0, tables[:, g] / np.where(total > 0, total, 1.0), np.nan)
            for k, code in enumerate(scale.codes):
                low, high = bounded_interval(float(share[0, k]), *percentile_interval(share[1:, k], settings.ci_level),
                                             (0.0, 1.0))
                rows.append({"question": scale.question, **fields, "group": name, "option": code, "position": k,
                             "share": float(share[0, k]), "ci_low": low, "ci_high": high, "n_units": int(sizes[g])})
    return rows


def answer_shares(run: ScoredRun) -> pd.DataFrame:
    """The answer-share table of a survey run (see the module docstring)."""
    settings = run.settings
    axes = list(run.config["axes"])
    rows: list[dict] = []
    seeds = [np.random.SeedSequence(settings.bootstrap_seed, spawn_key=(i,)).spawn(3) for i in range(len(run.scales))]
    for i, scale in enumerate(run.scales):
        rows += _share_rows(scale, human_units(run.human, scale, axes), settings, seeds[i][0], source=HUMAN,
                            provider=HUMAN, condition="", elicitation="")
    for (provider, condition, method), part in run.responses.groupby(["provider", "condition", "elicitation"],
                                                                     sort=False):
        for i, scale in enumerate(run.scales):
            asked = part[part["question"] == scale.question]
            if asked.empty:
                continue
            units = model_units(asked, run.personas, scale, axes)
            fields = {"source": source_label(provider, condition, method), "provider": provider,
                      "condition": condition, "elicitation": method}
            if not len(units.counts):  # every call failed: no answer to share out
                rows += [{"question": scale.question, **fields, "group": "all", "option": code, "position": k,
                          "share": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_units": 0}
                         for k, code in enumerate(scale.codes)]
                continue
            rows += _share_rows(scale, units, settings, seeds[i][1], **fields)
    return pd.DataFrame(rows, columns=list(SHARE_COLUMNS))
