"""Stated against enacted answer distributions in surveys, with planted inconsistencies of known size.

60 personas, one three-option question. Stated (verbalized) distributions are drawn from a Dirichlet;
enacted (logprobs) ones equal them for the first 30 personas and are moved by a known total-variation
distance for the rest (0.3 of mass from the largest option to the smallest), so the per-persona TV is
0 or 0.3 and the population mean TV 0.15 exactly; the population-level TV is that of the means,
computed here by hand. Sampled answers (200 per persona) drawn from the stated distribution give a
per-persona TV near 0 (sampling noise only).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.stated_enacted import stated_enacted_consistency, total_variation
from pvsst.core.errors import InputError

CODES = ["a", "b", "c"]


def responses_table(stated: np.ndarray, enacted: np.ndarray | None = None, samples: np.ndarray | None = None
                    ) -> pd.DataFrame:
    rows = []
    for i, p in enumerate(stated):
        rows.append({"provider": "m", "condition": "said", "elicitation": "verbalized", "persona_id": f"p{i}",
                     "question": "q", "answer": None, "probabilities": json.dumps(dict(zip(CODES, p.tolist()))),
                     "parse_ok": True})
        if enacted is not None:
            rows.append(
                {
                    "provider": "m",
                    "condition": "did",
                    "elicitation": "logprobs",
                    "persona_id": f"p{i}",
                    "question": "q",
                    "answer": None,
                    "probabilities": json.dumps(dict(zip(CODES, enacted[i].tolist()))),
                    "parse_ok": True,
                }
            )
        for answer in ([] if samples is None else samples[i]):
            rows.append({"provider": "m", "condition": "did", "elicitation": "sample", "persona_id": f"p{i}",
                         "question": "q", "answer": CODES[answer], "probabilities": None, "parse_ok": True})
    return pd.DataFrame(rows)


def test_planted_persona_inconsistency_is_measured_exactly():
    rng = np.random.default_rng(5)
    stated = rng.dirichlet([4, 4, 4], size=60)
    enacted = stated.copy()
    for i in range(30, 60):
        big, small = stated[i].argmax(), stated[i].argmin()
        enacted[i, big] -= 0.3
        enacted[i, small] += 0.3
    assert (enacted >= 0).all()
    per_persona, summary = stated_enacted_consistency(responses_table(stated, enacted), {"q": CODES},
                                                      stated="said", enacted="did", draws=2000)
    moved = per_persona["persona_id"].str[1:].astype(int).to_numpy() >= 30
    assert len(per_persona) == 60
    assert per_persona["tv_distance"].to_numpy() == pytest.approx(np.where(moved, 0.3, 0.0), abs=1e-12)
    rows = summary[summary["question"] == "q"].set_index("metric")
    assert rows.loc["mean_tv_distance", "value"] == pytest.approx(0.15, abs=1e-12)
    assert rows.loc["mean_tv_distance", "ci_low"] < 0.15 < rows.loc["mean_tv_distance", "ci_high"]
    by_hand = 0.5 * np.abs(stated.mean(axis=0) - enacted.mean(axis=0)).sum()
    assert rows.loc["population_tv_distance", "value"] == pytest.approx(by_hand, abs=1e-12)
    assert rows.loc["population_tv_distance", "value"] < 0.15  # moves in different directions partly cancel
    assert summary.set_index(["question", "metric"]).loc[("all", "mean_tv_distance"), "value"] == pytest.approx(0.15)


def test_sampled_answers_from_the_stated_distribution_are_consistent():
    rng = np.random.default_rng(6)
    stated = rng.dirichlet([4, 4, 4], size=40)
    samples = np.array([rng.choice(3, size=200, p=p) for p in stated])
    per_persona, summary = stated_enacted_consistency(responses_table(stated, samples=samples), {"q": CODES},
                                                      stated="said", enacted="did", draws=500)
    # sampling noise of 200 draws: E TV is about 0.04 for three options
    assert per_persona["tv_distance"].mean() < 0.07
    assert summary.set_index(["question", "metric"]).loc[("q", "population_tv_distance"), "value"] < 0.02
    assert float(total_variation(np.array([1.0, 0.0]), np.array([0.0, 1.0]))) == 1.0


def test_wrong_conditions_are_input_errors():
    table = responses_table(np.full((2, 3), 1 / 3), np.full((2, 3), 1 / 3))
    with pytest.raises(InputError, match="elicited by logprobs"):
        stated_enacted_consistency(table, {"q": CODES}, stated="did", enacted="said")
    with pytest.raises(InputError, match="no responses of condition 'nope'"):
        stated_enacted_consistency(table, {"q": CODES}, stated="said", enacted="nope")
