"""Household chaining: the simulated within-household agreement matches its exact expectation."""
from __future__ import annotations

import itertools

import numpy as np

from pvsst.analysis.scenarios.household_agreement import expected_household_agreement, observed_household_agreement
from pvsst.sim.epidemic.household_chain import chain_household_decisions


def households(n_households: int, rng) -> tuple[np.ndarray, np.ndarray]:
    sizes = rng.choice([1, 2, 3, 4, 5], size=n_households, p=[0.25, 0.35, 0.2, 0.15, 0.05])
    household = np.repeat(np.arange(n_households), sizes)
    member = np.arange(household.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return household, member


def test_planted_conditional_bank_gives_its_exact_agreement_within_sampling_error():
    rng = np.random.default_rng(20260729)
    household, member = households(40_000, rng)
    # Two cells with different independent shares; the planted conditional bank: 0.9 after yes, 0.1 after no.
    p_alone = np.where(rng.random(household.size) < 0.5, 0.3, 0.6)
    exact = expected_household_agreement(household, member, p_alone, 0.9, 0.1)
    decided = chain_household_decisions(household, member, p_alone, np.full(household.size, 0.9),
                                        np.full(household.size, 0.1), np.random.default_rng(5))
    observed = observed_household_agreement(household, decided)
    assert observed.pairs == exact.pairs > 50_000
    assert abs(observed.agreement - exact.agreement) < 4 * observed.agreement_se, (observed, exact)
    assert observed.agreement_se < 0.003 and 0.75 < exact.agreement < 0.9
    assert abs(observed.correlation - exact.correlation) < 0.02, (observed.correlation, exact.correlation)
    independent = expected_household_agreement(household, member, p_alone, p_alone, p_alone)
    assert abs(independent.correlation) < 0.01 < exact.correlation - 0.5   # chaining makes members alike


def test_exact_agreement_equals_enumeration_of_a_household():
    """One household of three with different conditional probabilities: the closed form equals the sum
    over the eight joint outcomes."""
    p, a, b = 0.35, np.array([0.0, 0.7, 0.95]), np.array([0.0, 0.2, 0.05])
    agree = both = 0.0
    marginal = np.zeros(3)
    for outcome in itertools.product([0, 1], repeat=3):
        first = outcome[0]
        prob = p if first else 1 - p
        for i in (1, 2):
            q = a[i] if first else b[i]
            prob *= q if outcome[i] else 1 - q
        pairs = list(itertools.combinations(range(3), 2))
        agree += prob * sum(outcome[i] == outcome[j] for i, j in pairs) / 3
        both += prob * sum(outcome[i] and outcome[j] for i, j in pairs) / 3
        marginal += prob * np.array(outcome)
    mean_yes = marginal.mean()
    exact = expected_household_agreement([7, 7, 7], [0, 1, 2], p, a, b)
    assert abs(exact.agreement - agree) < 1e-12 and abs(exact.yes_share - mean_yes) < 1e-12
    assert abs(exact.correlation - (both - mean_yes ** 2) / (mean_yes * (1 - mean_yes))) < 1e-12
