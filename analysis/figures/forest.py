"""Forest plots of paired contrasts: overall, by model and by topic, with the zero line.

Reads a table with PV-SST's published columns (``RUN/analysis/contrasts.csv``, or
:attr:`pvsst.analysis.stats.contrast_table.PairedContrastAnalysis.frame`): contrast, metric, stratum_type, stratum,
n_blocks, mean_difference, ci95_low, ci95_high, ... One row of the plot per row of the table, so the
drawn points and bars are the table's numbers.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"contrast": "c", "metric": "y", "stratum_type": ["overall", "model", "model"],
...                       "stratum": ["all", "a", "b"], "n_blocks": [4, 2, 2],
...                       "mean_difference": [0.2, 0.1, 0.3], "ci95_low": [0.1, 0.0, 0.2],
...                       "ci95_high": [0.3, 0.2, 0.4]})
>>> figure = contrast_forest_figure(table, "c", "y", draws=1000, seed=1)
>>> figure.data["label"].tolist()
['overall', 'model: a', 'model: b']
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import OKABE_ITO, PaperFigure, in_style, metric_unit, new_figure, pretty_label
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

STRATUM_ORDER = ("overall", "model", "topic")
FOREST_COLUMNS = ("contrast", "metric", "stratum_type", "stratum", "n_blocks", "mean_difference",
                  "ci95_low", "ci95_high")
STRATUM_COLORS = {"overall": OKABE_ITO[0], "model": OKABE_ITO[5], "topic": OKABE_ITO[6]}


def forest_rows(contrasts: pd.DataFrame, contrast: str, metric: str) -> pd.DataFrame:
    """The rows of one forest plot, top to bottom: overall, then each model, then each topic.

    Adds ``label`` ("overall", "model: NAME", "topic: NAME").
    """
    for column in FOREST_COLUMNS:
        if column not in contrasts.columns:
            raise InputError("contrasts", column, "missing column")
    rows = contrasts[(contrasts["contrast"] == contrast) & (contrasts["metric"] == metric)].copy()
    if rows.empty:
        raise InputError("contrasts", f"{contrast}/{metric}", "no rows for this contrast and metric")
    rank = {name: i for i, name in enumerate(STRATUM_ORDER)}
    rows["_rank"] = rows["stratum_type"].map(lambda t: rank.get(t, len(rank)))
    rows = rows.sort_values(["_rank", "stratum_type"], kind="stable").drop(columns="_rank")
    rows["label"] = [("overall" if t == "overall" else f"{t}: {s}")
                     for t, s in zip(rows["stratum_type"], rows["stratum"].astype(str))]
    return rows.reset_index(drop=True)


def draw_forest(ax, rows: pd.DataFrame) -> None:
    """Points at the mean difference with CI bars, one row each (top = first), and a zero line."""
    positions = -np.arange(len(rows), dtype=float)
    for stratum_type, group in rows.groupby("stratum_type", sort=False):
        index = group.index.to_numpy()
        mean = group["mean_difference"].to_numpy(float)
        ax.errorbar(mean, positions[index],
                    xerr=[mean - group["ci95_low"].to_numpy(float), group["ci95_high"].to_numpy(float) - mean],
                    fmt="D" if stratum_type == "overall" else "o",
                    color=STRATUM_COLORS.get(stratum_type, OKABE_ITO[3]), label=stratum_type)
    ax.axvline(0.0, color="0.5", linewidth=0.8, linestyle="--", zorder=0)
    ax.set_yticks(positions, rows["label"].tolist())
    ax.set_ylim(positions.min() - 0.7, 0.9)


@in_style
def contrast_forest_figure(contrasts: pd.DataFrame, contrast: str, metric: str, *,
                           draws: int = BOOTSTRAP_DRAWS, seed: int = ANALYSIS_SEED) -> PaperFigure:
    """Forest plot of one contrast on one metric: overall, by model and by topic, zero line dashed.

    ``data`` holds the plotted rows (the table's rows plus ``label``), top to bottom.
    """
    rows = forest_rows(contrasts, contrast, metric)
    figure = new_figure(height=0.7 + 0.2 * len(rows))
    ax = figure.axes[0]
    draw_forest(ax, rows)
    ax.set_xlabel(f"paired difference ({metric_unit(metric)})")
    ax.set_title(f"{pretty_label(contrast)}\n{pretty_label(metric)}")
    overall = rows[rows["stratum_type"] == "overall"]
    if len(overall):
        first = overall.iloc[0]
        ax.annotate(f"{first['mean_difference']:+.4f} [{first['ci95_low']:.4f}, {first['ci95_high']:.4f}]",
                    (first["mean_difference"], 0.0), xytext=(0, 5), textcoords="offset points", ha="center",
                    va="bottom", fontsize=6, bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
    n_overall = int(overall["n_blocks"].iloc[0]) if len(overall) else int(rows["n_blocks"].max())
    strata = rows[rows["stratum_type"] != "overall"]
    strata_n = (", ".join(f"{t}: {int(g['n_blocks'].min())}" + (f"-{int(g['n_blocks'].max())}"
                                                                 if g["n_blocks"].nunique() > 1 else "")
                          for t, g in strata.groupby("stratum_type", sort=False)))
    caption = (f"Paired contrast {contrast} on {metric} (treatment minus baseline, per block), overall and "
               f"by stratum. Points: mean block difference (overall value printed above its point); bars: 95% "
               f"percentile bootstrap CI over blocks "
               f"({draws:,} draws, seed {seed}); dashed line: no difference. n = {n_overall} blocks overall"
               + (f" (per stratum: {strata_n})" if strata_n else "") + ".")
    return PaperFigure(f"forest_{contrast}__{metric}", figure, caption, rows)


@in_style
def contrasts_overview_figure(contrasts: pd.DataFrame, metric: str, *, draws: int = BOOTSTRAP_DRAWS,
                              seed: int = ANALYSIS_SEED) -> PaperFigure:
    """Every contrast's overall difference on one metric (one row per contrast), zero line dashed.

    ``data``: the overall rows of ``metric`` in table order, with ``label`` = contrast name.
    """
    for column in FOREST_COLUMNS:
        if column not in contrasts.columns:
            raise InputError("contrasts", column, "missing column")
    rows = contrasts[(contrasts["metric"] == metric) & (contrasts["stratum_type"] == "overall")].copy()
    if rows.empty:
        raise InputError("contrasts", metric, "no overall rows for this metric")
    rows = rows.reset_index(drop=True)
    rows["label"] = rows["contrast"].map(pretty_label)
    figure = new_figure(height=0.8 + 0.22 * len(rows))
    ax = figure.axes[0]
    draw_forest(ax, rows)
    ax.set_xlabel(f"paired difference ({metric_unit(metric)})")
    ax.set_title(pretty_label(metric))
    caption = (f"All planned contrasts on {metric}, overall (treatment minus baseline per block). Points: "
               f"mean block difference; bars: 95% percentile bootstrap CI over blocks ({draws:,} draws, "
               f"seed {seed}); dashed line: no difference. n = "
               + ", ".join(f"{int(n)}" for n in rows["n_blocks"]) + " blocks (top to bottom).")
    return PaperFigure(f"contrasts_overall__{metric}", figure, caption, rows)
