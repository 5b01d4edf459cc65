"""The survey report's tables: the summary, per question, per group, the dropped groups and axes, and
the sources whose calls failed, every estimate shown with its interval.

They read ``RUN/analysis/fidelity.csv`` (:mod:`pvsst.analysis.survey.scoring`): a number is written as
``value [ci_low, ci_high]`` (4 significant digits, never ``-0``); a missing value as ``n/a`` with the
reason from the table's ``note`` column where it has one.

Examples
--------
>>> estimate(-0.00001, -0.0002, 0.0003)
'-1e-05 [-0.0002, 0.0003]'
>>> estimate(-0.0, float("nan"), float("nan"))
'0'
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pvsst.analysis.figures.survey.fidelity import is_control
from pvsst.analysis.survey.scoring import ALL_QUESTIONS

SUMMARY_METRICS = ("js_distance", "kl_human_model", "representativeness_w1", "entropy_deviation")
QUESTION_METRICS = ("js_distance", "js_noise_floor", "kl_human_model", "kl_noise_floor", "representativeness_w1",
                    "entropy_deviation")


def number(value) -> str:
    """4 significant digits; ``0`` for a negative zero; ``n/a`` when missing.

    >>> number(-0.00004), number(-1e-12), number(12.5)
    ('-4e-05', '-1e-12', '12.5')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    text = format(float(value), ".4g")
    return "0" if float(text) == 0 else text


def estimate(value, low, high) -> str:
    """``value [low, high]``; the value alone when there is no interval."""
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (low, high)):
        return number(value)
    return f"{number(value)} [{number(low)}, {number(high)}]"


def _keys(table: pd.DataFrame) -> list[str]:
    return [k for k in ("provider", "condition", "elicitation") if k in table]


def degraded_sources(fidelity: pd.DataFrame, threshold: float) -> dict[tuple, str]:
    """{(provider, condition, elicitation): why} for every source whose failed share over the questions
    exceeds ``threshold`` (the preregistered ``parse_failure_threshold``).

    >>> table = pd.DataFrame({"provider": ["m", "m"], "condition": "c", "elicitation": "sample", "question": ["a", "b"],
    ...                       "group": "all", "metric": "failed_share", "value": [1.0, 0.9]})
    >>> degraded_sources(table, 0.05)
    {('m', 'c', 'sample'): 'degraded: 95.0% of calls failed (threshold 5.0%)'}
    """
    metric = "failed_share" if (fidelity["metric"] == "failed_share").any() else "parse_failure_rate"
    rows = fidelity[(fidelity["metric"] == metric) & (fidelity["group"].astype(str) == "all")]
    shares = rows.groupby(_keys(fidelity), sort=False)["value"].mean()
    return {key: f"degraded: {share:.1%} of calls failed (threshold {threshold:.1%})"
            for key, share in shares.items() if share > threshold}


def summary_frame(fidelity: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """One row per source: status, questions, and the means over questions with their intervals."""
    keys = _keys(fidelity)
    degraded = degraded_sources(fidelity, threshold)
    overall = fidelity[fidelity["group"].astype(str) == "all"]
    means = overall[overall["question"].astype(str) == ALL_QUESTIONS]
    counts = overall[overall["question"].astype(str) != ALL_QUESTIONS].groupby(keys, sort=False)["question"].nunique()
    rows = []
    for key, n in counts.items():
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key))
        row["status"] = degraded.get(key, "ok")
        row["questions"] = int(n)
        part = means[np.logical_and.reduce([means[k] == v for k, v in zip(keys, key)])].set_index("metric")
        for metric in SUMMARY_METRICS:
            name = f"mean_{metric}"
            if name in part.index:
                r = part.loc[name]
                row[name] = estimate(r["value"], r["ci_low"], r["ci_high"])
                if pd.isna(r["value"]):
                    row[name] = "n/a (no answers)" if row["status"] != "ok" else f"n/a ({r.get('note', '')})"
                row[f"_{name}"] = float(r["value"])
        rows.append(row)
    return pd.DataFrame(rows)


def question_frame(fidelity: pd.DataFrame) -> pd.DataFrame:
    """One row per question x source: n, failed share and the whole-population metrics with intervals."""
    keys = _keys(fidelity)
    overall = fidelity[(fidelity["group"].astype(str) == "all") & (fidelity["question"].astype(str) != ALL_QUESTIONS)]
    rows = []
    for key, part in overall.groupby(["question"] + keys, sort=False):
        row = dict(zip(["question"] + keys, key))
        part = part.set_index("metric")
        row["n_model"] = number(part["value"].get("n_model", np.nan))
        row["failed_share"] = number(part["value"].get("failed_share", part["value"].get("parse_failure_rate", np.nan)))
        for metric in QUESTION_METRICS:
            if metric in part.index:
                r = part.loc[metric]
                row[metric] = estimate(r["value"], r["ci_low"], r["ci_high"])
            else:
                row[metric] = "n/a (no answers)" if metric in ("js_distance", "kl_human_model") else "n/a"
        delta = fidelity[(fidelity["metric"] == "delta_eta2") & (fidelity["question"] == key[0])
                         & np.logical_and.reduce([fidelity[k] == v for k, v in zip(keys, key[1:])])]
        row["mean_abs_delta_eta2"] = number(delta["value"].abs().mean()) if len(delta) else "n/a (no axis kept)"
        rows.append(row)
    return pd.DataFrame(rows)


def group_frame(fidelity: pd.DataFrame) -> pd.DataFrame:
    """Per model source x question x group level that was kept: group sizes and signed gaps (the group's
    mean answer position, scaled 0-1, minus the population's), human beside model, with intervals."""
    keys = _keys(fidelity)
    groups = fidelity[fidelity["group"].astype(str).str.contains("=") & ~fidelity["provider"].map(is_control)]
    rows = []
    for key, part in groups.groupby(keys + ["question", "group"], sort=False):
        part = part.set_index("metric")
        if "gap_human" not in part.index:
            continue
        row = dict(zip(keys + ["question", "group"], key))
        row["n_human"], row["n_model"] = number(part.loc["n_human", "value"]), number(part.loc["n_model", "value"])
        for metric in ("gap_human", "gap_model", "delta_gap"):
            r = part.loc[metric]
            row[metric] = estimate(r["value"], r["ci_low"], r["ci_high"])
        rows.append(row)
    return pd.DataFrame(rows)


def eta_frame(fidelity: pd.DataFrame) -> pd.DataFrame:
    """Per model source x question x axis: eta^2 human, model and delta with intervals and flags."""
    keys = _keys(fidelity)
    eta = fidelity[fidelity["metric"].isin(["eta2_human", "eta2_model", "delta_eta2"])
                   & ~fidelity["provider"].map(is_control)]
    rows = []
    for key, part in eta.groupby(keys + ["question", "group"], sort=False):
        part = part.set_index("metric")
        row = dict(zip(keys + ["question", "axis"], key))
        for metric in ("eta2_human", "eta2_model", "delta_eta2"):
            r = part.loc[metric]
            row[metric] = estimate(r["value"], r["ci_low"], r["ci_high"])
        notes = part["note"].dropna().astype(str) if "note" in part else pd.Series(dtype=str)
        row["flag"] = "; ".join(sorted({f"{m}: no answer variance (eta^2 = 0)" for m, n in notes.items()
                                        if m != "delta_eta2" and n.startswith("no answer variance")})) or ""
        rows.append(row)
    return pd.DataFrame(rows)


def dropped_frame(fidelity: pd.DataFrame) -> pd.DataFrame:
    """Groups and axes left out by ``min_group_n``, with the reason and where (sources, questions).

    >>> table = pd.DataFrame({"provider": "m", "condition": "c", "question": ["a", "b"], "group": "race=other",
    ...                       "metric": "n_model", "value": 2.0, "note": "dropped: fewer than min_group_n = 10"})
    >>> dropped_frame(table).values.tolist()
    [['race=other', 'dropped: fewer than min_group_n = 10', 1, 2]]
    """
    notes = (fidelity[fidelity["note"].fillna("").astype(str).str.contains("dropped")] if "note" in fidelity
             else fidelity.iloc[:0])
    notes = notes[notes["metric"].isin(["n_model", "groups_kept"])]
    if notes.empty:
        return pd.DataFrame(columns=["group or axis", "reason", "sources", "questions"])
    frame = notes.assign(source=notes["provider"].astype(str) + " | " + notes["condition"].astype(str))
    out = frame.groupby(["group", "note"], sort=False).agg(sources=("source", "nunique"),
                                                            questions=("question", "nunique"))
    return out.reset_index().rename(columns={"group": "group or axis", "note": "reason"})
