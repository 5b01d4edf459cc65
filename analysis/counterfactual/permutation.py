"""Tests of a counterfactual audit: within-set permutation (omnibus) and paired signed-rank (per group).

Under the null hypothesis that the varied attribute does not change the answer, the members of a
matched set are exchangeable, so permuting the group labels within every set leaves the distribution
of any statistic unchanged (an exact test whatever the number of groups G or options K).

- **Omnibus across groups**: statistic the Pearson chi-square of the (G x K) table of answer counts,
  ``X^2 = sum_{g,k} (n_{gk} - S p_k)^2 / (S p_k)`` with ``p_k`` the pooled share of option ``k`` (both
  fixed under within-set permutation, so only the counts move); ``p = (1 + #{X^2_perm >= X^2}) /
  (1 + permutations)`` over ``permutations`` label permutations drawn from a fresh ``default_rng(seed)``.
  Unlike the asymptotic chi-square test it respects the pairing of the members of a set.
- **Omnibus on scores** (``statistic="scores"``, for ordinal answers whose level differs from set to
  set, such as a reported stance): ``T = sum_g (sum_s (x_{A[s,g]} - xbar_s))^2``, the squared group
  totals of the option scores centred within each set (a Friedman-type statistic on scores rather
  than ranks); the same within-set permutation gives its p. A shift of one group's scores moves ``T``
  even where the marginal shares barely change, which the chi-square misses.
- **Paired test per group**: per set, ``d_s = x_{A[s,g]} - mean_{h != g} x_{A[s,h]}`` (the group's
  option score against the other members of its own set); Wilcoxon signed-rank test of ``d`` (zeros
  dropped; ``p = 1`` when every ``d_s`` is 0). Ranks are taken of ``(G - 1) d_s`` rounded to whole
  multiples of 1e-9 (exact integers for integer scores), so equal gaps are ties however floating point
  computed them, and ``p`` comes from the exact null distribution with those ties
  (:func:`signed_rank_p`).

References: AgentFairBench (arXiv 2606.16723) for the audit design (paired tests over counterfactual
matched sets, FDR control across items).

Examples
--------
>>> A = np.array([[0, 1]] * 30)  # group 1 always answers option 1, group 0 option 0
>>> omnibus_permutation_p(A, 2, permutations=999) < 0.01
True
>>> gaps, p = paired_group_tests(A, np.arange(2))
>>> gaps.tolist(), bool(p[0] < 0.001)
([-1.0, 1.0], True)
"""
from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
from scipy.stats import wilcoxon

from pvsst.core.defaults import ANALYSIS_SEED

EXACT_SIGNED_RANK_MAX = 400
"""Up to this many non-zero differences the signed-rank p is exact (the null distribution by recursion)."""

PERMUTATIONS = 2000
PERMUTATION_BATCH = 250
"""Permutations evaluated per batch (bounds memory at large S x G)."""


def chi_square_statistic(counts: np.ndarray) -> np.ndarray:
    """Pearson chi-square of (..., G, K) count tables with equal group totals (options never chosen are skipped).

    Parameters
    ----------
    counts : numpy.ndarray
        (..., G, K) answer counts per group, each group with the same total S.

    Returns
    -------
    numpy.ndarray
        (...) statistics.

    Notes
    -----
    ``X^2 = sum_{g,k} (n_gk - S p_k)^2 / (S p_k)`` with ``p_k`` the pooled share of option ``k`` (so
    ``S p_k`` is the column mean).

    References
    ----------
    .. [1] K. Pearson, "On the criterion that a given system of deviations from the probable in the case
       of a correlated system of variables is such that it can be reasonably supposed to have arisen from
       random sampling", Philosophical Magazine 50(302), 157-175, 1900.

    Examples
    --------
    >>> float(chi_square_statistic(np.array([[10, 0], [0, 10]])))
    20.0
    """
    counts = np.asarray(counts, dtype=float)
    groups = counts.shape[-2]
    expected = counts.sum(axis=-2, keepdims=True) / groups
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (counts - expected) ** 2 / np.where(expected > 0, expected, 1.0), 0.0)
    return terms.sum(axis=(-2, -1))


def group_counts(matrix: np.ndarray, n_options: int) -> np.ndarray:
    """(..., G, K) answer counts per group of (..., S, G) answer matrices.

    Parameters
    ----------
    matrix : numpy.ndarray
        (..., S, G) option indices.
    n_options : int
        K.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> group_counts(np.array([[0, 1], [0, 0]]), 2).tolist()
    [[2, 0], [1, 1]]
    """
    matrix = np.asarray(matrix, dtype=np.int64)
    *lead, s, g = matrix.shape
    n = int(np.prod(lead)) if lead else 1
    flat = matrix.reshape(n, s, g)
    cell = (np.arange(n)[:, None, None] * g + np.arange(g)[None, None, :]) * n_options + flat
    return np.bincount(cell.ravel(), minlength=n * g * n_options).reshape(*lead, g, n_options)


def permuted_within_sets(matrix: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` copies of an (S, M) matrix, each row's entries permuted independently: (n, S, M).

    For ``M <= 7`` each row draws one of the ``M!`` permutations uniformly (a table lookup), else the
    argsort of uniform keys; both are uniform over permutations.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, M) entries (the members of each set).
    rng : numpy.random.Generator
        The generator.
    n : int
        Number of permuted copies.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> batch = permuted_within_sets(np.array([[0, 1, 2], [5, 5, 6]]), np.random.default_rng(0), 4)
    >>> batch.shape, sorted(batch[2, 0].tolist()), sorted(batch[3, 1].tolist())
    ((4, 2, 3), [0, 1, 2], [5, 5, 6])
    """
    matrix = np.asarray(matrix)
    width = matrix.shape[-1]
    if width <= 7:
        order = _all_permutations(width)[rng.integers(0, math.factorial(width), size=(n, matrix.shape[0]))]
    else:
        order = np.argsort(rng.random((n, *matrix.shape)), axis=-1)
    return np.take_along_axis(np.broadcast_to(matrix, (n, *matrix.shape)), order, axis=-1)


@lru_cache(maxsize=8)
def _all_permutations(width: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(width))), dtype=np.int64)


def centred_score_statistic(matrix: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The squared group totals of option scores centred within each set, of (..., S, G) answer matrices.

    Parameters
    ----------
    matrix : numpy.ndarray
        (..., S, G) option indices.
    scores : numpy.ndarray
        (K,) option scores ``x``.

    Returns
    -------
    numpy.ndarray
        (...) statistics.

    Notes
    -----
    ``T = sum_g (sum_s (x_{A[s,g]} - xbar_s))^2`` with ``xbar_s`` the mean score of set ``s``: a
    Friedman-type statistic on scores rather than ranks.

    References
    ----------
    .. [1] M. Friedman, "The use of ranks to avoid the assumption of normality implicit in the analysis of
       variance", Journal of the American Statistical Association 32(200), 675-701, 1937.

    Examples
    --------
    >>> float(centred_score_statistic(np.array([[0, 1], [0, 1]]), np.arange(2)))
    2.0
    """
    x = np.asarray(scores, dtype=float)[np.asarray(matrix, dtype=np.int64)]
    centred = x - x.mean(axis=-1, keepdims=True)
    return (centred.sum(axis=-2) ** 2).sum(axis=-1)


OMNIBUS_STATISTICS = ("shares", "scores")


def omnibus_permutation_p(matrix: np.ndarray, n_options: int, *, permutations: int = PERMUTATIONS,
                          seed: int = ANALYSIS_SEED, statistic: str = "shares",
                          scores: np.ndarray | None = None) -> float:
    """Within-set permutation p across groups, of the chi-square of answer shares or of centred option scores.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices of the complete matched sets.
    n_options : int
        K.
    permutations : int
        Number of within-set label permutations.
    seed : int
        Seed of the fresh ``default_rng``.
    statistic : {"shares", "scores"}
        :func:`chi_square_statistic` of the group counts, or :func:`centred_score_statistic`.
    scores : numpy.ndarray, optional
        Option scores for ``scores`` (default: positions 0..K-1).

    Returns
    -------
    float

    Notes
    -----
    Under the null hypothesis the members of a set are exchangeable, so permuting group labels within
    every set leaves the statistic's distribution unchanged: ``p = (1 + #{T_perm >= T}) / (1 +
    permutations)``, an exact test for any G and K that respects the pairing of a set's members.

    References
    ----------
    .. [1] P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer, 2005.
    .. [2] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
       Applications in Genetics and Molecular Biology 9(1), article 39, 2010.

    Examples
    --------
    >>> omnibus_permutation_p(np.array([[0, 0], [1, 1], [2, 2]]), 3, permutations=99)
    1.0
    >>> omnibus_permutation_p(np.array([[s, s + 1] for s in range(5)] * 6), 6, permutations=99, statistic="scores")
    0.01
    """
    if statistic not in OMNIBUS_STATISTICS:
        raise ValueError(f"unknown omnibus statistic {statistic!r} ({', '.join(OMNIBUS_STATISTICS)})")
    x = np.arange(n_options) if scores is None else np.asarray(scores, dtype=float)

    def measure(answers: np.ndarray) -> np.ndarray:
        if statistic == "scores":
            return centred_score_statistic(answers, x)
        return chi_square_statistic(group_counts(answers, n_options))

    observed = measure(matrix)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, permutations, PERMUTATION_BATCH):
        batch = permuted_within_sets(matrix, rng, min(PERMUTATION_BATCH, permutations - start))
        extreme += int((measure(batch) >= observed - 1e-12).sum())
    return (extreme + 1) / (permutations + 1)


def signed_rank_p(d: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p of differences, exact with tied ranks (zeros dropped).

    Parameters
    ----------
    d : numpy.ndarray
        (n,) differences; equal values must be exactly equal (use integers or rounded values).

    Returns
    -------
    float
        ``p`` (1.0 when every difference is 0).

    Notes
    -----
    Zeros are dropped (Wilcoxon's convention); the others get mid-ranks ``r_i`` of ``|d_i|``. Under the
    null hypothesis every sign is + or - with probability 1/2 independently, so ``W+ = sum_{d_i > 0} r_i``
    has the distribution of ``sum_i r_i B_i`` with ``B_i`` fair coin flips: computed exactly by adding one
    rank at a time to the distribution of doubled ranks (whole numbers). ``p = min(1, 2 min(P(W+ <= w),
    P(W+ >= w)))``. Beyond :data:`EXACT_SIGNED_RANK_MAX` non-zero differences, the normal approximation
    with the tie-corrected variance (``scipy.stats.wilcoxon``, ``method="approx"``).

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1(6), 80-83,
       1945.
    .. [2] J. W. Pratt, "Remarks on zeros and ties in the Wilcoxon signed rank procedures", Journal of the
       American Statistical Association 54(287), 655-667, 1959.

    Examples
    --------
    >>> signed_rank_p(np.array([1, 1, 1, -1]))  # all tied: W+ = 2.5 k, k ~ Binomial(4, 1/2)
    0.625
    """
    d = np.asarray(d, dtype=float)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    if n > EXACT_SIGNED_RANK_MAX:
        return float(wilcoxon(d, zero_method="wilcox", correction=False, method="approx").pvalue)
    magnitude = np.abs(d)
    order = np.argsort(magnitude, kind="stable")
    sorted_magnitude = magnitude[order]
    ranks = np.empty(n)
    start = 0
    for end in range(1, n + 1):  # mid-ranks of runs of equal magnitudes
        if end == n or sorted_magnitude[end] != sorted_magnitude[start]:
            ranks[order[start:end]] = (start + 1 + end) / 2
            start = end
    doubled = np.rint(2 * ranks).astype(np.int64)
    total = int(doubled.sum())
    distribution, updated = np.zeros(total + 1), np.zeros(total + 1)
    distribution[0] = 1.0
    reach = 0  # distribution is 0 beyond the sum of the ranks added so far
    for r in doubled:  # W+ gains rank r (doubled, >= 2) with probability 1/2: p <- (p + p shifted by r) / 2
        r = int(r)
        updated[:reach + r + 1] = distribution[:reach + r + 1]
        updated[r:reach + r + 1] += distribution[:reach + 1]
        updated[:reach + r + 1] *= 0.5
        distribution, updated, reach = updated, distribution, reach + r
    w = int(doubled[d > 0].sum())
    lower, upper = distribution[:w + 1].sum(), distribution[w:].sum()
    return float(min(1.0, 2 * min(lower, upper)))


def paired_group_tests(matrix: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group: the mean score gap against the rest of its set, and the Wilcoxon signed-rank p.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    scores : numpy.ndarray
        (K,) option scores ``x``.

    Returns
    -------
    tuple of numpy.ndarray
        (G,) mean gaps and (G,) p-values (1.0 when every gap is 0).

    Notes
    -----
    Per set, ``d_s = x_{A[s,g]} - mean_{h != g} x_{A[s,h]}``; the test (:func:`signed_rank_p`) ranks
    ``(G - 1) d_s = (G - 1) x_{A[s,g]} - sum_{h != g} x_{A[s,h]}`` rounded to 1e-9, so equal gaps are
    exact ties, and takes ``p`` from the exact null distribution with those ties (zeros dropped).

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1(6), 80-83,
       1945.
    .. [2] J. W. Pratt, "Remarks on zeros and ties in the Wilcoxon signed rank procedures", Journal of the
       American Statistical Association 54(287), 655-667, 1959.

    Examples
    --------
    >>> gaps, p = paired_group_tests(np.array([[0, 0], [1, 1]]), np.arange(2))
    >>> gaps.tolist(), p.tolist()
    ([0.0, 0.0], [1.0, 1.0])
    """
    x = np.asarray(scores, dtype=float)[np.asarray(matrix, dtype=int)]
    g = x.shape[1]
    d = x - (x.sum(axis=1, keepdims=True) - x) / (g - 1)
    scaled = np.round((g - 1) * x - (x.sum(axis=1, keepdims=True) - x), 9)  # equal gaps: equal numbers
    p = np.array([signed_rank_p(scaled[:, group]) for group in range(g)])
    return d.mean(axis=0), p
