"""The epidemic figure: reports against true infections, per region and day.

Reads the region-day table of the epidemic model (``pvsst.sim.epidemic``; columns ``day``, ``region``,
``new_infections``, ``reports``, ``expected_reports``, ``infectious``, ``reported_infectious``, ...).
One panel per region (three to a row, each on its own scale): new infections (the truth) and reports
made (what a health department would see) per day, with the expected reports (the sum of the
deciding agents' bank probabilities) as a dashed line; the gap between infections and reports is what reporting misses.

Examples
--------
>>> import pandas as pd
>>> days = pd.DataFrame({"day": [0, 1, 0, 1], "region": ["atl", "atl", "sf", "sf"], "new_infections": [5, 9, 3, 4],
...                      "reports": [1, 3, 0, 2], "expected_reports": [1.2, 2.7, 0.5, 1.5]})
>>> figure = reports_vs_infections_figure(days)
>>> figure.data.groupby("region")["reports"].sum().to_dict()
{'atl': 4, 'sf': 2}
>>> figure.close()
"""
from __future__ import annotations

import pandas as pd

from pvsst.analysis.figures.style import OKABE_ITO, PaperFigure, in_style, new_figure
from pvsst.core.errors import InputError

COLUMNS = ("day", "region", "new_infections", "reports", "expected_reports")
PANELS_PER_ROW = 3


@in_style
def reports_vs_infections_figure(region_days: pd.DataFrame) -> PaperFigure:
    """New infections, reports and expected reports per day, one panel per region (in the table's order).

    Parameters
    ----------
    region_days
        The epidemic model's region-day table (at least :data:`COLUMNS`).

    Returns
    -------
    PaperFigure
        ``data`` holds the plotted rows (:data:`COLUMNS`), name ``reports_vs_infections``.

    Examples
    --------
    >>> days = pd.DataFrame({"day": [0], "region": ["r"], "new_infections": [2], "reports": [1],
    ...                      "expected_reports": [0.5]})
    >>> reports_vs_infections_figure(days).name
    'reports_vs_infections'
    """
    for column in COLUMNS:
        if column not in region_days.columns:
            raise InputError("region days", column, "missing column")
    regions = list(dict.fromkeys(region_days["region"]))   # panels in the order the regions come
    order = pd.Categorical(region_days["region"], categories=regions, ordered=True)
    data = region_days[list(COLUMNS)].assign(_order=order).sort_values(["_order", "day"], kind="stable") \
        .drop(columns="_order").reset_index(drop=True)
    ncols = min(len(regions), PANELS_PER_ROW)
    nrows = -(-len(regions) // ncols)
    figure = new_figure(width=3.2 * ncols, height=2.4 * nrows, nrows=nrows, ncols=ncols)
    for ax in figure.axes[len(regions):]:
        ax.set_visible(False)
    for ax, region in zip(figure.axes, regions):
        rows = data[data["region"] == region]
        ax.plot(rows["day"], rows["new_infections"], color=OKABE_ITO[6], label="new infections")
        ax.plot(rows["day"], rows["reports"], color=OKABE_ITO[5], marker="o", markersize=2.5, label="reports")
        ax.plot(rows["day"], rows["expected_reports"], color=OKABE_ITO[2], linestyle="--",
                label="expected reports")
        ax.set_title(str(region))
        ax.set_xlabel("day")
        ax.set_ylabel("people per day")
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    caption = ("New infections (the truth) against reports made per day, by region; dashed: expected reports "
               "(the deciding agents' bank probabilities summed).")
    return PaperFigure(name="reports_vs_infections", figure=figure, caption=caption, data=data)
