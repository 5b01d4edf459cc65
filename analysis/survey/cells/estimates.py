"""A cell run's decision bank and its post-stratified estimates (``RUN/analysis/estimates.csv``).

In a cell run every persona of a demographic cell gets the identical prompt, so the model is asked once
per cell x question (``logprobs`` / ``verbalized``: one distribution; ``sample``: ``k`` sampled answers)
and each cell's answers stand for all its members. The run store holds::

    RUN/cells.parquet      one row per cell x geography: cell_id, the cell attributes, geography
                           (a state code, or US for a national count), population (personas of the cell there)
    RUN/personas.parquet   one row per cell (persona_id = cell_id)
    RUN/units/*/responses.parquet   persona_id = cell_id

:mod:`pvsst.analysis.survey.cells.population` turns ``cells.parquet`` into the cell table and the ``N_gc``
counts of :mod:`pvsst.analysis.survey.cells.poststratification`; :func:`decision_bank` turns the responses into each
cell's
answer distribution (distribution methods: the substantive options' probabilities, renormalised, the mean
over a cell's replies) or answer counts (sampled answers: parsed substantive answers only); and
:func:`cell_estimates` post-stratifies them for the nation, every geography and every level of every cell
attribute (a *group*), per model x condition x elicitation x question, with Wilson intervals from the
sampling variance of each cell's ``k`` draws (sampled answers) or marked ``exact`` (a model's
distributions). A reference control whose distributions come from the survey's respondents
(``scripted/oracle``: one donor per cell; ``scripted/marginal``: the survey's marginal) is not exact: its
sampling error is the survey's, which the cell counts do not know, so its rows are marked
``survey_sample`` with no interval (:data:`SURVEY_DERIVED`).

A cell whose every call failed has no answer: it is left out of that source's estimates and
``coverage`` (the answered share of the domain's population) says how much of the domain the
estimate stands for (1 when every cell answered); a domain none of whose cells answered has no row.

Examples
--------
>>> table = cell_estimates(read_scored_run("RUN"), population)  # doctest: +SKIP
>>> list(table.columns[:6])  # doctest: +SKIP
['model', 'condition', 'elicitation', 'question', 'level', 'domain']
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.survey.cells.population import CELLS_FILE, CellPopulation
from pvsst.analysis.survey.cells.poststratification import ESTIMATE_COLUMNS, population_estimates
from pvsst.analysis.survey.units import DISTRIBUTION_METHODS, QuestionScale, ScoredRun, substantive_distributions
from pvsst.core.atomic import atomic_file
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS

ESTIMATES_FILE = "estimates.csv"
KEYS = ("model", "condition", "elicitation")
STATE_ATTRIBUTES = ("state", "state_name")  # geography as a cell attribute: its levels are the geography rows
ESTIMATES_TABLE_COLUMNS = KEYS + ESTIMATE_COLUMNS + ("coverage",)
# Controls whose answer distributions are estimated from the survey's sample of respondents.
SURVEY_DERIVED = ("scripted/oracle", "scripted/marginal")
SURVEY_SAMPLE = "survey_sample"


def decision_bank(responses: pd.DataFrame, scales: list[QuestionScale]) -> pd.DataFrame:
    """Each cell's answers per model x condition x elicitation x question (see the module docstring).

    Columns: model, condition, elicitation, cell_id, question, option, and ``probability`` (distribution
    methods) or ``count`` (sampled answers); the other column is NaN.

    Examples
    --------
    >>> responses = pd.DataFrame({"provider": "m", "condition": "c", "elicitation": "sample",
    ...                           "persona_id": ["a", "a", "a"], "question": "q", "answer": ["y", "n", "y"],
    ...                           "parse_ok": True, "probabilities": None})
    >>> bank = decision_bank(responses, [QuestionScale("q", ("y", "n"))])
    >>> bank[["cell_id", "option", "count"]].values.tolist()
    [['a', 'y', 2.0], ['a', 'n', 1.0]]
    """
    frames = []
    for (model, condition, method), part in responses.groupby(["provider", "condition", "elicitation"], sort=False):
        for scale in scales:
            asked = part[part["question"] == scale.question]
            if asked.empty:
                continue
            codes = list(scale.codes)
            if method in DISTRIBUTION_METHODS:
                dist = substantive_distributions(asked, scale)
                dist = dist[dist["substantive"] > 0]
                shares = dist[codes].to_numpy(float) / dist["substantive"].to_numpy(float)[:, None]
                column, values, cells = "probability", shares, dist.index.to_numpy()
            else:
                valid = asked[asked["parse_ok"].astype(bool) & asked["answer"].isin(codes)]
                table = pd.crosstab(valid["persona_id"].astype(str),
                                    pd.Categorical(valid["answer"], categories=codes), dropna=False)
                column, values, cells = "count", table.reindex(columns=codes, fill_value=0).to_numpy(float), table.index
            frame = pd.DataFrame({"model": model, "condition": condition, "elicitation": method,
                                  "cell_id": np.repeat(np.asarray(cells, dtype=str), len(codes)),
                                  "question": scale.question, "option": np.tile(codes, len(cells)),
                                  "probability": np.nan, "count": np.nan})
            frame[column] = values.ravel()
            frames.append(frame)
    columns = [*KEYS, "cell_id", "question", "option", "probability", "count"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def groups_of(population: CellPopulation) -> list[str]:
    """The cell attributes estimated as groups: all but the geography itself."""
    return [a for a in population.attributes if a not in STATE_ATTRIBUTES]


def cell_estimates(run: ScoredRun, population: CellPopulation) -> pd.DataFrame:
    """The estimates table of a cell run (``analysis/estimates.csv``; columns :data:`ESTIMATES_TABLE_COLUMNS`).

    The interval's level is the run's ``analysis.ci_level``.
    """
    settings = run.settings
    options = {s.question: list(s.codes) for s in run.scales}
    bank = decision_bank(run.responses, run.scales)
    groups = groups_of(population)
    frames = []
    for key, part in bank.groupby([*KEYS, "question"], sort=False):
        kind = "probability" if part["probability"].notna().any() else "count"
        answers = part.drop(columns=[c for c in ("probability", "count") if c != kind])
        answered = set(answers.loc[answers.groupby("cell_id")[kind].transform("sum") > 0, "cell_id"])
        keep = population.cells["cell_id"].isin(answered)
        if not keep.any():
            continue
        counts = population.counts[population.counts["cell_id"].isin(answered)]
        table = population_estimates(answers[answers["cell_id"].isin(answered)], counts,
                                     population.cells[keep].drop(columns="count"), groups=groups,
                                     geography="state", options=options, ci_level=settings.ci_level)
        full = _domain_population(population, groups)
        table["coverage"] = table["population"].to_numpy(float) / table["domain"].map(full).to_numpy(float)
        frames.append(survey_sample_marked(table))
    if not frames:
        raise InputError(CELLS_FILE, "cells", "no cell of the population has a usable answer")
    return pd.concat(frames, ignore_index=True)[list(ESTIMATES_TABLE_COLUMNS)]


def survey_sample_marked(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the ``exact`` rows of survey-derived controls (:data:`SURVEY_DERIVED`) marked
    ``survey_sample``, their interval bounds NaN: a distribution estimated from a sample of respondents
    is not exact, and its sampling error is the survey's, not the cells'.

    Examples
    --------
    >>> table = pd.DataFrame({"model": ["scripted/marginal", "m"], "estimate": 0.4, "ci_low": 0.4, "ci_high": 0.4,
    ...                       "interval": "exact"})
    >>> survey_sample_marked(table)[["interval", "ci_low"]].values.tolist()
    [['survey_sample', nan], ['exact', 0.4]]
    """
    marked = table["model"].isin(SURVEY_DERIVED) & (table["interval"] == "exact")
    if not marked.any():
        return table
    table = table.copy()
    table.loc[marked, "interval"] = SURVEY_SAMPLE
    table.loc[marked, ["ci_low", "ci_high"]] = np.nan
    return table


def _domain_population(population: CellPopulation, groups: list[str]) -> dict[str, float]:
    """N_d of every domain label (``all``, each state, ``attribute=value``) over all cells."""
    out = {"all": float(population.cells["count"].sum())}
    out.update(population.counts.groupby("state")["count"].sum().astype(float).to_dict())
    for group in groups:
        sums = population.cells.groupby(population.cells[group].astype(str), observed=True)["count"].sum()
        out.update({f"{group}={level}": float(n) for level, n in sums.items()})
    return out


def write_table(table: pd.DataFrame, run_dir: str | Path, name: str) -> Path:
    """Write ``RUN/analysis/<name>`` atomically at full precision; return its path."""
    target = Path(run_dir) / ANALYSIS / name
    with atomic_file(target) as tmp:
        table.to_csv(tmp, index=False)
    return target
