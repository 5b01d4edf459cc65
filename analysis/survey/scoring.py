"""Score a survey run: fidelity of every provider x condition against the real answers, with bootstrap CIs.

Reads only the run store written by ``pvsst survey run``::

    RUN/scoring.json              questions (id, option codes in order, ordinal), non-substantive code,
                                  grouping axes, smoothing, bootstrap draws / seed, CI level, min group n
    RUN/human.parquet             respondent_id, weight, one column of codes per question, group:<axis>
    RUN/personas.parquet          persona_id, weight, group:<axis>, ...
    RUN/units/<unit>/responses.parquet   (complete units only: DONE)

and writes ``RUN/analysis/fidelity.csv``: one row per model x condition x question x group x metric,
columns ``model, provider, condition, elicitation, question, group, metric, value, ci_low, ci_high,
note`` (``model``: the language model or reference control that answered; ``provider``: the same
string, the column's name in tables written before several models could share a run; ``note``: why
a value is what it is, e.g. eta^2 set to 0 for no answer variance, a group dropped by
``min_group_n``). ``elicitation`` names how the condition's answers were obtained (``sample``:
sampled answers, a persona's unit is its answer counts; ``logprobs`` / ``verbalized``: one
distribution per persona x question, the unit is that distribution over the substantive codes,
renormalised; the population distribution is then the (weighted) mean of the personas'
distributions). Runs from before the column read as ``sample``. ``group`` is ``all`` (whole
population), ``axis=level`` (one group: sizes, distribution metrics, signed gaps) or ``axis``
(between-group measures eta2_human, eta2_model, delta_eta2, and ``groups_kept``).
``kl_noise_floor`` / ``js_noise_floor`` compare the human distribution with resamples of the human
answers as large as the model's: what a perfect simulator scores from sampling noise alone (for a
distribution method a one-sided band from 0). In a cell run the model's units are the census cells, a
fixed population: they are not resampled (the intervals carry the survey's sampling, its respondents
resampled; a sampled model's own sampling error is in ``estimates.csv``, and its rows' ``note`` says
so, :data:`CELL_DRAWS_NOTE`) and the noise floor is the
survey's own resamples, as many respondents as answered the question, against its observed distribution.
``simbench`` (whole population and every group) is the per-question SimBench view of
:func:`pvsst.analysis.survey.simbench.simbench_score`. ``mean_<metric>`` rows (question ``ALL_QUESTIONS``)
hold means over the questions, beside ``median_simbench`` and ``pooled_simbench`` (the questions' total
variations summed before the ratio: the data set's score, the published SimBench score). Intervals are
percentile intervals extended to the metric's bound where the observed value lies beyond them
(:func:`pvsst.analysis.survey.fidelity.bounded_interval`).

Survey weights (``human.parquet`` ``weight``; a respondent-matched persona carries its respondent's
weight, a census persona 1) enter as the mass of each answer: distributions, eta^2 and every bootstrap
draw are weighted sums. The bootstrap resamples units uniformly with replacement, each carrying its
weight (whole clusters within strata where ``human.parquet`` / ``personas.parquet`` carry ``stratum``
/ ``cluster``). The noise floor's resample of the humans is drawn with probability proportional to weight and
counts each drawn answer once (a perfect simulator answers like a draw from the weighted population)
when the model's units are unweighted; when they carry respondent weights it is drawn uniformly and
keeps them, like the model side.

Examples
--------
>>> table = score_fidelity(read_scored_run("RUN"))  # doctest: +SKIP
>>> sorted(table.columns)  # doctest: +SKIP
['ci_high', 'ci_low', 'condition', 'group', 'metric', 'model', 'provider', 'question', 'value']
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.survey.fidelity import (
    bootstrap_tables,
    bounded_interval,
    distribution_metrics,
    eta_squared,
    js_distance,
    kl_divergence,
    no_variance,
    percentile_interval,
)
from pvsst.analysis.survey.plan import SurveyAnalysisPlan
from pvsst.analysis.survey.simbench import simbench_score, total_variation
from pvsst.analysis.survey.units import (
    DISTRIBUTION_METHODS,
    QuestionScale,
    ScoredRun,
    UnitAnswers,
    failed_calls,
    human_units,
    model_units,
    substantive_distributions,
)
from pvsst.core.atomic import atomic_file
from pvsst.core.run_layout import ANALYSIS

FIDELITY_COLUMNS = ("model", "provider", "condition", "elicitation", "question", "group", "metric", "value",
                    "ci_low", "ci_high", "note")
ALL_QUESTIONS = "(mean over questions)"  # the question of the means-over-questions rows


# Where each metric's values are bounded: an interval is extended to the bound that the observed
# value lies beyond (see pvsst.analysis.survey.fidelity.bounded_interval); unbounded metrics extend to the value.
BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "kl_human_model": (0.0, None), "kl_model_human": (0.0, None), "js_distance": (0.0, 1.0),
    "representativeness_w1": (0.0, 1.0), "entropy_norm_human": (0.0, 1.0), "entropy_norm_model": (0.0, 1.0),
    "entropy_deviation": (0.0, 1.0), "eta2_human": (0.0, 1.0), "eta2_model": (0.0, 1.0), "share": (0.0, 1.0),
    "simbench": (None, 100.0), "pooled_simbench": (None, 100.0), "median_simbench": (None, 100.0),
}
NO_VARIANCE_NOTE = "no answer variance (one answer for everyone): eta^2 is 0 by definition"


CELL_DRAWS_NOTE = ("interval: the survey's sampling only; the cells' sampled answers are not resampled, so "
                   "the model's own sampling error (estimates.csv) is not in it")


def _row(question: str, group: str, metric: str, value: float, low: float = np.nan, high: float = np.nan,
         note: str = "") -> dict:
    return {"question": question, "group": group, "metric": metric, "value": float(value), "ci_low": low,
            "ci_high": high, "note": note}


def _rows(question: str, group: str, values: dict[str, np.ndarray], level: float,
          notes: dict[str, str] | None = None) -> list[dict]:
    rows = []
    for metric, draws in values.items():
        low, high = bounded_interval(float(draws[0]), *percentile_interval(draws[1:], level),
                                     BOUNDS.get(metric.removeprefix("mean_"), (None, None)))
        rows.append(_row(question, group, metric, draws[0], low, high, (notes or {}).get(metric, "")))
    return rows


def _labels(values) -> list[str | None]:
    return [None if pd.isna(v) else str(v) for v in values]


def _level_index(levels: list[str], labels: list[str | None]) -> np.ndarray:
    position = {level: i for i, level in enumerate(levels)}
    return np.array([position.get(label, -1) for label in labels], dtype=np.int64)


def _mean_position(table: np.ndarray) -> np.ndarray:
    """Mean ordinal position scaled to 0..1 ((..., K) counts; NaN without answers)."""
    positions = np.linspace(0.0, 1.0, table.shape[-1])
    total = table.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (table * positions).sum(axis=-1) / np.where(total > 0, total, 1.0), np.nan)


def _noise_floor(scale: QuestionScale, human: UnitAnswers, n_m: int, model_weighted: bool, observed: np.ndarray,
                 settings: SurveyAnalysisPlan, seed, distribution: bool,
                 resampled: np.ndarray | None = None) -> list[dict]:
    """``kl_noise_floor`` and ``js_noise_floor``: the observed human distribution against resamples of
    ``n_m`` human units, drawn as the model's units are (unweighted personas: draws proportional to
    weight, each answer counted once). For a distribution method a perfect simulator answers with each
    persona's own answer distribution, whose mean varies less than one-answer draws do (between none,
    every persona given the population distribution, and one-answer draws): its band is one-sided,
    from 0 to the ``ci_level`` quantile of the one-answer floor. ``resampled``: the human side's own
    resampled tables (draws only) to use instead (a cell run: the survey's sampling of its respondents)."""
    draws, level = settings.bootstrap_draws, settings.ci_level
    if resampled is not None:
        floor = resampled
    else:
        rng = np.random.default_rng(seed)
        n_h = len(human.counts)
        mass = human.counts.sum(axis=1)
        if human.weighted and not model_weighted:
            index = rng.choice(n_h, size=(draws, n_m), p=mass / mass.sum())
            counts = human.counts / np.where(mass > 0, mass, 1.0)[:, None]
        else:
            index = rng.integers(0, n_h, size=(draws, n_m))
            counts = human.counts
        floor = bootstrap_tables(counts, np.zeros(n_h, np.int64), 1, index)[:, 0]
    floor = floor / floor.sum(axis=-1, keepdims=True)
    population = observed / observed.sum()
    rows = []
    for metric, values in (("kl_noise_floor", kl_divergence(population, floor, settings.smoothing)),
                           ("js_noise_floor", js_distance(population, floor))):
        if distribution:
            low, high = 0.0, float(np.quantile(values, level))
            note = "distribution method: one-sided band of a perfect distribution simulator"
        else:
            (low, high), note = percentile_interval(values, level), ""
        rows.append(_row(scale.question, "all", metric, np.median(values), low, high, note))
    return rows


def with_simbench(metrics: dict[str, np.ndarray], human: np.ndarray, model: np.ndarray) -> dict[str, np.ndarray]:
    """``metrics`` plus ``simbench`` (:func:`pvsst.analysis.survey.simbench.simbench_score`) of ``model`` against
    ``human`` ((..., K) counts or shares, e.g. bootstrap draws).

    Examples
    --------
    >>> with_simbench({}, np.array([7.0, 3.0]), np.array([6.0, 4.0]))["simbench"].round(6).tolist()
    50.0
    """
    return {**metrics, "simbench": simbench_score(model, human)}


def score_question(scale: QuestionScale, human: UnitAnswers, model: UnitAnswers,
                   settings: SurveyAnalysisPlan = SurveyAnalysisPlan(), question_index: int = 0,
                   human_memo: dict | None = None, distribution: bool = False,
                   keep: dict | None = None, population: bool = False) -> list[dict]:
    """Fidelity rows of one question (see the module docstring for groups and metrics).

    Human and model units are resampled independently; the human resamples depend only on the
    bootstrap seed and ``question_index``, so every provider is compared against the same draws.
    ``human_memo`` (a dict kept across the providers of one question) reuses the human side's
    resampled tables instead of recomputing them per provider. ``distribution``: the model's units
    are answer distributions (``logprobs`` / ``verbalized``), which sets the noise floor's form.
    ``keep`` (a dict) receives the whole-population metrics' draws (observed first).
    ``population``: the model's units are a fixed population (the cells of a cell run, each weighted by
    its census count), not a sample: they are never resampled, so the intervals carry the survey's
    sampling (its respondents resampled) only, and the noise floor is the survey's own resamples (as
    many respondents as answered) against its observed distribution.
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
    h_index = cached("index", lambda: human.resample(draws, np.random.default_rng(human_seed)))
    if population:
        m_index = np.broadcast_to(np.arange(n_m), (draws + 1, n_m))
    else:
        m_index = model.resample(draws, np.random.default_rng(model_seed))
    ordinal = scale.ordinal

    h_all = cached("all", lambda: bootstrap_tables(human.counts, np.zeros(n_h, np.int64), 1, h_index)[:, 0])
    m_all = bootstrap_tables(model.counts, np.zeros(n_m, np.int64), 1, m_index)[:, 0]
    overall = with_simbench(distribution_metrics(h_all, m_all, ordinal=ordinal, smoothing=settings.smoothing),
                            h_all, m_all)
    if keep is not None:
        keep.update(overall)
        keep.update(total_variation=total_variation(m_all, h_all),
                    total_variation_uniform=total_variation(np.ones_like(h_all), h_all))
    rows = _rows(scale.question, "all", overall, level)
    rows += _noise_floor(scale, human, n_m, model.weighted, h_all[0], settings, floor_seed, distribution,
                         h_all[1:] if population else None)

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
        for g, name in enumerate(levels):
            group = f"{axis}={name}"
            note = "" if g in kept else (f"dropped: fewer than min_group_n = {min_n} units "
                                         f"(human {h_units[g]}, model {m_units[g]})")
            rows += [_row(scale.question, group, "n_human", h_units[g], note=note),
                     _row(scale.question, group, "n_model", m_units[g], note=note)]
            if g not in kept:
                continue
            rows += _rows(scale.question, group,
                          with_simbench(distribution_metrics(h_tab[:, g], m_tab[:, g], ordinal=ordinal,
                                                             smoothing=settings.smoothing), h_tab[:, g], m_tab[:, g]),
                          level)
            if ordinal:  # signed gap: the group's mean position minus the population's, on each side
                gap_h = _mean_position(h_tab[:, g]) - _mean_position(h_all)
                gap_m = _mean_position(m_tab[:, g]) - _mean_position(m_all)
                rows += _rows(scale.question, group, {"gap_human": gap_h, "gap_model": gap_m,
                                                      "delta_gap": gap_m - gap_h}, level)
        axis_note = "" if len(kept) >= 2 else (f"axis dropped: {len(kept)} group(s) with at least "
                                               f"min_group_n = {min_n} units on both sides (2 needed)")
        rows.append(_row(scale.question, axis, "groups_kept", len(kept), note=axis_note))
        if ordinal and len(kept) >= 2:
            eta_h, eta_m = eta_squared(h_tab[:, kept]), eta_squared(m_tab[:, kept])
            flat = {"eta2_human": bool(no_variance(h_tab[0, kept])), "eta2_model": bool(no_variance(m_tab[0, kept]))}
            notes = {metric: NO_VARIANCE_NOTE for metric, flag in flat.items() if flag}
            if notes:
                notes["delta_eta2"] = "; ".join(f"{m}: {NO_VARIANCE_NOTE}" for m in notes)
            rows += _rows(scale.question, axis, {"eta2_human": eta_h, "eta2_model": eta_m,
                                                 "delta_eta2": eta_m - eta_h}, level, notes)
    return rows


def score_fidelity(run: ScoredRun) -> pd.DataFrame:
    """Fidelity table of every provider x condition of a survey run (see the module docstring).

    Examples
    --------
    >>> table = score_fidelity(read_scored_run("RUN"))  # doctest: +SKIP
    """
    config, scales, human, personas, responses = run.config, run.scales, run.human, run.personas, run.responses
    settings = run.settings
    axes = list(config["axes"])
    rows: list[dict] = []
    humans = [human_units(human, scale, axes) for scale in scales]
    summary_metrics = ("js_distance", "kl_human_model", "representativeness_w1", "entropy_deviation", "simbench",
                       "total_variation", "total_variation_uniform")
    memos: list[dict] = [{} for _ in scales]
    for (provider, condition, method), part in responses.groupby(["provider", "condition", "elicitation"],
                                                                 sort=False):
        kept: dict[str, list[np.ndarray]] = {}
        for index, scale in enumerate(scales):
            asked = part[part["question"] == scale.question]
            if asked.empty:
                continue
            model = model_units(asked, personas, scale, axes)
            draws_of: dict = {}
            scored = score_question(scale, humans[index], model, settings, index, memos[index],
                                    distribution=method in DISTRIBUTION_METHODS, keep=draws_of,
                                    population=run.population is not None)
            for metric in summary_metrics:
                kept.setdefault(metric, []).append(draws_of.get(metric))
            if run.population is not None and method not in DISTRIBUTION_METHODS:
                for row in scored:
                    if pd.notna(row["ci_low"]) and not row["note"]:
                        row["note"] = CELL_DRAWS_NOTE
            n_calls = len(asked)
            answered = asked["parse_ok"] & asked["answer"].isin(scale.codes)
            n_model, nonsubstantive = (
                float(answered.sum()),
                (asked["parse_ok"] & ~answered).mean() if n_calls else np.nan,
            )
            if method in DISTRIBUTION_METHODS:  # personas with a substantive distribution; the mean other mass
                mass = substantive_distributions(asked, scale)["substantive"]
                n_model, nonsubstantive = float((mass > 0).sum()), float((1 - mass).mean()) if len(mass) else np.nan
            failed = float(failed_calls(asked).mean()) if n_calls else np.nan
            scored += [
                _row(scale.question, "all", metric, value, note=note)
                for metric, value, note in (
                    ("n_human", float(human[scale.question].isin(scale.codes).sum()), ""),
                    ("n_model", n_model, "" if n_model else "no usable answer: every call failed"),
                    ("parse_failure_rate", float((~asked["parse_ok"]).mean()) if n_calls else np.nan, ""),
                    ("failed_share", failed, ("degraded: above" if failed > settings.parse_failure_threshold
                                              else "within") + f" parse_failure_threshold = "
                                             f"{settings.parse_failure_threshold:g}"),
                    ("nonsubstantive_share", float(nonsubstantive), ""))]
            rows += [{"model": provider, "provider": provider, "condition": condition, "elicitation": method, **row}
                     for row in scored]
        rows += [{"model": provider, "provider": provider, "condition": condition, "elicitation": method, **row}
                 for row in _question_means(kept, settings.ci_level)]
    return pd.DataFrame(rows, columns=list(FIDELITY_COLUMNS))


def _question_means(kept: dict[str, list], level: float) -> list[dict]:
    """``mean_<metric>`` rows (question ``ALL_QUESTIONS``): the mean over the questions, its interval
    from the mean of each bootstrap draw over the questions (each question's draws are independent,
    so the interval ignores the correlation between questions answered by the same people); and the
    data set's SimBench summaries: ``median_simbench`` (median over the questions) and
    ``pooled_simbench`` = 100 (1 - sum_q TV(model, human) / sum_q TV(uniform, human))."""
    rows = []
    tv = {name: kept.pop(name, None) for name in ("total_variation", "total_variation_uniform")}
    for metric, draws in kept.items():
        if any(d is None for d in draws):
            note = "not every question has an answer: no mean"
            rows.append(_row(ALL_QUESTIONS, "all", f"mean_{metric}", np.nan, note=note))
            continue
        rows += _rows(ALL_QUESTIONS, "all", {f"mean_{metric}": np.mean(draws, axis=0)}, level)
        rows[-1]["note"] = f"mean over {len(draws)} question(s)"
    scores, (model, uniform) = kept.get("simbench"), tv.values()
    if scores and model and not any(d is None for d in scores + model + uniform):
        with np.errstate(invalid="ignore", divide="ignore"):
            pooled = 100.0 * (1.0 - np.sum(model, axis=0) / np.sum(uniform, axis=0))
        summaries = {"median_simbench": np.median(scores, axis=0), "pooled_simbench": pooled}
        rows += _rows(ALL_QUESTIONS, "all", summaries, level,
                      {"median_simbench": f"median over {len(scores)} question(s)",
                       "pooled_simbench": f"100 (1 - sum TV(model, human) / sum TV(uniform, human)) over "
                                          f"{len(scores)} question(s)"})
    return rows


def write_fidelity(table: pd.DataFrame, run_dir: str | Path) -> Path:
    """Write ``RUN/analysis/fidelity.csv`` atomically (temp file + rename); return its path."""
    target = Path(run_dir) / ANALYSIS / "fidelity.csv"
    with atomic_file(target) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    return target


def question_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per question x model x condition: the whole-population metrics, the noise band of
    KL(human||model), and the mean |delta eta^2| over grouping axes."""
    keys = ["question", "model", "condition"] + (["elicitation"] if "elicitation" in table else [])
    table = table[table["question"].astype(str) != ALL_QUESTIONS]
    overall = table[table["group"] == "all"].pivot_table(index=keys, columns="metric", values="value", sort=False)
    noise = table[(table["group"] == "all") & (table["metric"] == "kl_noise_floor")]
    noise = noise.set_index(keys)["ci_high"].rename("kl_noise_high")
    delta = table[table["metric"] == "delta_eta2"].assign(value=lambda f: f["value"].abs())
    delta = delta.groupby(keys, sort=False)["value"].mean().rename("mean_abs_delta_eta2")
    summary = overall.join(noise).join(delta)
    wanted = ["n_model", "parse_failure_rate", "kl_human_model", "kl_noise_high", "js_distance",
              "representativeness_w1", "entropy_deviation", "simbench", "mean_abs_delta_eta2"]
    return summary[[c for c in wanted if c in summary.columns]].reset_index()
