"""Parameters of the influenza-like epidemic model: one definition of each, with its default and its source.

Defaults describe seasonal influenza; each names where it comes from, and those that are modelling
choices say so:

- ``r0`` = 1.28: the median reproduction number of seasonal influenza over the estimates reviewed by
  Biggerstaff et al. (2014), BMC Infectious Diseases 14:480 (interquartile range 1.19-1.37).
- ``latent_days`` = 1.0: viral shedding rises sharply between 0.5 and 1 day after inoculation in
  volunteer challenge studies (Carrat et al. 2008, American Journal of Epidemiology 167:775-785), so
  an infection becomes infectious on the next day.
- ``infectious_days`` = 4.8: the mean duration of viral shedding in the same review (Carrat et al. 2008:
  4.80 days, 95% CI 4.31-5.29).
- ``symptomatic_share`` = 0.669: the share of infected volunteers with symptoms (Carrat et al. 2008:
  66.9%, 95% CI 58.3-74.5); the rest are asymptomatic.
- ``asymptomatic_infectiousness`` = 0.5: asymptomatic infections half as infectious as symptomatic
  ones, the assumption of Ferguson et al. (2006), Nature 442:448-452 (a model assumption, not a
  measurement).
- ``household_transmission_share`` = 0.3: about a third of transmission within households, as in the
  calibrated model of Ferguson et al. (2006) (again a model's calibration).
- ``quarantine_contact_factor`` = 0.0: a reporting agent isolates from every community contact for the
  rest of its infectious period; household contacts go on. A modelling choice: set it for partial
  compliance.
- ``initial_infected`` = 10 agents, infectious on day 0: a modelling choice.
- ``case_count`` = ``reported_active``: the case level an agent's scenario takes is that of the
  reported cases still infectious in its region (what a resident could know); ``infectious`` uses the
  true number, ``reported_cumulative`` every report so far.

Durations are geometric in whole days with the stated means (a daily transition probability of
1 / mean). ``r0`` splits into household and community parts by ``household_transmission_share``; the
model derives its transmission rates from them and the population's households
(:func:`pvsst.sim.epidemic.transmission.transmission_rates`).

Examples
--------
>>> EpidemicSettings().r0, EpidemicSettings(days=30).days
(1.28, 30)
>>> EpidemicSettings(symptomatic_share=1.5)
Traceback (most recent call last):
...
pvsst.core.errors.InputError: epidemic: symptomatic_share: Input should be less than or equal to 1 (got 1.5)
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationError

from pvsst.core.errors import InputError
from pvsst.core.validation import StrictModel, describe_validation_error

_Share = Annotated[float, Field(ge=0.0, le=1.0)]


class EpidemicSettings(StrictModel):
    """The epidemic model's parameters (module docstring: defaults and sources)."""

    days: Annotated[int, Field(ge=1, le=3650)] = 60
    r0: Annotated[float, Field(ge=0.0, le=20.0)] = 1.28
    household_transmission_share: _Share = 0.3
    latent_days: Annotated[float, Field(ge=1.0, le=60.0)] = 1.0
    infectious_days: Annotated[float, Field(ge=1.0, le=60.0)] = 4.8
    symptomatic_share: _Share = 0.669
    asymptomatic_infectiousness: _Share = 0.5
    quarantine_contact_factor: _Share = 0.0
    initial_infected: Annotated[int, Field(ge=0)] = 10
    case_count: Literal["reported_active", "reported_cumulative", "infectious"] = "reported_active"

    def __init__(self, **values):
        try:
            super().__init__(**values)
        except ValidationError as err:
            field, problem = describe_validation_error(err, type(self))
            raise InputError("epidemic", field, problem) from None
