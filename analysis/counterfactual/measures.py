"""Disparity measures over matched sets: one function per measure, each a mean over sets or a spread.

A *matched set* is a group of personas identical but for the varied attribute(s), one member per
level (group) ``g = 1..G``; for one question, ``A[s, g]`` is the option index (0..K-1) that member
``g`` of set ``s`` answered and ``x_k`` the score of option ``k`` (default its position). With
``S`` complete sets and ``1[.]`` the indicator (AgentFairBench, arXiv 2606.16723):

- flip rate: ``F = (1/S) sum_s 1[A[s, .] not all equal]``, the share of sets whose answer changes
  with the attribute alone;
- mean absolute score difference: ``D = (1/S) sum_s mean_{g<h} |x_{A[s,g]} - x_{A[s,h]}|``;
- group shares: ``P[g, k] = (1/S) sum_s 1[A[s, g] = k]``;
- share gaps: ``P[g, k] - mean_{h != g} P[h, k]`` (for two groups the plain difference);
- share spread: ``max_k (max_g P[g, k] - min_g P[g, k])``, the largest max-min disparity.

The spread grows with ``G`` even when nothing differs (the range of more noisy numbers is larger), so
it is only read against a null with as many groups (:mod:`pvsst.analysis.counterfactual.null`).

Examples
--------
>>> A = np.array([[0, 0], [0, 1], [2, 0], [1, 1]])
>>> float(flip_rate(A)), float(mean_absolute_score_difference(A, np.arange(3)))
(0.5, 0.75)
>>> group_shares(A, 3).tolist()
[[0.5, 0.25, 0.25], [0.5, 0.5, 0.0]]
>>> float(share_spread(A, 3))
0.25
"""
from __future__ import annotations

import numpy as np


def one_hot(matrix: np.ndarray, n_options: int) -> np.ndarray:
    """(S, G, K) indicators ``1[A[s, g] = k]`` of an (S, G) answer matrix.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    n_options : int
        K.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> one_hot(np.array([[1, 0]]), 2).tolist()
    [[[0.0, 1.0], [1.0, 0.0]]]
    """
    return np.eye(n_options)[np.asarray(matrix, dtype=int)]


def set_flips(matrix: np.ndarray) -> np.ndarray:
    """Per matched set, 1.0 when its members' answers are not all equal (the terms of :func:`flip_rate`).

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices ``A``.

    Returns
    -------
    numpy.ndarray
        (S,) values 0.0 or 1.0.

    Notes
    -----
    ``f_s = 1[A[s, .] not all equal]``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723 (counterfactual matched-set audits of LLM agents).

    Examples
    --------
    >>> set_flips(np.array([[1, 1, 1], [1, 2, 1]])).tolist()
    [0.0, 1.0]
    """
    matrix = np.asarray(matrix)
    return (matrix != matrix[:, :1]).any(axis=1).astype(float)


def flip_rate(matrix: np.ndarray) -> float:
    """Share of matched sets whose answer changes across the levels of the varied attribute.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices ``A``, one row per complete matched set.

    Returns
    -------
    float

    Notes
    -----
    ``F = (1/S) sum_s 1[A[s, .] not all equal]``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.
    .. [2] M. J. Kusner, J. Loftus, C. Russell and R. Silva, "Counterfactual fairness", Advances in
       Neural Information Processing Systems 30, 2017.

    Examples
    --------
    >>> float(flip_rate(np.array([[1, 1, 1], [1, 2, 1]])))
    0.5
    """
    return float(set_flips(matrix).mean())


def set_score_differences(matrix: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per set, the mean over member pairs of ``|x_{A[s,g]} - x_{A[s,h]}|``.

    These are the terms of :func:`mean_absolute_score_difference`.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    scores : numpy.ndarray
        (K,) option scores ``x``.

    Returns
    -------
    numpy.ndarray
        (S,) values.

    Notes
    -----
    ``D_s = mean_{g<h} |x_{A[s,g]} - x_{A[s,h]}|``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> set_score_differences(np.array([[0, 2, 2], [1, 1, 1]]), np.array([0.0, 1.0, 2.0])).round(4).tolist()
    [1.3333, 0.0]
    """
    x = np.asarray(scores, dtype=float)[np.asarray(matrix, dtype=int)]
    g, h = np.triu_indices(x.shape[1], k=1)
    return np.abs(x[:, g] - x[:, h]).mean(axis=1)


def mean_absolute_score_difference(matrix: np.ndarray, scores: np.ndarray) -> float:
    """Mean over sets of the mean absolute pairwise difference of the members' option scores.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    scores : numpy.ndarray
        (K,) option scores (default elsewhere: the option positions).

    Returns
    -------
    float

    Notes
    -----
    ``D = (1/S) sum_s mean_{g<h} |x_{A[s,g]} - x_{A[s,h]}|``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> float(mean_absolute_score_difference(np.array([[0, 2], [1, 1]]), np.array([0.0, 1.0, 2.0])))
    1.0
    """
    return float(set_score_differences(matrix, scores).mean())


def group_shares(matrix: np.ndarray, n_options: int) -> np.ndarray:
    """(G, K) answer shares per group (level of the varied attribute).

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    n_options : int
        K.

    Returns
    -------
    numpy.ndarray

    Notes
    -----
    ``P[g, k] = (1/S) sum_s 1[A[s, g] = k]``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> group_shares(np.array([[0, 1], [0, 0]]), 2).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    return one_hot(matrix, n_options).mean(axis=0)


def gaps_from_shares(shares: np.ndarray) -> np.ndarray:
    """Share gaps of each group against the mean of the other groups, from (..., G, K) shares.

    Parameters
    ----------
    shares : numpy.ndarray
        (..., G, K) group shares ``P``.

    Returns
    -------
    numpy.ndarray
        (..., G, K) gaps.

    Notes
    -----
    ``gap[g, k] = P[g, k] - mean_{h != g} P[h, k]`` (for two groups the plain difference).

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> gaps_from_shares(np.array([[0.6, 0.4], [0.4, 0.6]])).round(3).tolist()
    [[0.2, -0.2], [-0.2, 0.2]]
    """
    shares = np.asarray(shares, dtype=float)
    g = shares.shape[-2]
    others = (shares.sum(axis=-2, keepdims=True) - shares) / (g - 1)
    return shares - others


def share_gaps(matrix: np.ndarray, n_options: int) -> np.ndarray:
    """(G, K) gaps of each group's answer shares against the mean of the other groups.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    n_options : int
        K.

    Returns
    -------
    numpy.ndarray

    Notes
    -----
    :func:`gaps_from_shares` of :func:`group_shares`: ``P[g, k] - mean_{h != g} P[h, k]``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> share_gaps(np.array([[0, 1], [0, 0]]), 2).tolist()
    [[0.5, -0.5], [-0.5, 0.5]]
    """
    return gaps_from_shares(group_shares(matrix, n_options))


def spread_from_shares(shares: np.ndarray) -> np.ndarray:
    """The largest max-min disparity of (..., G, K) group shares over the options.

    Parameters
    ----------
    shares : numpy.ndarray
        (..., G, K) group shares.

    Returns
    -------
    numpy.ndarray
        (...) spreads.

    Notes
    -----
    ``spread = max_k (max_g P[g, k] - min_g P[g, k])``; it grows with ``G`` even when nothing differs,
    so it is read against a null with as many groups (:mod:`pvsst.analysis.counterfactual.null`).

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> float(spread_from_shares(np.array([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]])))
    0.25
    """
    shares = np.asarray(shares, dtype=float)
    return (shares.max(axis=-2) - shares.min(axis=-2)).max(axis=-1)


def share_spread(matrix: np.ndarray, n_options: int) -> float:
    """The largest max-min difference of group shares over the options.

    Parameters
    ----------
    matrix : numpy.ndarray
        (S, G) option indices.
    n_options : int
        K.

    Returns
    -------
    float

    Notes
    -----
    ``max_k (max_g P[g, k] - min_g P[g, k])`` with ``P`` of :func:`group_shares`.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> float(share_spread(np.array([[0, 1], [1, 1]]), 2))
    0.5
    """
    return float(spread_from_shares(group_shares(matrix, n_options)))
