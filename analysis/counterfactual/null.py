"""The arity-matched null: the noise floor a counterfactual disparity must exceed.

A disparity over G groups is a range of G noisy numbers, and the range of more numbers is larger:
comparing a six-group max-min spread with the difference between two runs overstates disparity by
the number of groups alone (AgentFairBench, arXiv 2606.16723, measure about 2.4x). The null must have
the same arity: G groups made by changing *only the seed* of the same base personas, answered and
scored exactly like the matched sets.

Given the observed matched sets ``A`` (S x G) and the seed groups ``B`` (S x G) of the same base
personas (rows aligned by set), the test statistic is the excess spread
``T = spread(A) - spread(B)`` (:func:`pvsst.analysis.counterfactual.measures.share_spread`). Under the null
hypothesis that the attribute changes nothing, the 2G answers of a set are exchangeable, so shuffling
them between the observed and the seed positions within every set gives the null distribution of
``T``: ``p = (1 + #{T_perm >= T}) / (1 + permutations)`` (one-sided: a disparity must exceed the floor).
Where the members of a matched set share a request seed and the model's draw depends on it, the
observed answers are more alike than the seed groups' and the test is conservative.

Examples
--------
>>> rng = np.random.default_rng(1)
>>> A, B = rng.integers(0, 3, size=(200, 6)), rng.integers(0, 3, size=(200, 6))
>>> two_runs = share_spread(B[:, :2], 3)  # the naive floor: two runs
>>> bool(share_spread(A, 3) > two_runs), arity_null_p(A, B, 3, permutations=499) > 0.05
(True, True)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pvsst.analysis.counterfactual.measures import share_spread, spread_from_shares
from pvsst.analysis.counterfactual.permutation import (
    PERMUTATION_BATCH,
    PERMUTATIONS,
    group_counts,
    permuted_within_sets,
)
from pvsst.analysis.counterfactual.resampling import bootstrap_means, percentile_interval
from pvsst.core.defaults import ANALYSIS_SEED
from pvsst.core.errors import InputError


def arity_null_p(observed: np.ndarray, null: np.ndarray, n_options: int, *, permutations: int = PERMUTATIONS,
                 seed: int = ANALYSIS_SEED) -> float:
    """One-sided permutation p that the observed share spread exceeds the arity-matched null's.

    Parameters
    ----------
    observed : numpy.ndarray
        (S, G) answers of the matched sets (option indices).
    null : numpy.ndarray
        (S, G) answers of the same S base personas in G seed groups (rows aligned with ``observed``).
    n_options : int
        K.
    permutations : int
        Within-set shuffles between the two halves.
    seed : int
        Seed of the fresh ``default_rng``.

    Returns
    -------
    float

    Raises
    ------
    InputError
        ``null`` and ``observed`` of different shapes.

    Notes
    -----
    ``T = spread(A) - spread(B)`` (:func:`pvsst.analysis.counterfactual.measures.share_spread`); under the
    null the 2G answers of a set are exchangeable, so shuffling them between the observed and the seed
    positions within every set gives ``T_perm`` and ``p = (1 + #{T_perm >= T}) / (1 + permutations)``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723 (the arity of a disparity's noise floor).
    .. [2] P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer, 2005.

    Examples
    --------
    >>> A = np.array([[0, 1, 2]] * 20)  # every set answers by group: the largest possible spread
    >>> B = np.zeros((20, 3), dtype=int)  # the seed groups agree
    >>> arity_null_p(A, B, 3, permutations=199)
    0.005
    """
    observed, null = np.asarray(observed, dtype=np.int64), np.asarray(null, dtype=np.int64)
    if observed.shape != null.shape:
        raise InputError("counterfactual audit", "null", f"the arity-matched null must have the same sets and "
                         f"number of groups as the audit: {null.shape} against {observed.shape} (sets x groups)")
    groups, sets = observed.shape[1], observed.shape[0]
    statistic = share_spread(observed, n_options) - share_spread(null, n_options)
    pooled = np.concatenate([observed, null], axis=1)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, permutations, PERMUTATION_BATCH):
        batch = permuted_within_sets(pooled, rng, min(PERMUTATION_BATCH, permutations - start))
        shares = group_counts(batch, n_options) / sets  # (n, 2G, K)
        excess = spread_from_shares(shares[:, :groups]) - spread_from_shares(shares[:, groups:])
        extreme += int((excess >= statistic - 1e-12).sum())
    return (extreme + 1) / (permutations + 1)


def aligned_sets(question: str, groups: Sequence[str], set_ids: np.ndarray, null_groups: Sequence[str],
                 null_set_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the sets in both the audit and its null: ``(at_audit, at_null)``, aligned.

    Parameters
    ----------
    question : str
        The question, named in errors.
    groups, null_groups : sequence of str
        The audit's groups and the null's seed groups (as many of each).
    set_ids, null_set_ids : numpy.ndarray
        The complete sets of each, sorted.

    Returns
    -------
    tuple of numpy.ndarray

    Raises
    ------
    InputError
        A null with another number of groups, or fewer than 2 sets in both.

    Examples
    --------
    >>> aligned_sets("q", ("x", "y"), np.array([1, 2, 3]), ("s0", "s1"), np.array([2, 3, 4]))
    (array([1, 2]), array([0, 1]))
    """
    if len(null_groups) != len(groups):
        raise InputError("null answers", "group", f"the arity-matched null of {question!r} has {len(null_groups)} "
                         f"seed groups; the audit has {len(groups)}: the null needs as many")
    common, at_audit, at_null = np.intersect1d(set_ids, null_set_ids, return_indices=True)
    if len(common) < 2:
        raise InputError("null answers", "set_id",
                         f"fewer than 2 sets of {question!r} are in both the audit and the null")
    return at_audit, at_null


def spread_excess(observed: np.ndarray, null: np.ndarray, draws: int, seed: int, alpha: float) -> dict:
    """The share spread's excess over the arity-matched null, with its percentile bootstrap interval.

    Parameters
    ----------
    observed, null : numpy.ndarray
        (S, G, K) per-set shares of the matched sets and of the seed groups of the same sets (one-hot
        answers or whole distributions), rows aligned.
    draws, seed : int
        The bootstrap over sets (both halves resampled jointly).
    alpha : float
        One minus the interval level.

    Returns
    -------
    dict
        ``spread_excess``, ``spread_excess_low``, ``spread_excess_high``.

    Notes
    -----
    ``spread(mean_s A_s) - spread(mean_s B_s)`` with
    :func:`pvsst.analysis.counterfactual.measures.spread_from_shares`.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723 (the arity of a disparity's noise floor).

    Examples
    --------
    >>> A = np.array([[[1.0, 0.0], [0.0, 1.0]]] * 4)  # the groups always differ
    >>> B = np.full((4, 2, 2), 0.5)  # the seed groups never do
    >>> {name: float(value) for name, value in spread_excess(A, B, 50, 1, 0.05).items()}
    {'spread_excess': 1.0, 'spread_excess_low': 1.0, 'spread_excess_high': 1.0}
    """
    s, g, k = observed.shape
    joint = np.column_stack([observed.reshape(s, g * k), null.reshape(s, g * k)])
    boot = bootstrap_means(joint, draws, seed)
    excess = (spread_from_shares(boot[:, :g * k].reshape(draws, g, k))
              - spread_from_shares(boot[:, g * k:].reshape(draws, g, k)))
    point = joint.mean(axis=0)
    low, high = percentile_interval(excess, alpha)
    return {"spread_excess": float(spread_from_shares(point[:g * k].reshape(g, k))
                                   - spread_from_shares(point[g * k:].reshape(g, k))),
            "spread_excess_low": float(low), "spread_excess_high": float(high)}
