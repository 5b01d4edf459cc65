"""An influenza-like epidemic on a persona population, with reporting decided by a decision bank.

:class:`EpidemicModel` is a ``mesa.Model`` whose ``step()`` is one day, written as named phases:
transmit (households plus mixing within a region), progress (S -> E -> I -> R; a new infectious
agent is symptomatic with probability ``symptomatic_share``), decide (each newly symptomatic agent
tests and reports with its cell's probability from the :class:`~pvsst.sim.epidemic.bank.ReportingBank`
at its region's current case level; household chaining, below), quarantine (a reporting agent keeps
``quarantine_contact_factor`` of its community contacts for the rest of its infectious period) and
record. Parameters and their sources: :mod:`pvsst.sim.epidemic.settings`; rates:
:mod:`pvsst.sim.epidemic.transmission`.

Agents are rows of numpy arrays held by the model (state, symptoms, report, household, region,
cell), not ``mesa.Agent`` objects: every phase is a handful of vectorised operations over all agents
(one day of 100,000 agents costs tens of milliseconds; ``tests/benchmarks/test_epidemic_scale.py``
measures time and memory), where a Python object per agent would be visited one by one every day.

Household chaining: with a bank that has household levels, the first member of a household to
decide draws from the independent bank (``none``); every later member draws from the bank given that
first decision (``member_reported`` / ``member_did_not_report``). Members deciding on the same day are
ordered at random. Without household levels every decision is independent.

Day 0 holds the initial state: ``initial_infected`` agents drawn at random start infectious (their
symptoms drawn), and those with symptoms decide at case level ``0``. Each ``step()`` is one more day.

Tables:

- :meth:`EpidemicModel.region_days`: one row per region and day (:data:`REGION_DAY_COLUMNS`):
  compartment counts, ``new_infections``, ``symptomatic`` (infectious with symptoms),
  ``new_symptomatic``, ``reports`` (reports made that day), ``expected_reports`` (the sum of the
  deciding agents' probabilities: the expected reports given who fell ill), ``cumulative_reports``,
  ``reporting_rate`` (reports / population), ``cumulative_reporting_rate``, ``reported_infectious``
  (infectious agents who reported), ``reported_share_of_infectious`` (reported / truly infectious;
  NaN with no infectious agent) and ``case_level`` (the level decisions used that day).
- :meth:`EpidemicModel.decisions`: one row per decision (:data:`DECISION_COLUMNS`).

Examples
--------
>>> import pandas as pd
>>> from pvsst.sim.epidemic.bank import CASE_LEVELS, ReportingBank
>>> people = pd.DataFrame({"cell_id": ["a", "b"] * 500, "region": ["north"] * 600 + ["south"] * 400,
...                        "household_id": np.arange(1000) // 2})
>>> table = pd.DataFrame({"cell_id": np.repeat(["a", "b"], 4), "case_level": list(CASE_LEVELS) * 2,
...                       "p_yes": [0.9] * 4 + [0.1] * 4})
>>> model = EpidemicModel(people, ReportingBank.from_table(table, ["a", "b"]), EpidemicSettings(days=20), seed=1)
>>> model.run()
>>> days = model.region_days()
>>> compartments = days[["susceptible", "exposed", "infectious", "recovered"]]
>>> len(days), bool((compartments.sum(axis=1) == days["population"]).all())
(42, True)
"""
from __future__ import annotations

import mesa
import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.sim.epidemic.bank import (
    CASE_LEVELS,
    HOUSEHOLD_LEVELS,
    MEMBER_DID_NOT_REPORT,
    MEMBER_REPORTED,
    NO_HOUSEHOLD,
    ReportingBank,
    case_level_index,
)
from pvsst.sim.epidemic.settings import EpidemicSettings
from pvsst.sim.epidemic.transmission import transmission_rates

SUSCEPTIBLE, EXPOSED, INFECTIOUS, RECOVERED = range(4)
STREAMS = ("mesa", "seeding", "transmission", "progression", "decisions")
REGION_DAY_COLUMNS = ("day", "region", "population", "susceptible", "exposed", "infectious", "recovered",
                      "new_infections", "symptomatic", "new_symptomatic", "reports", "expected_reports",
                      "cumulative_reports", "reporting_rate", "cumulative_reporting_rate", "reported_infectious",
                      "reported_share_of_infectious", "case_level")
DECISION_COLUMNS = ("day", "agent", "cell_id", "region", "household", "case_level", "household_level", "p_yes",
                    "reported")


def _codes(column: pd.Series, name: str) -> tuple[np.ndarray, list]:
    if column.isna().any():
        raise InputError("population", name, "every agent needs a value")
    codes, levels = pd.factorize(column.astype(str), sort=True)
    return codes.astype(np.int64), list(levels)


class EpidemicModel(mesa.Model):
    """One epidemic on a population (module docstring).

    Parameters
    ----------
    population
        One row per agent: ``cell_id`` (a cell of ``bank``), ``region`` (the mixing unit) and optionally
        ``household_id`` (agents without it live alone).
    bank
        The reporting probabilities per cell, case level and household level.
    settings
        The epidemic's parameters.
    seed
        Master seed: every draw comes from named streams of ``SeedSequence(seed)``.
    """

    def __init__(self, population: pd.DataFrame, bank: ReportingBank, settings: EpidemicSettings, seed: int):
        self.streams = {name: np.random.default_rng(s)
                        for name, s in zip(STREAMS, np.random.SeedSequence(int(seed)).spawn(len(STREAMS)))}
        super().__init__(rng=self.streams["mesa"])
        self.settings = settings
        self.bank = bank
        for column in ("cell_id", "region"):
            if column not in population.columns:
                raise InputError("population", column, "missing column of the epidemic population")
        n = len(population)
        if settings.initial_infected > n:
            raise InputError("epidemic", "initial_infected",
                             f"{settings.initial_infected} exceeds the population ({n})")
        self.cell = pd.Index(bank.cells).get_indexer(population["cell_id"].astype(str))
        if (self.cell < 0).any():
            missing = population["cell_id"].astype(str).to_numpy()[int(np.argmax(self.cell < 0))]
            raise InputError("population", "cell_id", f"cell {missing} has no row in the reporting bank")
        self.region, self.region_names = _codes(population["region"], "region")
        if "household_id" in population.columns:
            self.household, _ = _codes(population["household_id"], "household_id")
        else:
            self.household = np.arange(n, dtype=np.int64)
        self.n_regions, self.n_households = len(self.region_names), int(self.household.max(initial=-1)) + 1
        self.region_population = np.bincount(self.region, minlength=self.n_regions)
        household_size = np.bincount(self.household, minlength=self.n_households)
        self.rates = transmission_rates(settings, household_size[self.household])
        self.state = np.full(n, SUSCEPTIBLE, dtype=np.int8)
        self.symptomatic = np.zeros(n, dtype=bool)
        self.reported = np.zeros(n, dtype=bool)
        self.first_decision = np.full(self.n_households, -1, dtype=np.int8)   # -1 none yet, 0 no, 1 yes
        self.cumulative_reports = np.zeros(self.n_regions, dtype=np.int64)
        self._rows: list[pd.DataFrame] = []
        self._decisions: list[pd.DataFrame] = []
        self._cell_ids = np.asarray(bank.cells, dtype=object)
        self._population_cells = population["cell_id"].astype(str).to_numpy()
        self._households = (population["household_id"].astype(str).to_numpy() if "household_id" in population.columns
                            else None)
        self._seed_infections()

    # -- phases -----------------------------------------------------------------------------------
    def _seed_infections(self) -> None:
        seeded = self.streams["seeding"].choice(self.state.size, self.settings.initial_infected, replace=False)
        became = self._become_infectious(np.sort(seeded), self.streams["seeding"])
        levels = self.case_levels()
        self.record(0, np.bincount(self.region[seeded], minlength=self.n_regions), self.decide(became, levels), levels)

    def step(self) -> None:
        day = self.steps   # Mesa counts steps before calling step(): day 1 is the first step
        levels = self.case_levels()
        infected = self.transmit()
        became = self.progress(infected)
        self.record(day, np.bincount(self.region[infected], minlength=self.n_regions), self.decide(became, levels),
                    levels)

    def run(self) -> None:
        """Step through ``settings.days`` days."""
        for _ in range(self.settings.days):
            self.step()

    def infectiousness(self) -> np.ndarray:
        """Each agent's infectiousness today (0 unless infectious)."""
        weight = np.where(self.symptomatic, 1.0, self.settings.asymptomatic_infectiousness)
        return np.where(self.state == INFECTIOUS, weight, 0.0)

    def transmit(self) -> np.ndarray:
        """Infect susceptible agents from their household and region; return the newly exposed."""
        weight = self.infectiousness()
        community = weight * np.where(self.reported, self.settings.quarantine_contact_factor, 1.0)
        force = self.rates.community * np.bincount(self.region, weights=community, minlength=self.n_regions) \
            / np.maximum(self.region_population, 1)
        household = np.bincount(self.household, weights=weight, minlength=self.n_households)
        susceptible = np.flatnonzero(self.state == SUSCEPTIBLE)
        hazard = self.rates.household * household[self.household[susceptible]] + force[self.region[susceptible]]
        infected = susceptible[self.streams["transmission"].random(susceptible.size) < -np.expm1(-hazard)]
        self.state[infected] = EXPOSED
        return infected

    def progress(self, infected_today: np.ndarray) -> np.ndarray:
        """E -> I and I -> R for agents infected before today; return the newly symptomatic."""
        rng = self.streams["progression"]
        exposed = np.flatnonzero(self.state == EXPOSED)
        exposed = exposed[~np.isin(exposed, infected_today, assume_unique=True)]
        infectious = np.flatnonzero(self.state == INFECTIOUS)
        recover = infectious[rng.random(infectious.size) < 1.0 / self.settings.infectious_days]
        onset = exposed[rng.random(exposed.size) < 1.0 / self.settings.latent_days]
        self.state[recover] = RECOVERED
        return self._become_infectious(onset, rng)

    def _become_infectious(self, agents: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        self.state[agents] = INFECTIOUS
        self.symptomatic[agents] = rng.random(agents.size) < self.settings.symptomatic_share
        return agents[self.symptomatic[agents]]

    def case_levels(self) -> np.ndarray:
        """Each region's case level today (:data:`~pvsst.sim.epidemic.bank.CASE_LEVELS` index)."""
        kind = self.settings.case_count
        if kind == "infectious":
            counts = np.bincount(self.region, weights=self.state == INFECTIOUS, minlength=self.n_regions)
        elif kind == "reported_active":
            counts = np.bincount(self.region, weights=self.reported & (self.state == INFECTIOUS),
                                 minlength=self.n_regions)
        else:
            counts = self.cumulative_reports
        return case_level_index(np.rint(counts).astype(np.int64))

    def decide(self, agents: np.ndarray, levels: np.ndarray) -> dict[str, np.ndarray]:
        """Each newly symptomatic agent tests and reports or not; return the decisions in agent order
        (``agent``, ``case_level``, ``household_level``, ``p_yes``, ``reported``)."""
        rng = self.streams["decisions"]
        agents = agents[rng.permutation(agents.size)]          # the order among same-day household members
        household = self.household[agents]
        earlier = self.first_decision[household]
        _, first_index = np.unique(household, return_index=True)
        first = np.zeros(agents.size, dtype=bool)
        first[first_index] = True
        first &= earlier < 0
        draws = rng.random(agents.size)
        level = np.full(agents.size, NO_HOUSEHOLD)
        case = levels[self.region[agents]]
        p = np.empty(agents.size)
        p[first] = self.bank.probability(self.cell[agents[first]], case[first], level[first])
        decided = np.zeros(agents.size, dtype=bool)
        decided[first] = draws[first] < p[first]
        if self.bank.chained:
            self.first_decision[household[first]] = decided[first]
            later = ~first
            level[later] = np.where(self.first_decision[household[later]] == 1, MEMBER_REPORTED, MEMBER_DID_NOT_REPORT)
        later = ~first
        p[later] = self.bank.probability(self.cell[agents[later]], case[later], level[later])
        decided[later] = draws[later] < p[later]
        self.reported[agents[decided]] = True
        order = np.argsort(agents)
        return {"agent": agents[order], "case_level": case[order], "household_level": level[order],
                "p_yes": p[order], "reported": decided[order]}

    def record(self, day: int, new_infections: np.ndarray, decided: dict[str, np.ndarray], levels: np.ndarray) -> None:
        """Append the day's region rows and decision rows."""
        agents, reported, p = decided["agent"], decided["reported"], decided["p_yes"]
        count = lambda mask: np.bincount(self.region, weights=mask, minlength=self.n_regions)  # noqa: E731
        by_state = np.bincount(self.region * 4 + self.state, minlength=4 * self.n_regions).reshape(-1, 4).T
        reports = np.bincount(self.region[agents], weights=reported, minlength=self.n_regions).astype(np.int64)
        self.cumulative_reports += reports
        reported_infectious = count(self.reported & (self.state == INFECTIOUS)).astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(by_state[INFECTIOUS] > 0, reported_infectious / by_state[INFECTIOUS], np.nan)
        self._rows.append(pd.DataFrame({
            "day": day, "region": self.region_names, "population": self.region_population,
            "susceptible": by_state[SUSCEPTIBLE], "exposed": by_state[EXPOSED], "infectious": by_state[INFECTIOUS],
            "recovered": by_state[RECOVERED], "new_infections": np.asarray(new_infections, dtype=np.int64),
            "symptomatic": count(self.symptomatic & (self.state == INFECTIOUS)).astype(np.int64),
            "new_symptomatic": np.bincount(self.region[agents], minlength=self.n_regions),
            "reports": reports,
            "expected_reports": np.bincount(self.region[agents], weights=p, minlength=self.n_regions),
            "cumulative_reports": self.cumulative_reports.copy(),
            "reporting_rate": reports / self.region_population,
            "cumulative_reporting_rate": self.cumulative_reports / self.region_population,
            "reported_infectious": reported_infectious, "reported_share_of_infectious": share,
            "case_level": np.asarray(CASE_LEVELS, dtype=object)[levels]}))
        if agents.size:
            self._decisions.append(pd.DataFrame({
                "day": day, "agent": agents, "cell_id": self._population_cells[agents],
                "region": np.asarray(self.region_names, dtype=object)[self.region[agents]],
                "household": self._households[agents] if self._households is not None else None,
                "case_level": np.asarray(CASE_LEVELS, dtype=object)[decided["case_level"]],
                "household_level": np.asarray(HOUSEHOLD_LEVELS, dtype=object)[decided["household_level"]],
                "p_yes": p, "reported": reported}))

    # -- tables -----------------------------------------------------------------------------------
    def region_days(self) -> pd.DataFrame:
        """One row per day and region (:data:`REGION_DAY_COLUMNS`)."""
        return pd.concat(self._rows, ignore_index=True)[list(REGION_DAY_COLUMNS)]

    def decisions(self) -> pd.DataFrame:
        """One row per decision (:data:`DECISION_COLUMNS`), in day then agent order."""
        if not self._decisions:
            return pd.DataFrame(columns=list(DECISION_COLUMNS))
        return pd.concat(self._decisions, ignore_index=True)[list(DECISION_COLUMNS)]
