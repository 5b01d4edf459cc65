"""Transmission rates of the epidemic model from its reproduction number and the population's households.

Each day a susceptible agent j escapes infection with probability
``exp(-(beta_h * H_j + lambda_r))``, where ``H_j`` sums the infectiousness of the infectious members of
j's household and ``lambda_r = beta_c * C_r / N_r`` is the community force of its region ``r``: ``C_r``
sums the infectiousness of the region's infectious agents times their community contact factor
(1, or ``quarantine_contact_factor`` once reported), ``N_r`` is the region's population. Infectiousness
is 1 for a symptomatic agent and ``asymptomatic_infectiousness`` for an asymptomatic one.

``r0`` is the expected number of infections one typical infectious agent causes in a fully susceptible
population without reporting, every household contact counted as susceptible. With D the infectious
days (geometric, mean ``infectious_days``, daily recovery probability p = 1 / mean) and m the mean
infectiousness (``symptomatic_share + (1 - symptomatic_share) * asymptomatic_infectiousness``):

- community: ``(1 - s) * r0 = beta_c * m * E[D]``, so ``beta_c = (1 - s) r0 / (m * infectious_days)``;
- household: ``s * r0 = k * E_type[a(beta_h * w)]``, where k is the mean number of other members of a
  random agent's household, w the agent's infectiousness, and ``a(b) = 1 - E[exp(-b D)] =
  1 - p e^-b / (1 - (1 - p) e^-b)`` the probability that the agent infects one given member during
  its infectious period; solved for ``beta_h`` (``scipy.optimize.brentq``).

Examples
--------
>>> from pvsst.sim.epidemic.settings import EpidemicSettings
>>> settings = EpidemicSettings(r0=1.5, household_transmission_share=0.3, infectious_days=5.0,
...                             symptomatic_share=1.0)
>>> rates = transmission_rates(settings, np.array([2, 2, 1]))      # k = (1 + 1 + 0) / 3
>>> round(rates.community, 4), round(rates.household_r0(settings, 2 / 3), 6)
(0.21, 0.45)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from pvsst.core.errors import InputError
from pvsst.sim.epidemic.settings import EpidemicSettings


def pair_infection_probability(rate: float, recovery: float) -> float:
    """P(one infectious agent infects one given contact during its infectious period): ``a(b)`` above.

    Examples
    --------
    >>> pair_infection_probability(0.0, 0.5), round(pair_infection_probability(50.0, 1.0), 6)
    (0.0, 1.0)
    """
    escape = np.exp(-rate)
    return float(1.0 - recovery * escape / (1.0 - (1.0 - recovery) * escape))


@dataclass(frozen=True)
class TransmissionRates:
    """Daily rates: ``community`` (beta_c) and ``household`` (beta_h, per infectious member)."""

    community: float
    household: float

    def household_r0(self, settings: EpidemicSettings, mean_other_members: float) -> float:
        """Expected household infections of one typical infectious agent (every contact susceptible)."""
        recovery = 1.0 / settings.infectious_days
        sigma, rho = settings.symptomatic_share, settings.asymptomatic_infectiousness
        per_pair = (sigma * pair_infection_probability(self.household, recovery)
                    + (1 - sigma) * pair_infection_probability(self.household * rho, recovery))
        return mean_other_members * per_pair


def transmission_rates(settings: EpidemicSettings, household_size: np.ndarray) -> TransmissionRates:
    """The rates that give ``settings.r0`` with its household share (module docstring).

    ``household_size`` is each agent's household size. A household share the households cannot carry
    (it would need every household contact infected, or there is no household contact) is an
    :class:`InputError`.
    """
    sizes = np.asarray(household_size, dtype=float)
    mean_other = float((sizes - 1).mean()) if sizes.size else 0.0
    sigma, rho = settings.symptomatic_share, settings.asymptomatic_infectiousness
    infectiousness = sigma + (1 - sigma) * rho
    community_r0 = (1 - settings.household_transmission_share) * settings.r0
    household_r0 = settings.household_transmission_share * settings.r0
    if settings.r0 > 0 and infectiousness == 0:
        raise InputError("epidemic", "asymptomatic_infectiousness", "no agent is infectious: r0 must be 0")
    community = community_r0 / (infectiousness * settings.infectious_days) if community_r0 > 0 else 0.0
    if household_r0 == 0:
        return TransmissionRates(community=community, household=0.0)
    ceiling = TransmissionRates(community, 50.0).household_r0(settings, mean_other)
    if household_r0 >= ceiling:
        raise InputError("epidemic", "household_transmission_share",
                         f"{household_r0:.3g} household infections per case need more household contacts than the "
                         f"population has (mean other members {mean_other:.3g})")
    household = brentq(lambda b: TransmissionRates(community, b).household_r0(settings, mean_other) - household_r0,
                       0.0, 50.0, xtol=1e-12, rtol=1e-12)
    return TransmissionRates(community=community, household=float(household))
