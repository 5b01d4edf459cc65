"""Survey-fidelity figures: per-question divergence beside the control providers, and answer distributions.

``RUN/analysis/fidelity.csv`` (written by the survey analysis, :mod:`pvsst.analysis.survey.fidelity`) has one row per
question x group x metric x provider: question, group, metric, value, ci_low, ci_high, and the source of
the simulated answers in ``provider`` (or ``condition``). Controls are providers whose name contains
``oracle`` (resamples of the human answers: the floor any simulator can reach), ``marginal`` (the
population's overall answer distribution for every group) or ``uniform`` (every option equally likely).

The distribution figure reads a long table of answer shares: question, group, option, source
(``human`` or a provider), share, and optionally ``option_order`` (ordinal position of the option).

Examples
--------
>>> import pandas as pd
>>> fidelity = pd.DataFrame({"question": ["q1", "q1", "q2", "q2"], "group": "all",
...                          "metric": "js_distance", "provider": ["model", "scripted/uniform"] * 2,
...                          "value": [0.2, 0.4, 0.1, 0.3], "ci_low": [0.1, 0.3, 0.0, 0.2],
...                          "ci_high": [0.3, 0.5, 0.2, 0.4]})
>>> figure = fidelity_by_question_figure(fidelity)
>>> figure.data["provider"].unique().tolist()
['model', 'scripted/uniform']
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import OKABE_ITO, PaperFigure, in_style, new_figure, pretty_label, series_styles
from pvsst.core.errors import InputError

CONTROL_KEYWORDS = ("oracle", "marginal", "uniform")
SOURCE_COLUMNS = ("provider", "condition", "source")
OVERALL_GROUPS = ("all", "overall", "total", "population")
DEFAULT_METRIC = "js_distance"
METRIC_UNITS = {
    "js_distance": "Jensen-Shannon distance, base 2 (0-1; lower is closer)",
    "kl_human_model": "KL(human || simulated), nats (lower is closer)",
    "kl_model_human": "KL(simulated || human), nats (lower is closer)",
    "representativeness_w1": "1 - W1/W1max (0-1; higher is closer)",
    "entropy_deviation": "|H_norm(sim) - H_norm(human)| (0-1; lower is closer)",
    "delta_eta_squared": "eta^2(sim) - eta^2(human) (0 = same group gaps)",
}
MAX_GROUP_PANELS = 6


def source_column(table: pd.DataFrame) -> str:
    """The column naming where the simulated answers came from (provider, condition or source)."""
    for column in SOURCE_COLUMNS:
        if column in table.columns:
            return column
    raise InputError("fidelity", "provider", "missing column (expected provider, condition or source)")


def is_control(source: str) -> bool:
    """Whether a provider is one of the oracle / marginal / uniform controls.

    >>> is_control("scripted/oracle"), is_control("embedded/smollm2-135m")
    (True, False)
    """
    return any(word in str(source).lower() for word in CONTROL_KEYWORDS)


def ordered_sources(sources) -> list[str]:
    """Simulators first (alphabetical), then the controls in oracle, marginal, uniform order."""
    sources = list(dict.fromkeys(str(s) for s in sources))
    models = sorted(s for s in sources if not is_control(s))
    controls = sorted((s for s in sources if is_control(s)),
                      key=lambda s: next(i for i, w in enumerate(CONTROL_KEYWORDS) if w in s.lower()))
    return models + controls


def overall_group(groups) -> str:
    """The group naming the whole population ("all", "overall", ...), else the first group."""
    groups = [str(g) for g in pd.unique(pd.Series(list(groups)))]
    for group in groups:
        if group.lower() in OVERALL_GROUPS:
            return group
    if not groups:
        raise InputError("fidelity", "group", "no rows")
    return sorted(groups)[0]


@in_style
def fidelity_by_question_figure(fidelity: pd.DataFrame, metric: str = DEFAULT_METRIC, *,
                                group: str | None = None) -> PaperFigure:
    """One metric per question (rows) for every provider, controls beside the simulators.

    ``data``: question, provider (the source column renamed), value, ci_low, ci_high, y (row position).
    """
    for column in ("question", "group", "metric", "value", "ci_low", "ci_high"):
        if column not in fidelity.columns:
            raise InputError("fidelity", column, "missing column")
    source = source_column(fidelity)
    rows = fidelity[fidelity["metric"] == metric]
    if rows.empty:
        known = ", ".join(map(str, pd.unique(fidelity["metric"])))
        raise InputError("fidelity", "metric", f"no rows for {metric!r} (metrics: {known})")
    group = overall_group(rows["group"]) if group is None else group
    rows = rows[rows["group"].astype(str) == str(group)]
    rows = rows.rename(columns={source: "provider"})[["question", "provider", "value", "ci_low", "ci_high"]]
    rows["provider"] = rows["provider"].astype(str)
    questions = list(dict.fromkeys(rows["question"].astype(str)))
    providers = ordered_sources(rows["provider"])
    step = 0.7 / max(len(providers), 1)
    offsets = {p: (i - (len(providers) - 1) / 2) * step for i, p in enumerate(providers)}
    rows["y"] = [-questions.index(str(q)) + offsets[p] for q, p in zip(rows["question"], rows["provider"])]
    figure = new_figure(height=0.9 + 0.28 * len(questions))
    ax = figure.axes[0]
    styles = series_styles(providers, hollow=[p for p in providers if is_control(p)])
    for provider in providers:
        part = rows[rows["provider"] == provider]
        value = part["value"].to_numpy(float)
        ax.errorbar(value, part["y"].to_numpy(float),
                    # a percentile interval need not contain the observed value (small samples): no negative bar
                    xerr=[np.clip(value - part["ci_low"].to_numpy(float), 0, None),
                          np.clip(part["ci_high"].to_numpy(float) - value, 0, None)],
                    label=provider, **styles[provider].errorbar())
    ax.set_yticks(-np.arange(len(questions), dtype=float), [q[:28] for q in questions])
    ax.set_xlabel(METRIC_UNITS.get(metric, pretty_label(metric)))
    handles, labels = ax.get_legend_handles_labels()  # above the axes: it never hides a point
    figure.legend(handles, labels, loc="outside upper center", fontsize=6,
                  ncols=1 if max(map(len, labels)) > 22 else min(len(labels), 3))
    n_controls = sum(is_control(p) for p in providers)
    caption = (f"Survey fidelity per question: {pretty_label(metric)} between simulated and human answer "
               f"distributions (group: {group}), for {len(providers) - n_controls} simulator(s) and "
               f"{n_controls} control(s) (open markers: oracle = human resamples, marginal = population "
               f"distribution, uniform = every option equally likely). Bars: the 95% intervals of the "
               f"fidelity table (ci_low, ci_high; bootstrap over respondents and personas); "
               f"n = {len(questions)} questions.")
    return PaperFigure(f"fidelity_{metric}", figure, caption, rows.reset_index(drop=True))


@in_style
def distribution_by_group_figure(distributions: pd.DataFrame, question: str, *,
                                 simulated: str | None = None, groups=None) -> PaperFigure:
    """Human versus simulated answer shares for one question, one panel per group (grouped bars).

    ``data``: group, option, human, simulated (shares), in panel and option order.
    """
    for column in ("question", "group", "option", "source", "share"):
        if column not in distributions.columns:
            raise InputError("fidelity distributions", column, "missing column")
    rows = distributions[distributions["question"].astype(str) == str(question)]
    if rows.empty:
        raise InputError("fidelity distributions", "question", f"no rows for {question!r}")
    sources = [s for s in ordered_sources(rows["source"]) if s.lower() != "human"]
    if "human" not in set(rows["source"].astype(str).str.lower()) or not sources:
        raise InputError("fidelity distributions", "source", "need a 'human' source and a simulated one")
    simulated = simulated or sources[0]
    rows = rows.assign(source=rows["source"].astype(str))
    rows.loc[rows["source"].str.lower() == "human", "source"] = "human"
    option_order = (rows.groupby("option", sort=False)["option_order"].min().sort_values().index.tolist()
                    if "option_order" in rows.columns else list(dict.fromkeys(rows["option"])))
    wide = (rows[rows["source"].isin(["human", simulated])]
            .pivot_table(index=["group", "option"], columns="source", values="share", aggfunc="sum")
            .reindex(columns=["human", simulated]).fillna(0.0))
    groups = list(groups) if groups is not None else list(dict.fromkeys(rows["group"].astype(str)))
    groups = groups[:MAX_GROUP_PANELS]
    ncols = min(len(groups), 3)
    nrows = int(np.ceil(len(groups) / ncols))
    figure = new_figure(height=1.3 * nrows + 0.5, nrows=nrows, ncols=ncols, sharey=True)
    x = np.arange(len(option_order), dtype=float)
    records = []
    for ax, group in zip(figure.axes, groups):
        present = str(group) in wide.index.get_level_values(0)
        shares = (wide.loc[str(group)].reindex(option_order).fillna(0.0) if present
                  else pd.DataFrame(0.0, index=option_order, columns=["human", simulated]))
        ax.bar(x - 0.2, shares["human"].to_numpy(float), width=0.4, color=OKABE_ITO[5], label="human")
        ax.bar(x + 0.2, shares[simulated].to_numpy(float), width=0.4, color=OKABE_ITO[1], label=simulated)
        ax.set_title(str(group))
        ax.set_xticks(x, [str(o)[:10] for o in option_order], rotation=60, ha="right", fontsize=5)
        records += [{"group": str(group), "option": o, "human": float(h), "simulated": float(s)}
                    for o, h, s in zip(option_order, shares["human"], shares[simulated])]
    for ax in figure.axes[len(groups):]:
        ax.set_visible(False)
    figure.axes[0].set_ylabel("share of answers (0-1)")
    figure.axes[0].legend(loc="best", fontsize=6)
    caption = (f"Answer distributions for question {question}: human (blue) versus {simulated} (orange), "
               f"one panel per group ({len(groups)} groups); bars are shares of (weighted) answers, point "
               f"estimates without intervals; n = {len(option_order)} options.")
    return PaperFigure(f"fidelity_distribution_{_slug(question)}", figure, caption, pd.DataFrame(records))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in str(text))[:40]
