"""A counterfactual audit of members that answer with whole probability distributions (logprobs, verbalized).

Input is a long table with one row per matched-set member and question: ``set_id``, ``group``,
``question`` and ``probabilities`` (the member's K probabilities in scale order, summing to 1). With
``p_sgk`` member ``g``'s probability of option ``k`` in set ``s`` and ``x_k`` the option scores, per question:

- expected flip rate ``F = (1/S) sum_s (1 - sum_k prod_g p_sgk)``: the chance that the members' answers,
  each drawn from its own distribution, are not all equal;
- expected mean absolute score difference ``D = (1/S) sum_s mean_{g<h} sum_{k,l} p_sgk p_shl |x_k - x_l|``;
- member TV ``(1/S) sum_s mean_{g<h} (1/2) sum_k |p_sgk - p_shk|``;
- expected shares ``P_gk = (1/S) sum_s p_sgk``, their gaps against the other groups and their spread
  (:mod:`pvsst.analysis.counterfactual.measures` on ``P``);
- the omnibus within-set permutation test of :func:`distribution_statistic`;
- per group the paired signed-rank test of its expected score ``E_sg = sum_k p_sgk x_k`` against the rest
  of its set;
- with the arity-matched null: the same measures of the seed groups and the one-sided permutation test
  that the spread of the expected shares exceeds the null's.

No member's distribution is reduced to one answer: a shift of 0.15 in one group's probability reads as
0.15 in its expected share, whichever option is on top.

Examples
--------
>>> rows = [{"set_id": s, "group": g, "question": "q", "probabilities": (0.6, 0.4) if g == "x" else (0.45, 0.55)}
...         for s in range(3) for g in ("x", "y")]
>>> m = matched_distributions(pd.DataFrame(rows), "q", 2)
>>> m.cube.shape, round(float(set_expected_flips(m.cube)[0]), 3)
((3, 2, 2), 0.51)
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.analysis.counterfactual.distribution_power import residual_covariance
from pvsst.analysis.counterfactual.measures import spread_from_shares
from pvsst.analysis.counterfactual.members import question_rows
from pvsst.analysis.counterfactual.null import aligned_sets, spread_excess
from pvsst.analysis.counterfactual.permutation import PERMUTATION_BATCH, permuted_within_sets, signed_rank_p
from pvsst.analysis.counterfactual.resampling import bootstrap_means, percentile_interval
from pvsst.analysis.counterfactual.share_table import share_rows
from pvsst.core.errors import InputError

DISTRIBUTION_COLUMNS = ("set_id", "group", "question", "probabilities")
DISTRIBUTION_MEASURES = ("flip_rate", "mean_abs_score_diff", "share_spread", "member_tv")
GATHER_CELLS = 4_000_000
"""Permuted probabilities held at once (bounds memory at large S x G x K)."""


@dataclass(frozen=True)
class MatchedDistributions:
    """One question's complete matched sets: ``cube[s, g]`` is member ``g``'s probability vector."""

    question: str
    set_ids: np.ndarray
    groups: tuple[str, ...]
    cube: np.ndarray
    n_incomplete: int


def matched_distributions(rows: pd.DataFrame, question: str, n_options: int, source: str = "distributions"
                          ) -> MatchedDistributions:
    """The (sets x groups x options) probabilities of ``question``; sets lacking a member are left out and
    counted. Two distributions of one member (set and group) are an :class:`InputError`.

    Examples
    --------
    >>> table = pd.DataFrame({"set_id": [1, 1, 2], "group": ["x", "y", "x"], "question": "q",
    ...                       "probabilities": [(1.0, 0.0), (0.5, 0.5), (0.2, 0.8)]})
    >>> m = matched_distributions(table, "q", 2)
    >>> m.groups, m.cube.tolist(), m.n_incomplete
    (('x', 'y'), [[[1.0, 0.0], [0.5, 0.5]]], 1)
    """
    rows, groups = question_rows(rows, question, DISTRIBUTION_COLUMNS, "probabilities", "distributions",
                                  source)
    counts = rows.groupby("set_id", sort=True)["group"].nunique()
    complete = counts.index[counts == len(groups)].to_numpy()
    cube = np.full((len(complete), len(groups), n_options), np.nan)
    inside = rows[rows["set_id"].isin(complete)]
    s_index = pd.Index(complete).get_indexer(inside["set_id"])
    g_index = pd.Index(groups).get_indexer(inside["group"].astype(str))
    if len(inside):
        cube[s_index, g_index] = np.array([np.asarray(p, dtype=float) for p in inside["probabilities"]])
    return MatchedDistributions(question, complete, groups, cube, int(len(counts) - len(complete)))


def set_expected_flips(cube: np.ndarray) -> np.ndarray:
    """Per set, the chance the members' answers drawn from their distributions are not all equal.

    Parameters
    ----------
    cube : numpy.ndarray
        (S, G, K) probabilities.

    Returns
    -------
    numpy.ndarray
        (S,) values.

    Notes
    -----
    ``f_s = 1 - sum_k prod_g p_sgk`` (members drawn independently); for one-hot distributions it is
    :func:`pvsst.analysis.counterfactual.measures.set_flips`.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723 (the flip rate of counterfactual matched sets).

    Examples
    --------
    >>> set_expected_flips(np.array([[[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]])).tolist()
    [0.5, 0.0]
    """
    return 1.0 - np.prod(cube, axis=1).sum(axis=1)


def set_expected_score_differences(cube: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per set, the mean over member pairs of the expected ``|x_A - x_B|`` of independent draws.

    Parameters
    ----------
    cube : numpy.ndarray
        (S, G, K) probabilities.
    scores : numpy.ndarray
        (K,) option scores.

    Returns
    -------
    numpy.ndarray
        (S,) values.

    Notes
    -----
    ``D_s = mean_{g<h} sum_{k,l} p_sgk p_shl |x_k - x_l|``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723.

    Examples
    --------
    >>> set_expected_score_differences(np.array([[[1.0, 0.0], [0.5, 0.5]]]), np.arange(2.0)).tolist()
    [0.5]
    """
    x = np.asarray(scores, dtype=float)
    distance = np.abs(x[:, None] - x[None, :])
    a, b = np.triu_indices(cube.shape[1], k=1)
    return np.einsum("spk,kl,spl->sp", cube[:, a], distance, cube[:, b]).mean(axis=1)


def set_member_tv(cube: np.ndarray) -> np.ndarray:
    """Per set, the mean total variation between two members' distributions.

    Parameters
    ----------
    cube : numpy.ndarray
        (S, G, K) probabilities.

    Returns
    -------
    numpy.ndarray
        (S,) values.

    Notes
    -----
    ``TV_s = mean_{g<h} (1/2) sum_k |p_sgk - p_shk|``.

    References
    ----------
    .. [1] D. A. Levin, Y. Peres and E. L. Wilmer, *Markov Chains and Mixing Times*, AMS, 2009, section 4.1.

    Examples
    --------
    >>> set_member_tv(np.array([[[0.6, 0.4], [0.45, 0.55]]])).round(3).tolist()
    [0.15]
    """
    a, b = np.triu_indices(cube.shape[1], k=1)
    return (0.5 * np.abs(cube[:, a] - cube[:, b]).sum(axis=2)).mean(axis=1)


def distribution_statistic(totals: np.ndarray) -> np.ndarray:
    """The omnibus statistic from (..., G, K) group totals of within-set deviations.

    Parameters
    ----------
    totals : numpy.ndarray
        (..., G, K) ``sum_s (p_sgk - pbar_sk)``, ``pbar_s`` the set's mean distribution.

    Returns
    -------
    numpy.ndarray
        (...) ``S^2 T``.

    Notes
    -----
    ``T = sum_{g,k} (P_gk - Pbar_k)^2`` with ``P_gk`` group ``g``'s mean probability of option ``k`` over the
    S sets and ``Pbar_k`` the grand mean: the squared distance of the groups' expected shares from their
    mean. Since ``P_gk - Pbar_k = (1/S) sum_s (p_sgk - pbar_sk)``, ``S^2 T`` is the sum of squared totals.

    References
    ----------
    .. [1] P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer, 2005.

    Examples
    --------
    >>> float(distribution_statistic(np.array([[0.3, -0.3], [-0.3, 0.3]])))
    0.36
    """
    return (np.asarray(totals, dtype=float) ** 2).sum(axis=(-2, -1))


def _permuted_totals(deviations: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, M, K) group totals of (S, M, K) deviations with the M members of each set permuted."""
    s, m, _ = deviations.shape
    order = permuted_within_sets(np.broadcast_to(np.arange(m), (s, m)), rng, n)
    return deviations[np.arange(s)[None, :, None], order].sum(axis=1)


def _batch(cube: np.ndarray) -> int:
    return max(1, min(PERMUTATION_BATCH, GATHER_CELLS // cube.size))


def distribution_permutation_p(cube: np.ndarray, *, permutations: int, seed: int) -> float:
    """Within-set permutation p of :func:`distribution_statistic` across groups.

    Parameters
    ----------
    cube : numpy.ndarray
        (S, G, K) probabilities of complete matched sets.
    permutations : int
        Within-set label permutations.
    seed : int
        Seed of the fresh ``default_rng``.

    Returns
    -------
    float

    Notes
    -----
    Under the null hypothesis the members of a set are exchangeable, so permuting the group labels within
    every set leaves the distribution of ``T`` unchanged: ``p = (1 + #{T_perm >= T}) / (1 + permutations)``.

    References
    ----------
    .. [1] P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., Springer, 2005.
    .. [2] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
       Applications in Genetics and Molecular Biology 9(1), article 39, 2010.

    Examples
    --------
    >>> cube = np.array([[[0.8, 0.2], [0.2, 0.8]]] * 12)  # group 0 favours option 0 in every set
    >>> distribution_permutation_p(cube, permutations=99, seed=1)
    0.01
    """
    deviations = cube - cube.mean(axis=1, keepdims=True)
    observed = distribution_statistic(deviations.sum(axis=0))
    rng = np.random.default_rng(seed)
    extreme, step = 0, _batch(cube)
    for start in range(0, permutations, step):
        totals = _permuted_totals(deviations, rng, min(step, permutations - start))
        extreme += int((distribution_statistic(totals) >= observed - 1e-12).sum())
    return (extreme + 1) / (permutations + 1)


def distribution_arity_p(observed: np.ndarray, null: np.ndarray, *, permutations: int, seed: int) -> float:
    """One-sided permutation p that the spread of the expected shares exceeds the arity-matched null's.

    Parameters
    ----------
    observed, null : numpy.ndarray
        (S, G, K) probabilities of the matched sets and of the seed groups of the same sets.
    permutations : int
        Within-set shuffles of the 2G members between the halves.
    seed : int
        Seed of the fresh ``default_rng``.

    Returns
    -------
    float

    Notes
    -----
    ``T = spread(P_obs) - spread(P_null)`` (:func:`pvsst.analysis.counterfactual.measures.spread_from_shares`
    of the expected shares); ``p = (1 + #{T_perm >= T}) / (1 + permutations)``.

    References
    ----------
    .. [1] AgentFairBench, arXiv 2606.16723 (the arity of a disparity's noise floor).

    Examples
    --------
    >>> obs = np.array([[[0.9, 0.1], [0.1, 0.9]]] * 10)
    >>> distribution_arity_p(obs, np.full((10, 2, 2), 0.5), permutations=99, seed=1) < 0.05
    True
    """
    g = observed.shape[1]
    pooled = np.concatenate([observed, null], axis=1)
    statistic = spread_from_shares(observed.mean(axis=0)) - spread_from_shares(null.mean(axis=0))
    rng = np.random.default_rng(seed)
    extreme, step = 0, _batch(pooled)
    for start in range(0, permutations, step):
        shares = _permuted_totals(pooled, rng, min(step, permutations - start)) / len(pooled)
        excess = spread_from_shares(shares[:, :g]) - spread_from_shares(shares[:, g:])
        extreme += int((excess >= statistic - 1e-12).sum())
    return (extreme + 1) / (permutations + 1)


def _measures(cube: np.ndarray, scores: np.ndarray, draws: int, seed: int, alpha: float
              ) -> tuple[dict, np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Measures with intervals, the expected shares (G, K), their bounds and their bootstrap draws."""
    s, g, k = cube.shape
    values = np.column_stack([set_expected_flips(cube), set_expected_score_differences(cube, scores),
                              set_member_tv(cube), cube.reshape(s, g * k)])
    observed, boot = values.mean(axis=0), bootstrap_means(values, draws, seed)
    shares, boot_shares = observed[3:].reshape(g, k), boot[:, 3:].reshape(draws, g, k)
    point = {"flip_rate": observed[0], "mean_abs_score_diff": observed[1], "member_tv": observed[2],
             "share_spread": spread_from_shares(shares)}
    boot_measures = {"flip_rate": boot[:, 0], "mean_abs_score_diff": boot[:, 1], "member_tv": boot[:, 2],
                     "share_spread": spread_from_shares(boot_shares)}
    out = {}
    for name in DISTRIBUTION_MEASURES:
        low, high = percentile_interval(boot_measures[name], alpha)
        out.update({name: float(point[name]), f"{name}_low": float(low), f"{name}_high": float(high)})
    return out, shares, percentile_interval(boot_shares, alpha), boot_shares


def paired_expected_score_tests(cube: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group: the mean expected-score gap against the rest of its set, and its Wilcoxon signed-rank p.

    Parameters
    ----------
    cube : numpy.ndarray
        (S, G, K) probabilities.
    scores : numpy.ndarray
        (K,) option scores.

    Returns
    -------
    tuple of numpy.ndarray
        (G,) mean gaps and (G,) p-values.

    Notes
    -----
    ``E_sg = sum_k p_sgk x_k``, ``d_s = E_sg - mean_{h != g} E_sh``; the signed-rank test ranks ``(G - 1) d_s``
    rounded to 1e-9 (:func:`pvsst.analysis.counterfactual.permutation.signed_rank_p`).

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1(6), 80-83, 1945.

    Examples
    --------
    >>> gaps, p = paired_expected_score_tests(np.array([[[0.5, 0.5], [0.5, 0.5]]]), np.arange(2.0))
    >>> gaps.tolist(), p.tolist()
    ([0.0, 0.0], [1.0, 1.0])
    """
    e = cube @ np.asarray(scores, dtype=float)
    g = e.shape[1]
    others = e.sum(axis=1, keepdims=True) - e
    scaled = np.round((g - 1) * e - others, 9)
    return (e - others / (g - 1)).mean(axis=0), np.array([signed_rank_p(scaled[:, group]) for group in range(g)])


def _null_columns(m: MatchedDistributions, null: MatchedDistributions, scores: np.ndarray, draws: int, seed: int,
                  alpha: float, permutations: int) -> dict:
    at_obs, at_null = aligned_sets(m.question, m.groups, m.set_ids, null.groups, null.set_ids)
    measured, *_ = _measures(null.cube, scores, draws, seed, alpha)
    out = {"null_n_sets": len(null.set_ids), **{f"null_{name}": value for name, value in measured.items()}}
    obs, floor = m.cube[at_obs], null.cube[at_null]
    out.update(spread_excess(obs, floor, draws, seed, alpha))
    out["arity_p"] = distribution_arity_p(obs, floor, permutations=permutations, seed=seed)
    return out


def audit_question(rows: pd.DataFrame, question: str, codes: Sequence[str], scores: np.ndarray, *,
                   null_rows: pd.DataFrame | None, draws: int, permutations: int, seed: int, alpha: float
                   ) -> tuple[dict, list[dict], list[dict]]:
    """One question's audit row, share rows and group rows (the layout of
    :func:`pvsst.analysis.counterfactual.audit.counterfactual_audit`, ``omnibus_statistic`` =
    ``distributions``), before any adjustment.

    The row's ``power_distribution`` holds what the test's power depends on (JSON: the pooled mean
    probabilities ``base`` and the residual covariance ``covariance`` of
    :func:`pvsst.analysis.counterfactual.distribution_power.residual_covariance`).

    Examples
    --------
    >>> rows = pd.DataFrame([{"set_id": s, "group": g, "question": "q",
    ...                       "probabilities": (0.7, 0.3) if g == "x" else (0.3, 0.7)} for s in range(8) for g in "xy"])
    >>> row, shares, groups = audit_question(rows, "q", ["a", "b"], np.arange(2.0), null_rows=None, draws=20,
    ...                                      permutations=99, seed=1, alpha=0.05)
    >>> round(row["flip_rate"], 2), round(float(shares[0]["share_gap"]), 2), row["omnibus_p"]
    (0.58, 0.4, 0.02)
    """
    k = len(codes)
    m = matched_distributions(rows, question, k)
    if len(m.set_ids) < 2 or len(m.groups) < 2:
        raise InputError("counterfactual audit", question, f"needs at least 2 complete matched sets of at least "
                         f"2 groups, has {len(m.set_ids)} sets of {len(m.groups)} groups")
    measured, shares, (share_low, share_high), boot_shares = _measures(m.cube, scores, draws, seed, alpha)
    pooled = shares.mean(axis=0)
    power = {"base": pooled.round(12).tolist(), "covariance": residual_covariance(m.cube).round(12).tolist()}
    row = {"question": question, "n_sets": len(m.set_ids), "n_incomplete": m.n_incomplete, "n_groups": len(m.groups),
           **measured, "omnibus_statistic": "distributions",
           "omnibus_p": distribution_permutation_p(m.cube, permutations=permutations, seed=seed),
           "n_options": k, "power_distribution": json.dumps(power)}
    question_shares, row["mde_share_gap"] = share_rows(question, m.groups, codes, shares, (share_low, share_high),
                                                       boot_shares, alpha)
    score_gaps, paired_p = paired_expected_score_tests(m.cube, scores)
    group_rows = [{"question": question, "group": group, "score_gap": float(score_gaps[gi]),
                   "paired_p": float(paired_p[gi])} for gi, group in enumerate(m.groups)]
    if null_rows is not None:
        null = matched_distributions(null_rows, question, k, source="null distributions")
        row.update(_null_columns(m, null, scores, draws, seed, alpha, permutations))
    return row, question_shares, group_rows
