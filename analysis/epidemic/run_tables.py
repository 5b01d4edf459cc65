"""An epidemic run read from its run store: region-day rows over replicates and the per-region summary.

An epidemic run (``pvsst run`` on a ``schedule: epidemic`` spec) holds one folder per replicate under
``RUN/replicates/`` with the model's region-day table (``region_days.parquet``: one row per region and
day, the columns of the epidemic model's ``region_days``). :func:`read_region_days` stacks the complete
replicates' rows with a ``replicate`` column; :func:`mean_region_days` averages them over replicates,
day by day; :func:`region_summary` gives one row per region.

Examples
--------
>>> days = pd.DataFrame({"replicate": "r0", "day": [0, 1, 0, 1], "region": ["a", "a", "b", "b"],
...     "population": [10, 10, 20, 20], "susceptible": [9, 6, 20, 19], "new_infections": [1, 3, 0, 1],
...     "new_symptomatic": [1, 2, 0, 0], "reports": [1, 1, 0, 0], "expected_reports": [0.5, 1.0, 0, 0],
...     "infectious": [1, 3, 0, 1], "reported_share_of_infectious": [1.0, 0.5, float("nan"), 0.0]})
>>> region_summary(days)[["region", "infections", "reports", "reporting_rate", "reports_per_infection"]]
  region  infections  reports  reporting_rate  reports_per_infection
0      a         4.0      2.0             0.2                    0.5
1      b         1.0      0.0             0.0                    0.0
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.store.reader import EPIDEMIC, iter_unit_tables, run_schedule
from pvsst.core.errors import InputError
from pvsst.core.run_layout import BANK, REPLICATES

SUMMED = ("new_infections", "new_symptomatic", "reports", "expected_reports")
SUMMARY_COLUMNS = ("region", "population", "replicates", "infections", "symptomatic", "reports", "expected_reports",
                   "reporting_rate", "reports_per_infection", "reports_per_symptomatic", "peak_day",
                   "mean_reported_share_of_infectious")


def is_epidemic_run(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds an epidemic run (its manifest says ``schedule: epidemic``)."""
    return run_schedule(run_dir) == EPIDEMIC


def read_region_days(run_dir: str | Path) -> pd.DataFrame:
    """The region-day rows of every complete replicate, with a ``replicate`` column first; a run without a
    complete replicate is an ``InputError``."""
    frames = [tables["region_days"].assign(replicate=replicate)
              for replicate, tables in iter_unit_tables(run_dir, REPLICATES, ("region_days",))]
    if not frames:
        raise InputError(str(run_dir), REPLICATES, "no complete replicate in this run (run or resume it first)")
    days = pd.concat(frames, ignore_index=True)
    return days[["replicate", *[c for c in days.columns if c != "replicate"]]]


def read_decisions(run_dir: str | Path) -> pd.DataFrame:
    """The decision rows of every complete replicate, with a ``replicate`` column first (empty: none)."""
    frames = [tables["decisions"].assign(replicate=replicate)
              for replicate, tables in iter_unit_tables(run_dir, REPLICATES, ("decisions",))]
    frames = [frame for frame in frames if not frame.empty]
    if not frames:
        return pd.DataFrame(columns=["replicate"])
    decisions = pd.concat(frames, ignore_index=True)
    return decisions[["replicate", *[c for c in decisions.columns if c != "replicate"]]]


def read_bank(run_dir: str | Path) -> pd.DataFrame:
    """The run's reporting bank table (``RUN/bank.parquet``)."""
    path = Path(run_dir) / BANK
    if not path.is_file():
        raise InputError(str(run_dir), BANK, "missing (the run wrote no bank: run or resume it first)")
    return pd.read_parquet(path)


def mean_region_days(days: pd.DataFrame) -> pd.DataFrame:
    """The numeric columns of the region-day rows averaged over replicates, per region and day."""
    numeric = [c for c in days.columns if c not in ("replicate", "region", "day", "case_level")
               and pd.api.types.is_numeric_dtype(days[c])]
    return days.groupby(["region", "day"], sort=True)[numeric].mean().reset_index()


def region_summary(days: pd.DataFrame) -> pd.DataFrame:
    """One row per region, averaged over replicates: :data:`SUMMARY_COLUMNS`.

    Parameters
    ----------
    days
        Region-day rows with ``replicate``, ``day``, ``region``, ``population``, ``susceptible``,
        ``new_infections``, ``new_symptomatic``, ``reports``, ``expected_reports``, ``infectious`` and
        ``reported_share_of_infectious``.

    Returns
    -------
    pandas.DataFrame
        ``infections`` (new infections summed over days, day 0's seeded ones included), ``symptomatic``
        (symptom onsets), ``reports`` and ``expected_reports`` (summed), ``reporting_rate`` (reports /
        population), ``reports_per_infection``, ``reports_per_symptomatic``, ``peak_day`` (the day with the
        most infectious agents) and ``mean_reported_share_of_infectious`` (reported / truly infectious,
        averaged over the days with an infectious agent); each the mean over replicates.
    """
    per = days.groupby(["replicate", "region"], sort=True)
    totals = per[list(SUMMED)].sum()
    totals["population"] = per["population"].first()
    totals["peak_day"] = days.loc[per["infectious"].idxmax(), ["replicate", "region", "day"]] \
        .set_index(["replicate", "region"])["day"]
    totals["mean_reported_share_of_infectious"] = per["reported_share_of_infectious"].mean()
    means = totals.groupby(level="region", sort=True).mean()
    means["replicates"] = totals.groupby(level="region").size()
    means = means.rename(columns={"new_infections": "infections", "new_symptomatic": "symptomatic"})
    with np.errstate(invalid="ignore", divide="ignore"):
        means["reporting_rate"] = means["reports"] / means["population"]
        means["reports_per_infection"] = np.where(means["infections"] > 0, means["reports"] / means["infections"],
                                                  np.nan)
        means["reports_per_symptomatic"] = np.where(means["symptomatic"] > 0,
                                                    means["reports"] / means["symptomatic"], np.nan)
    return means.reset_index()[list(SUMMARY_COLUMNS)]
