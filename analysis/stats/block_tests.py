"""The three tests run on paired block differences, batched over many contrasts at once.

A paired contrast reduces each complete block (e.g. one model x topic x seed) to one difference
``d_b = metric(treatment arm) - metric(baseline arm)``. This module turns vectors of such differences into
the published PV-SST numbers, following the study's protocol to the letter (``tests/data/pvsst_reference/README.md``):

- **Percentile bootstrap of the mean**: a fresh ``np.random.default_rng(seed)`` per vector, ONE call
  ``rng.integers(0, n, size=(draws, n))``, the row means of ``d`` at those indices, and numpy's default
  (linear) quantiles at ``alpha/2`` and ``1 - alpha/2``.
- **Exact sign test**: two-sided binomial on the nonzero differences, ``min(1, 2 P(X <= min(pos, neg)))``
  with ``X ~ Binomial(pos + neg, 1/2)``.
- **Sign-flip randomization test** of the mean: over the nonzero differences, statistic ``|mean|``;
  under the plan's method (:class:`pvsst.analysis.stats.plan.RandomizationPlan`): ``auto`` is exhaustive over all
  ``2**m`` sign patterns when ``m <= exhaustive_max_n`` (``p = extreme / 2**m``), else Monte Carlo;
  Monte Carlo is a fresh ``default_rng(seed)`` drawing batches of
  ``rng.choice([-1.0, 1.0], size=(10000, m))`` (the last batch shorter) until ``draws`` patterns, with
  ``p = (extreme + 1) / (draws + 1)``. PV-SST: exhaustive up to 20, else 100 batches (1,000,000 draws).
  A pattern is extreme when ``|mean| >= |observed mean| - 1e-12``.

Because every vector gets a *fresh* generator with the same seed, all vectors of the same length share
the same bootstrap index matrix and the same sign matrices. The batched functions draw them once per
length and evaluate every vector of that length together (a matrix product for the bootstrap and the
exhaustive patterns, byte lookup tables for the Monte Carlo signs), so the full 216-row PV-SST table
takes about two seconds on 2 cores instead of about a minute; the numbers are the per-vector
procedure's numbers (to rounding, ~1e-16).

Examples
--------
>>> import numpy as np
>>> d = np.array([0.5, 0.25, 0.0, -0.25, 0.5, 0.75])
>>> sign_counts(d)
(4, 1, 1)
>>> round(sign_test_p(4, 1), 6)
0.375
>>> sign_flip_p(d[d != 0])
(0.1875, 'exhaustive', 32)
>>> from pvsst.analysis.stats.plan import RandomizationPlan
>>> p, method, draws = sign_flip_p(d[d != 0], RandomizationPlan(method="monte_carlo", draws=999))
>>> method, draws, round(p * 1000) == p * 1000
('monte_carlo', 999, True)
"""
from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from pvsst.analysis.stats.plan import RandomizationPlan
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

MONTE_CARLO_BATCH_SIZE = 10_000
EXHAUSTIVE_LIMIT = 30
FEW_BLOCKS = 20
"""Below this many blocks a percentile bootstrap of the mean is too narrow; use :func:`t_mean_ci`."""
"""Most nonzero pairs an exhaustive test enumerates (2**30 patterns)."""
EXTREME_TOLERANCE = 1e-12
# Rows of the exhaustive sign-pattern matrix evaluated per matrix product (bounds memory at m = 20).
_PATTERN_CHUNK = 1 << 16


def sign_counts(differences: np.ndarray) -> tuple[int, int, int]:
    """Numbers of positive, negative and exactly-zero paired differences.

    Parameters
    ----------
    differences : numpy.ndarray
        The per-block differences ``d_b``.

    Returns
    -------
    tuple of int
        ``(positive, negative, ties)``.

    Notes
    -----
    ``positive = #{d_b > 0}``, ``negative = #{d_b < 0}``, ``ties = #{d_b = 0}``: only exact zeros are
    ties, as PV-SST counts them.

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438.

    Examples
    --------
    >>> sign_counts(np.array([1.0, -2.0, 0.0, 3.0]))
    (2, 1, 1)
    """
    d = np.asarray(differences, dtype=float)
    positive, negative = int((d > 0).sum()), int((d < 0).sum())
    return positive, negative, int(d.size - positive - negative)


def sign_test_p(positive: int, negative: int) -> float:
    """Exact two-sided sign test of the nonzero paired differences.

    Parameters
    ----------
    positive, negative : int
        Numbers of positive and negative differences (ties are left out).

    Returns
    -------
    float
        The p-value; 1.0 when there is no nonzero difference.

    Notes
    -----
    ``p = min(1, 2 P(X <= min(pos, neg)))`` with ``X ~ Binomial(pos + neg, 1/2)``.

    References
    ----------
    .. [1] W. J. Conover, *Practical Nonparametric Statistics*, 3rd ed., section 3.4 (the sign test),
       Wiley, 1999.

    Examples
    --------
    >>> sign_test_p(9, 1)
    0.021484375
    >>> sign_test_p(0, 0)
    1.0
    """
    n = positive + negative
    if n == 0:
        return 1.0
    # every run and worker process loads this module for its trial metrics
    # lazy: scipy.stats is slow to import
    from scipy.stats import binom

    return float(min(1.0, 2.0 * binom.cdf(min(positive, negative), n, 0.5)))


def bootstrap_mean_ci(differences: np.ndarray, *, draws: int = BOOTSTRAP_DRAWS, seed: int = ANALYSIS_SEED,
                      alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference, from a fresh ``default_rng(seed)``.

    Parameters
    ----------
    differences : numpy.ndarray
        The ``n`` per-block differences, in block order (the draws index into that order).
    draws : int
        Bootstrap resamples.
    seed : int
        Seed of the fresh generator.
    alpha : float
        The interval covers ``1 - alpha``.

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Notes
    -----
    One call ``rng.integers(0, n, size=(draws, n))`` gives the resamples; their means ``m_1..m_draws``
    give ``low, high`` = numpy's (linear) quantiles of ``m`` at ``alpha / 2`` and ``1 - alpha / 2``.
    PV-SST's published intervals are reproduced exactly.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, ch. 13, Chapman & Hall,
       1993.
    .. [2] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438.

    Examples
    --------
    >>> bootstrap_mean_ci(np.array([1.0, 1.0, 1.0]))
    (1.0, 1.0)
    >>> bootstrap_mean_ci(np.array([0.0, 1.0, 2.0, 5.0]), draws=1000, alpha=0.2)
    (0.75, 3.25)
    """
    low, high = bootstrap_mean_ci_batch([np.asarray(differences, dtype=float)], draws=draws, seed=seed,
                                        alpha=alpha)
    return float(low[0]), float(high[0])


def t_mean_ci(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """Student-t interval of a mean: for few blocks, where a percentile bootstrap is too narrow.

    Parameters
    ----------
    values : numpy.ndarray
        The block values (at least 2; fewer give NaN bounds).
    alpha : float
        The interval's level is ``1 - alpha``.

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Notes
    -----
    ``mean +/- t_{n-1, 1 - alpha/2} s / sqrt(n)`` with ``s`` the sample standard deviation. A percentile
    bootstrap over ``n`` blocks has variance ``(n - 1) / n`` of the plug-in one and ignores the t
    quantile: with 4 blocks it is about 40% too narrow.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, section 13.3 (the percentile
       interval's narrowness in small samples), Chapman & Hall, 1993.
    .. [2] "Student", "The probable error of a mean", Biometrika 6(1), 1-25, 1908.

    Examples
    --------
    >>> low, high = t_mean_ci(np.array([0.15, 0.2, 0.22, 0.23]))
    >>> round(low, 4), round(high, 4)
    (0.1434, 0.2566)
    """
    from scipy.stats import t as student  # lazy: scipy's stats import costs ~1 s and few callers need it

    values = np.asarray(values, dtype=float)
    n = values.size
    if n < 2:
        return float("nan"), float("nan")
    half = float(student.ppf(1 - alpha / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return float(values.mean() - half), float(values.mean() + half)


def bootstrap_mean_ci_batch(vectors: Sequence[np.ndarray], *, draws: int = BOOTSTRAP_DRAWS,
                            seed: int = ANALYSIS_SEED, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_mean_ci` for many difference vectors at once; arrays of lows and highs.

    Vectors of equal length share the index matrix of a fresh generator, turned into a (draws x n)
    count matrix, so all their bootstrap means come from one matrix product.

    Parameters
    ----------
    vectors : sequence of numpy.ndarray
        The difference vectors (an empty one gives NaN bounds).
    draws, seed, alpha
        As in :func:`bootstrap_mean_ci`.

    Returns
    -------
    tuple of numpy.ndarray
        Lows and highs, one per vector.

    Notes
    -----
    For a vector ``d`` of length ``n`` and the count matrix ``C`` (``C[r, i]`` = times index ``i`` was
    drawn in resample ``r``), the resample means are ``C d / n``; the bounds are their quantiles at
    ``alpha / 2`` and ``1 - alpha / 2``, equal to :func:`bootstrap_mean_ci` per vector.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, ch. 13, Chapman & Hall,
       1993.

    Examples
    --------
    >>> low, high = bootstrap_mean_ci_batch([np.array([2.0, 2.0]), np.array([]), np.array([1.0, 3.0])], draws=500)
    >>> low.tolist(), high.tolist()
    ([2.0, nan, 1.0], [2.0, nan, 3.0])
    """
    low = np.full(len(vectors), np.nan)
    high = np.full(len(vectors), np.nan)
    for n, members in _group_by_length(vectors).items():
        if n == 0:
            continue
        index = np.random.default_rng(seed).integers(0, n, size=(draws, n))
        offsets = (np.arange(draws) * n)[:, None]
        counts = np.bincount((index + offsets).ravel(), minlength=draws * n).reshape(draws, n)
        values = np.stack([vectors[i] for i in members], axis=1)  # n x k
        means = counts.astype(float) @ values / n  # draws x k
        q = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
        low[members], high[members] = q[0], q[1]
    return low, high


def sign_flip_p(nonzero: np.ndarray, randomization: RandomizationPlan = RandomizationPlan(), *,
                seed: int = ANALYSIS_SEED) -> tuple[float, str, int]:
    """Sign-flip randomization p of ``|mean|`` over the nonzero differences.

    Parameters
    ----------
    nonzero : numpy.ndarray
        The ``m`` nonzero differences.
    randomization : RandomizationPlan
        Method (``auto``, ``exhaustive``, ``monte_carlo``), the exhaustive limit and the Monte Carlo draws.
    seed : int
        Seed of the fresh Monte Carlo generator.

    Returns
    -------
    tuple
        ``(p, method, patterns)``: ``method`` is ``"exhaustive"`` (``patterns = 2**m``) or
        ``"monte_carlo"`` (``patterns = randomization.draws``).

    Notes
    -----
    A sign pattern ``e`` in ``{-1, 1}^m`` is extreme when ``|mean(e d)| >= |mean(d)| - 1e-12``.
    Exhaustive: ``p = #{extreme patterns} / 2^m``. Monte Carlo, ``N`` patterns drawn in batches of
    ``rng.choice([-1.0, 1.0], size=(10000, m))``: ``p = (#{extreme} + 1) / (N + 1)``.

    References
    ----------
    .. [1] P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer, 2005.
    .. [2] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
       Applications in Genetics and Molecular Biology 9(1), article 39, 2010.
    .. [3] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438.

    Examples
    --------
    >>> sign_flip_p(np.array([1.0, 2.0, 3.0]))
    (0.25, 'exhaustive', 8)
    >>> sign_flip_p(np.array([1.0, 2.0, 3.0]), RandomizationPlan(method="monte_carlo", draws=99))
    (0.2, 'monte_carlo', 99)
    """
    p, method, patterns = sign_flip_p_batch([np.asarray(nonzero, dtype=float)], randomization, seed=seed)
    return float(p[0]), method[0], int(patterns[0])


def randomization_method(m: int, randomization: RandomizationPlan) -> str:
    """The method the plan prescribes for ``m`` nonzero differences: ``exhaustive`` or ``monte_carlo``.

    Parameters
    ----------
    m : int
        Number of nonzero differences.
    randomization : RandomizationPlan
        The plan; ``auto`` is exhaustive up to ``exhaustive_max_n``.

    Returns
    -------
    str

    Raises
    ------
    InputError
        An exhaustive test over more than :data:`EXHAUSTIVE_LIMIT` pairs.

    Examples
    --------
    >>> randomization_method(21, RandomizationPlan()), randomization_method(20, RandomizationPlan())
    ('monte_carlo', 'exhaustive')
    """
    if randomization.method == "auto":
        return "exhaustive" if m <= randomization.exhaustive_max_n else "monte_carlo"
    if randomization.method == "exhaustive" and m > EXHAUSTIVE_LIMIT:
        raise InputError("analysis.randomization", "method", f"exhaustive over {m} nonzero pairs is 2**{m} "
                         f"patterns (at most {EXHAUSTIVE_LIMIT} pairs); use auto or monte_carlo")
    return randomization.method


def sign_flip_p_batch(vectors: Sequence[np.ndarray], randomization: RandomizationPlan = RandomizationPlan(),
                      *, seed: int = ANALYSIS_SEED) -> tuple[np.ndarray, list[str], np.ndarray]:
    """:func:`sign_flip_p` for many vectors of nonzero differences, grouped by length.

    Every vector of one length shares the patterns of a fresh generator (Monte Carlo) or all ``2**m``
    patterns (exhaustive), evaluated for the whole group at once.

    Parameters
    ----------
    vectors : sequence of numpy.ndarray
        Vectors of nonzero differences.
    randomization, seed
        As in :func:`sign_flip_p`.

    Returns
    -------
    tuple
        p-values (array), methods (list of str) and pattern counts (array), one per vector.

    Notes
    -----
    The statistic and the p-value formulas of :func:`sign_flip_p`; an empty vector has ``p = 1``.

    References
    ----------
    .. [1] P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer, 2005.
    .. [2] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
       Applications in Genetics and Molecular Biology 9(1), article 39, 2010.

    Examples
    --------
    >>> p, methods, patterns = sign_flip_p_batch([np.array([1.0, 2.0, 3.0]), np.array([-1.0, 2.0]), np.array([])])
    >>> p.tolist(), methods, patterns.tolist()
    ([0.25, 1.0, 1.0], ['exhaustive', 'exhaustive', 'exhaustive'], [8, 4, 1])
    """
    p = np.ones(len(vectors))
    method = [randomization_method(len(v), randomization) for v in vectors]
    patterns = np.array([2 ** len(v) if m == "exhaustive" else randomization.draws
                         for v, m in zip(vectors, method)], dtype=np.int64)
    for m, members in _group_by_length(vectors).items():
        if m == 0:  # one (empty) pattern, which is as extreme as itself
            if method[members[0]] == "monte_carlo":  # every drawn pattern is as extreme
                p[members] = 1.0
            continue
        values = np.stack([vectors[i] for i in members], axis=1)  # m x k
        threshold = np.abs(values.mean(axis=0)) - EXTREME_TOLERANCE
        if method[members[0]] == "exhaustive":
            extreme = _exhaustive_extreme_counts(values, threshold)
            p[members] = extreme / float(2 ** m)
        else:
            extreme = _monte_carlo_extreme_counts(values, threshold, np.random.default_rng(seed),
                                                  randomization.draws)
            p[members] = (extreme + 1) / (randomization.draws + 1)
    return p, method, patterns


def _monte_carlo_extreme_counts(values: np.ndarray, threshold: np.ndarray, rng: np.random.Generator,
                                draws: int) -> np.ndarray:
    """Extreme counts over ``draws`` sign patterns, drawn in batches ``rng.choice([-1.0, 1.0],
    size=(10000, m))`` (the last one shorter).

    Each draw's signed sum is looked up byte by byte: the m sign bits are packed 8 to a byte and a
    256-entry table per byte holds the partial sums, so a draw costs ceil(m / 8) lookups, not m products.
    """
    m, k = values.shape
    n_bytes = -(-m // 8)
    padded = np.zeros((n_bytes * 8, k))
    padded[:m] = values
    byte_signs = ((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2.0 - 1.0  # 256 x 8
    tables = np.einsum("cb,gbk->gck", byte_signs, padded.reshape(n_bytes, 8, k))  # n_bytes x 256 x k
    # padding columns carry value 0, so their (unused) sign bits add nothing
    extreme = np.zeros(k, dtype=np.int64)
    for start in range(0, draws, MONTE_CARLO_BATCH_SIZE):
        batch_size = min(MONTE_CARLO_BATCH_SIZE, draws - start)
        packed = np.packbits(_choose_sign_bits(rng, (batch_size, m)), axis=1, bitorder="little")
        sums = tables[0][packed[:, 0]]
        for g in range(1, n_bytes):
            sums += tables[g][packed[:, g]]
        extreme += (np.abs(sums / m) >= threshold).sum(axis=0)
    return extreme


def _choose_sign_bits(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """``rng.choice([-1.0, 1.0], size=shape) > 0`` as uint8, drawing the same stream, faster.

    ``choice`` draws ``integers(0, 2)``, which for a default (PCG64) generator is the top bit of each
    32-bit half of the raw 64-bit outputs, low half first (Lemire's method never rejects for a range of
    2). We read those bits directly when the draw uses whole 64-bit words and a self-check confirms this
    numpy build still draws that way; otherwise we call ``choice``.
    """
    size = shape[0] * shape[1]
    if (size % 2 or sys.byteorder != "little" or not isinstance(rng.bit_generator, np.random.PCG64)
            or not _raw_sign_draws_match()):
        return (rng.choice([-1.0, 1.0], size=shape) > 0).astype(np.uint8)
    return _top_bits(rng.bit_generator.random_raw(size // 2)).reshape(shape)


def _top_bits(raw: np.ndarray) -> np.ndarray:
    """The top bit of each 32-bit half of ``raw`` (uint64), low half first, as uint8."""
    # little-endian: byte 3 of each 32-bit half holds that half's top bit
    return raw.view(np.uint8)[3::4] >> 7


_RAW_SIGN_CHECK: list[bool] = []


def _raw_sign_draws_match() -> bool:
    if not _RAW_SIGN_CHECK:
        shape = (50, 6)
        reference = np.random.default_rng(ANALYSIS_SEED).choice([-1.0, 1.0], size=shape)
        raw = np.random.default_rng(ANALYSIS_SEED).bit_generator.random_raw(shape[0] * shape[1] // 2)
        bits = _top_bits(raw).reshape(shape)
        _RAW_SIGN_CHECK.append(bool(np.array_equal(reference, bits * 2.0 - 1.0)))
    return _RAW_SIGN_CHECK[0]


def _exhaustive_extreme_counts(values: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Count, for each column of ``values`` (m x k), the sign patterns whose |mean| reaches ``threshold``."""
    m = values.shape[0]
    bits = np.arange(m)
    extreme = np.zeros(values.shape[1], dtype=np.int64)
    for start in range(0, 2 ** m, _PATTERN_CHUNK):
        codes = np.arange(start, min(start + _PATTERN_CHUNK, 2 ** m))
        signs = ((codes[:, None] >> bits) & 1) * 2.0 - 1.0
        extreme += (np.abs(signs @ values / m) >= threshold).sum(axis=0)
    return extreme


def _group_by_length(vectors: Sequence[np.ndarray]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = defaultdict(list)
    for i, v in enumerate(vectors):
        groups[len(v)].append(i)
    return groups
