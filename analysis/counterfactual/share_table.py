"""The share rows of one audited question: each group's share of each option, its gap against the other
groups and the gap's minimum detectable size, from the per-set shares of
:func:`pvsst.analysis.counterfactual.audit.counterfactual_audit` (one-hot answers) and of
:func:`pvsst.analysis.counterfactual.distributions.audit_question` (whole distributions).

Examples
--------
>>> shares = np.array([[0.7, 0.3], [0.3, 0.7]])
>>> boot = np.array([[[0.6, 0.4], [0.4, 0.6]], [[0.8, 0.2], [0.2, 0.8]]])
>>> rows, mde = share_rows("q", ("x", "y"), ["a", "b"], shares, (shares - 0.1, shares + 0.1), boot, 0.05)
>>> len(rows), round(float(rows[0]["share_gap"]), 2), round(mde, 3)
(4, 0.4, 0.792)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

from pvsst.analysis.counterfactual.measures import gaps_from_shares
from pvsst.analysis.counterfactual.power import POWER
from pvsst.analysis.counterfactual.resampling import percentile_interval


def share_rows(question: str, groups: Sequence[str], codes: Sequence[str], shares: np.ndarray,
               bounds: tuple[np.ndarray, np.ndarray], boot_shares: np.ndarray, alpha: float
               ) -> tuple[list[dict], float]:
    """One row per group x option, and the largest gap MDE (the question's ``mde_share_gap``).

    Parameters
    ----------
    question : str
        The question.
    groups, codes : sequence of str
        The groups (rows of ``shares``) and option codes (columns) in order.
    shares : numpy.ndarray
        (G, K) observed shares.
    bounds : tuple of numpy.ndarray
        (G, K) lower and upper interval bounds of the shares.
    boot_shares : numpy.ndarray
        (draws, G, K) bootstrap shares.
    alpha : float
        One minus the interval level, and the two-sided level of the MDE.

    Returns
    -------
    tuple
        The rows (``question, group, option, share, share_low, share_high, share_gap, share_gap_low,
        share_gap_high, share_gap_mde``) and ``max share_gap_mde``.

    Notes
    -----
    ``share_gap`` is :func:`pvsst.analysis.counterfactual.measures.gaps_from_shares`; its interval is the
    percentile interval of the bootstrap gaps and ``share_gap_mde = (z_{1 - alpha/2} + z_{0.8}) sd*``,
    ``sd*`` the bootstrap standard deviation of the gap (a normal approximation).

    References
    ----------
    .. [1] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988.

    Examples
    --------
    >>> same = np.full((2, 1), 1.0)  # two groups that always answer the one option: no gap, no spread
    >>> rows, mde = share_rows("q", ("x", "y"), ["a"], same, (same, same), np.ones((3, 2, 1)), 0.05)
    >>> [float(row["share_gap"]) for row in rows], mde
    ([0.0, 0.0], 0.0)
    """
    boot_gaps = gaps_from_shares(boot_shares)
    gaps, (gap_low, gap_high) = gaps_from_shares(shares), percentile_interval(boot_gaps, alpha)
    mde = (norm.ppf(1 - alpha / 2) + norm.ppf(POWER)) * boot_gaps.std(axis=0, ddof=1)
    low, high = bounds
    rows = [{"question": question, "group": group, "option": code, "share": shares[gi, ki],
             "share_low": low[gi, ki], "share_high": high[gi, ki], "share_gap": gaps[gi, ki],
             "share_gap_low": gap_low[gi, ki], "share_gap_high": gap_high[gi, ki], "share_gap_mde": mde[gi, ki]}
            for gi, group in enumerate(groups) for ki, code in enumerate(codes)]
    return rows, float(mde.max())
