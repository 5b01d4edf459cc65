"""Within-household agreement and correlation of decisions: exact under chaining, and observed.

Under household chaining (:mod:`pvsst.sim.epidemic.household_chain`) the first member of a household
says yes with probability ``p_alone``; every other member i says yes with ``a_i`` (= its
``p_after_yes``) when the first member said yes and ``b_i`` (``p_after_no``) otherwise, independently
given the first decision. Over the unordered pairs of members of the same household:

- a pair (first f, member i) agrees with probability ``p a_i + (1 - p)(1 - b_i)`` and both say yes with
  ``p a_i``;
- a pair of two other members (i, j) agrees with ``p [a_i a_j + (1-a_i)(1-a_j)] + (1-p) [b_i b_j +
  (1-b_i)(1-b_j)]`` and both say yes with ``p a_i a_j + (1 - p) b_i b_j``;

with ``p`` the household's ``p_alone`` of its first member. ``agreement`` is the mean over all pairs of
the population; ``correlation`` is the Pearson correlation of the two decisions of a within-household
pair drawn at random (ordered pairs): ``(E[both yes] - mu^2) / (mu (1 - mu))``, where ``mu`` is the mean
yes-probability over ordered pairs (each person counted ``household size - 1`` times). Households of one
member have no pair. The observed versions read the same quantities off decisions, with the standard
error of the agreement from the independence of households.

Examples
--------
>>> household, member = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
>>> exact = expected_household_agreement(household, member, 0.5, 0.9, 0.1)
>>> round(exact.agreement, 6), round(exact.correlation, 6)
(0.9, 0.8)
>>> observed = observed_household_agreement(household, np.array([True, True, False, True]))
>>> observed.agreement, observed.pairs
(0.5, 2)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvsst.core.errors import InputError


@dataclass(frozen=True)
class HouseholdAgreement:
    """Agreement and correlation over within-household pairs (module docstring).

    ``agreement_se`` is the standard error of an observed agreement (NaN for the exact value);
    ``yes_share`` is ``mu``.
    """

    pairs: int
    agreement: float
    correlation: float
    yes_share: float
    agreement_se: float = float("nan")


def _dense(household) -> tuple[np.ndarray, np.ndarray]:
    codes = np.unique(np.asarray(household), return_inverse=True)[1].ravel()
    return codes, np.bincount(codes)


def _pair_correlation(both_yes: float, mean_yes: float) -> float:
    denominator = mean_yes * (1 - mean_yes)
    return float((both_yes - mean_yes ** 2) / denominator) if denominator > 0 else float("nan")


def expected_household_agreement(household, member, p_alone, p_after_yes, p_after_no) -> HouseholdAgreement:
    """The exact agreement and correlation of chained decisions (module docstring).

    ``household`` (any labels) and ``member`` (0 = first) give the households; the three probabilities
    are per person (scalars broadcast). Each household needs exactly one member 0.
    """
    codes, sizes = _dense(household)
    member = np.asarray(member)
    n = codes.size
    p_alone, a, b = (np.broadcast_to(np.asarray(x, dtype=float), (n,)) for x in (p_alone, p_after_yes, p_after_no))
    first = member == 0
    if not np.array_equal(np.bincount(codes[first], minlength=sizes.size), np.ones(sizes.size, dtype=np.int64)):
        raise InputError("households", "household_member", "every household needs exactly one member 0")
    p = np.zeros(sizes.size)
    p[codes[first]] = p_alone[first]
    others = ~first
    ph = p[codes[others]]
    h = codes[others]
    total = lambda values: np.bincount(h, weights=values, minlength=sizes.size)   # noqa: E731

    def within(x):            # sum over unordered pairs of other members of x_i x_j, per household
        return (total(x[others]) ** 2 - total(x[others] ** 2)) / 2

    agree_first = total(ph * a[others] + (1 - ph) * (1 - b[others]))
    both_first = total(ph * a[others])
    agree_others = p * (within(a) + within(1 - a)) + (1 - p) * (within(b) + within(1 - b))
    both_others = p * within(a) + (1 - p) * within(b)
    pairs = float((sizes * (sizes - 1) / 2).sum())
    if pairs == 0:
        return HouseholdAgreement(pairs=0, agreement=float("nan"), correlation=float("nan"), yes_share=float("nan"))
    marginal = np.where(first, p[codes], p[codes] * a + (1 - p[codes]) * b)
    mean_yes = float((marginal * (sizes[codes] - 1)).sum() / (2 * pairs))
    both = float((both_first + both_others).sum() / pairs)
    return HouseholdAgreement(pairs=int(pairs), agreement=float((agree_first + agree_others).sum() / pairs),
                              correlation=_pair_correlation(both, mean_yes), yes_share=mean_yes)


def observed_household_agreement(household, decision) -> HouseholdAgreement:
    """Agreement, its standard error, and the pair correlation of observed decisions (booleans)."""
    codes, sizes = _dense(household)
    yes = np.bincount(codes, weights=np.asarray(decision, dtype=float), minlength=sizes.size)
    pairs_h = sizes * (sizes - 1) / 2
    pairs = float(pairs_h.sum())
    if pairs == 0:
        return HouseholdAgreement(pairs=0, agreement=float("nan"), correlation=float("nan"), yes_share=float("nan"))
    agree_h = yes * (yes - 1) / 2 + (sizes - yes) * (sizes - yes - 1) / 2
    agreement = float(agree_h.sum() / pairs)
    se = float(np.sqrt(((agree_h - pairs_h * agreement) ** 2).sum()) / pairs)
    mean_yes = float((yes * (sizes - 1)).sum() / (2 * pairs))
    both = float((yes * (yes - 1) / 2).sum() / pairs)
    return HouseholdAgreement(pairs=int(pairs), agreement=agreement, correlation=_pair_correlation(both, mean_yes),
                              yes_share=mean_yes, agreement_se=se)
