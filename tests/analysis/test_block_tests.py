"""The three block tests against independent, literal computations (itertools, scipy.binomtest, loops)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest, permutation_test

from pvsst.analysis.stats.block_tests import (
    bootstrap_mean_ci,
    bootstrap_mean_ci_batch,
    sign_counts,
    sign_flip_p,
    sign_flip_p_batch,
    sign_test_p,
)
from pvsst.analysis.stats.plan import RandomizationPlan
from pvsst.core.errors import InputError


def literal_bootstrap(d, draws=20000, seed=20260729, alpha=0.05):
    index = np.random.default_rng(seed).integers(0, len(d), size=(draws, len(d)))
    return tuple(np.quantile(d[index].mean(axis=1), [alpha / 2, 1 - alpha / 2]))


def literal_exhaustive(nonzero):
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=len(nonzero))))
    stats = np.abs((signs * nonzero).mean(axis=1))
    return float((stats >= abs(nonzero.mean()) - 1e-12).sum() / len(signs))


def literal_monte_carlo(nonzero, seed=20260729, draws=1_000_000):
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, draws, 10000):
        signs = rng.choice([-1.0, 1.0], size=(min(10000, draws - start), len(nonzero)))
        extreme += int((np.abs((signs * nonzero).mean(axis=1)) >= abs(nonzero.mean()) - 1e-12).sum())
    return (extreme + 1) / (draws + 1)


def test_sign_counts_and_sign_test_match_scipy_binomtest():
    assert sign_counts(np.array([0.5, -0.25, 0.0, 0.0, 2.0])) == (2, 1, 2)
    for positive, negative in [(0, 0), (3, 0), (9, 1), (33, 20), (12, 12), (1, 10)]:
        expected = 1.0 if positive + negative == 0 else binomtest(positive, positive + negative).pvalue
        assert sign_test_p(positive, negative) == pytest.approx(expected, abs=1e-13)
    assert sign_test_p(9, 1) == 22 / 1024  # 2 * (1 + 10) / 2**10


def test_bootstrap_equals_the_literal_procedure():
    rng = np.random.default_rng(5)
    vectors = [rng.normal(size=n) for n in (16, 16, 64, 7)]
    low, high = bootstrap_mean_ci_batch(vectors)
    for i, d in enumerate(vectors):
        assert (low[i], high[i]) == pytest.approx(literal_bootstrap(d), abs=1e-13)
    assert bootstrap_mean_ci(vectors[3], alpha=0.2) == pytest.approx(literal_bootstrap(vectors[3], alpha=0.2),
                                                                     abs=1e-13)


def test_exhaustive_sign_flip_equals_itertools_enumeration():
    rng = np.random.default_rng(7)
    vectors = [np.round(rng.normal(size=m), 2) for m in (1, 3, 8, 8, 12)]
    p, methods, patterns = sign_flip_p_batch(vectors)
    for i, v in enumerate(vectors):
        assert p[i] == literal_exhaustive(v)
        assert methods[i] == "exhaustive" and patterns[i] == 2 ** len(v)
    # ties at the threshold count as extreme: {1, 1}: both |+-1 +-1| patterns of size 2 -> p = 1/2
    assert sign_flip_p(np.array([1.0, 1.0]))[0] == 0.5
    assert sign_flip_p(np.array([]))[0] == 1.0


def test_monte_carlo_sign_flip_equals_the_literal_choice_loop():
    rng = np.random.default_rng(11)
    v = rng.normal(0.2, 1.0, size=23)
    p, method, patterns = sign_flip_p(v)
    assert (method, patterns) == ("monte_carlo", 1_000_000)
    assert p == literal_monte_carlo(v)


def test_exhaustive_sign_flip_equals_scipy_permutation_test():
    # scipy's exact paired ("samples") permutation test flips the sign of every difference
    d = np.array([0.5, 0.25, -0.25, 0.5, 0.75, -0.1, 0.3])
    scipy_p = permutation_test((d,), lambda x, axis: np.abs(np.mean(x, axis=axis)), permutation_type="samples",
                               alternative="greater", n_resamples=np.inf).pvalue
    assert sign_flip_p(d)[0] == pytest.approx(scipy_p, abs=1e-15)


def test_the_plan_chooses_method_and_draws():
    rng = np.random.default_rng(13)
    small, large = rng.normal(0.3, 1.0, size=6), rng.normal(0.1, 1.0, size=25)
    monte_carlo = RandomizationPlan(method="monte_carlo", draws=999)
    p, methods, patterns = sign_flip_p_batch([small, large], monte_carlo)
    assert methods == ["monte_carlo", "monte_carlo"] and patterns.tolist() == [999, 999]
    assert p[0] == literal_monte_carlo(small, draws=999) and p[1] == literal_monte_carlo(large, draws=999)
    assert all(float(k).is_integer() for k in p * 1000)  # on the (k + 1) / (999 + 1) grid
    # an uneven draw count spans a partial last batch
    assert sign_flip_p(small, RandomizationPlan(method="monte_carlo", draws=12345))[0] == literal_monte_carlo(
        small, draws=12345)
    # auto with a lower exhaustive bound: 6 pairs now go to Monte Carlo with the plan's draws
    p, method, n = sign_flip_p(small, RandomizationPlan(exhaustive_max_n=5, draws=2000))
    assert (method, n, p) == ("monte_carlo", 2000, literal_monte_carlo(small, draws=2000))
    p, method, n = sign_flip_p(small[:4], RandomizationPlan(exhaustive_max_n=5, draws=2000))
    assert (method, n, p) == ("exhaustive", 16, literal_exhaustive(small[:4]))
    # exhaustive regardless of size, up to its limit
    p, method, n = sign_flip_p(large[:22], RandomizationPlan(method="exhaustive"))
    assert (method, n) == ("exhaustive", 2 ** 22)
    with pytest.raises(InputError, match="2\\*\\*31 patterns"):
        sign_flip_p(rng.normal(size=31), RandomizationPlan(method="exhaustive"))
