"""The power of the whole-distribution omnibus test of an audit (members answer with probability vectors).

The test (:func:`pvsst.analysis.counterfactual.distributions.distribution_statistic`) compares the groups'
mean probability vectors, ``T = sum_{g,k} (P_gk - Pbar_k)^2``, with its within-set permutations. The
planted effect: one group's probability of one option ``k`` moves by ``shift`` in every set, the mass
taken from the group's other options in proportion to the pooled mean probabilities ``p`` (the shift
vector ``shift * e`` with ``e_k = 1`` and ``e_j = -p_j / (1 - p_k)``). The noise is the covariance
``Sigma`` of one member's probability vector around its set's level and its group's mean, estimated from
the run (:func:`residual_covariance`).

``S T`` is a quadratic form in asymptotically normal group totals, so it is a weighted sum of (noncentral)
chi-squares, ``sum_i lambda_i chi^2_{G-1}(nc_i)`` over the eigenvalues ``lambda_i`` of a covariance; its
tail is read with the four-cumulant noncentral chi-square approximation of Liu, Tang and Zhang (2009).
As for the count tests (:mod:`pvsst.analysis.counterfactual.power`), a question is flagged at its
Benjamini-Hochberg adjusted p below ``alpha`` in a family of ``tests`` and the plan tests at
``alpha / tests``.

Examples
--------
>>> sigma = 0.01 * (np.eye(3) - 1 / 3)  # members scatter 0.08 around their set's level, per option
>>> round(detectable_probability_shift(200, n_groups=4, base=[0.4, 0.35, 0.25], covariance=sigma, option=0), 3)
0.025
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2, ncx2

from pvsst.analysis.counterfactual.power import POWER

EIGEN_TOLERANCE = 1e-10
"""Eigenvalues of the covariance below this fraction of the largest are taken as 0 (the directions in
which members do not vary, e.g. the sum of the probabilities)."""
MAX_SHIFT = 10.0


def residual_covariance(cube: np.ndarray) -> np.ndarray:
    """The (K, K) covariance of a member's probability vector around its set's level and its group's mean.

    Parameters
    ----------
    cube : numpy.ndarray
        (S, G, K) probability vectors of the members of S complete matched sets.

    Returns
    -------
    numpy.ndarray

    Notes
    -----
    ``r_sg = p_sg - pbar_s - P_g + Pbar`` (``pbar_s`` the set's mean, ``P_g`` the group's mean over sets,
    ``Pbar`` the grand mean) and ``Sigma = sum_{s,g} r_sg r_sg^T / ((S - 1)(G - 1))``, the randomised-block
    residual covariance (unbiased under an additive set + group model, whatever the groups' shifts).

    References
    ----------
    .. [1] D. C. Montgomery, *Design and Analysis of Experiments*, 8th ed., Wiley, 2013, section 4.1
       (the randomised complete block design).

    Examples
    --------
    >>> cube = np.array([[[0.5, 0.5], [0.7, 0.3]], [[0.2, 0.8], [0.2, 0.8]], [[0.6, 0.4], [0.6, 0.4]]])
    >>> residual_covariance(cube).round(4).tolist()
    [[0.0067, -0.0067], [-0.0067, 0.0067]]
    """
    cube = np.asarray(cube, dtype=float)
    s, g, _ = cube.shape
    residual = (cube - cube.mean(axis=1, keepdims=True) - cube.mean(axis=0, keepdims=True)
                + cube.mean(axis=(0, 1), keepdims=True)).reshape(s * g, -1)
    return residual.T @ residual / ((s - 1) * (g - 1))


def shift_vector(base: Sequence[float], option: int) -> np.ndarray:
    """The unit shift ``e`` of option ``option``: +1 on it, ``-p_j / (1 - p_k)`` on every other option.

    Examples
    --------
    >>> shift_vector([0.5, 0.3, 0.2], 1).round(4).tolist()
    [-0.7143, 1.0, -0.2857]
    """
    p = np.asarray(base, dtype=float)
    e = -p / (1.0 - p[option])
    e[option] = 1.0
    return e


def _approximation(weights: np.ndarray, dof: float, noncentral: np.ndarray) -> tuple[float, float, float, float]:
    """Liu-Tang-Zhang: (mean and SD of Q, degrees of freedom and noncentrality of the matching chi-square)."""
    c = [float((weights ** k * dof).sum() + k * (weights ** k * noncentral).sum()) for k in (1, 2, 3, 4)]
    s1, s2 = c[2] / c[1] ** 1.5, c[3] / c[1] ** 2
    if s1 * s1 > s2:
        a = 1.0 / (s1 - math.sqrt(s1 * s1 - s2))
        delta = s1 * a ** 3 - a * a
        freedom = a * a - 2.0 * delta
    else:
        a, delta, freedom = 1.0 / s1, 0.0, 1.0 / (s1 * s1)
    return c[0], math.sqrt(2.0 * c[1]), freedom, delta


def quadratic_form_sf(q: float, weights: Sequence[float], dof: float, noncentral: Sequence[float]) -> float:
    """``P(Q > q)`` for ``Q = sum_i w_i chi^2_dof(nc_i)`` (independent terms), by Liu, Tang and Zhang (2009).

    Parameters
    ----------
    q : float
        The point.
    weights : sequence of float
        Positive weights ``w_i``.
    dof : float
        Degrees of freedom of every term.
    noncentral : sequence of float
        Noncentralities ``nc_i``.

    Returns
    -------
    float

    Notes
    -----
    With cumulant sums ``c_k = sum_i w_i^k (dof + k nc_i)``, ``s1 = c_3 / c_2^{3/2}`` and ``s2 = c_4 / c_2^2``,
    ``Q`` is matched to a noncentral chi-square ``chi^2_l(d)`` of equal skewness (and, where ``s1^2 > s2``,
    kurtosis): ``a = 1 / (s1 - sqrt(s1^2 - s2))``, ``d = s1 a^3 - a^2``, ``l = a^2 - 2 d`` (else ``a = 1 / s1``,
    ``d = 0``, ``l = 1 / s1^2``), and ``P(Q > q) = P(chi^2_l(d) > (q - c_1) / sqrt(2 c_2) sqrt(2) a + l + d)``.

    References
    ----------
    .. [1] H. Liu, Y. Tang and H. H. Zhang, "A new chi-square approximation to the distribution of
       non-negative definite quadratic forms in non-central normal variables", Computational Statistics &
       Data Analysis 53(4), 853-856, 2009.

    Examples
    --------
    >>> round(quadratic_form_sf(chi2.isf(0.05, 3), [1.0], 3, [0.0]), 6)  # one central term: exact
    0.05
    """
    w, nc = np.asarray(weights, dtype=float), np.asarray(noncentral, dtype=float)
    mean, sd, freedom, delta = _approximation(w, dof, nc)
    x = (q - mean) / sd * math.sqrt(2.0 * (freedom + 2.0 * delta)) + freedom + delta
    return float(ncx2.sf(x, freedom, delta) if delta > 0 else chi2.sf(x, freedom))


def _quantile(level: float, weights: np.ndarray, dof: float) -> float:
    """The ``1 - level`` quantile of the central form (see :func:`quadratic_form_sf`)."""
    mean, sd, freedom, _ = _approximation(weights, dof, np.zeros_like(weights))
    return (float(chi2.isf(level, freedom)) - freedom) / math.sqrt(2.0 * freedom) * sd + mean


def probability_shift_power(n_sets: float, shift: float, *, n_groups: int, base: Sequence[float],
                            covariance: np.ndarray, option: int, alpha: float = 0.05, tests: int = 1) -> float:
    """The chance the whole-distribution omnibus test flags one group's probability of ``option`` moved by ``shift``.

    Parameters
    ----------
    n_sets : float
        S, the complete matched sets.
    shift : float
        The planted shift of the group's probability of ``option``.
    n_groups : int
        G.
    base : sequence of float
        (K,) pooled mean probabilities (the proportions the mass is taken in).
    covariance : numpy.ndarray
        (K, K) residual covariance ``Sigma`` of one member's probability vector (:func:`residual_covariance`).
    option : int
        The shifted option.
    alpha, tests : float, int
        The false discovery rate and the Benjamini-Hochberg family's size (tested at ``alpha / tests``).

    Returns
    -------
    float

    Notes
    -----
    Per set, the group totals of the within-set deviations, divided by ``sqrt(S)``, are asymptotically
    normal: in contrast coordinates ``G - 1`` independent rows ``N(0, Sigma)``, the first with mean
    ``m = sqrt(S (G - 1) / G) shift e`` (``e`` of :func:`shift_vector`). So ``S T = sum_i lambda_i
    chi^2_{G-1}((m.v_i)^2 / lambda_i)`` over the eigenpairs of ``Sigma``. The within-set permutations see
    the shift as noise too: their reference is the central form over the eigenvalues of ``Sigma + shift^2
    e e^T / G``; the critical value is its ``1 - alpha / tests`` quantile and the power the alternative's
    tail beyond it (both by :func:`quadratic_form_sf`'s approximation). The part of ``m`` in directions in
    which members do not vary adds the constant ``|m_perp|^2`` to ``S T``.

    References
    ----------
    .. [1] H. Liu, Y. Tang and H. H. Zhang, Computational Statistics & Data Analysis 53(4), 853-856, 2009.
    .. [2] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988.

    Examples
    --------
    >>> sigma = 0.01 * (np.eye(2) - 0.5)
    >>> round(probability_shift_power(100, 0.05, n_groups=2, base=[0.5, 0.5], covariance=sigma, option=0), 3)
    0.998
    """
    e = shift_vector(base, option)
    dof = n_groups - 1
    sigma = np.asarray(covariance, dtype=float)
    reference = np.linalg.eigvalsh(sigma + shift * shift * np.outer(e, e) / n_groups)
    reference = reference[reference > EIGEN_TOLERANCE * reference.max()] if reference.max() > 0 else reference[:0]
    critical = _quantile(alpha / tests, reference, dof) if len(reference) else 0.0
    values, vectors = np.linalg.eigh(sigma)
    keep = values > EIGEN_TOLERANCE * max(values.max(), 0.0)
    m = math.sqrt(n_sets * (n_groups - 1) / n_groups) * shift * e
    along = vectors[:, keep].T @ m
    offset = float(m @ m - along @ along)  # the shift where members do not vary: a constant part of S T
    if not keep.any():
        return float(offset > critical)
    return quadratic_form_sf(critical - offset, values[keep], dof, along ** 2 / values[keep])


def detectable_probability_shift(n_sets: float, *, n_groups: int, base: Sequence[float], covariance: np.ndarray,
                                 option: int, alpha: float = 0.05, tests: int = 1, power: float = POWER) -> float:
    """The smallest shift of one group's probability of ``option`` the test flags with ``power``.

    Parameters
    ----------
    n_sets, n_groups, base, covariance, option, alpha, tests
        As in :func:`probability_shift_power`.
    power : float
        The target power.

    Returns
    -------
    float
        The root in ``shift`` of ``probability_shift_power = power``; NaN for fewer than 2 sets. Where
        members do not vary around their set's level and group's mean (``Sigma = 0``) the shift alone makes
        ``S T``, and the permutations' spread grows with it: 0 (any shift is flagged) when ``S (G - 1)``
        exceeds the chi-square's ``1 - alpha / tests`` quantile on ``G - 1`` degrees of freedom, else
        infinite. Infinite too when no shift up to 10 reaches ``power``. A shift
        larger than ``1 - base[option]`` is not possible; it is returned anyway and reads as "no possible
        shift is detected with that power".

    Notes
    -----
    See :func:`probability_shift_power`; the power grows with the shift, so the root is found by bisection
    (``scipy.optimize.brentq``).

    References
    ----------
    .. [1] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988.

    Examples
    --------
    >>> sigma = 0.01 * (np.eye(2) - 0.5)
    >>> round(detectable_probability_shift(100, n_groups=2, base=[0.5, 0.5], covariance=sigma, option=0), 4)
    0.0288
    """
    sigma = np.asarray(covariance, dtype=float)
    if not n_sets >= 2 or not 0.0 <= base[option] < 1.0:
        return float("nan")
    if not np.trace(sigma) > 0:  # no member noise: a shift is flagged always or never, whatever its size
        return 0.0 if n_sets * (n_groups - 1) > chi2.isf(alpha / tests, n_groups - 1) else math.inf

    def gap(shift: float) -> float:
        return probability_shift_power(n_sets, shift, n_groups=n_groups, base=base, covariance=sigma,
                                       option=option, alpha=alpha, tests=tests) - power

    high = math.sqrt(np.trace(sigma) / n_sets)
    while gap(high) < 0:
        if high > MAX_SHIFT:
            return math.inf
        high *= 2.0
    return float(brentq(gap, 0.0, high, xtol=1e-7))


def hardest_probability_shift(n_sets: float, *, n_groups: int, base: Sequence[float], covariance: np.ndarray,
                              alpha: float = 0.05, tests: int = 1) -> tuple[float, int]:
    """The largest :func:`detectable_probability_shift` over the options (the hardest option to move) and its
    option index (-1 with NaN when none can be sized).

    Examples
    --------
    >>> sigma = np.diag([0.02, 0.01, 0.0])  # the third option has no mass: not shifted
    >>> shift, option = hardest_probability_shift(100, n_groups=2, base=[0.5, 0.5, 0.0], covariance=sigma)
    >>> option, round(shift, 3)
    (0, 0.039)
    """
    best, where = float("nan"), -1
    for option in range(len(base)):
        if not 0.0 < base[option] < 1.0:
            continue
        shift = detectable_probability_shift(n_sets, n_groups=n_groups, base=base, covariance=covariance,
                                             option=option, alpha=alpha, tests=tests)
        if shift == shift and not best >= shift:
            best, where = shift, option
    return best, where
