"""The audit's signed-rank test with ties: gaps that are equal multiples of 1/(G - 1) are ranked as ties
(computed on (G - 1) d, whole numbers for integer scores) and p comes from the exact null distribution.
Ranking floating-point gaps split such ties by their last bit (p 0.301 instead of 0.991 on one GSS group)."""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from pvsst.analysis.counterfactual.permutation import paired_group_tests, signed_rank_p


def _enumerated_p(d: np.ndarray) -> float:
    """p over all 2^n sign assignments of the non-zero differences' mid-ranks."""
    d = d[d != 0]
    ranks = rankdata(np.abs(d))
    signs = (np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1
    w_all, w = signs @ ranks, ranks[d > 0].sum()
    return min(1.0, 2 * min((w_all <= w).mean(), (w_all >= w).mean()))


def test_a_hand_case_of_four_tied_differences():
    # |d| all equal: mid-rank 2.5 each, W+ = 2.5 k with k ~ Binomial(4, 1/2); W+ = 7.5: P(k >= 3) = 5/16
    assert signed_rank_p(np.array([1, 1, 1, -1])) == 0.625
    assert signed_rank_p(np.array([0, 0])) == 1.0
    # 1, 2, 2, 3 with one negative 2: ranks 1, 2.5, 2.5, 4; W+ = 7.5 of 10; P(W+ >= 7.5) = 4/16
    assert signed_rank_p(np.array([1, 2, -2, 3])) == 0.5


def test_gaps_that_are_multiples_of_one_third_are_exact_ties():
    # G = 4, scores 0..4: a gap of 2/3 arises as 1 - 1/3 and as 3 - 7/3, which differ in the last bit
    scores = np.arange(5.0)
    rows = np.array([[1, 0, 0, 1], [3, 0, 3, 4]])
    x = scores[rows]
    gaps = x[:, 0] - (x.sum(axis=1) - x[:, 0]) / 3
    assert gaps[0] != gaps[1] and round(3 * gaps[0]) == round(3 * gaps[1]) == 2  # the floating-point trap
    matrix = np.vstack([rows] * 4 + [np.array([[0, 1, 1, 1]])])
    _, p = paired_group_tests(matrix, scores)
    x = scores[matrix]
    exact = [_enumerated_p(np.rint(3 * x[:, g] - (x.sum(axis=1) - x[:, g])).astype(int)) for g in range(4)]
    assert np.max(np.abs(p - exact)) == 0


def test_p_equals_the_enumerated_exact_p_on_gss_shaped_audits():
    """Four groups, three ordered options, 12 matched sets (the GSS audit's shape), 100 random audits."""
    rng = np.random.default_rng(38)
    worst = 0.0
    for _ in range(100):
        matrix = rng.integers(0, 3, size=(12, 4))
        _, p = paired_group_tests(matrix, np.arange(3))
        x = matrix.astype(float)
        for g in range(4):
            d = np.rint(3 * x[:, g] - (x.sum(axis=1) - x[:, g])).astype(int)
            worst = max(worst, abs(p[g] - _enumerated_p(d)))
    assert worst == 0


def test_null_p_values_hold_their_level_and_large_samples_use_the_approximation():
    rng = np.random.default_rng(30)
    p = np.array([signed_rank_p(rng.integers(-3, 4, size=30)) for _ in range(300)])
    assert 0.0 < (p < 0.05).mean() <= 0.07 and p.max() <= 1.0
    big = rng.integers(-3, 4, size=401)
    assert 0.0 < signed_rank_p(big) <= 1.0
