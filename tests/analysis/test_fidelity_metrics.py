"""Fidelity metrics against scipy / statsmodels on fixed inputs, and the vectorised bootstrap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, wasserstein_distance
from statsmodels.stats.anova import anova_lm

from pvsst.analysis.survey.fidelity import (
    bootstrap_tables,
    distribution_metrics,
    entropy_deviation,
    eta_squared,
    js_distance,
    kl_divergence,
    no_variance,
    normalized_entropy,
    resample_index,
    smooth,
    wasserstein_representativeness,
)

P = np.array([0.55, 0.25, 0.15, 0.05])
Q = np.array([0.10, 0.20, 0.30, 0.40])
R = np.array([0.70, 0.0, 0.30, 0.0])


@pytest.mark.parametrize("p,q", [(P, Q), (Q, P), (P, P), (Q, R)])
def test_divergences_equal_scipy(p, q):
    # Without smoothing KL is scipy's relative entropy (inf where q has a zero and p does not).
    if not (q == 0).any():
        assert kl_divergence(p, q, smoothing=0.0) == pytest.approx(entropy(p, q), abs=1e-12)
    # With smoothing s, it is scipy's KL of the smoothed distributions (p + s) / (1 + K s).
    s = 1e-3
    ps, qs = (p + s) / (1 + 4 * s), (q + s) / (1 + 4 * s)
    assert kl_divergence(p, q, smoothing=s) == pytest.approx(entropy(ps, qs), abs=1e-12)
    assert js_distance(p, q) == pytest.approx(jensenshannon(p, q, base=2), abs=1e-12)
    w1 = wasserstein_distance(np.arange(4), np.arange(4), p, q)
    assert wasserstein_representativeness(p, q) == pytest.approx(1 - w1 / 3, abs=1e-12)
    assert normalized_entropy(q) == pytest.approx(entropy(q) / np.log(4), abs=1e-12)
    assert entropy_deviation(p, q) == pytest.approx(abs(entropy(p) - entropy(q)) / np.log(4), abs=1e-12)


def test_metrics_vectorise_over_leading_axes():
    stacked_p, stacked_q = np.stack([P, Q, R]), np.stack([Q, R, P])
    for i in range(3):
        assert js_distance(stacked_p, stacked_q)[i] == pytest.approx(jensenshannon(stacked_p[i], stacked_q[i], base=2))
        assert kl_divergence(stacked_p, stacked_q)[i] == pytest.approx(float(kl_divergence(stacked_p[i], stacked_q[i])))


def test_smoothing_is_stated_formula():
    assert smooth(np.array([1.0, 0.0, 0.0]), 0.1).tolist() == pytest.approx([1.1 / 1.3, 0.1 / 1.3, 0.1 / 1.3])


def test_extremes():
    assert wasserstein_representativeness(np.array([1.0, 0, 0]), np.array([0, 0, 1.0])) == pytest.approx(0.0)
    assert normalized_entropy(np.full(5, 0.2)) == pytest.approx(1.0)
    assert js_distance(np.array([1.0, 0]), np.array([0, 1.0])) == pytest.approx(1.0)


def test_eta_squared_equals_one_way_anova():
    # Independent computation: statsmodels OLS ANOVA on individual scores, eta^2 = SS_group / SS_total.
    rng = np.random.default_rng(3)
    table = rng.integers(0, 40, size=(4, 5)).astype(float)
    rows = [(g, k) for g in range(4) for k in range(5) for _ in range(int(table[g, k]))]
    frame = pd.DataFrame(rows, columns=["group", "score"])
    anova = anova_lm(smf.ols("score ~ C(group)", data=frame).fit())
    expected = anova.loc["C(group)", "sum_sq"] / anova["sum_sq"].sum()
    assert eta_squared(table) == pytest.approx(expected, rel=1e-10)


def test_eta_squared_weighted_counts_scale_free_and_constant_is_zero():
    table = np.array([[3.0, 1.0, 0.0], [0.5, 2.0, 4.0]])
    assert eta_squared(table * 7.3) == pytest.approx(float(eta_squared(table)))
    # one answer for everyone: no group differs, so eta^2 is 0 (defined), and flagged by no_variance
    assert eta_squared(np.array([[5.0, 0, 0], [2.0, 0, 0]])) == 0.0
    assert no_variance(np.array([[5.0, 0, 0], [2.0, 0, 0]])) and not no_variance(table)
    assert np.isnan(eta_squared(np.zeros((2, 3))))  # no answers at all


def test_bootstrap_tables_match_a_loop():
    rng = np.random.default_rng(0)
    n, k, groups = 30, 3, 4
    counts = np.eye(k)[rng.integers(0, k, n)] * rng.uniform(0.5, 2.0, n)[:, None]
    labels = rng.integers(-1, groups, n)
    index = resample_index(n, 25, np.random.default_rng(1))
    tables = bootstrap_tables(counts, labels, groups, index)
    for b in (0, 7, 25):
        expected = np.zeros((groups, k))
        for j in index[b]:
            if labels[j] >= 0:
                expected[labels[j]] += counts[j]
        np.testing.assert_allclose(tables[b], expected)
    np.testing.assert_allclose(tables[0].sum(axis=0), counts[labels >= 0].sum(axis=0))


def test_distribution_metrics_keys_and_nominal_questions():
    metrics = distribution_metrics(np.array([30, 50, 20]), np.array([10, 10, 10]), ordinal=False)
    assert "representativeness_w1" not in metrics
    assert metrics["entropy_norm_model"] == pytest.approx(1.0)
    assert metrics["js_distance"] == pytest.approx(jensenshannon([0.3, 0.5, 0.2], [1 / 3] * 3, base=2))
