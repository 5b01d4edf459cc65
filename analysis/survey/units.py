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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.fidelity import design_resample, resample_index
from pvsst.analysis.survey.data import GROUP_PREFIX
from pvsst.core.errors import InputError
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import HUMAN, PERSONAS, SCORING, UNITS, table_file

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
        clusters within strata where the side has a design (:func:`pvsst.analysis.fidelity.design_resample`)."""
        if self.strata is None and self.clusters is None:
            return resample_index(len(self.counts), draws, rng)
        return design_resample(self.strata, self.clusters, draws, rng)



def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise InputError(path.parent, path.name, "not a survey run directory (run `pvsst survey run` first)")
    return json.loads(path.read_text(encoding="utf-8"))


def read_responses(run_dir: str | Path) -> pd.DataFrame:
    """All responses of the complete units (those with DONE) of a survey run."""
    units = complete_unit_dirs(run_dir, UNITS)
    if not units:
        raise InputError(run_dir, UNITS, "no complete survey unit in this run directory")
    return pd.concat([pd.read_parquet(u / table_file("responses")) for u in units], ignore_index=True)


def read_prompts(run_dir: str | Path) -> pd.DataFrame:
    """The run's prompt table: one row per distinct prompt of the complete units, keyed by
    ``prompt_sha256`` (columns of :mod:`pvsst.sim.llm.prompt_table`: ``prompt_sha256, system, user,
    messages_json, n_messages``); every response row's
    ``prompt_sha256`` is a key here."""
    units = complete_unit_dirs(run_dir, UNITS)
    frames = [pd.read_parquet(u / table_file("prompts")) for u in units if (u / table_file("prompts")).is_file()]
    if not frames:
        raise InputError(run_dir, UNITS, "no prompt table in this run directory (written since prompts are kept)")
    return pd.concat(frames, ignore_index=True).drop_duplicates("prompt_sha256").reset_index(drop=True)


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
    by_design = (responses["provider"].astype(str) == "scripted/oracle") & (responses["status"].astype(str) == "refusal")
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


def _distribution_units(responses: pd.DataFrame, personas: pd.DataFrame, scale: QuestionScale,
                        axes: list[str]) -> UnitAnswers:
    frame = substantive_distributions(responses, scale)
    frame = frame[frame["substantive"] > 0]
    counts = frame[list(scale.codes)].to_numpy(dtype=float) / frame["substantive"].to_numpy(dtype=float)[:, None]
    groups = personas.assign(persona_id=personas["persona_id"].astype(str)).set_index("persona_id").reindex(frame.index)
    weights = groups["weight"].to_numpy(dtype=float) if "weight" in groups else np.ones(len(frame))
    return UnitAnswers(counts * weights[:, None], {a: groups[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes},
                       *_design(groups))


@dataclass(frozen=True)
class ScoredRun:
    """What scoring reads from a survey run store: the scoring config, the question scales, the human
    answers, the personas and every complete unit's responses (``elicitation`` filled for old runs)."""

    config: dict
    scales: list[QuestionScale]
    human: pd.DataFrame
    personas: pd.DataFrame
    responses: pd.DataFrame


def read_scored_run(run_dir: str | Path) -> ScoredRun:
    """Read the parts of a survey run that scoring and the answer-share table use.

    In a cell run (``cells.parquet``) each cell's persona row carries the cell's population as its
    ``weight``, so whole-population and group distributions are population distributions; a grouping
    axis without its ``group:<axis>`` column in the cell table leaves every cell out of that axis's groups."""
    run_dir = Path(run_dir)
    config = _read_json(run_dir / SCORING)
    scales = [QuestionScale(q["id"], tuple(q["codes"]), bool(q["ordinal"])) for q in config["questions"]]
    responses = read_responses(run_dir)
    if "elicitation" not in responses:
        responses["elicitation"] = "sample"
    personas = pd.read_parquet(run_dir / PERSONAS)
    from pvsst.analysis.survey.cell_run import is_cell_run, read_cell_population

    if is_cell_run(run_dir):
        # A cell stands for its members: its answers weigh as much as its population.
        weights = read_cell_population(run_dir).weights()
        personas = personas.assign(weight=personas["persona_id"].astype(str).map(weights).fillna(0.0).to_numpy(float))
        for axis in config.get("axes") or []:  # a grouping axis the cells do not define: no cell is in a group
            if GROUP_PREFIX + axis not in personas:
                personas[GROUP_PREFIX + axis] = None
    return ScoredRun(config, scales, pd.read_parquet(run_dir / HUMAN), personas, responses)
