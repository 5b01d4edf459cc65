"""A cell run's state and group estimates against the real survey, beside the yardsticks on the same cells.

When the instrument names the survey's geography column (``data.geography``, e.g. ``state`` in CCES 2016
``stevedata/TV16``), every question is scored per state (:func:`pvsst.analysis.survey.cells.state_scores.score_states`)
for every model x condition x elicitation of the run and for four yardsticks on the same cells: the
``cell_oracle`` (the survey's own answers per cell, post-stratified with the run's population counts;
where the cells leave out the state, its distance from the survey is the *composition effect*), ``mrp``
(a logistic model of the survey's answers on the cell attributes with region and state effects and the
state-level predictors the instrument names in ``data.state_predictors``
(:mod:`pvsst.analysis.survey.cells.state_predictors`), each state fitted without its own respondents,
post-stratified with the same counts: :mod:`pvsst.analysis.survey.cells.mrp`), the ``national_marginal``
(the survey's national shares in every state; it does not vary across states, so its correlation across
states is 0 by construction, ``constant = True``) and ``uniform``. The survey's own sampling noise per
state (respondents resampled within each state) and the state pairs it cannot
tell apart come with them. When the population is the survey's own respondents (``personas.source:
respondents``), the oracle's counts leave out, question by question, the respondents who skipped it
(:func:`pvsst.analysis.survey.cells.state_scores.answered_counts`), so with cells that include the state
it reproduces the raw state shares. Groups (the cell attributes other than the geography) are scored the same
way against the survey's group shares, beside the same four yardsticks (the oracle and MRP pooled over the
states: :func:`pvsst.analysis.survey.cells.mrp.poststratified_groups`). The CCES 2016 vote question is also
scored against the certified 2016 result, every source post-stratified with the population's voters
(:mod:`pvsst.analysis.survey.cells.election_scores`, ``election_scores.csv``).

The respondents are read from the instrument's data (``data`` loading recipe) and put into the persona
vocabulary with the instrument's ``personas.attributes`` (:func:`pvsst.personas.respondents.matched_personas`),
so their cells are the population's; a cell attribute the mapping leaves out is read from a grouping axis
whose ``persona_column`` it is when that axis keeps the persona's own values (no ``persona_values``);
their answers and weights are ``RUN/human.parquet``'s.

Tables (written by ``pvsst survey score`` to ``RUN/analysis/``): ``state_scores.csv``,
``state_correlations.csv``, ``state_pairs.csv``, ``group_scores.csv`` (columns in
:data:`STATE_SCORE_COLUMNS`, :data:`CORRELATION_COLUMNS`, :data:`PAIR_COLUMNS`, :data:`GROUP_SCORE_COLUMNS`).

Examples
--------
>>> comparison = compare_states(run, population, estimates)  # doctest: +SKIP
>>> sorted(comparison.scores["source"].unique())  # doctest: +SKIP
['cell_oracle', 'm | c (logprobs)', 'mrp', 'national_marginal', 'uniform']
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from pvsst.analysis.survey.cells.election import vote_question
from pvsst.analysis.survey.cells.election_scores import ELECTION_COLUMNS, SURVEY, election_scores
from pvsst.analysis.survey.cells.estimates import (
    ESTIMATES_FILE,
    KEYS,
    cell_estimates,
    decision_bank,
    groups_of,
    write_table,
)
from pvsst.analysis.survey.cells.geography import (
    indistinguishable_states,
    state_bootstrap,
    state_noise,
    state_shares,
)
from pvsst.analysis.survey.cells.mrp import (
    MRP,
    CellPredictions,
    mrp_predictions,
    poststratified_groups,
    poststratified_states,
)
from pvsst.analysis.survey.cells.population import CELLS_FILE, CellPopulation
from pvsst.analysis.survey.cells.state_predictors import state_predictors
from pvsst.analysis.survey.cells.state_scores import (
    CELL_ORACLE,
    NATIONAL_MARGINAL,
    UNIFORM,
    answered_counts,
    estimate_matrix,
    national_marginal_shares,
    oracle_shares,
    score_states,
    survey_cell_shares,
    uniform_shares,
)
from pvsst.analysis.survey.data import GROUP_PREFIX, load_data
from pvsst.analysis.survey.plan import SurveyAnalysisPlan
from pvsst.analysis.survey.shares import source_label
from pvsst.analysis.survey.units import ScoredRun
from pvsst.core.atomic import write_json
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS
from pvsst.personas.geography import STATE_CODE_OF_NAME, STATE_CODES
from pvsst.personas.respondents import AttributeMap, canonical_values, matched_personas
from pvsst.personas.vocabulary import college_of

YARDSTICKS = (CELL_ORACLE, MRP, NATIONAL_MARGINAL, UNIFORM, SURVEY)
ELECTION_FILE = "election_scores.csv"
STATE_SCORE_COLUMNS = ("question", "source", "state", "option", "simulated", "real", "error", "abs_error",
                       "js_distance", "total_variation", "total_variation_uniform", "simbench", "respondents",
                       "survey_se", "survey_ci_low", "survey_ci_high", "coverage")
CORRELATION_COLUMNS = ("question", "source", "option", "correlation", "constant", "n_states", "note")
PAIR_COLUMNS = ("question", "option", "state_a", "state_b", "difference", "ci_low", "ci_high", "p", "p_bh",
                "distinguishable", "bh_family")
GROUP_SCORE_COLUMNS = ("question", "source", "group", "option", "simulated", "real", "error", "abs_error",
                       "js_distance", "simbench")
CONSTANT_NOTE = "the same share in every state: no variance across states, correlation 0 by construction"
NOTES_FILE = "cell_notes.json"
FORMATS = {".csv": "csv", ".parquet": "parquet", ".dta": "stata", ".sav": "spss"}


@dataclass
class StateComparison:
    """The tables of :func:`compare_states`; ``notes`` say what could not be computed and why."""

    scores: pd.DataFrame
    correlations: pd.DataFrame
    pairs: pd.DataFrame
    groups: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    election: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(ELECTION_COLUMNS)))


def data_recipe(data: dict) -> dict:
    """The loading recipe of an instrument's ``data`` section (:func:`pvsst.analysis.survey.data.load_data`).

    >>> data_recipe({"path": "x.csv", "respondent_id": "id"})["format"]
    'csv'
    """
    fmt = data.get("format") or (FORMATS.get(Path(data["path"]).suffix.lower()) if data.get("path") else None)
    return {"source": data.get("source"), "path": str(Path(data["path"]).resolve()) if data.get("path") else None,
            "format": fmt, "value_labels": bool(data.get("value_labels")), "derive": dict(data.get("derive") or {}),
            "filter": data.get("filter")}


def survey_respondents(spec: dict, human: pd.DataFrame) -> pd.DataFrame:
    """The respondents in the persona vocabulary with ``state`` (postal code from ``data.geography``),
    their answers (one column per question) and ``weight`` (from ``human.parquet``)."""
    data = spec.get("data") or {}
    geography = data.get("geography")
    frame = load_data(data_recipe(data))
    label = data.get("source") or data.get("path") or "data"
    attributes = (spec.get("personas") or {}).get("attributes") or {}
    maps = [AttributeMap(name, a["column"], None if a.get("values") is None else
                         {k: tuple(v) for k, v in a["values"].items()}, a.get("missing"))
            for name, a in attributes.items()]
    people = matched_personas(frame, data["respondent_id"], maps, "", label)
    if geography not in frame.columns:
        raise InputError(label, "data.geography", f"no column {geography!r} in the data")
    raw = frame[geography]
    codes = [None if v is None else STATE_CODE_OF_NAME.get(str(v), str(v).upper()) for v in canonical_values(raw)]
    unknown = sorted({c for c in codes if c is not None} - set(STATE_CODES))
    if unknown:
        raise InputError(label, "data.geography", f"{', '.join(map(repr, unknown[:5]))} not a U.S. state code or name")
    people["state"] = codes
    if "education" in people.columns and "college" not in people.columns:
        people["college"] = college_of(people["education"])  # the flag a degree-only survey shares with the census
    people["respondent_id"] = canonical_values(frame[data["respondent_id"]])
    answers = human.drop(columns=[c for c in human.columns if c.startswith(GROUP_PREFIX)])
    # An attribute the mapping leaves out but a grouping axis reads from the data as the persona's own
    # values (no persona_values coarsening) takes the respondents' group levels.
    for axis in spec.get("grouping") or []:
        column, name = axis.get("persona_column"), GROUP_PREFIX + str(axis.get("axis"))
        unmapped = column not in people or people[column].isna().all()
        if column and unmapped and not axis.get("persona_values") and name in human:
            answers[column] = human[name].astype(object).where(human[name].notna(), None)
    merged = people.drop(columns=[c for c in answers.columns if c in people.columns and c != "respondent_id"])
    return merged.merge(answers, on="respondent_id", how="inner", validate="one_to_one")


def _survey_noise(respondents: pd.DataFrame, question: str, codes,
                  settings: SurveyAnalysisPlan) -> tuple[pd.DataFrame, pd.DataFrame]:
    states, replicates = state_bootstrap(respondents, question, codes, weight="weight",
                                         draws=settings.bootstrap_draws, seed=settings.bootstrap_seed)
    level = settings.ci_level
    noise = state_noise(states, replicates, codes, level)
    pairs = indistinguishable_states(states, replicates, codes, level).drop(columns="ci_level")
    return noise, pairs


def compare_states(run: ScoredRun, population: CellPopulation, estimates: pd.DataFrame, spec: dict,
                   respondents: pd.DataFrame | None = None) -> StateComparison:
    """Score the run's state and group estimates against the survey (see the module docstring).

    ``spec``: the instrument (``RUN/survey.json``'s ``spec``); ``respondents``: the survey's respondents
    as :func:`survey_respondents` returns them (read from the instrument's data when not given).
    """
    settings = run.settings
    if respondents is None:
        respondents = survey_respondents(spec, run.human)
    notes: list[str] = []
    scores, correlations, pairs, groups, election = [], [], [], [], []
    vote = vote_question(spec)
    predictors = state_predictors((spec.get("data") or {}).get("state_predictors") or ())
    groups_asked = groups_of(population)
    sources = estimates[list(KEYS)].drop_duplicates().itertuples(index=False, name=None)
    sources = [(source_label(*key), dict(zip(KEYS, key))) for key in sources]
    for scale in run.scales:
        question, codes = scale.question, list(scale.codes)
        answered = respondents[respondents[question].notna()]
        real = state_shares(answered, question, codes, weight="weight")
        simulated = _matrices(estimates, question, codes, sources)
        states = [s for s in real.index if all(s in table.index for table in simulated.values())]
        if not states:
            notes.append(f"{question}: no state of the survey has a population estimate (a national-only "
                         "population?): no state scores")
            continue
        if len(states) < len(real.index):
            notes.append(f"{question}: {len(real.index) - len(states)} state(s) with respondents but no population "
                         "estimate left out")
        real = real.loc[states]
        coverage = pd.Series(np.nan, index=real.index)
        tables = dict(simulated)
        mrp = None
        group_yardsticks: dict[str, pd.DataFrame] = {}
        missing = [a for a in population.attributes if a not in answered.columns or answered[a].isna().all()]
        if missing:
            notes.append(f"{question}: no cell oracle: the respondents have no {', '.join(missing)} (map it in "
                         "personas.attributes, or read it with a grouping axis that keeps the persona's values)")
        else:
            known = answered.dropna(subset=list(population.attributes))
            if len(known) < len(answered):
                notes.append(f"{question}: cell oracle from {len(known):,} of {len(answered):,} respondents (the "
                             "others lack a cell attribute)")
            counts = population.counts
            if ((spec.get("personas") or {}).get("source")) == "respondents":
                counts = answered_counts(counts, respondents, population.attributes, question)
            cells = population.cells.drop(columns="count")
            try:
                distribution = survey_cell_shares(known, population.attributes, question, codes, "weight")
                oracle, coverage = oracle_shares(distribution, codes, counts, cells)
                tables[CELL_ORACLE] = oracle.reindex(states)
                coverage = coverage.reindex(states)
                group_yardsticks[CELL_ORACLE] = poststratified_groups(
                    _oracle_predictions(distribution, codes, cells, oracle.index), counts, cells, groups_asked)
            except InputError as err:
                notes.append(f"{question}: no cell oracle ({err})")
            try:
                mrp = mrp_predictions(known, population.attributes, question, codes, counts, cells, weight="weight",
                                      state_predictors=predictors)
                tables[MRP] = poststratified_states(mrp, counts, cells).reindex(states)
                group_yardsticks[MRP] = poststratified_groups(mrp, counts, cells, groups_asked)
            except InputError as err:
                notes.append(f"{question}: no MRP reference ({err})")
        tables[NATIONAL_MARGINAL] = national_marginal_shares(answered, question, codes, states, weight="weight")
        tables[UNIFORM] = uniform_shares(real)
        scored = score_states(real, tables)
        noise, pair_table = _survey_noise(answered[answered["state"].isin(states)], question, codes, settings)
        counts = answered.groupby("state").size()
        table = scored.options.merge(scored.states, on=["source", "state"])
        table = table.merge(noise.rename(columns={"se": "survey_se", "ci_low": "survey_ci_low",
                                                  "ci_high": "survey_ci_high"}).drop(columns="share"),
                            on=["state", "option"], how="left")
        table["respondents"] = table["state"].map(counts).astype(int)
        table["error"] = table["simulated"] - table["real"]
        table["coverage"] = np.where(table["source"] == CELL_ORACLE, table["state"].map(coverage), np.nan)
        scores.append(table.assign(question=question))
        correlation = scored.correlations.assign(question=question)
        correlation["note"] = np.where(correlation["constant"], CONSTANT_NOTE, "")
        correlations.append(correlation)
        pairs.append(pair_table.assign(question=question))
        groups.append(_group_scores(answered, question, codes, estimates, sources, groups_asked, group_yardsticks))
        if vote is not None and vote[0] == question:
            try:
                election.append(election_scores(decision_bank(run.responses, run.scales), population, respondents,
                                                question, vote[1], codes, mrp))
            except InputError as err:
                notes.append(f"{question}: no comparison with the election ({err})")
    return StateComparison(_stack(scores, STATE_SCORE_COLUMNS), _stack(correlations, CORRELATION_COLUMNS),
                           _stack([adjusted_pairs(pd.concat(pairs, ignore_index=True), 1 - settings.ci_level)]
                                  if pairs else [], PAIR_COLUMNS),
                           _stack(groups, GROUP_SCORE_COLUMNS), notes,
                           _stack(election, ELECTION_COLUMNS))


def adjusted_pairs(pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """State pairs with ``p_bh`` (Benjamini-Hochberg across every question x option x state pair of the
    table: one family, named in ``bh_family``) and ``distinguishable`` = ``p_bh < alpha``.

    Parameters
    ----------
    pairs : pandas.DataFrame
        :func:`~pvsst.analysis.survey.cells.geography.indistinguishable_states` rows of every question.
    alpha : float
        The false discovery rate (1 - the intervals' level).

    Returns
    -------
    pandas.DataFrame
        A copy with the three columns.

    Examples
    --------
    >>> pairs = pd.DataFrame({"question": "q", "option": "y", "state_a": ["A", "A"], "state_b": ["B", "C"],
    ...                       "p": [0.01, 0.04]})
    >>> out = adjusted_pairs(pairs, 0.05)
    >>> out["p_bh"].tolist(), out["distinguishable"].tolist(), out["bh_family"].iloc[0]
    ([0.02, 0.04], [True, True], 'state pairs: 2 tests (every question x option x state pair)')
    """
    pairs = pairs.copy()
    pairs["p_bh"] = multipletests(pairs["p"].to_numpy(float), alpha=alpha, method="fdr_bh")[1] if len(pairs) else []
    pairs["distinguishable"] = pairs["p_bh"] < alpha
    pairs["bh_family"] = f"state pairs: {len(pairs)} tests (every question x option x state pair)"
    return pairs


def _stack(frames: list[pd.DataFrame], columns) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True)[list(columns)] if frames else pd.DataFrame(columns=list(columns))


def _matrices(estimates: pd.DataFrame, question: str, codes, sources, group: str | None = None) -> dict:
    """{source label: (domain x option) estimates} of the sources that answered ``question``."""
    out = {}
    for label, key in sources:
        try:
            out[label] = estimate_matrix(estimates, question, codes, group=group, **key)
        except InputError:
            continue
    return out


def _oracle_predictions(distribution: dict[str, np.ndarray], codes, cells: pd.DataFrame, states) -> CellPredictions:
    """The cell oracle as per-state cell predictions: each cell's survey distribution
    (:func:`~pvsst.analysis.survey.cells.state_scores.survey_cell_shares`) in every state (NaN for a cell
    without a respondent), for :func:`poststratified_groups`."""
    k = len(codes)
    cell_ids = tuple(str(c) for c in cells["cell_id"])
    p = np.array([distribution.get(c, np.full(k, np.nan)) for c in cell_ids], dtype=float).reshape(len(cell_ids), k)
    return CellPredictions(cell_ids, tuple(str(c) for c in codes), {str(s): p for s in states})


def _group_scores(answered: pd.DataFrame, question: str, codes, estimates: pd.DataFrame, sources,
                  groups: list[str], yardsticks: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each group's simulated shares against the survey's, for the model sources and the four yardsticks
    (``yardsticks``: the cell oracle's and MRP's (group x option) shares, indexed ``attribute=level``)."""
    frames = []
    for group in groups:
        if group not in answered.columns or answered[group].isna().all():
            continue
        real = state_shares(answered[answered[group].notna()], question, codes, geography=group, weight="weight")
        tables = _matrices(estimates, question, codes, sources, group)
        shared = [g for g in real.index if all(g in t.index for t in tables.values())]
        if not shared:
            continue
        real = real.loc[shared]
        tables = {k: t.reindex(shared) for k, t in tables.items()}
        for name, table in yardsticks.items():
            tables[name] = table.set_axis([str(i) for i in table.index]).reindex([f"{group}={g}" for g in shared]
                                                                               ).set_axis(shared)
        tables[NATIONAL_MARGINAL] = national_marginal_shares(answered, question, codes, shared, weight="weight")
        tables[UNIFORM] = uniform_shares(real)
        scored = score_states(real, tables)
        table = scored.options.merge(scored.states, on=["source", "state"])
        frames.append(table.assign(question=question, group=group + "=" + table["state"].astype(str),
                                   error=table["simulated"] - table["real"]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=GROUP_SCORE_COLUMNS)


def cell_analysis(run: ScoredRun) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The tables of a cell run's analysis, by file name (``estimates.csv`` and, when ``data.geography`` is
    set, the state and group tables), and the notes (what could not be computed and why). Writes nothing."""
    if run.population is None:
        raise InputError(run.file(CELLS_FILE), "cells", "not a cell run (no cells.parquet)")
    estimates = cell_estimates(run, run.population)
    tables = {ESTIMATES_FILE: estimates}
    if not (run.spec.get("data") or {}).get("geography"):
        return tables, ["no data.geography in the instrument: estimates only, no state scores"]
    comparison = compare_states(run, run.population, estimates, run.spec)
    tables.update({"state_scores.csv": comparison.scores, "state_correlations.csv": comparison.correlations,
                   "state_pairs.csv": comparison.pairs, "group_scores.csv": comparison.groups})
    if not comparison.election.empty:
        tables[ELECTION_FILE] = comparison.election
    return tables, comparison.notes


def write_cell_analysis(tables: dict[str, pd.DataFrame], notes: list[str], run_dir: str | Path) -> list[Path]:
    """Write :func:`cell_analysis`'s tables to ``RUN/analysis/`` (each atomically) and the notes to
    ``cell_notes.json``; return the paths."""
    written = [write_table(table, run_dir, name) for name, table in tables.items()]
    written.append(write_json(Path(run_dir) / ANALYSIS / NOTES_FILE, {"notes": list(notes)}))
    return written
