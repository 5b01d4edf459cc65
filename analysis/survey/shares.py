"""Answer shares of a survey run: the human distribution of every question beside every simulated one.

One row per question x source x option, where a source is the real survey (``human``, weighted when
the data has weights) or one provider x condition x elicitation of the run. Shares are computed from
the same resampling units the fidelity table scores (:func:`analysis.survey.scoring.human_units` and
:func:`~analysis.survey.scoring.model_units`, observed sample), so a share drawn in a figure is the
distribution its Jensen-Shannon distance was measured on: for sampled answers the share of answers,
for ``logprobs`` / ``verbalized`` the mean of the personas' distributions.

Examples
--------
>>> shares = answer_shares("RUN")  # doctest: +SKIP
>>> list(shares.columns)  # doctest: +SKIP
['question', 'source', 'provider', 'condition', 'elicitation', 'option', 'position', 'share', 'n_units']
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.survey.scoring import QuestionScale, human_units, model_units, read_scored_run

SHARE_COLUMNS = ("question", "source", "provider", "condition", "elicitation", "option", "position", "share",
                 "n_units")
HUMAN = "human"


def source_label(provider: str, condition: str, elicitation: str) -> str:
    """How a simulated source is named in figures: ``provider | condition`` (elicitation added unless sample).

    >>> source_label("embedded/smollm2-135m", "persona_profile", "logprobs")
    'embedded/smollm2-135m | persona_profile (logprobs)'
    """
    label = f"{provider} | {condition}"
    return label if elicitation in ("sample", "", None) else f"{label} ({elicitation})"


def _rows(question: str, scale: QuestionScale, counts: np.ndarray, **fields) -> list[dict]:
    total = counts.sum()
    shares = counts.sum(axis=0) / total if total > 0 else np.full(len(scale.codes), np.nan)
    return [{"question": question, **fields, "option": code, "position": i, "share": float(share),
             "n_units": int(len(counts))} for i, (code, share) in enumerate(zip(scale.codes, shares))]


def answer_shares(run_dir: str | Path) -> pd.DataFrame:
    """The answer-share table of a survey run (see the module docstring); reads the run store only."""
    run_dir = Path(run_dir)
    run = read_scored_run(run_dir)
    scales, human, personas, responses = run.scales, run.human, run.personas, run.responses
    rows: list[dict] = []
    for scale in scales:
        rows += _rows(scale.question, scale, human_units(human, scale, []).counts, source=HUMAN, provider=HUMAN,
                      condition="", elicitation="")
    for (provider, condition, method), part in responses.groupby(["provider", "condition", "elicitation"],
                                                                 sort=False):
        for scale in scales:
            asked = part[part["question"] == scale.question]
            if asked.empty:
                continue
            counts = model_units(asked, personas, scale, []).counts
            rows += _rows(scale.question, scale, counts, source=source_label(provider, condition, method),
                          provider=provider, condition=condition, elicitation=method)
    return pd.DataFrame(rows, columns=list(SHARE_COLUMNS))
