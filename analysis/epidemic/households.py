"""Within-household agreement of an epidemic's reporting decisions, observed and exact under chaining.

In an epidemic run with a chained bank, the first member of a household to decide draws from the
independent bank (``household_level`` ``none``) and every later member from the bank given that first
decision. :func:`decision_agreement` pools the decisions of every replicate (a household of one
replicate is not that of another), and compares the agreement and pair correlation of the decisions
made (:func:`~pvsst.analysis.scenarios.household_agreement.observed_household_agreement`) with their
exact expectation given who decided and at which case level
(:func:`~pvsst.analysis.scenarios.household_agreement.expected_household_agreement`, with each deciding
member's three bank probabilities at its cell and case level).

Examples
--------
>>> bank = pd.DataFrame({"cell_id": "c", "case_level": "0", "household": ["none", "member_reported",
...                      "member_did_not_report"], "p_yes": [0.5, 0.9, 0.1]})
>>> decisions = pd.DataFrame({"replicate": "r0", "household": ["h1", "h1", "h2", "h2"], "cell_id": "c",
...     "case_level": "0", "household_level": ["none", "member_reported", "none", "member_reported"],
...     "reported": [True, True, True, False]})
>>> table = decision_agreement(decisions, bank)
>>> table[["pairs", "observed_agreement", "exact_agreement", "exact_correlation"]].round(6).values.tolist()
[[2.0, 0.5, 0.9, 0.8]]
"""
from __future__ import annotations

import pandas as pd

from pvsst.analysis.scenarios.household_agreement import expected_household_agreement, observed_household_agreement
from pvsst.core.errors import InputError

AGREEMENT_COLUMNS = ("pairs", "observed_agreement", "observed_agreement_se", "exact_agreement",
                     "observed_correlation", "exact_correlation", "observed_yes_share", "exact_yes_share")
LEVELS = ("none", "member_reported", "member_did_not_report")


def decision_agreement(decisions: pd.DataFrame, bank: pd.DataFrame) -> pd.DataFrame:
    """One row: within-household agreement of the decisions made, observed and exact (module docstring).

    Parameters
    ----------
    decisions
        The decision rows of the replicates: ``replicate``, ``household``, ``cell_id``, ``case_level``,
        ``household_level`` and ``reported``.
    bank
        The run's bank table with a ``household`` column (a chained bank).

    Returns
    -------
    pandas.DataFrame
        :data:`AGREEMENT_COLUMNS`; ``observed_agreement_se`` from the independence of households.
    """
    if "household" not in bank.columns:
        raise InputError("bank", "household", "the bank has no household levels: decisions are not chained")
    rows = decisions.dropna(subset=["household"])
    keys = ["cell_id", "case_level"]
    wide = bank.astype({"cell_id": str, "case_level": str}).pivot_table(index=keys, columns="household",
                                                                        values="p_yes", aggfunc="first")
    at = wide.reindex(pd.MultiIndex.from_frame(rows[keys].astype(str)))
    household = rows["replicate"].astype(str) + "/" + rows["household"].astype(str)
    member = (rows["household_level"] != "none").astype(int).to_numpy()
    exact = expected_household_agreement(household.to_numpy(), member, *(at[level].to_numpy() for level in LEVELS))
    observed = observed_household_agreement(household.to_numpy(), rows["reported"].astype(bool).to_numpy())
    return pd.DataFrame([{"pairs": float(observed.pairs), "observed_agreement": observed.agreement,
                          "observed_agreement_se": observed.agreement_se, "exact_agreement": exact.agreement,
                          "observed_correlation": observed.correlation, "exact_correlation": exact.correlation,
                          "observed_yes_share": observed.yes_share, "exact_yes_share": exact.yes_share}])
