"""Selection versus influence on a dynamic follow network (one trial at a time).

The edges table holds the whole follow graph at each round where it changed; the graph at round ``r``
is the latest snapshot at or before ``r``.

- **Selection** (tie formation): over ordered pairs (i, j), i != j, not linked at round r-1, does i follow
  j at round r? Logit of that on the attribute distance ``|x_i - x_j|`` at r-1 (statsmodels, errors
  clustered by the follower). A negative coefficient: agents pick alike others.
- **Influence**: OLS of an agent's stance at round r on its own stance at r-1 and the mean stance of the
  accounts it followed at r-1, errors clustered by agent. A positive followee coefficient: agents move
  toward those they follow.

Examples
--------
>>> edges = pd.DataFrame({"round": [0, 1, 1], "source": [0, 0, 1], "target": [1, 1, 0]})
>>> sorted(follow_graph_at(edges, 1).edges())
[(0, 1), (1, 0)]
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import pandas as pd
import statsmodels.api as sm

from pvsst.core.errors import InputError


@dataclass(frozen=True)
class RegressionEffect:
    """One coefficient of a selection or influence regression."""

    analysis: str
    term: str
    coefficient: float
    std_error: float
    p_value: float
    n_observations: int


def follow_graph_at(edges: pd.DataFrame, round_: int, nodes=()) -> nx.DiGraph:
    """The follow graph at ``round_``: the latest snapshot at or before it.

    Parameters
    ----------
    edges : pandas.DataFrame
        ``round``, ``source``, ``target``: the whole follow graph at each round where it changed.
    round_ : int
        The round.
    nodes : iterable
        Nodes to include even without edges.

    Returns
    -------
    networkx.DiGraph

    Examples
    --------
    >>> edges = pd.DataFrame({"round": [0, 1, 1], "source": [0, 0, 1], "target": [1, 1, 0]})
    >>> sorted(follow_graph_at(edges, 1).edges()), sorted(follow_graph_at(edges, 0, nodes=[2]).nodes())
    ([(0, 1), (1, 0)], [0, 1, 2])
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    recorded = edges.loc[edges["round"] <= round_, "round"]
    if len(recorded):
        snapshot = edges[edges["round"] == recorded.max()]
        graph.add_edges_from(zip(snapshot["source"], snapshot["target"]))
    return graph


def selection_effect(edges: pd.DataFrame, attributes: pd.DataFrame, attribute: str) -> RegressionEffect:
    """Tie formation on attribute distance: logit of new follows on ``|x_i - x_j|``.

    Parameters
    ----------
    edges : pandas.DataFrame
        ``round``, ``source``, ``target`` snapshots (:func:`follow_graph_at`).
    attributes : pandas.DataFrame
        ``agent_id``, ``attribute`` and optionally ``round`` (time-varying, e.g. stance by round; the value
        at round r-1 is the latest at or before it).
    attribute : str
        The numeric attribute.

    Returns
    -------
    RegressionEffect
        The ``distance`` coefficient, its cluster-robust standard error and p, and the number of pairs.

    Raises
    ------
    InputError
        No variation in tie formation to model.

    Notes
    -----
    Over ordered pairs ``(i, j)``, ``i != j``, not linked at round ``r - 1``, for each pair of consecutive
    snapshot rounds: ``logit P(i follows j at r) = b0 + b1 |x_i(r-1) - x_j(r-1)|``, errors clustered by
    follower (statsmodels ``Logit``). ``b1 < 0``: agents pick alike others.

    References
    ----------
    .. [1] S. Aral, L. Muchnik and A. Sundararajan, "Distinguishing influence-based contagion from
       homophily-driven diffusion in dynamic networks", PNAS 106(51), 21544-21549, 2009.
    .. [2] C. R. Shalizi and A. C. Thomas, "Homophily and contagion are generically confounded in
       observational social network studies", Sociological Methods & Research 40(2), 211-239, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> x = pd.DataFrame({"agent_id": range(6), "group": [0, 0, 0, 1, 1, 1]})
    >>> after = [(0, 1), (1, 0), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (5, 4), (2, 3), (3, 0)]
    >>> edges = pd.DataFrame([(0, 0, 1)] + [(1, s, t) for s, t in after], columns=["round", "source", "target"])
    >>> effect = selection_effect(edges, x, "group")  # new ties: 7 of 11 pairs within groups, 2 of 18 across
    >>> round(effect.coefficient, 4), round(float(np.log((2 / 16) / (7 / 4))), 4), effect.n_observations
    (-2.6391, -2.6391, 29)
    """
    rounds = sorted(edges["round"].unique())
    agents = sorted(attributes["agent_id"].unique())
    rows = []
    for previous, current in zip(rounds[:-1], rounds[1:]):
        before, after = follow_graph_at(edges, previous, agents), follow_graph_at(edges, current, agents)
        x = _attribute_at(attributes, attribute, previous)
        for i in agents:
            for j in agents:
                if i != j and not before.has_edge(i, j):
                    rows.append((i, abs(x[i] - x[j]), float(after.has_edge(i, j))))
    frame = pd.DataFrame(rows, columns=["follower", "distance", "formed"])
    if frame.empty or frame["formed"].nunique() < 2:
        raise InputError("edges", "round", "no variation in tie formation to model")
    design = sm.add_constant(frame[["distance"]])
    fit = sm.Logit(frame["formed"], design).fit(disp=0, cov_type="cluster",
                                                cov_kwds={"groups": frame["follower"].to_numpy()})
    return RegressionEffect("selection", "distance", float(fit.params["distance"]),
                            float(fit.bse["distance"]), float(fit.pvalues["distance"]), len(frame))


def influence_effect(edges: pd.DataFrame, stances: pd.DataFrame) -> RegressionEffect:
    """Influence: lagged OLS of an agent's stance on its own and its followees' previous stances.

    Parameters
    ----------
    edges : pandas.DataFrame
        ``round``, ``source``, ``target`` snapshots (:func:`follow_graph_at`).
    stances : pandas.DataFrame
        ``round``, ``agent_id``, ``stance``, one row per agent and round.

    Returns
    -------
    RegressionEffect
        The ``followee_stance`` coefficient, its cluster-robust standard error and p, and the number of
        agent-rounds.

    Raises
    ------
    InputError
        Fewer than four agent-rounds with followees.

    Notes
    -----
    ``s_i(r) = b0 + b1 s_i(r-1) + b2 mean_{j followed by i at r-1} s_j(r-1) + e``, OLS with errors
    clustered by agent; ``b2 > 0``: agents move toward those they follow.

    References
    ----------
    .. [1] S. Aral, L. Muchnik and A. Sundararajan, "Distinguishing influence-based contagion from
       homophily-driven diffusion in dynamic networks", PNAS 106(51), 21544-21549, 2009.
    .. [2] C. R. Shalizi and A. C. Thomas, "Homophily and contagion are generically confounded in
       observational social network studies", Sociological Methods & Research 40(2), 211-239, 2011.

    Examples
    --------
    >>> stances = pd.DataFrame({"round": [0] * 4 + [1] * 4 + [2] * 4, "agent_id": [0, 1, 2, 3] * 3,
    ...                         "stance": [3, -3, 1, -1, 2, -2, 1, 0, 1, -1, 1, 1]})
    >>> edges = pd.DataFrame({"round": 0, "source": [0, 1, 2, 3], "target": [1, 0, 3, 2]})
    >>> effect = influence_effect(edges, stances)
    >>> round(effect.coefficient, 4), effect.n_observations
    (0.5351, 8)
    """
    wide = stances.pivot_table(index="agent_id", columns="round", values="stance", aggfunc="last")
    rounds = list(wide.columns)
    rows = []
    for previous, current in zip(rounds[:-1], rounds[1:]):
        graph = follow_graph_at(edges, previous, wide.index)
        for agent in wide.index:
            followees = [j for j in graph.successors(agent) if j in wide.index]
            if followees:
                rows.append((agent, wide.at[agent, current], wide.at[agent, previous],
                             float(wide.loc[followees, previous].mean())))
    frame = pd.DataFrame(rows, columns=["agent", "stance", "lagged_stance", "followee_stance"]).dropna()
    if len(frame) < 4:
        raise InputError("edges", "source", "too few agent-rounds with followees for an influence model")
    design = sm.add_constant(frame[["lagged_stance", "followee_stance"]])
    fit = sm.OLS(frame["stance"], design).fit(cov_type="cluster",
                                              cov_kwds={"groups": frame["agent"].to_numpy()})
    return RegressionEffect("influence", "followee_stance", float(fit.params["followee_stance"]),
                            float(fit.bse["followee_stance"]), float(fit.pvalues["followee_stance"]),
                            len(frame))


def _attribute_at(attributes: pd.DataFrame, attribute: str, round_: int) -> dict:
    if "round" in attributes.columns:
        known = attributes[attributes["round"] <= round_].sort_values("round")
        return known.groupby("agent_id")[attribute].last().astype(float).to_dict()
    return attributes.set_index("agent_id")[attribute].astype(float).to_dict()
