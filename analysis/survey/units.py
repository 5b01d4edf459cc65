"""What scoring reads from a survey run store, as resampling units: the question scales, the human
answers and the model's answers (one unit per respondent or persona, with weights, groups and the
survey design), the responses and prompts of the complete units, which calls failed.

Examples
--------
>>> scale = QuestionScale("q", ("yes", "no"))
>>> human = pd.DataFrame({"q": ["yes", "no", None], "weight": [2.0, 1.0, 1.0], "group:sex": ["f", "m", "f"]})
>>> units = human_units(human, scale, ["sex"])
>>> units.counts.tolist(), units.weighted
([[2.0, 0.0], [0.0, 1.0]], True)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.store.reader import read_survey_run
from pvsst.analysis.survey.cells.population import CELLS_FILE, CellPopulation, is_cell_run, population_from_table
from pvsst.analysis.survey.data import GROUP_PREFIX
from pvsst.analysis.survey.fidelity import design_resample, resample_index
from pvsst.analysis.survey.plan import SurveyAnalysisPlan, plan_from_settings
from pvsst.core.errors import InputError
from pvsst.core.run_layout import HUMAN, PERSONAS, SCORING, UNITS

DISTRIBUTION_METHODS = ("logprobs", "verbalized")


@dataclass(frozen=True)
class QuestionScale:
    """A question's substantive option codes in scale order; ``ordinal`` enables W1 and eta^2."""

    question: str
    codes: tuple[str, ...]
    ordinal: bool = True


@dataclass
class UnitAnswers:
    """Answers of one side, one row per resampling unit: (n, K) weighted counts, group levels per axis,
    and the survey design (stratum and cluster labels per unit; ``None`` where the data has none)."""

    counts: np.ndarray
    groups: dict[str, np.ndarray]
    strata: np.ndarray | None = None
    clusters: np.ndarray | None = None

    @property
    def weighted(self) -> bool:
        """Whether units carry unequal masses (survey weights)."""
        mass = self.counts.sum(axis=1)
        return bool(len(mass)) and not np.allclose(mass, mass[0])

    def resample(self, draws: int, rng: np.random.Generator) -> np.ndarray:
        """Row 0 the observed units, then ``draws`` resamples: of units with replacement, or of whole
        clusters within strata where the side has a design (:func:`pvsst.analysis.survey.fidelity.design_resample`)."""
        if self.strata is None and self.clusters is None:
            return resample_index(len(self.counts), draws, rng)
        return design_resample(self.strata, self.clusters, draws, rng)



def human_units(human: pd.DataFrame, scale: QuestionScale, axes: list[str]) -> UnitAnswers:
    answered = human[human[scale.question].isin(scale.codes)]
    codes = answered[scale.question].map({c: i for i, c in enumerate(scale.codes)}).to_numpy(dtype=int)
    counts = np.zeros((len(answered), len(scale.codes)))
    counts[np.arange(len(answered)), codes] = answered["weight"].to_numpy(dtype=float)
    return UnitAnswers(counts, {a: answered[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes},
                       *_design(answered))


def _design(frame: pd.DataFrame) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The stratum and cluster labels of a table's rows (``None`` for a column it does not have)."""
    return tuple(frame[c].astype(str).to_numpy(dtype=object) if c in frame else None for c in ("stratum", "cluster"))


def failed_calls(responses: pd.DataFrame) -> pd.Series:
    """Which calls failed (no usable reply). The oracle's refusals are not failures: it refuses by
    design where its respondent gave no substantive answer.

    Examples
    --------
    >>> frame = pd.DataFrame({"provider": ["scripted/oracle", "scripted/oracle", "m"], "parse_ok": [False] * 3,
    ...                       "status": ["refusal", "error", "refusal"]})
    >>> failed_calls(frame).tolist()
    [False, True, True]
    """
    by_design = (responses["provider"].astype(str) == "scripted/oracle") & (
        responses["status"].astype(str) == "refusal"
    )
    return ~responses["parse_ok"].astype(bool) & ~by_design


def model_units(responses: pd.DataFrame, personas: pd.DataFrame, scale: QuestionScale,
                axes: list[str]) -> UnitAnswers:
    """One unit per persona with at least one substantive answer: counts over its samples (sampled
    answers) or its distribution over the substantive codes, renormalised (distribution methods), times
    the persona's survey weight (1 when ``personas`` has no ``weight`` column)."""
    if "probabilities" in responses and responses["elicitation"].isin(DISTRIBUTION_METHODS).any():
        return _distribution_units(responses, personas, scale, axes)
    valid = responses[responses["parse_ok"] & responses["answer"].isin(scale.codes)]
    # The (persona x code) table of answer counts, personas sorted (what pandas.crosstab gives, at a
    # tenth of its cost: scoring builds one per provider, condition and question).
    rows, persona_ids = pd.factorize(valid["persona_id"], sort=True)
    codes = pd.Categorical(valid["answer"], categories=list(scale.codes)).codes
    counts = np.zeros((len(persona_ids), len(scale.codes)))
    np.add.at(counts, (rows, codes), 1.0)
    groups = personas.set_index("persona_id").reindex(persona_ids)
    weights = groups["weight"].to_numpy(dtype=float) if "weight" in groups else np.ones(len(counts))
    return UnitAnswers(counts * weights[:, None], {a: groups[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes},
                       *_design(groups))


def substantive_distributions(responses: pd.DataFrame, scale: QuestionScale) -> pd.DataFrame:
    """(persona x code) probabilities of the parsed distribution replies, and ``substantive`` = their
    mass on the substantive codes (the rest is the non-substantive option's)."""
    valid = responses[responses["parse_ok"] & responses["probabilities"].notna()]
    frame = pd.DataFrame([json.loads(text) for text in valid["probabilities"]], index=valid["persona_id"].astype(str))
    frame = frame.reindex(columns=list(scale.codes), fill_value=0.0).fillna(0.0)
    frame = frame.groupby(level=0, sort=True).mean()
    frame["substantive"] = frame.sum(axis=1)
    return frame


def scale_shares(responses: pd.DataFrame, scale: QuestionScale) -> pd.DataFrame:
    """(persona x code) distributions renormalised over the scale's substantive codes: the mean of a
    persona's parsed distribution replies divided by its substantive mass (personas with none left out).

    Examples
    --------
    >>> replies = pd.DataFrame({"persona_id": ["a", "b"], "parse_ok": True,
    ...                         "probabilities": ['{"y": 0.5, "n": 0.3, "dk": 0.2}', '{"dk": 1.0}']})
    >>> scale_shares(replies, QuestionScale("q", ("y", "n"))).round(3).to_dict("index")
    {'a': {'y': 0.625, 'n': 0.375}}
    """
    frame = substantive_distributions(responses, scale)
    frame = frame[frame["substantive"] > 0]
    return frame[list(scale.codes)].div(frame["substantive"], axis=0)


def _distribution_units(responses: pd.DataFrame, personas: pd.DataFrame, scale: QuestionScale,
                        axes: list[str]) -> UnitAnswers:
    frame = scale_shares(responses, scale)
    counts = frame.to_numpy(dtype=float)
    groups = personas.assign(persona_id=personas["persona_id"].astype(str)).set_index("persona_id").reindex(frame.index)
    weights = groups["weight"].to_numpy(dtype=float) if "weight" in groups else np.ones(len(frame))
    return UnitAnswers(counts * weights[:, None], {a: groups[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes},
                       *_design(groups))


@dataclass(frozen=True)
class ScoredRun:
    """What scoring reads from a survey run store, read once: the scoring config, the question scales, the
    human answers, the personas, every complete unit's responses (``elicitation`` filled for old runs), the
    instrument (``spec``), in a cell run the cell population (its members' weight is their cells'), the
    run directory (``path``) and its manifest."""

    config: dict
    scales: list[QuestionScale]
    human: pd.DataFrame
    personas: pd.DataFrame
    responses: pd.DataFrame
    spec: dict = field(default_factory=dict)
    population: CellPopulation | None = None
    path: Path | None = None
    manifest: dict = field(default_factory=dict)

    def file(self, name: str) -> str:
        """Where a file of the run is, for an error message (``name`` alone for a run not read from disk;
        ``""``: the run directory)."""
        return str(self.path / name) if self.path is not None else (name or "run")

    @cached_property
    def settings(self) -> SurveyAnalysisPlan:
        """The instrument's analysis section as stored in ``scoring.json`` (``settings``), parsed strictly."""
        return plan_from_settings(self.config.get("settings"), source=self.file(SCORING))

    def with_draws(self, draws: int | None) -> ScoredRun:
        """The run scored with ``draws`` bootstrap draws (``--draws``) instead of the instrument's; the same
        run when ``draws`` is None.

        >>> run = ScoredRun({"settings": {"bootstrap_draws": 1000}}, [], pd.DataFrame(), pd.DataFrame(),
        ...                 pd.DataFrame())
        >>> run.with_draws(50).settings.bootstrap_draws, run.with_draws(None) is run
        (50, True)
        """
        if draws is None:
            return self
        return replace(self, config={**self.config, "settings": self.settings.with_draws(draws).model_dump()})


def read_scored_run(run_dir: str | Path) -> ScoredRun:
    """Read the parts of a survey run that scoring and the answer-share table use, each file once
    (:func:`pvsst.analysis.store.reader.read_survey_run`; of the unit tables, ``responses`` only).

    In a cell run (``cells.parquet``) each cell's persona row carries the cell's population as its
    ``weight``, so whole-population and group distributions are population distributions; a grouping
    axis without its ``group:<axis>`` column in the cell table leaves every cell out of that axis's groups."""
    run_dir = Path(run_dir)
    tables = read_survey_run(run_dir, ("responses",))
    if not tables.scoring:
        raise InputError(run_dir, SCORING, "not a survey run directory (run `pvsst survey run` first)")
    config = tables.scoring
    scales = [QuestionScale(q["id"], tuple(q["codes"]), bool(q["ordinal"])) for q in config["questions"]]
    responses = tables.responses
    if responses.empty:
        raise InputError(run_dir, UNITS, "no complete survey unit in this run directory")
    if "elicitation" not in responses:
        responses["elicitation"] = "sample"
    for name, frame in ((PERSONAS, tables.personas), (HUMAN, tables.human)):
        if frame.empty:
            raise InputError(run_dir, name, "missing (not a complete survey run directory)")
    personas, population = tables.personas, None
    if is_cell_run(run_dir):
        population = population_from_table(tables.cells, str(run_dir / CELLS_FILE))
        # A cell stands for its members: its answers weigh as much as its population.
        weights = population.weights()
        personas = personas.assign(weight=personas["persona_id"].astype(str).map(weights).fillna(0.0).to_numpy(float))
        for axis in config.get("axes") or []:  # a grouping axis the cells do not define: no cell is in a group
            if GROUP_PREFIX + axis not in personas:
                personas[GROUP_PREFIX + axis] = None
    run = ScoredRun(config, scales, tables.human, personas, responses, tables.instrument.get("spec") or {},
                    population, run_dir, tables.manifest)
    run.settings  # noqa: B018 - parsed here, so malformed settings fail before anything is scored
    return run
