"""Survey-report figures: answer shares per question, a Jensen-Shannon heatmap, subgroup gaps (eta^2).

They read the tables a survey run's analysis writes: the answer shares
(:func:`analysis.survey.shares.answer_shares`: question, source, provider, condition, elicitation,
option, position, share) and ``RUN/analysis/fidelity.csv`` (provider, condition, elicitation, question,
group, metric, value, ci_low, ci_high). Controls are the providers named ``oracle`` (the respondents'
own answers: the sampling-noise floor), ``marginal`` (the population distribution for everyone) and
``uniform`` (every option equally likely: the ceiling a simulator should stay below).

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

from analysis.figures.fidelity import CONTROL_KEYWORDS, is_control
from analysis.figures.style import LINE_COLORS, MARKERS, OKABE_ITO, PaperFigure, in_style, new_figure

WIDE_IN = 7.0  # double column: these figures hold every question at once
SHARE_CMAP = "cividis"  # sequential, colour-blind safe; ordered options get ordered shades
HEAT_CMAP = "cividis"
FLOOR, CEILING = "oracle", "uniform"


def _require(table: pd.DataFrame, columns, what: str) -> None:
    from personas.errors import InputError

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


@in_style
def answer_shares_figure(shares: pd.DataFrame, *, ncols: int = 2) -> PaperFigure:
    """Per question (one panel each), a 100% stacked bar per source: human, each model x condition, controls.

    ``data``: question, source, option, position, share, left (where the bar segment starts), row.
    """
    _require(shares, ("question", "source", "option", "position", "share"), "answer shares")
    questions = list(dict.fromkeys(shares["question"].astype(str)))
    sources = _source_order(shares["source"])
    ncols = max(1, min(ncols, len(questions)))
    nrows = int(np.ceil(len(questions) / ncols))
    figure = new_figure(width=WIDE_IN, height=0.45 + nrows * (0.25 + 0.16 * len(sources)), nrows=nrows,
                        ncols=ncols, sharex=True, sharey=True)
    records = []
    legend_handles: dict[str, object] = {}
    for ax, question in zip(figure.axes, questions):
        part = shares[shares["question"].astype(str) == question].sort_values("position", kind="stable")
        options = list(dict.fromkeys(part["option"].astype(str)))
        colours = mpl.colormaps[SHARE_CMAP](np.linspace(0.1, 0.9, len(options)))
        for row, source in enumerate(sources):
            left = 0.0
            values = part[part["source"].astype(str) == source].set_index("option")["share"]
            for option, colour in zip(options, colours):
                share = float(values.get(option, np.nan))
                if not np.isfinite(share):
                    continue
                bar = ax.barh(-row, share, left=left, color=colour, height=0.75, edgecolor="white", linewidth=0.3)
                legend_handles.setdefault(option, bar)
                records.append({"question": question, "source": source, "option": option,
                                "position": options.index(option), "share": share, "left": left, "row": -row})
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
    labels = list(legend_handles)
    figure.legend([legend_handles[k] for k in labels], labels, loc="outside upper center",
                  ncols=min(len(labels), 6), fontsize=6)
    caption = (f"Answer shares per question: the real survey (human, top row, weighted where the data has "
               f"weights) beside each model x condition and the controls (oracle, marginal, uniform), options "
               f"stacked left to right in the instrument's order. Sampled conditions: share of answers; "
               f"logprobs / verbalized conditions: mean of the personas' distributions. Point estimates; "
               f"n = {len(questions)} questions, {len(sources)} sources.")
    return PaperFigure("survey_answer_shares", figure, caption, pd.DataFrame(records))


def _column_labels(frame: pd.DataFrame) -> pd.Series:
    method = frame["elicitation"].astype(str) if "elicitation" in frame else pd.Series("sample", index=frame.index)
    suffix = np.where(method == "sample", "", " (" + method + ")")
    return frame["provider"].astype(str) + " | " + frame["condition"].astype(str) + suffix


@in_style
def js_heatmap_figure(fidelity: pd.DataFrame, metric: str = "js_distance") -> PaperFigure:
    """Questions x (model, condition) of one metric: sources as rows (models above the white line, controls
    below), questions as columns; per elicitation
    method the oracle floor and the uniform ceiling are marked: a cell within the oracle's interval
    gets a circle (at the noise floor), a cell at or above the uniform control's value a cross.

    ``data``: question, column, value, floor (oracle ci_high), ceiling (uniform value), mark.
    """
    _require(fidelity, ("provider", "condition", "question", "group", "metric", "value", "ci_high"), "fidelity")
    rows = fidelity[(fidelity["metric"] == metric) & (fidelity["group"].astype(str) == "all")].copy()
    _require(rows, ("value",), f"fidelity ({metric})")
    if "elicitation" not in rows:
        rows["elicitation"] = "sample"
    rows["column"] = _column_labels(rows)
    questions = list(dict.fromkeys(rows["question"].astype(str)))
    columns = [c for c in _source_order(rows["column"])]
    bound = {}
    for kind, field in ((FLOOR, "ci_high"), (CEILING, "value")):
        part = rows[rows["provider"].astype(str).str.contains(kind)]
        bound[kind] = part.set_index(["question", "elicitation"])[field].to_dict()
    rows["floor"] = [bound[FLOOR].get((q, e), np.nan) for q, e in zip(rows["question"], rows["elicitation"])]
    rows["ceiling"] = [bound[CEILING].get((q, e), np.nan) for q, e in zip(rows["question"], rows["elicitation"])]
    model = ~rows["provider"].map(is_control)
    rows["mark"] = np.where(model & (rows["value"] <= rows["floor"]), "floor",
                            np.where(model & (rows["value"] >= rows["ceiling"]), "ceiling", ""))
    # Sources are rows (their long names read horizontally), questions are columns.
    grid = rows.pivot_table(index="column", columns="question", values="value", sort=False).reindex(
        index=columns, columns=questions)
    figure = new_figure(width=WIDE_IN, height=1.2 + 0.2 * len(columns))
    ax = figure.axes[0]
    values = grid.to_numpy(float)
    image = ax.imshow(values, cmap=HEAT_CMAP, aspect="auto", vmin=0.0,
                      vmax=max(float(np.nanmax(values)) if np.isfinite(values).any() else 0.0, 1e-9))
    for i in range(len(columns)):
        for j in range(len(questions)):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=5,
                        color="white" if values[i, j] < 0.55 * image.get_clim()[1] else "black")
    marked = rows[rows["mark"] != ""]
    for mark, style in (("floor", {"marker": "o", "facecolors": "none", "edgecolors": OKABE_ITO[6]}),
                        ("ceiling", {"marker": "x", "c": OKABE_ITO[6]})):
        part = marked[marked["mark"] == mark]
        if len(part):
            ax.scatter([questions.index(q) + 0.36 for q in part["question"]],
                       [columns.index(c) - 0.22 for c in part["column"]], s=9, linewidths=0.7,
                       label={"floor": "within the oracle floor", "ceiling": "at/above the uniform ceiling"}[mark],
                       **style)
    n_models = sum(not is_control(c) for c in columns)
    if 0 < n_models < len(columns):
        ax.axhline(n_models - 0.5, color="white", linewidth=2)
    ax.set_xticks(np.arange(len(questions)), questions, rotation=45, ha="right")
    ax.set_yticks(np.arange(len(columns)), columns, fontsize=6)
    colorbar = figure.colorbar(image, ax=ax, shrink=0.9, aspect=30)
    colorbar.set_label("JS distance (base 2)" if metric == "js_distance" else metric)
    if len(marked):
        figure.legend(loc="outside upper center", ncols=2, fontsize=6)
    caption = (f"{'Jensen-Shannon distance (base 2, 0 = identical)' if metric == 'js_distance' else metric} "
               f"between each source's answer distribution and the real survey's, per question (columns). "
               f"Models above the white line, controls below it. Circle: the model is within the "
               f"oracle's 95% bootstrap interval (the sampling-noise floor) for the same elicitation method; "
               f"cross: at or above the uniform control (the ceiling). n = {len(questions)} questions, "
               f"{n_models} model column(s).")
    data = rows[["question", "column", "value", "floor", "ceiling", "mark"]].reset_index(drop=True)
    return PaperFigure(f"survey_heatmap_{metric}", figure, caption, data)


@in_style
def subgroup_gaps_figure(fidelity: pd.DataFrame) -> PaperFigure:
    """eta^2 of the human answers against each model's, per grouping axis (panels) and question (rows).

    ``data``: axis, question, source, eta2, ci_low, ci_high (source ``human`` for the survey itself).
    """
    _require(fidelity, ("provider", "condition", "question", "group", "metric", "value"), "fidelity")
    rows = fidelity[fidelity["metric"].isin(["eta2_human", "eta2_model"])].copy()
    from personas.errors import InputError

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
    data = data[["axis", "question", "source", "eta2", "ci_low", "ci_high"]]
    axes = list(dict.fromkeys(data["axis"].astype(str)))
    questions = list(dict.fromkeys(data["question"].astype(str)))
    sources = _source_order(data["source"])
    ncols = min(len(axes), 2)
    nrows = int(np.ceil(len(axes) / ncols))
    figure = new_figure(width=WIDE_IN if ncols > 1 else 3.4, height=0.6 + nrows * (0.35 + 0.2 * len(questions)),
                        nrows=nrows, ncols=ncols, sharey=True)
    step = 0.6 / max(len(sources), 1)
    for ax, axis in zip(figure.axes, axes):
        for k, source in enumerate(sources):
            part = data[(data["axis"] == axis) & (data["source"] == source)]
            y = np.array([-questions.index(q) for q in part["question"]], float) + (k - (len(sources) - 1) / 2) * step
            value = part["eta2"].to_numpy(float)
            colour = OKABE_ITO[0] if source == "human" else LINE_COLORS[(k % (len(LINE_COLORS) - 1)) + 1]
            ax.errorbar(value, y, xerr=[np.clip(value - part["ci_low"].to_numpy(float), 0, None),
                                        np.clip(part["ci_high"].to_numpy(float) - value, 0, None)],
                        fmt="D" if source == "human" else MARKERS[k % len(MARKERS)], color=colour, label=source,
                        markersize=3, elinewidth=0.6)
        ax.set_title(f"by {axis}", loc="left")
        ax.set_yticks(-np.arange(len(questions), dtype=float), questions)
        ax.set_xlabel("eta^2 (between-group share of variance)")
    for ax in figure.axes[len(axes):]:
        ax.set_visible(False)
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 3), fontsize=6)
    caption = (f"Subgroup gaps: eta^2 of the ordinal answer position by group, for the real survey (human, "
               f"black diamonds) and each model x condition, per grouping axis and question. A model right of "
               f"the human point exaggerates the group differences, left of it erases them (delta eta^2 in "
               f"fidelity.csv). Bars: 95% bootstrap intervals over respondents and personas; groups with fewer "
               f"than min_group_n members on either side are left out. n = {len(axes)} axes, "
               f"{len(questions)} questions.")
    return PaperFigure("survey_subgroup_gaps", figure, caption, data.reset_index(drop=True))
