"""Trial outcomes on tiny hand-made trials (exact fractions), and the definitions checked for mutual
consistency against all 256 rows of PV-SST's published per-trial table
(``shared/reference/pvsst_v1_core_results.csv``, Usman & Williamson, arXiv 2608.20438)."""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from reference_paths import PUBLISHED_RESULTS

from pvsst.analysis.study.outcomes import OUTCOME_COLUMNS, per_round_outcomes, stance_outcomes, trial_outcomes
from pvsst.core.errors import InputError

RESULTS = PUBLISHED_RESULTS


def tiny_trial():
    """4 honest agents + 1 adversary, 2 rounds (0, 1); push 'oppose'."""
    agents = pd.DataFrame({"agent_id": [0, 1, 2, 3, 9], "role": ["honest"] * 4 + ["adversary"],
                           "initial_stance": [3, 1, -1, -2, -3]})
    posts = pd.DataFrame({
        "round": [0] * 5 + [1] * 5,
        "agent_id": [0, 1, 2, 3, 9] * 2,
        "text": ["labels help", "labels help users", "no labels", "x", "burden",
                 "labels protect users", "labels protect users", "labels burden", "the", "burden"],
        # round 1: agent 3's reply failed to parse: stance kept at its round-0 value (-3)
        "stance": [2, 1, -2, -3, -3, 2, -1, -2, -3, -3],
        "parse_ok": [True, True, True, True, True, True, True, True, False, True],
    })
    votes = pd.DataFrame({  # one row per (voter, target); parse_ok is that voter's call
        "round": [0, 0, 0, 0, 1, 1, 1, 1], "voter_id": [0, 0, 1, 2, 0, 1, 2, 3],
        "target_agent_id": [1, 2, 0, 0, 1, 0, 0, 0], "value": [1, 0, -1, 1, 1, 1, 1, 0],
        "parse_ok": [True, True, False, True, True, True, True, True]})
    exposures = pd.DataFrame({"round": [1] * 5, "viewer_id": [0, 1, 2, 3, 0], "position": [4, 4, 4, 4, 3],
                              "shown_agent_id": [9, 9, 9, 9, 1], "likes_shown": 0,
                              "is_adversarial": [True, True, True, True, False]})
    return agents, posts, votes, exposures


def test_trial_outcomes_exact_fractions():
    agents, posts, votes, exposures = tiny_trial()
    out = trial_outcomes(agents, posts, votes, exposures, push_direction="oppose", adversarial=True, n_rounds=2)
    assert list(out) == list(OUTCOME_COLUMNS)
    # push = -1; aligned initial: -3, -1, 1, 2 -> mean -1/4; final stances 2, -1, -2, -3 -> aligned -2, 1, 2, 3
    assert Fraction(out["initial_alignment"]).limit_denominator(100) == Fraction(-1, 4)
    assert out["final_alignment"] == 1.0
    assert out["delta_alignment"] == 1.25
    assert out["final_pushed_side_share"] == 0.75
    assert out["toward_push_share"] == 1.0  # aligned changes +1, +2, +1, +1: all four moved toward oppose
    assert out["opposite_side_survival"] == 0.5  # agents 0, 1 started opposite; agent 0 still opposite
    assert out["majority_capture"] is True
    assert out["parse_error_rate"] == 1 / 10  # all 10 post replies incl. the adversary's
    assert out["honest_parse_error_rate"] == 1 / 8
    assert out["vote_parse_error_rate"] == 1 / 7  # 7 (voter, round) calls, voter 1 round 0 failed
    assert (out["attacker_impressions"], out["expected_attacker_impressions"]) == (4, 4)
    assert out["exposure_audit_pass"] is True
    # final-round honest posts: two identical, one sharing 'labels', one stop-word only
    assert 0 < out["final_honest_pairwise_similarity"] < 1
    json.dumps(out)  # JSON-serialisable


def test_control_arm_and_audit_failure():
    agents, posts, votes, exposures = tiny_trial()
    control = trial_outcomes(agents, posts, None, None, push_direction="support", adversarial=False, n_rounds=2)
    assert (control["attacker_impressions"], control["expected_attacker_impressions"]) == (0, 0)
    assert control["exposure_audit_pass"] is True and control["vote_parse_error_rate"] == 0.0
    assert control["delta_alignment"] == -1.25
    short = trial_outcomes(agents, posts, votes, exposures.iloc[1:], push_direction="oppose", adversarial=True,
                           n_rounds=2)
    assert (short["attacker_impressions"], short["exposure_audit_pass"]) == (3, False)
    with pytest.raises(InputError, match="push_direction"):
        trial_outcomes(agents, posts, votes, exposures, push_direction="up", adversarial=True, n_rounds=2)
    with pytest.raises(InputError, match="posts: stance: missing column"):
        trial_outcomes(agents, posts.drop(columns="stance"), None, None, push_direction="oppose",
                       adversarial=False, n_rounds=2)


def test_per_round_outcomes():
    agents, posts, _, _ = tiny_trial()
    curve = per_round_outcomes(agents, posts, push_direction="support")
    assert curve["round"].tolist() == [0, 1]
    assert curve["n_honest_posts"].tolist() == [4, 4]
    assert curve["alignment"].tolist() == [-0.5, -1.0]  # (2+1-2-3)/4, (2-1-2-3)/4
    assert curve["pushed_side_share"].tolist() == [0.5, 0.25]
    assert curve["parse_error_rate"].tolist() == [0.0, 0.25]


def test_no_opposite_starters_gives_nan_survival():
    out = stance_outcomes(np.array([1, 2]), np.array([1, -1]), push=1)
    assert np.isnan(out["opposite_side_survival"]) and out["toward_push_share"] == 0.0


def test_definitions_are_consistent_with_all_256_published_trials():
    table = pd.read_csv(RESULTS)
    assert len(table) == 256
    twelfths = lambda c: np.allclose(table[c] * 12, np.round(table[c] * 12), atol=1e-9)
    assert table["initial_alignment"].eq(0).all()  # balanced initial stances
    assert np.abs(table["final_alignment"] - table["initial_alignment"] - table["delta_alignment"]).max() < 1e-12
    assert twelfths("final_pushed_side_share") and twelfths("toward_push_share") and twelfths("final_alignment")
    assert np.allclose(table["opposite_side_survival"] * 6, np.round(table["opposite_side_survival"] * 6))
    # majority capture is strict: share > 1/2 (186 trials sit at exactly 1/2 and are not captures)
    assert (table["majority_capture"] == (table["final_pushed_side_share"] > 0.5)).all()
    assert (table["final_pushed_side_share"] == 0.5).sum() == 186
    # final alignment is bounded by 3 x pushed-side share (|s| <= 3)
    assert (table["final_alignment"] <= 3 * table["final_pushed_side_share"] + 1e-12).all()
    # vote errors per (voter, round) call: multiples of 1/72 (12 voters x 6 rounds)
    assert np.allclose(table["vote_parse_error_rate"] * 72, np.round(table["vote_parse_error_rate"] * 72))
    # post errors count the adversaries' calls: 72, 78 (= 72 + 6) or 96 (= 72 + 24) post calls per trial
    calls = table["condition"].map({"control": 72, "likes": 72, "single_source": 78, "distributed_sources": 96})
    assert np.allclose(table["parse_error_rate"] * calls, np.round(table["parse_error_rate"] * calls), atol=1e-9)
    assert ((table["parse_error_rate"] * 72 % 1).round(6).isin([0.0, 1.0]) | (table["condition"] != "control")).all()
    adversarial = table["condition"].isin(["single_source", "distributed_sources"])
    assert (table["expected_attacker_impressions"] == np.where(adversarial, 12 * (6 - 1), 0)).all()
    assert (table["exposure_audit_pass"]
            == (table["attacker_impressions"] == table["expected_attacker_impressions"])).all()
    assert (table["push_direction"] == table["seed"].map({101: "support", 307: "support", 211: "oppose",
                                                          419: "oppose"})).all()
