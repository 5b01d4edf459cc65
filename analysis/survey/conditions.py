"""PSII's comparison of conditions: KL, entropy deviation, JS and SimBench per condition, beside the noise floor.

One row per model x condition x elicitation x question, and a row per model x condition over all
questions (question :data:`~pvsst.analysis.survey.scoring.ALL_QUESTIONS`), read from the fidelity table
(:func:`pvsst.analysis.survey.scoring.score_fidelity`, ``RUN/analysis/fidelity.csv``), whole population
only. Columns: ``kl`` = KL(human || model) in nats after additive smoothing (the plan's ``smoothing``;
the direction PSII reports: the human distribution is the reference), ``entropy_deviation`` =
|H_norm(model) - H_norm(human)|, ``js_distance`` (base 2), ``simbench`` (100 is a perfect simulator, 0
the uniform answerer), each with its bootstrap interval (``_low``, ``_high``: personas and respondents
resampled; over questions the mean of each draw's question values), and ``kl_noise_floor``: KL between
the human distribution and resamples of as many human answers as the model gave (what a perfect
simulator scores from sampling noise alone), over questions the mean of the question floors and of
their band ends.

Examples
--------
>>> rows = [{"model": "m", "condition": condition, "elicitation": "sample", "question": question, "group": "all",
...          "metric": metric, "value": value, "ci_low": value / 2, "ci_high": value * 2}
...         for condition, kl in (("direct", 1.4), ("psii", 0.6))
...         for question, prefix in (("q", ""), (ALL_QUESTIONS, "mean_"))
...         for metric, value in ((prefix + "kl_human_model", kl), (prefix + "entropy_deviation", 0.2),
...                               ("kl_noise_floor", 0.02))]
>>> table = condition_table(pd.DataFrame(rows))
>>> table[["condition", "question", "kl", "kl_noise_floor"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
[['direct', 'q', 1.4, 0.02], ['direct', '(mean over questions)', 1.4, 0.02],
 ['psii', 'q', 0.6, 0.02], ['psii', '(mean over questions)', 0.6, 0.02]]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.survey.scoring import ALL_QUESTIONS

MEASURES = {"kl": "kl_human_model", "entropy_deviation": "entropy_deviation", "js_distance": "js_distance",
            "simbench": "simbench", "kl_noise_floor": "kl_noise_floor"}
"""Column of the condition table -> metric of the fidelity table."""
KEYS = ["model", "condition", "elicitation"]
CONDITION_COLUMNS = (*KEYS, "question", *(f"{name}{end}" for name in MEASURES for end in ("", "_low", "_high")))


def condition_table(fidelity: pd.DataFrame) -> pd.DataFrame:
    """The per-condition table of a scored survey run (see the module text).

    Parameters
    ----------
    fidelity
        The fidelity table (columns ``model, condition, elicitation, question, group, metric, value,
        ci_low, ci_high``).

    Returns
    -------
    pandas.DataFrame
        :data:`CONDITION_COLUMNS`, one row per model x condition x elicitation x question, each
        condition's questions followed by its mean row; conditions in the order the table lists them.

    Notes
    -----
    KL(h || m) = sum_k h'_k log(h'_k / m'_k), with p' = (p + s) / (1 + K s) (additive smoothing s);
    ED = |H(m) / log K - H(h) / log K|; SimBench = 100 (1 - TV(m, h) / TV(u, h)) with u uniform. The mean
    row's value is the mean over questions; its interval the percentile interval of the mean over
    questions of each bootstrap draw; its noise floor the mean of the questions' floors and band ends.

    References
    ----------
    .. [1] PSII: Parametric Social Identity Injection, arXiv 2603.16142 (KDD 2026): KL and Entropy
       Deviation against the human answer distribution.
    .. [2] SimBench: benchmarking the ability of LLMs to simulate human behaviors, arXiv 2510.17516.

    Examples
    --------
    >>> frame = pd.DataFrame([{"model": "m", "condition": "c", "elicitation": "sample", "question": "q",
    ...                        "group": "all", "metric": "kl_human_model", "value": 0.5, "ci_low": 0.4,
    ...                        "ci_high": 0.7}])
    >>> condition_table(frame)[["kl", "kl_low", "kl_high"]].iloc[0].tolist()
    [0.5, 0.4, 0.7]
    """
    whole = fidelity[(fidelity["group"] == "all") & fidelity["metric"].isin(
        [*MEASURES.values(), *(f"mean_{m}" for m in MEASURES.values())])]
    rows = []
    for key, part in whole.groupby(KEYS, sort=False):
        questions = [q for q in dict.fromkeys(part["question"]) if q != ALL_QUESTIONS]
        for question in questions:
            rows.append(_row(key, question, part[part["question"] == question], prefix=""))
        mean = _row(key, ALL_QUESTIONS, part[part["question"] == ALL_QUESTIONS], prefix="mean_")
        floors = part[(part["metric"] == MEASURES["kl_noise_floor"]) & (part["question"] != ALL_QUESTIONS)]
        if len(floors):
            mean.update(kl_noise_floor=floors["value"].mean(), kl_noise_floor_low=floors["ci_low"].mean(),
                        kl_noise_floor_high=floors["ci_high"].mean())
        rows.append(mean)
    return pd.DataFrame(rows, columns=list(CONDITION_COLUMNS))


def _row(key: tuple, question: str, part: pd.DataFrame, prefix: str) -> dict:
    by_metric = part.set_index("metric")
    row: dict = dict(zip(KEYS, key), question=question)
    for name, metric in MEASURES.items():
        found = by_metric.loc[prefix + metric] if prefix + metric in by_metric.index else None
        for end, column in (("", "value"), ("_low", "ci_low"), ("_high", "ci_high")):
            row[name + end] = float(found[column]) if found is not None else np.nan
    return row


def condition_markdown(table: pd.DataFrame, digits: int = 3) -> str:
    """The mean rows of :func:`condition_table` as a Markdown table: value [low, high] per measure.

    Parameters
    ----------
    table
        A :func:`condition_table`.
    digits
        Decimals shown.

    Returns
    -------
    str
        One header line, one rule and one line per model x condition x elicitation.

    Examples
    --------
    >>> frame = pd.DataFrame([{"model": "m", "condition": "c", "elicitation": "sample", "question": ALL_QUESTIONS,
    ...                        "group": "all", "metric": "mean_kl_human_model", "value": 0.5, "ci_low": 0.4,
    ...                        "ci_high": 0.7}])
    >>> print(condition_markdown(condition_table(frame)).splitlines()[2])
    | m | c | sample | 0.500 [0.400, 0.700] | - | - | - | - |
    """
    names = list(MEASURES)
    lines = ["| model | condition | elicitation | " + " | ".join(names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    for row in table[table["question"] == ALL_QUESTIONS].to_dict("records"):
        cells = [("-" if np.isnan(row[n]) else f"{row[n]:.{digits}f} [{row[n + '_low']:.{digits}f}, "
                  f"{row[n + '_high']:.{digits}f}]") for n in names]
        lines.append(f"| {row['model']} | {row['condition']} | {row['elicitation']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
