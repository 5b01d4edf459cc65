"""Benjamini-Hochberg across every test a survey audit reports (every model x condition x question, and x group
for the paired tests), with the family named: adjusting within one source let each model's question pass at
alpha on its own."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.audit import adjusted_across_sources


def test_the_omnibus_family_spans_every_source():
    questions = pd.DataFrame({"model": ["m1", "m1", "m2", "m2"], "question": ["a", "b", "a", "b"],
                              "omnibus_p": [0.01, 0.04, 0.03, 0.5], "arity_p": [0.2, np.nan, 0.01, 0.9]})
    groups = pd.DataFrame({"model": ["m1"] * 3, "group": ["x", "y", "z"], "paired_p": [0.01, 0.02, 0.03]})
    q, g = adjusted_across_sources(questions, groups, 0.05)
    # BH over four p: 0.01 * 4/1, 0.03 * 4/2, 0.04 * 4/3, 0.5 (monotone from the top)
    assert q["omnibus_p_bh"].tolist() == pytest.approx([0.04, 0.0533333333, 0.0533333333, 0.5])
    assert q["flagged"].tolist() == [True, False, False, False]  # within m1 alone, b (0.04 * 2/2) would pass
    assert q["arity_p_bh"].tolist()[:3:2] == pytest.approx([0.3, 0.03]) and np.isnan(q["arity_p_bh"][1])
    assert q["bh_family"].iloc[0] == ("omnibus: 4 tests (every source x question); "
                                      "arity: 3 tests (every source x question)")
    assert g["paired_p_bh"].tolist() == pytest.approx([0.03, 0.03, 0.03])
    assert g["bh_family"].iloc[0] == "paired: 3 tests (every source x question x group)"


def test_a_study_family_spans_every_unit_and_sizes_the_mde_at_its_size():
    # two units (model x topic) x two questions: one family of four; each question's MDE tested at alpha / 4
    questions = pd.DataFrame({"unit_id": ["u1", "u1", "u2", "u2"], "question": ["post_stance", "net_vote"] * 2,
                              "omnibus_p": [0.01, 0.2, 0.03, 0.6], "n_sets": 60, "n_groups": 4,
                              "n_options": [7, 11] * 2, "omnibus_statistic": "scores", "power_base_share": 0.3,
                              "power_score_sd": 1.0})
    groups = pd.DataFrame({"unit_id": ["u1"], "group": ["x"], "paired_p": [0.5]})
    q, g = adjusted_across_sources(questions, groups, 0.05, sources="model x topic")
    assert q["bh_family"].iloc[0] == "omnibus: 4 tests (every model x topic x question)"
    assert g["bh_family"].iloc[0] == "paired: 1 tests (every model x topic x question x group)"
    assert (q["mde_tests"] == 4).all() and (q["mde_unit"] == "score").all()
    one_unit, _ = adjusted_across_sources(questions.iloc[:2], groups, 0.05, sources="model x topic")
    assert (q["mde"].iloc[:2].to_numpy() > one_unit["mde"].to_numpy()).all()  # a larger family needs more
