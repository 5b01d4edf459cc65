"""The three block tests against independent, literal computations (itertools, scipy.binomtest, loops)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest

from analysis.block_tests import (bootstrap_mean_ci, bootstrap_mean_ci_batch, sign_counts, sign_flip_p,
                                  sign_flip_p_batch, sign_test_p)


def literal_bootstrap(d, draws=20000, seed=20260729, alpha=0.05):
    index = np.random.default_rng(seed).integers(0, len(d), size=(draws, len(d)))
    return tuple(np.quantile(d[index].mean(axis=1), [alpha / 2, 1 - alpha / 2]))


def literal_exhaustive(nonzero):
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=len(nonzero))))
    stats = np.abs((signs * nonzero).mean(axis=1))
    return float((stats >= abs(nonzero.mean()) - 1e-12).sum() / len(signs))


def literal_monte_carlo(nonzero, seed=20260729):
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(100):
        signs = rng.choice([-1.0, 1.0], size=(10000, len(nonzero)))
        extreme += int((np.abs((signs * nonzero).mean(axis=1)) >= abs(nonzero.mean()) - 1e-12).sum())
    return (extreme + 1) / 1_000_001


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
