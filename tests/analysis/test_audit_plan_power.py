"""The power model of an audit's omnibus test, checked against planted effects: at the number of matched sets
:func:`sets_needed` plans, a planted shift of one group is flagged by the real within-set permutation test in
about 80% of simulated audits (within sampling error: 240 runs, sd 0.026), for the shares and the scores
statistic and for a Benjamini-Hochberg family of several questions. Hand-computed values: two groups, p = 1/2,
lambda = S (G - 1) / G delta^2 / (p (1 - p)) = 2 S delta^2, so 100 sets and delta = 0.1 give lambda = 2."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from pvsst.analysis.counterfactual.audit import counterfactual_audit
from pvsst.analysis.counterfactual.permutation import omnibus_permutation_p
from pvsst.analysis.counterfactual.power import (
    detectable_shift,
    noncentrality,
    omnibus_power,
    sets_needed,
)
from pvsst.core.errors import InputError

RUNS = 240
PERMUTATIONS = 199


def _shifted(base: np.ndarray, option: int, shift: float) -> np.ndarray:
    """One group's shares: ``shift`` more on ``option``, the mass taken from the others in proportion."""
    out = base * (1 - (base[option] + shift)) / (1 - base[option])
    out[option] = base[option] + shift
    return out


def _matrix(rng, sets: int, shares: list[np.ndarray]) -> np.ndarray:
    return np.column_stack([rng.choice(len(p), size=sets, p=p) for p in shares])


def test_the_noncentrality_and_the_plan_by_hand():
    assert noncentrality(100, 0.1, n_groups=2) == pytest.approx(2.0)
    assert noncentrality(50, 0.5, n_groups=4, statistic="scores", score_sd=2.0) == pytest.approx(50 * 0.75 / 16)
    needed = sets_needed(0.15, n_groups=4, n_options=3, base_share=0.3, tests=4)
    assert omnibus_power(needed, 0.15, n_groups=4, n_options=3, base_share=0.3, tests=4) >= 0.8
    assert omnibus_power(needed - 1, 0.15, n_groups=4, n_options=3, base_share=0.3, tests=4) < 0.8
    assert detectable_shift(needed, n_groups=4, n_options=3, base_share=0.3, tests=4) <= 0.15
    # quadrupling the sets halves the detectable shift
    assert detectable_shift(400, n_groups=3) == pytest.approx(detectable_shift(100, n_groups=3) / 2)


def test_the_shares_plan_is_met_by_planted_audits():
    base = np.array([0.5, 0.3, 0.2])
    needed = sets_needed(0.2, n_groups=4, n_options=3, base_share=0.5)
    rng = np.random.default_rng(38)
    shares = [_shifted(base, 0, 0.2), base, base, base]
    hits = [omnibus_permutation_p(_matrix(rng, needed, shares), 3, permutations=PERMUTATIONS, seed=i) < 0.05
            for i in range(RUNS)]
    print(f"shares: {needed} sets planned for a 0.2 shift, G=4, K=3; flagged in {np.mean(hits):.3f} of {RUNS}")
    assert 0.8 - 3 * 0.026 <= np.mean(hits) <= 0.8 + 3 * 0.026


def test_the_scores_plan_is_met_by_planted_audits():
    base = np.full(5, 0.2)
    scores = np.arange(5.0)
    shifted = _shifted(base, 4, 0.2)
    delta = float(shifted @ scores - base @ scores)
    # the residual SD the audit estimates (power_score_sd): the mean of the three groups' score variances
    variances = [float(p @ (scores - p @ scores) ** 2) for p in (shifted, base, base)]
    sd = float(np.sqrt(np.mean(variances)))
    needed = sets_needed(delta, n_groups=3, statistic="scores", score_sd=sd)
    rng = np.random.default_rng(3800)
    hits = [omnibus_permutation_p(_matrix(rng, needed, [shifted, base, base]), 5, permutations=PERMUTATIONS, seed=i,
                                  statistic="scores") < 0.05 for i in range(RUNS)]
    print(f"scores: {needed} sets planned for a {delta:.3f}-point shift (sd {sd:.3f}), G=3; "
          f"flagged in {np.mean(hits):.3f} of {RUNS}")
    assert 0.8 - 3 * 0.026 <= np.mean(hits) <= 0.8 + 3 * 0.026


def test_a_family_of_questions_is_planned_at_alpha_over_its_size():
    base = np.array([0.5, 0.5])
    needed = sets_needed(0.2, n_groups=2, tests=4)
    assert needed > sets_needed(0.2, n_groups=2)
    rng = np.random.default_rng(380)
    hits = []
    for i in range(RUNS):
        p = [omnibus_permutation_p(_matrix(rng, needed, [_shifted(base, 0, 0.2) if q == 0 else base, base]), 2,
                                   permutations=PERMUTATIONS, seed=i) for q in range(4)]
        hits.append(multipletests(p, alpha=0.05, method="fdr_bh")[0][0])
    print(f"BH over 4 questions: {needed} sets planned; the shifted one flagged in {np.mean(hits):.3f} of {RUNS}")
    # alpha / m is BH's threshold when nothing else is discovered: at most slightly conservative
    assert 0.8 - 3 * 0.026 <= np.mean(hits) <= 0.8 + 5 * 0.026


def test_every_audit_reports_the_shift_it_flags_with_eighty_percent_power():
    rng = np.random.default_rng(1)
    rows = [{"set_id": s, "group": g, "question": q, "answer": str(rng.choice(["a", "b", "c"]))}
            for s in range(60) for g in ("x", "y", "z") for q in ("q1", "q2")]
    codes = {"q1": ["a", "b", "c"], "q2": ["a", "b", "c"]}
    audit = counterfactual_audit(pd.DataFrame(rows), codes, draws=200, permutations=99)
    for row in audit.questions.itertuples():
        assert row.mde_unit == "share" and row.mde_tests == 2
        assert row.mde == pytest.approx(detectable_shift(60, n_groups=3, n_options=3, base_share=row.power_base_share,
                                                         tests=2))
        assert abs(row.power_base_share - 1 / 3) < 0.1
    scored = counterfactual_audit(pd.DataFrame(rows), codes, draws=200, permutations=99, omnibus="scores")
    assert (scored.questions["mde_unit"] == "score").all() and (scored.questions["power_score_sd"] > 0.5).all()


@pytest.mark.parametrize("kwargs", [{"shift": 0.0}, {"shift": 0.6}, {"shift": 0.1, "tests": 0},
                                    {"shift": 0.1, "statistic": "means"}])
def test_bad_plans_are_refused(kwargs):
    with pytest.raises(InputError):
        sets_needed(n_groups=2, **kwargs)


def test_an_audit_too_small_to_flag_any_shift_says_so():
    # Two sets of two groups: within-set relabelling has 2^2 = 4 equally likely outcomes, so no p-value
    # falls below 1/4 and no shift, however large, is ever flagged.
    assert detectable_shift(2, n_groups=2, statistic="scores") == float("inf")
    extreme = np.array([[0, 4], [0, 4]])
    assert omnibus_permutation_p(extreme, 5, permutations=PERMUTATIONS, seed=0, statistic="scores") >= 0.25
    assert np.isfinite(detectable_shift(sets_needed(1.0, n_groups=2, statistic="scores"), n_groups=2,
                                        statistic="scores"))
    from pvsst.analysis.report.survey.audit import power_lines
    questions = pd.DataFrame({"model": ["m"], "condition": ["c"], "question": ["q"], "flagged": [False],
                              "mde": [float("inf")], "mde_unit": ["score"]})
    assert power_lines(questions) == ["- m | c, q: nothing flagged; this audit detects no shift with 80% power at "
                                      "this number of sets (`pvsst audit plan` says how many it needs).", ""]
