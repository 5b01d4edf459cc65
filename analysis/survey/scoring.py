"""Score a survey run: fidelity of every provider x condition against the real answers, with bootstrap CIs.

Reads only the run store written by ``pvsst survey run``::

    RUN/scoring.json              questions (id, option codes in order, ordinal), non-substantive code,
                                  grouping axes, smoothing, bootstrap draws / seed, CI level, min group n
    RUN/human.parquet             respondent_id, weight, one column of codes per question, group:<axis>
    RUN/personas.parquet          persona_id, weight, group:<axis>, ...
    RUN/units/<unit>/responses.parquet   (complete units only: DONE)

and writes ``RUN/analysis/fidelity.csv``: one row per model x condition x question x group x metric,
columns ``model, provider, condition, elicitation, question, group, metric, value, ci_low, ci_high``
(``model``: the language model or reference control that answered; ``provider``: the same string, the
column's name in tables written before several models could share a run). ``elicitation`` names how
the condition's answers were obtained (``sample``: sampled answers, a persona's unit is its answer
counts; ``logprobs`` / ``verbalized``: one distribution per persona x question, the unit is that
distribution over the substantive codes, renormalised; the population distribution is then the
(weighted) mean of the personas' distributions). Runs from before the column read as ``sample``.
``group`` is ``all``
(whole population), ``axis=level`` (one group) or ``axis`` (between-group measures eta2_human,
eta2_model, delta_eta2). ``kl_noise_floor`` is KL(human || a resample of the human answers as large
as the model's): what a perfect simulator scores from sampling noise alone; its interval is the noise
band a model's ``kl_human_model`` is read against.

Survey weights (``human.parquet`` ``weight``; a respondent-matched persona carries its respondent's
weight, a census persona 1) enter as the mass of each answer: distributions, eta^2 and every bootstrap
draw are weighted sums. The bootstrap resamples units uniformly with replacement, each carrying its
weight. The noise floor's resample of the humans is drawn with probability proportional to weight and
counts each drawn answer once (a perfect simulator answers like a draw from the weighted population)
when the model's units are unweighted; when they carry respondent weights it is drawn uniformly and
keeps them, like the model side.

Examples
--------
>>> table = score_survey_run("RUN")  # doctest: +SKIP
>>> sorted(table.columns)  # doctest: +SKIP
['ci_high', 'ci_low', 'condition', 'group', 'metric', 'model', 'provider', 'question', 'value']
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from personas.atomic import atomic_file
from personas.errors import InputError
from analysis.fidelity import (DEFAULT_SMOOTHING, bootstrap_tables, distribution_metrics, eta_squared,
                               kl_divergence, percentile_interval, resample_index)
from analysis.survey.data import GROUP_PREFIX

FIDELITY_COLUMNS = ("model", "provider", "condition", "elicitation", "question", "group", "metric", "value",
                    "ci_low", "ci_high")
DISTRIBUTION_METHODS = ("logprobs", "verbalized")
SCORING_FILE = "scoring.json"


@dataclass(frozen=True)
class ScoringSettings:
    smoothing: float = DEFAULT_SMOOTHING
    bootstrap_draws: int = 1000
    bootstrap_seed: int = 20260729
    ci_level: float = 0.95
    min_group_n: int = 10


@dataclass(frozen=True)
class QuestionScale:
    """A question's substantive option codes in scale order; ``ordinal`` enables W1 and eta^2."""

    question: str
    codes: tuple[str, ...]
    ordinal: bool = True


@dataclass
class UnitAnswers:
    """Answers of one side, one row per resampling unit: (n, K) weighted counts and group levels per axis."""

    counts: np.ndarray
    groups: dict[str, np.ndarray]

    @property
    def weighted(self) -> bool:
        """Whether units carry unequal masses (survey weights)."""
        mass = self.counts.sum(axis=1)
        return bool(len(mass)) and not np.allclose(mass, mass[0])


def _rows(question: str, group: str, values: dict[str, np.ndarray], level: float) -> list[dict]:
    rows = []
    for metric, draws in values.items():
        low, high = percentile_interval(draws[1:], level)
        rows.append({"question": question, "group": group, "metric": metric, "value": float(draws[0]),
                     "ci_low": low, "ci_high": high})
    return rows


def _labels(values) -> list[str | None]:
    return [None if pd.isna(v) else str(v) for v in values]


def _level_index(levels: list[str], labels: list[str | None]) -> np.ndarray:
    position = {level: i for i, level in enumerate(levels)}
    return np.array([position.get(label, -1) for label in labels], dtype=np.int64)


def score_question(scale: QuestionScale, human: UnitAnswers, model: UnitAnswers,
                   settings: ScoringSettings = ScoringSettings(), question_index: int = 0,
                   human_memo: dict | None = None) -> list[dict]:
    """Fidelity rows of one question (see the module docstring for groups and metrics).

    Human and model units are resampled independently; the human resamples depend only on the
    bootstrap seed and ``question_index``, so every provider is compared against the same draws.
    ``human_memo`` (a dict kept across the providers of one question) reuses the human side's
    resampled tables instead of recomputing them per provider.
    """
    memo = {} if human_memo is None else human_memo

    def cached(key, compute):
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    draws, level, min_n = settings.bootstrap_draws, settings.ci_level, settings.min_group_n
    n_h, n_m = len(human.counts), len(model.counts)
    if n_h == 0 or n_m == 0:
        return []
    base = np.random.SeedSequence(settings.bootstrap_seed, spawn_key=(question_index,))
    human_seed, model_seed, floor_seed = base.spawn(3)
    h_index = cached("index", lambda: resample_index(n_h, draws, np.random.default_rng(human_seed)))
    m_index = resample_index(n_m, draws, np.random.default_rng(model_seed))
    ordinal = scale.ordinal

    h_all = cached("all", lambda: bootstrap_tables(human.counts, np.zeros(n_h, np.int64), 1, h_index)[:, 0])
    m_all = bootstrap_tables(model.counts, np.zeros(n_m, np.int64), 1, m_index)[:, 0]
    rows = _rows(scale.question, "all", distribution_metrics(h_all, m_all, ordinal=ordinal,
                                                             smoothing=settings.smoothing), level)
    # Noise floor: the observed human distribution against resamples of n_model human units, drawn as
    # the model's units are: unweighted personas -> draws proportional to weight, each answer counted once.
    floor_rng = np.random.default_rng(floor_seed)
    mass = human.counts.sum(axis=1)
    if human.weighted and not model.weighted:
        floor_index = floor_rng.choice(n_h, size=(draws, n_m), p=mass / mass.sum())
        floor_counts = human.counts / np.where(mass > 0, mass, 1.0)[:, None]
    else:
        floor_index = floor_rng.integers(0, n_h, size=(draws, n_m))
        floor_counts = human.counts
    floor = bootstrap_tables(floor_counts, np.zeros(n_h, np.int64), 1, floor_index)[:, 0]
    floor_kl = kl_divergence(h_all[0] / h_all[0].sum(), floor / floor.sum(axis=-1, keepdims=True),
                             settings.smoothing)
    low, high = percentile_interval(floor_kl, level)
    rows.append({"question": scale.question, "group": "all", "metric": "kl_noise_floor",
                 "value": float(np.median(floor_kl)), "ci_low": low, "ci_high": high})

    for axis in human.groups:
        h_labels = cached(("labels", axis), lambda: _labels(human.groups[axis]))
        m_labels = _labels(model.groups[axis])
        levels = sorted({x for x in h_labels if x is not None} | {x for x in m_labels if x is not None})
        h_group = cached(("group", axis, tuple(levels)), lambda: _level_index(levels, h_labels))
        m_group = _level_index(levels, m_labels)
        h_tab = cached(("table", axis, tuple(levels)),
                       lambda: bootstrap_tables(human.counts, h_group, len(levels), h_index))
        m_tab = bootstrap_tables(model.counts, m_group, len(levels), m_index)
        h_units = np.bincount(h_group[h_group >= 0], minlength=len(levels))
        m_units = np.bincount(m_group[m_group >= 0], minlength=len(levels))
        kept = np.flatnonzero((h_units >= min_n) & (m_units >= min_n))
        for g in kept:
            rows += _rows(scale.question, f"{axis}={levels[g]}",
                          distribution_metrics(h_tab[:, g], m_tab[:, g], ordinal=ordinal,
                                               smoothing=settings.smoothing), level)
        if ordinal and len(kept) >= 2:
            eta_h, eta_m = eta_squared(h_tab[:, kept]), eta_squared(m_tab[:, kept])
            rows += _rows(scale.question, axis, {"eta2_human": eta_h, "eta2_model": eta_m,
                                                 "delta_eta2": eta_m - eta_h}, level)
    return rows


# -- the run store ------------------------------------------------------------------------------

def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise InputError(path.parent, path.name, "not a survey run directory (run `pvsst survey run` first)")
    return json.loads(path.read_text(encoding="utf-8"))


def read_responses(run_dir: str | Path) -> pd.DataFrame:
    """All responses of the complete units (those with DONE) of a survey run."""
    units = sorted(p.parent for p in Path(run_dir, "units").glob("*/DONE"))
    if not units:
        raise InputError(run_dir, "units", "no complete survey unit in this run directory")
    return pd.concat([pd.read_parquet(u / "responses.parquet") for u in units], ignore_index=True)


def read_prompts(run_dir: str | Path) -> pd.DataFrame:
    """The run's prompt table: one row per distinct prompt of the complete units, keyed by
    ``prompt_sha256`` (columns of :mod:`sim.llm.prompt_table`: ``prompt_sha256, system, user,
    messages_json, n_messages``); every response row's
    ``prompt_sha256`` is a key here."""
    units = sorted(p.parent for p in Path(run_dir, "units").glob("*/DONE"))
    frames = [pd.read_parquet(u / "prompts.parquet") for u in units if (u / "prompts.parquet").is_file()]
    if not frames:
        raise InputError(run_dir, "units", "no prompt table in this run directory (written since prompts are kept)")
    return pd.concat(frames, ignore_index=True).drop_duplicates("prompt_sha256").reset_index(drop=True)


def human_units(human: pd.DataFrame, scale: QuestionScale, axes: list[str]) -> UnitAnswers:
    answered = human[human[scale.question].isin(scale.codes)]
    codes = answered[scale.question].map({c: i for i, c in enumerate(scale.codes)}).to_numpy(dtype=int)
    counts = np.zeros((len(answered), len(scale.codes)))
    counts[np.arange(len(answered)), codes] = answered["weight"].to_numpy(dtype=float)
    return UnitAnswers(counts, {a: answered[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes})


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
    return UnitAnswers(counts * weights[:, None], {a: groups[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes})


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
    return UnitAnswers(counts * weights[:, None], {a: groups[GROUP_PREFIX + a].to_numpy(dtype=object) for a in axes})


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
    """Read the parts of a survey run that scoring and the answer-share table use."""
    run_dir = Path(run_dir)
    config = _read_json(run_dir / SCORING_FILE)
    scales = [QuestionScale(q["id"], tuple(q["codes"]), bool(q["ordinal"])) for q in config["questions"]]
    responses = read_responses(run_dir)
    if "elicitation" not in responses:
        responses["elicitation"] = "sample"
    return ScoredRun(config, scales, pd.read_parquet(run_dir / "human.parquet"),
                     pd.read_parquet(run_dir / "personas.parquet"), responses)


def score_survey_run(run_dir: str | Path, draws: int | None = None) -> pd.DataFrame:
    """Fidelity table of every provider x condition of a survey run (see the module docstring)."""
    run_dir = Path(run_dir)
    run = read_scored_run(run_dir)
    config, scales, human, personas, responses = run.config, run.scales, run.human, run.personas, run.responses
    settings = ScoringSettings(**config["settings"])
    if draws is not None:
        if draws < 10:
            raise InputError("--draws", str(draws), "must be >= 10")
        settings = ScoringSettings(**{**config["settings"], "bootstrap_draws": int(draws)})
    axes = list(config["axes"])
    rows: list[dict] = []
    humans = [human_units(human, scale, axes) for scale in scales]
    memos: list[dict] = [{} for _ in scales]
    for (provider, condition, method), part in responses.groupby(["provider", "condition", "elicitation"],
                                                                 sort=False):
        for index, scale in enumerate(scales):
            asked = part[part["question"] == scale.question]
            if asked.empty:
                continue
            model = model_units(asked, personas, scale, axes)
            scored = score_question(scale, humans[index], model, settings, index, memos[index])
            n_calls = len(asked)
            answered = asked["parse_ok"] & asked["answer"].isin(scale.codes)
            n_model, nonsubstantive = float(answered.sum()), (asked["parse_ok"] & ~answered).mean() if n_calls else np.nan
            if method in DISTRIBUTION_METHODS:  # personas with a substantive distribution; the mean other mass
                mass = substantive_distributions(asked, scale)["substantive"]
                n_model, nonsubstantive = float((mass > 0).sum()), float((1 - mass).mean()) if len(mass) else np.nan
            scored += [
                {"question": scale.question, "group": "all", "metric": metric, "value": value,
                 "ci_low": np.nan, "ci_high": np.nan}
                for metric, value in (
                    ("n_human", float(human[scale.question].isin(scale.codes).sum())),
                    ("n_model", n_model),
                    ("parse_failure_rate", float((~asked["parse_ok"]).mean()) if n_calls else np.nan),
                    ("nonsubstantive_share", float(nonsubstantive)))]
            rows += [{"model": provider, "provider": provider, "condition": condition, "elicitation": method, **row}
                     for row in scored]
    return pd.DataFrame(rows, columns=list(FIDELITY_COLUMNS))


def write_fidelity(table: pd.DataFrame, run_dir: str | Path) -> Path:
    """Write ``RUN/analysis/fidelity.csv`` atomically (temp file + rename); return its path."""
    target = Path(run_dir) / "analysis" / "fidelity.csv"
    with atomic_file(target) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    return target


def question_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per question x model x condition: the whole-population metrics, the noise band of
    KL(human||model), and the mean |delta eta^2| over grouping axes."""
    keys = ["question", "model", "condition"] + (["elicitation"] if "elicitation" in table else [])
    overall = table[table["group"] == "all"].pivot_table(index=keys, columns="metric", values="value", sort=False)
    noise = table[(table["group"] == "all") & (table["metric"] == "kl_noise_floor")]
    noise = noise.set_index(keys)["ci_high"].rename("kl_noise_high")
    delta = table[table["metric"] == "delta_eta2"].assign(value=lambda f: f["value"].abs())
    delta = delta.groupby(keys, sort=False)["value"].mean().rename("mean_abs_delta_eta2")
    summary = overall.join(noise).join(delta)
    wanted = ["n_model", "parse_failure_rate", "kl_human_model", "kl_noise_high", "js_distance",
              "representativeness_w1", "entropy_deviation", "mean_abs_delta_eta2"]
    return summary[[c for c in wanted if c in summary.columns]].reset_index()
