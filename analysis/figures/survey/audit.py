"""Survey-report figures of a counterfactual audit and of stated-vs-enacted consistency.

- :func:`audit_disparity_figure` reads ``audit_shares.csv`` (:mod:`pvsst.analysis.survey.audit`): a
  panel per question (rows) and model x condition (columns); in each, every group level's share gap
  (its share of one option minus the mean of the other groups', with its bootstrap interval) against
  the arity-matched null band: the range of the same gap over the null's seed groups, as many as the
  groups. The option shown is the one whose group shares spread most (the audit's share spread).
  Controls are left out.
- :func:`consistency_figure` reads ``consistency.csv`` (:mod:`pvsst.analysis.survey.consistency`): a
  panel per model x (stated, enacted) pair; per question (and ``all``) the mean per-persona and the
  population total-variation distance with their intervals.

Examples
--------
>>> rows = [{"model": "m", "condition": "c", "audit_role": role, "question": "q", "group": g, "option": o,
...          "share": s, "share_gap": gap, "share_gap_low": gap - 0.1, "share_gap_high": gap + 0.1}
...         for role, groups in (("audit", ("a/x", "b/x")), ("arity_null", ("seed0", "seed1")))
...         for i, g in enumerate(groups)
...         for o, s, gap in (("yes", 0.6 - 0.2 * i * (role == "audit"),
...                            0.2 * (1 - 2 * i) if role == "audit" else 0.0),
...                           ("no", 0.4 + 0.2 * i * (role == "audit"),
...                            -0.2 * (1 - 2 * i) if role == "audit" else 0.0))]
>>> figure = audit_disparity_figure(pd.DataFrame(rows))
>>> figure.data[["group", "option", "share_gap", "null_low", "null_high"]].values.tolist()
[['a/x', 'yes', 0.2, 0.0, 0.0], ['b/x', 'yes', -0.2, 0.0, 0.0]]
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import NULL_BAND_GREY, OKABE_ITO, WIDE_IN, PaperFigure, in_style, new_figure
from pvsst.analysis.figures.survey.answers import _require
from pvsst.analysis.figures.survey.fidelity import is_control


def _shown_option(audit: pd.DataFrame) -> str:
    """The option whose max-min spread of group shares is largest (the first in a tie)."""
    spread = audit.groupby("option", sort=False)["share"].agg(lambda s: s.max() - s.min()).round(12)
    return str(spread.idxmax())


@in_style
def audit_disparity_figure(shares: pd.DataFrame, source_columns: tuple[str, ...] = ("model", "condition"),
                           name: str = "survey_audit_disparity") -> PaperFigure:
    """Share gap per group level against the arity-matched null band (see the module docstring); one
    column of panels per source (the values of ``source_columns``: a survey's model and condition, a
    study audit's model and topic).

    ``data``: question, source, option, group, share_gap, share_gap_low, share_gap_high, null_low, null_high.
    """
    _require(shares, (*source_columns, "audit_role", "question", "group", "option", "share", "share_gap",
                      "share_gap_low", "share_gap_high"), "audit shares")
    shares = shares[~shares["model"].astype(str).map(is_control)]
    _require(shares, ("model",), "audit shares of a model")
    shares = shares.assign(source=shares[list(source_columns)].astype(str).agg(" | ".join, axis=1))
    questions = list(dict.fromkeys(shares["question"].astype(str)))
    sources = list(dict.fromkeys(shares["source"]))
    figure = new_figure(width=min(WIDE_IN, 1.0 + 2.4 * len(sources)), height=0.6 + 1.5 * len(questions),
                        nrows=len(questions), ncols=len(sources), sharey=True)
    grid = np.asarray(figure.axes).reshape(len(questions), len(sources))
    records = []
    for i, question in enumerate(questions):
        for j, source in enumerate(sources):
            ax = grid[i, j]
            part = shares[(shares["question"].astype(str) == question) & (shares["source"] == source)]
            audit, null = part[part["audit_role"] == "audit"], part[part["audit_role"] == "arity_null"]
            if audit.empty:
                ax.set_axis_off()
                continue
            option = _shown_option(audit)
            rows = audit[audit["option"] == option].reset_index(drop=True)
            floor = null.loc[null["option"] == option, "share_gap"]
            low, high = (float(floor.min()), float(floor.max())) if len(floor) else (np.nan, np.nan)
            x = np.arange(len(rows))
            if len(floor):
                ax.axhspan(low, high, color=NULL_BAND_GREY, alpha=0.5, lw=0, label="arity-matched null (seed groups)")
            ax.axhline(0, color="black", lw=0.5)
            ax.errorbar(x, rows["share_gap"], yerr=[rows["share_gap"] - rows["share_gap_low"],
                                                    rows["share_gap_high"] - rows["share_gap"]],
                        fmt="o", color=OKABE_ITO[5], ms=3, capsize=2, lw=0.8, label="group share gap")
            ax.set_xticks(x, rows["group"].astype(str), rotation=45, ha="right", fontsize=6)
            ax.set_title(f"{question}: {option}\n{source}" if i == 0 else f"{question}: {option}", fontsize=6)
            if j == 0:
                ax.set_ylabel("share gap vs other groups")
            records += [{"question": question, "source": source, "option": option, "group": r.group,
                         "share_gap": r.share_gap, "share_gap_low": r.share_gap_low, "share_gap_high": r.share_gap_high,
                         "null_low": low, "null_high": high} for r in rows.itertuples()]
    handles, labels = grid[0, 0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside upper center", ncols=2, fontsize=6)
    caption = ("Counterfactual audit: each group's share of the option whose group shares spread most, minus the "
               "mean of the other groups' (point, percentile bootstrap interval over matched sets), against the "
               "arity-matched null band (grey: the range of the same gap over as many groups made by changing "
               "only the request seed). A gap inside the band is within seed noise.")
    return PaperFigure(name, figure, caption, pd.DataFrame(records))


@in_style
def consistency_figure(summary: pd.DataFrame) -> PaperFigure:
    """Stated-vs-enacted total-variation distances per question (see the module docstring).

    ``data``: panel, question, metric, value, ci_low, ci_high.
    """
    _require(summary, ("model", "stated", "enacted", "question", "metric", "value", "ci_low", "ci_high"),
             "consistency")
    summary = summary.assign(panel=summary["model"].astype(str) + " | " + summary["stated"].astype(str) + " vs "
                             + summary["enacted"].astype(str))
    panels = list(dict.fromkeys(summary["panel"]))
    questions = list(dict.fromkeys(summary["question"].astype(str)))
    figure = new_figure(width=WIDE_IN, height=0.8 + 0.16 * len(questions) * ((len(panels) + 1) // 2),
                        nrows=(len(panels) + 1) // 2, ncols=min(2, len(panels)), sharex=True)
    metrics = {"mean_tv_distance": ("per persona (mean)", OKABE_ITO[5], -0.15),
               "population_tv_distance": ("population", OKABE_ITO[6], 0.15)}
    records = []
    for ax, panel in zip(figure.axes, panels):
        part = summary[summary["panel"] == panel]
        for metric, (label, colour, offset) in metrics.items():
            rows = part[part["metric"] == metric].set_index("question").reindex(questions)
            y = np.arange(len(questions)) + offset
            low = (rows["value"] - rows["ci_low"]).clip(lower=0).fillna(0)
            high = (rows["ci_high"] - rows["value"]).clip(lower=0).fillna(0)
            ax.errorbar(rows["value"], y, xerr=[low, high], fmt="o", ms=3, color=colour, capsize=2, lw=0.8, label=label)
            records += [{"panel": panel, "question": q, "metric": metric, "value": r.value, "ci_low": r.ci_low,
                         "ci_high": r.ci_high} for q, r in zip(questions, rows.itertuples())]
        ax.set_yticks(np.arange(len(questions)), questions, fontsize=6)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_title(panel, fontsize=6)
        ax.set_xlabel("total-variation distance, stated vs enacted")
    for ax in figure.axes[len(panels):]:
        ax.set_axis_off()
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside upper center", ncols=2, fontsize=6)
    caption = ("Stated (verbalized) against enacted (sampled or log-probability) answer distributions of the same "
               "personas: the mean over personas of their total-variation distance, and the distance between the "
               "population's mean stated and mean enacted distributions, with percentile bootstrap intervals over "
               "personas; 0 = the model does as it says.")
    return PaperFigure("survey_consistency", figure, caption, pd.DataFrame(records))
