"""Survey-report figures: answer shares per question, a Jensen-Shannon heatmap, subgroup gaps (eta^2).

They read the tables a survey run's analysis writes: the answer shares
(:func:`pvsst.analysis.survey.shares.answer_shares`: question, source, provider, condition, elicitation,
option, position, share) and ``RUN/analysis/fidelity.csv`` (provider, condition, elicitation, question,
group, metric, value, ci_low, ci_high). Controls are the providers named ``oracle`` (the respondents'
own answers: the sampling-noise floor), ``marginal`` (the population distribution for everyone) and
``uniform`` (every option equally likely: the bar a simulator should stay below, which a model
can exceed).

Examples
--------
>>> import pandas as pd
>>> shares = pd.DataFrame({"question": "q1", "source": ["human"] * 2 + ["m | c"] * 2,
...                        "option": ["yes", "no"] * 2, "position": [0, 1] * 2, "share": [0.7, 0.3, 0.5, 0.5]})
>>> figure = answer_shares_figure(shares)
>>> figure.data[["source", "option", "share"]].values.tolist()[:2]
[['human', 'yes', 0.7], ['human', 'no', 0.3]]
>>> figure.close()
"""
from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from pvsst.analysis.figures.style import (
    CATEGORY_PALETTE,
    NO_VALUE_GREY,
    OKABE_ITO,
    SEQUENTIAL_CMAP,
    WIDE_IN,
    PaperFigure,
    SeriesStyle,
    in_style,
    new_figure,
    readable_colorbar,
    series_styles,
)
from pvsst.analysis.figures.survey.fidelity import CONTROL_KEYWORDS, is_control
from pvsst.core.errors import InputError

FLOOR, CEILING = "oracle", "uniform"
NO_VARIANCE = "no answer variance (eta^2 = 0)"


def _require(table: pd.DataFrame, columns, what: str) -> None:
    for column in columns:
        if column not in table.columns:
            raise InputError(what, column, "missing column")
    if table.empty:
        raise InputError(what, "rows", "no rows")


def _source_order(sources) -> list[str]:
    """human first, then the simulators (as they come), then the controls (oracle, marginal, uniform)."""
    sources = list(dict.fromkeys(str(s) for s in sources))
    models = [s for s in sources if s != "human" and not is_control(s)]
    controls = sorted((s for s in sources if is_control(s)),
                      key=lambda s: (next(i for i, w in enumerate(CONTROL_KEYWORDS) if w in s.lower()), s))
    return (["human"] if "human" in sources else []) + models + controls


def option_colours(shares: pd.DataFrame) -> dict[str, tuple]:
    """One colour per option label, the same in every panel and in the legend.

    Questions that share one ordered list of labels get ordered shades of a sequential map (ordered
    options, ordered shades); otherwise every distinct label gets its own qualitative colour.

    Examples
    --------
    >>> shares = pd.DataFrame({"question": ["a", "a", "b", "b"], "option": ["y", "n", "y", "n"],
    ...                        "position": [0, 1, 0, 1]})
    >>> list(option_colours(shares))
    ['y', 'n']
    """
    shares = shares.assign(label=_option_labels(shares))
    per_question = [tuple(part.sort_values("position", kind="stable")["label"].drop_duplicates())
                    for _, part in shares.groupby(shares["question"].astype(str), sort=False)]
    labels = list(dict.fromkeys(label for sequence in per_question for label in sequence))
    if len(set(per_question)) == 1:
        colours = mpl.colormaps[SEQUENTIAL_CMAP](np.linspace(0.1, 0.9, len(labels)))
    else:
        palette = mpl.colormaps[CATEGORY_PALETTE].colors
        colours = [palette[i % len(palette)] for i in range(len(labels))]
    return {label: tuple(colour) for label, colour in zip(labels, colours)}


def option_legend(figure, colour_of: dict[str, tuple]) -> None:
    """One legend entry per option label, in the colour its bars have (above the panels).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> figure = plt.figure()
    >>> option_legend(figure, {"Yes": (0.0, 0.0, 1.0, 1.0)})
    >>> [t.get_text() for t in figure.legends[0].get_texts()]
    ['Yes']
    >>> plt.close(figure)
    """
    handles = [Patch(facecolor=colour, edgecolor="white", label=label) for label, colour in colour_of.items()]
    figure.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 6), fontsize=6)


def _option_labels(shares: pd.DataFrame) -> pd.Series:
    if "label" in shares:
        return shares["label"].where(shares["label"].notna(), shares["option"]).astype(str)
    return shares["option"].astype(str)


@in_style
def answer_shares_figure(shares: pd.DataFrame, *, ncols: int = 2) -> PaperFigure:
    """Per question (one panel each), a 100% stacked bar per source: human, each model x condition, controls.

    Options are named by their labels (``label`` column; the codes where there is none) and coloured
    by label, one colour per label in every panel and in the legend (:func:`option_colours`). A source
    without answers (every call failed) is marked in its row instead of drawn.

    ``data``: question, source, option, label, position, share, left (where the bar segment starts), row.
    """
    _require(shares, ("question", "source", "option", "position", "share"), "answer shares")
    if "group" in shares:
        shares = shares[shares["group"].astype(str) == "all"]
    shares = shares.assign(label=_option_labels(shares))
    colour_of = option_colours(shares)
    questions = list(dict.fromkeys(shares["question"].astype(str)))
    sources = _source_order(shares["source"])
    ncols = max(1, min(ncols, len(questions)))
    nrows = int(np.ceil(len(questions) / ncols))
    figure = new_figure(width=WIDE_IN, height=0.45 + nrows * (0.25 + 0.16 * len(sources)), nrows=nrows,
                        ncols=ncols, sharex=True, sharey=True)
    records = []
    for ax, question in zip(figure.axes, questions):
        part = shares[shares["question"].astype(str) == question].sort_values("position", kind="stable")
        for row, source in enumerate(sources):
            left = 0.0
            values = part[part["source"].astype(str) == source]
            if len(values) and not np.isfinite(values["share"].to_numpy(float)).any():
                ax.text(0.02, -row, "no answers (every call failed)", va="center", fontsize=5, color=OKABE_ITO[6])
                continue
            for option, label, share in zip(values["option"].astype(str), values["label"], values["share"]):
                share = float(share)
                if not np.isfinite(share):
                    continue
                ax.barh(-row, share, left=left, color=colour_of[label], height=0.75, edgecolor="white",
                        linewidth=0.3, label=label)
                records.append({"question": question, "source": source, "option": option, "label": label,
                                "position": int(values.loc[values["option"].astype(str) == option, "position"].iloc[0]),
                                "share": share, "left": left, "row": -row})
                left += share
        ax.set_title(question, loc="left")
        ax.set_xlim(0, 1)
        ax.set_yticks(-np.arange(len(sources), dtype=float), sources)
        ax.axhline(-0.5, color="0.3", linewidth=0.6)  # human above the line
        ax.tick_params(axis="y", labelsize=6)
    for ax in figure.axes[len(questions):]:
        ax.set_visible(False)
    for ax in figure.axes[-ncols:]:
        ax.set_xlabel("share of answers (0-1)")
    option_legend(figure, colour_of)
    caption = (f"Answer shares per question: the real survey (human, top row, weighted where the data has "
               f"weights) beside each model x condition and the controls (oracle, marginal, uniform), options "
               f"stacked left to right in the instrument's order and coloured by label as in the legend. "
               f"Sampled conditions: share of answers; logprobs / verbalized conditions: mean of the personas' "
               f"distributions; respondent-matched personas carry their respondent's weight. Point estimates "
               f"(intervals in answer_shares.csv); n = {len(questions)} questions, {len(sources)} sources.")
    return PaperFigure("survey_answer_shares", figure, caption, pd.DataFrame(records))


def _column_labels(frame: pd.DataFrame) -> pd.Series:
    method = frame["elicitation"].astype(str) if "elicitation" in frame else pd.Series("sample", index=frame.index)
    suffix = np.where(method == "sample", "", " (" + method + ")")
    return frame["provider"].astype(str) + " | " + frame["condition"].astype(str) + suffix


# One colour scale per metric, the same in every report: a colour means the same distance everywhere.
COLOUR_SCALES = {"js_distance": (0.0, 1.0), "representativeness_w1": (0.0, 1.0), "entropy_deviation": (0.0, 1.0),
                 "kl_human_model": (0.0, 2.0), "kl_model_human": (0.0, 2.0)}
NOISE_FLOORS = {"js_distance": "js_noise_floor", "kl_human_model": "kl_noise_floor"}


def _bounds(fidelity: pd.DataFrame, rows: pd.DataFrame, metric: str) -> tuple[list, list]:
    """Per cell: the noise floor's upper bound (the source's own ``*_noise_floor`` band, else the oracle's
    interval) and the uniform control's value under the same elicitation method."""
    overall = fidelity[fidelity["group"].astype(str) == "all"]
    key = ["provider", "condition", "elicitation", "question"]
    floor_metric = NOISE_FLOORS.get(metric)
    own = overall[overall["metric"] == floor_metric] if floor_metric else overall.iloc[:0]
    own = own.set_index(key)["ci_high"].to_dict()
    oracle = overall[(overall["metric"] == metric) & overall["provider"].astype(str).str.contains(FLOOR)]
    oracle = oracle.set_index(["question", "elicitation"])["ci_high"].to_dict()
    uniform = overall[(overall["metric"] == metric) & overall["provider"].astype(str).str.contains(CEILING)]
    uniform = uniform.set_index(["question", "elicitation"])["value"].to_dict()
    floors = [own.get((p, c, e, q), oracle.get((q, e), np.nan))
              for p, c, e, q in zip(rows["provider"], rows["condition"], rows["elicitation"], rows["question"])]
    ceilings = [uniform.get((q, e), np.nan) for q, e in zip(rows["question"], rows["elicitation"])]
    return floors, ceilings


@in_style
def js_heatmap_figure(fidelity: pd.DataFrame, metric: str = "js_distance") -> PaperFigure:
    """Questions x (model, condition) of one metric: sources as rows (models above the white line, controls
    below), questions as columns, on one fixed colour scale per metric (``COLOUR_SCALES``; JS 0-1).

    Each model cell is tested against both bounds: at or above the uniform control's value (same
    elicitation method) it gets a cross (the ceiling, tested first: a cell there is never called
    good), else within the noise floor (the upper bound of the source's own ``*_noise_floor`` band,
    or the oracle's interval for metrics without one) a circle. A source without answers (every call
    failed) keeps its row, marked "no answers".

    ``data``: question, column, value, floor, ceiling, mark.
    """
    _require(fidelity, ("provider", "condition", "question", "group", "metric", "value", "ci_high"), "fidelity")
    fidelity = fidelity.copy()
    if "elicitation" not in fidelity:
        fidelity["elicitation"] = "sample"
    rows = fidelity[(fidelity["metric"] == metric) & (fidelity["group"].astype(str) == "all")].copy()
    _require(rows, ("value",), f"fidelity ({metric})")
    # sources that answered nothing have no metric rows: give them empty cells, so they stay visible
    asked = fidelity[(fidelity["metric"] == "n_model") & (fidelity["group"].astype(str) == "all")]
    silent = asked[asked["value"].fillna(0) == 0][["provider", "condition", "elicitation", "question"]]
    rows = pd.concat([rows, silent.assign(metric=metric, value=np.nan)], ignore_index=True)
    rows["column"] = _column_labels(rows)
    questions = list(dict.fromkeys(rows["question"].astype(str)))
    columns = [c for c in _source_order(rows["column"])]
    rows["floor"], rows["ceiling"] = _bounds(fidelity, rows, metric)
    model = ~rows["provider"].map(is_control)
    value = rows["value"]
    rows["mark"] = np.where(model & (value >= rows["ceiling"]), "ceiling",
                            np.where(model & (value <= rows["floor"]), "floor", ""))
    grid = rows.pivot_table(index="column", columns="question", values="value", sort=False, dropna=False).reindex(
        index=columns, columns=questions)
    figure = new_figure(width=WIDE_IN, height=1.2 + 0.2 * len(columns))
    ax = figure.axes[0]
    values = grid.to_numpy(float)
    low, high = COLOUR_SCALES.get(metric, (0.0, 1.0))
    cmap = mpl.colormaps[SEQUENTIAL_CMAP].with_extremes(bad=NO_VALUE_GREY)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, aspect="auto", vmin=low, vmax=high)
    for i in range(len(columns)):
        for j in range(len(questions)):
            if np.isfinite(values[i, j]):
                shown = f"{values[i, j]:.2f}".replace("-0.00", "0.00")
                ax.text(j, i, shown, ha="center", va="center", fontsize=5,
                        color="white" if values[i, j] < low + 0.55 * (high - low) else "black")
            else:
                ax.text(j, i, "no\nanswers", ha="center", va="center", fontsize=4, color="0.2")
    marked = rows[rows["mark"] != ""]
    for mark, style in (("floor", {"marker": "o", "facecolors": "none", "edgecolors": OKABE_ITO[6]}),
                        ("ceiling", {"marker": "x", "c": OKABE_ITO[2]})):
        part = marked[marked["mark"] == mark]
        if len(part):
            ax.scatter([questions.index(q) + 0.36 for q in part["question"]],
                       [columns.index(c) - 0.22 for c in part["column"]], s=9, linewidths=0.7,
                       label={"floor": "within the noise floor", "ceiling": "at/above the uniform ceiling"}[mark],
                       **style)
    n_models = sum(not is_control(c) for c in columns)
    if 0 < n_models < len(columns):
        ax.axhline(n_models - 0.5, color="white", linewidth=2)
    ax.set_xticks(np.arange(len(questions)), questions, rotation=45, ha="right")
    ax.set_yticks(np.arange(len(columns)), columns, fontsize=6)
    colorbar = figure.colorbar(image, ax=ax, shrink=0.9, aspect=30,
                               extend="max" if metric.startswith("kl") else "neither")
    readable_colorbar(colorbar)
    colorbar.set_label(("JS distance (base 2)" if metric == "js_distance" else metric)
                       + f", fixed scale {low:g}-{high:g}")
    if len(marked):
        figure.legend(loc="outside upper center", ncols=2, fontsize=6)
    caption = (f"{'Jensen-Shannon distance (base 2, 0 = identical)' if metric == 'js_distance' else metric} "
               f"between each source's answer distribution and the real survey's, per question (columns), on a "
               f"fixed colour scale ({low:g}-{high:g}, the same in every report). Models above the white line, "
               f"controls below it. Cross: at or above the uniform control under the same elicitation method "
               f"(the ceiling, tested first); circle: below it and within the upper bound of the noise floor "
               f"(what a perfect simulator with as many personas scores from sampling alone; one-sided for "
               f"logprobs / verbalized). Grey: no answers. n = {len(questions)} questions, "
               f"{n_models} model row(s).")
    data = rows[["question", "column", "value", "floor", "ceiling", "mark"]].reset_index(drop=True)
    return PaperFigure(f"survey_heatmap_{metric}", figure, caption, data)


@in_style
def subgroup_gaps_figure(fidelity: pd.DataFrame) -> PaperFigure:
    """eta^2 of the human answers against each model's, per grouping axis (panels) and question (rows).

    A point whose side gave one answer to everyone (no variance: eta^2 = 0 by definition) is ringed
    and counted in the caption.

    ``data``: axis, question, source, eta2, ci_low, ci_high, no_variance (source ``human`` for the survey).
    """
    _require(fidelity, ("provider", "condition", "question", "group", "metric", "value"), "fidelity")
    rows = fidelity[fidelity["metric"].isin(["eta2_human", "eta2_model"])].copy()
    if rows.empty:
        raise InputError("fidelity", "eta2", "no subgroup rows (no grouping axis, or groups below min_group_n)")
    if "elicitation" not in rows:
        rows["elicitation"] = "sample"
    rows["column"] = _column_labels(rows)
    rows = rows[~rows["provider"].map(is_control)]
    if rows.empty:
        raise InputError("fidelity", "provider", "no model (only controls) has subgroup rows")
    human = (rows[rows["metric"] == "eta2_human"].drop_duplicates(["group", "question"])
             .assign(source="human"))
    model = rows[rows["metric"] == "eta2_model"].assign(source=lambda f: f["column"])
    data = pd.concat([human, model], ignore_index=True).rename(columns={"group": "axis", "value": "eta2"})
    notes = data["note"] if "note" in data else pd.Series("", index=data.index)
    data["no_variance"] = notes.fillna("").astype(str).str.contains("no answer variance")
    data = data[["axis", "question", "source", "eta2", "ci_low", "ci_high", "no_variance"]]
    axes = list(dict.fromkeys(data["axis"].astype(str)))
    questions = list(dict.fromkeys(data["question"].astype(str)))
    sources = _source_order(data["source"])
    ncols = min(len(axes), 2)
    nrows = int(np.ceil(len(axes) / ncols))
    figure = new_figure(width=WIDE_IN if ncols > 1 else 3.4, height=0.6 + nrows * (0.35 + 0.2 * len(questions)),
                        nrows=nrows, ncols=ncols, sharey=True)
    step = 0.6 / max(len(sources), 1)
    flagged = 0
    # the ring around a no-variance point takes a colour and marker no source has
    styles = series_styles([*sources, NO_VARIANCE], fixed={"human": SeriesStyle(OKABE_ITO[0], "D"),
                                                           NO_VARIANCE: SeriesStyle(OKABE_ITO[6], "o", hollow=True)})
    for ax, axis in zip(figure.axes, axes):
        for k, source in enumerate(sources):
            part = data[(data["axis"] == axis) & (data["source"] == source)]
            y = np.array([-questions.index(q) for q in part["question"]], float) + (k - (len(sources) - 1) / 2) * step
            value = part["eta2"].to_numpy(float)
            ax.errorbar(value, y, xerr=[np.clip(value - part["ci_low"].to_numpy(float), 0, None),
                                        np.clip(part["ci_high"].to_numpy(float) - value, 0, None)],
                        label=source, markersize=3, elinewidth=0.6, **styles[source].errorbar())
            flat = part["no_variance"].to_numpy(bool)
            if flat.any():
                ax.scatter(value[flat], y[flat], s=30, linewidths=0.8, label=NO_VARIANCE if not flagged else None,
                           **styles[NO_VARIANCE].scatter())
                flagged += int(flat.sum())
        ax.set_title(f"by {axis}", loc="left")
        ax.set_yticks(-np.arange(len(questions), dtype=float), questions)
        ax.set_ylim(-(len(questions) - 1) - 0.5, 0.5)  # room for every offset marker, one question or many
        ax.set_xlim(left=min(0.0, ax.get_xlim()[0]))
        ax.set_xlabel("eta^2 (between-group share of variance)")
    for ax in figure.axes[len(axes):]:
        ax.set_visible(False)
    legend = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    handles, labels = list(legend.values()), list(legend)
    figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 3), fontsize=6)
    caption = (f"Subgroup gaps: eta^2 of the ordinal answer position by group, for the real survey (human, "
               f"black diamonds) and each model x condition, per grouping axis and question. A model right of "
               f"the human point exaggerates the group differences, left of it erases them (delta eta^2 in "
               f"fidelity.csv). Bars: 95% bootstrap intervals over respondents and personas; groups with fewer "
               f"than min_group_n members on either side are left out. Ringed: {flagged} point(s) where one "
               f"answer was given to everyone (no variance, eta^2 = 0 by definition). n = {len(axes)} axes, "
               f"{len(questions)} questions.")
    return PaperFigure("survey_subgroup_gaps", figure, caption, data.reset_index(drop=True))
