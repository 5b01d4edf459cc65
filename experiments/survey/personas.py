"""The two tables a survey run is scored from: the real answers and the personas who are asked.

- :func:`human_table`: the real answers of the instrument's survey (``pvsst.analysis.survey.data``), coded
  to option codes, with the grouping levels of every respondent.
- :func:`persona_table`: respondent-matched personas (one per real respondent, read through the
  instrument's ``personas.attributes`` mapping, sampled down to ``n`` with the persona seed) or census
  personas; with the persona's survey ``weight`` (its respondent's weight; 1 for census personas),
  a card column per persona card style used, the
  grouping levels, and per question ``reference:<question>``: the respondent the ``oracle`` control
  answers as (the persona's own respondent, or for a census persona a donor drawn from the
  respondents of the same group cell who answered that question, with probability proportional to
  their survey weight, backing off one axis at a time from the last when the cell has none). Drawn
  in proportion to weight, a donor answers like a draw from the weighted population of its cell, so
  the oracle reproduces the weighted shares wherever weights vary inside cells.

With the instrument's ``cells`` section the personas asked are the population's cells
(:func:`pvsst.experiments.survey.cell_population.asked_cells`: one row per cell, ``persona_id`` = ``cell_id``,
every card column the cell card, ``weight`` the cell's population), and :func:`asked_tables` also
returns the cell counts per geography (``RUN/cells.parquet``). With ``data.geography`` the real answers
carry the respondent's state as a postal code in a ``geography`` column.

Examples
--------
>>> from pvsst.experiments.survey.spec import load_survey, with_overrides
>>> spec = with_overrides(load_survey("experiments/surveys/gss2018_spending.yaml"), personas="respondents", n=5)
>>> human = human_table(spec)
>>> personas = persona_table(spec, human)
>>> len(personas), personas["reference:natenvir"].isin(human["respondent_id"]).all()
(5, np.True_)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.survey.data import (
    GROUP_PREFIX,
    AnswerColumn,
    GroupColumn,
    human_answers,
    load_data,
)
from pvsst.core.errors import InputError
from pvsst.core.validation import first_duplicate
from pvsst.experiments.audit.population import audit_population
from pvsst.experiments.survey.cell_population import CELL_CARD, GEOGRAPHY, asked_cells, geography_codes
from pvsst.experiments.survey.spec import SurveySpec
from pvsst.personas.cards import personas_for_simulation
from pvsst.personas.households import HouseholdSizes
from pvsst.personas.respondents import AttributeMap, canonical_value, matched_personas
from pvsst.personas.scenario_population import SCENARIO_ATTRIBUTES, scenario_population
from pvsst.personas.synthesis import synthesize

REFERENCE_PREFIX = "reference:"
ALONE = HouseholdSizes(shares=(1.0,), source="every persona its own household, so each draws its own income")
"""The households of a survey's census personas: income is drawn per persona; an epidemic run groups the
agents into households itself."""


def _with_scenario_attributes(spec: SurveySpec, frame: pd.DataFrame) -> pd.DataFrame:
    """Census personas with :func:`pvsst.personas.scenario_population.scenario_population`'s columns, when
    the instrument's cells or grouping ask for one of them (unchanged otherwise)."""
    asked = set(spec.cells.attributes if spec.cells is not None else []) | {g.persona_column for g in spec.grouping}
    if not asked & set(SCENARIO_ATTRIBUTES):
        return frame
    seed = int(np.random.SeedSequence(spec.personas.seed, spawn_key=(2,)).generate_state(1)[0])
    return scenario_population(frame, ALONE, seed=seed).personas


def answer_columns(spec: SurveySpec) -> list[AnswerColumn]:
    return [AnswerColumn(q.id, q.column, {canonical_value(v): o.code for o in q.options for v in o.values},
                         tuple(canonical_value(v) for v in q.nonsubstantive_values)) for q in spec.questions]


def group_columns(spec: SurveySpec) -> list[GroupColumn]:
    return [GroupColumn(g.axis, g.data_column, {canonical_value(v): level for level, values in g.data_values.items()
                                                for v in values}, g.data_missing) for g in spec.grouping]


def survey_data(spec: SurveySpec) -> pd.DataFrame:
    """The instrument's survey table: loaded, derived columns added, rows filtered (``data``)."""
    return load_data(spec.data.recipe())


def human_table(spec: SurveySpec, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The real answers (see :func:`pvsst.analysis.survey.data.human_answers`)."""
    frame = survey_data(spec) if frame is None else frame
    human = human_answers(spec.data.label, spec.data.respondent_id, answer_columns(spec), group_columns(spec),
                          spec.data.weight, frame=frame, strata_column=spec.data.strata,
                          cluster_column=spec.data.cluster)
    for index, question in enumerate(spec.questions):
        if human[question.id].isna().all():
            raise InputError(spec.data.label, f"questions[{index}].column", f"no respondent answers {question.id!r} "
                             f"(every value of column {question.column!r} is missing or non-substantive): nothing to "
                             "score its answers against")
    if spec.data.geography is not None:
        column = spec.data.geography
        if column not in frame.columns:
            raise InputError(spec.data.label, "data.geography", f"no column {column!r} in {spec.data.label} "
                             f"(columns: {', '.join(map(str, frame.columns[:40]))})")
        human[GEOGRAPHY] = pd.Series(geography_codes(frame[column], spec.data.label, column), dtype="string")
    return human


def _base_personas(spec: SurveySpec, human: pd.DataFrame) -> pd.DataFrame:
    source = spec.personas
    if source.source == "respondents":
        maps = [AttributeMap(name, a.column, None if a.values is None else {k: tuple(v) for k, v in a.values.items()},
                             a.missing) for name, a in source.attributes.items()]
        frame = matched_personas(survey_data(spec), spec.data.respondent_id, maps,
                                 source.id_prefix if source.id_prefix is not None else f"{spec.id}-", spec.data.label)
        if source.n is not None and source.n < len(frame):
            rows = np.sort(np.random.default_rng(source.seed).choice(len(frame), size=source.n, replace=False))
            frame = frame.iloc[rows]
        frame = frame.reset_index(drop=True)
        frame["reference_respondent_id"] = [canonical_value(v) for v in frame["respondent_id"]]
        design = human.set_index("respondent_id").reindex(frame["reference_respondent_id"])
        frame["weight"] = design["weight"].to_numpy(dtype=float)
        for column in ("stratum", "cluster"):  # a respondent's persona is resampled with its design
            if column in design:
                frame[column] = design[column].to_numpy(dtype=object)
        return frame
    frame = synthesize(source.n or 200, geography=source.geography, seed=source.seed).personas
    frame = _with_scenario_attributes(spec, frame.reset_index(drop=True))
    frame["weight"] = 1.0
    return frame


def _persona_levels(spec: SurveySpec, frame: pd.DataFrame) -> None:
    for axis in spec.grouping:
        if axis.persona_column not in frame.columns:
            raise InputError(f"grouping[{axis.axis}]", "persona_column",
                             f"personas have no column {axis.persona_column!r}")
        values = frame[axis.persona_column].astype(object).where(frame[axis.persona_column].notna(), None)
        if axis.persona_values is None:
            frame[GROUP_PREFIX + axis.axis] = [None if v is None else str(v) for v in values]
            continue
        lookup = {str(v): level for level, vs in axis.persona_values.items() for v in vs}
        unmapped = sorted({str(v) for v in values if v is not None} - set(lookup))
        if unmapped:
            raise InputError(f"grouping[{axis.axis}]", "persona_values",
                             f"persona values {', '.join(unmapped[:6])} of {axis.persona_column!r} map to no level")
        frame[GROUP_PREFIX + axis.axis] = [None if v is None else lookup[str(v)] for v in values]


def _donors(spec: SurveySpec, frame: pd.DataFrame, human: pd.DataFrame, index: int) -> list[str]:
    """A cell-matched donor per census persona among the respondents who answered question ``index``,
    drawn with probability proportional to survey weight."""
    question = spec.questions[index].id
    human = human[human[question].notna()].reset_index(drop=True)
    weight = human["weight"].to_numpy(dtype=float)
    rng = np.random.default_rng(np.random.SeedSequence(spec.personas.seed, spawn_key=(1, index)))
    axes = [GROUP_PREFIX + g.axis for g in spec.grouping]
    pools = [human.groupby(axes[:depth], dropna=False).indices if depth else None for depth in range(len(axes) + 1)]
    respondents = human["respondent_id"]
    donors, pool_of_row = [], {}  # personas of one cell share its pool: built once per distinct row
    for row in frame[axes].itertuples(index=False, name=None):
        if row not in pool_of_row:
            for depth in range(len(axes), -1, -1):
                if depth == 0:
                    members = np.arange(len(human))
                    break
                key = row[:depth] if depth > 1 else row[0]
                members = pools[depth].get(key)
                if members is not None and len(members):
                    break
            mass = weight[members]
            uniform = bool(mass.sum() <= 0 or np.allclose(mass, mass[0]))  # equal weights: a uniform draw
            pool_of_row[row] = (members, None if uniform else mass / mass.sum())
        members, p = pool_of_row[row]
        pick = rng.integers(len(members)) if p is None else rng.choice(len(members), p=p)
        donors.append(respondents.iat[int(members[pick])])
    return donors


def persona_table(spec: SurveySpec, human: pd.DataFrame) -> pd.DataFrame:
    """The personas of the run (see the module docstring); cards are in ``card_<style>`` columns."""
    return asked_tables(spec, human)[0]


def asked_tables(spec: SurveySpec, human: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The personas asked and, in a cell run, the cell counts per geography (else ``None``)."""
    frame = _base_personas(spec, human)
    if spec.audit is not None:  # matched sets and the arity-matched null, built from the base personas
        frame = audit_population(spec.audit, frame, seed=spec.personas.seed)
    duplicate = first_duplicate(frame["persona_id"].tolist())
    if duplicate:
        raise InputError("personas", "persona_id", f"persona ids must be unique ({duplicate[1]!r} is listed twice)")
    counts = None
    if spec.cells is not None:
        frame, counts = asked_cells(frame, spec.cells.attributes, spec.cells.card_version)
    _persona_levels(spec, frame)
    for style in sorted({c.persona_card for c in spec.conditions if c.persona_card}):
        frame[f"card_{style}"] = (frame[CELL_CARD] if counts is not None
                                  else personas_for_simulation(frame, card_style=style)["card"]).to_numpy()
    for index, question in enumerate(spec.questions):
        frame[REFERENCE_PREFIX + question.id] = (frame["reference_respondent_id"] if "reference_respondent_id" in frame
                                                 else _donors(spec, frame, human, index))
    frame["persona_id"] = frame["persona_id"].astype(str)
    return frame, counts
