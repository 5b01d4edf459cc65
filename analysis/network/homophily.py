"""Homophily of follow and like graphs: assortativity against label-shuffle and rewiring nulls.

The coefficients are networkx's (Newman 2003, "Mixing patterns in networks", Phys. Rev. E 67), computed on
edge arrays so that the observed value and every null replicate share one arithmetic and do not depend
on the process's hash seed:

- attribute assortativity ``r = (sum_i e_ii - sum_i a_i b_i) / (1 - sum_i a_i b_i)`` with ``e`` the
  normalised mixing matrix of (source, target) labels over edges, ``a``/``b`` its row/column sums;
- numeric assortativity: the Pearson correlation of (source value, target value) over edges.

The like graph is a ``MultiDiGraph`` with one edge voter -> author per like, so networkx's functions
weight it by likes. Nulls:

- ``label_shuffle``: node labels permuted (seeded), graph fixed: is mixing more assortative than the
  group sizes alone make it?
- ``rewiring``: degree-preserving randomisation, labels fixed: ``nx.directed_edge_swap`` /
  ``nx.double_edge_swap`` (``nswap`` = number of edges per replicate, chained) on simple graphs; on
  multigraphs (likes) edge targets are shuffled among edges, which keeps every in- and out-degree.
  A graph too small or dense to rewire gets fewer replicates; under two, z and p are nan.

``z = (observed - mean(null)) / sd(null)`` and the two-sided empirical
``p = (1 + #{|null - mean| >= |observed - mean|}) / (1 + replicates)``. Null replicates are computed on
edge arrays (vectorised), which equals networkx (tested).

Examples
--------
>>> import networkx as nx
>>> g = nx.Graph([(0, 1), (2, 3), (1, 2)])
>>> nx.set_node_attributes(g, {0: "a", 1: "a", 2: "b", 3: "b"}, "group")
>>> round(attribute_assortativity(g, "group"), 6)  # (2/3 - 1/2) / (1 - 1/2)
0.333333
>>> same_group_tie_share(g, "group")["observed"]
0.6666666666666666
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from pvsst.core.errors import InputError

NULL_REPLICATES = 200


def attribute_assortativity(graph: nx.Graph, attribute: str) -> float:
    """Newman's categorical assortativity of ``graph`` by a node attribute (networkx's).

    Parameters
    ----------
    graph : networkx.Graph
        Any graph networkx accepts (a ``MultiDiGraph`` of likes counts each like).
    attribute : str
        The node attribute holding each node's category.

    Returns
    -------
    float
        ``r`` in [-1, 1]: 1 when every tie joins alike nodes, 0 for random mixing.

    Notes
    -----
    With ``e_ij`` the share of edge ends from category ``i`` to category ``j`` and ``a_i = sum_j e_ij``,
    ``b_j = sum_i e_ij``,

        r = (sum_i e_ii - sum_i a_i b_i) / (1 - sum_i a_i b_i)

    (``nx.attribute_assortativity_coefficient``).

    References
    ----------
    .. [1] M. E. J. Newman, "Mixing patterns in networks", Physical Review E 67, 026126, 2003.

    Examples
    --------
    >>> g = nx.Graph([(0, 1), (2, 3), (1, 2)])
    >>> nx.set_node_attributes(g, {0: "a", 1: "a", 2: "b", 3: "b"}, "group")
    >>> round(attribute_assortativity(g, "group"), 6)
    0.333333
    """
    return float(nx.attribute_assortativity_coefficient(graph, attribute))


def numeric_assortativity(graph: nx.Graph, attribute: str) -> float:
    """Newman's scalar assortativity of ``graph`` by a numeric node attribute (networkx's).

    Parameters
    ----------
    graph : networkx.Graph
        Any graph networkx accepts.
    attribute : str
        The node attribute holding each node's value.

    Returns
    -------
    float
        ``r`` in [-1, 1].

    Notes
    -----
    The Pearson correlation of the values at the two ends of the edges,
    ``r = sum_xy xy (e_xy - a_x b_y) / (sigma_a sigma_b)`` (``nx.numeric_assortativity_coefficient``).

    References
    ----------
    .. [1] M. E. J. Newman, "Mixing patterns in networks", Physical Review E 67, 026126, 2003.

    Examples
    --------
    >>> g = nx.path_graph(4)
    >>> nx.set_node_attributes(g, {0: 1, 1: 1, 2: 3, 3: 3}, "stance")
    >>> round(numeric_assortativity(g, "stance"), 6)
    0.333333
    """
    return float(nx.numeric_assortativity_coefficient(graph, attribute))


def edge_label_arrays(graph: nx.Graph, attribute: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source node index, target node index, node labels) arrays of a graph; undirected edges appear both ways.

    Parameters
    ----------
    graph : networkx.Graph
        The graph; every node must carry ``attribute``.
    attribute : str
        The node attribute to read.

    Returns
    -------
    tuple of numpy.ndarray
        Source indices and target indices (into the node order of ``graph.nodes``) and the labels.

    Examples
    --------
    >>> g = nx.Graph([("x", "y")])
    >>> nx.set_node_attributes(g, {"x": "a", "y": "b"}, "group")
    >>> [a.tolist() for a in edge_label_arrays(g, "group")]
    [[0, 1], [1, 0], ['a', 'b']]
    """
    nodes = list(graph.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    labels = np.array([graph.nodes[n].get(attribute) for n in nodes], dtype=object)
    if any(v is None for v in labels):
        raise InputError("graph", attribute, "some nodes lack the attribute")
    pairs = np.array([(index[u], index[v]) for u, v in graph.edges()], dtype=np.int64).reshape(-1, 2)
    if not graph.is_directed():
        pairs = np.concatenate([pairs, pairs[:, ::-1]])
    return pairs[:, 0], pairs[:, 1], labels


def categorical_assortativity_from_edges(source_codes: np.ndarray, target_codes: np.ndarray,
                                         n_levels: int) -> float:
    """Newman's ``r`` from integer label codes at the two ends of each edge.

    Parameters
    ----------
    source_codes, target_codes : numpy.ndarray
        Label codes (0..n_levels-1) of each edge's two ends (an undirected edge listed both ways).
    n_levels : int
        Number of categories.

    Returns
    -------
    float

    Notes
    -----
    ``e`` is the normalised (source, target) mixing matrix over edges, ``a``/``b`` its row/column sums:
    ``r = (trace(e) - a . b) / (1 - a . b)``; it equals networkx's coefficient (tested), without its
    dependence on the order of a set of labels.

    References
    ----------
    .. [1] M. E. J. Newman, "Mixing patterns in networks", Physical Review E 67, 026126, 2003.

    Examples
    --------
    >>> s, t = np.array([0, 1, 1, 0, 1, 1]), np.array([0, 1, 0, 1, 1, 1])
    >>> round(categorical_assortativity_from_edges(s, t, 2), 6)
    0.25
    """
    mixing = np.bincount(source_codes * n_levels + target_codes, minlength=n_levels ** 2).astype(float)
    mixing = mixing.reshape(n_levels, n_levels) / mixing.sum()
    expected = float(mixing.sum(axis=1) @ mixing.sum(axis=0))
    return float((np.trace(mixing) - expected) / (1 - expected))


def numeric_assortativity_from_edges(source_values: np.ndarray, target_values: np.ndarray) -> float:
    """Pearson correlation of the values at the two ends of each edge.

    Parameters
    ----------
    source_values, target_values : numpy.ndarray
        The attribute values at each edge's two ends (an undirected edge listed both ways).

    Returns
    -------
    float

    Notes
    -----
    ``r = cov(x_source, x_target) / (sd(x_source) sd(x_target))`` over edges, which is Newman's scalar
    assortativity.

    References
    ----------
    .. [1] M. E. J. Newman, "Mixing patterns in networks", Physical Review E 67, 026126, 2003.

    Examples
    --------
    >>> numeric_assortativity_from_edges(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    1.0
    """
    return float(np.corrcoef(source_values, target_values)[0, 1])


@dataclass(frozen=True)
class NullComparison:
    """An observed coefficient against a null distribution."""

    measure: str
    null: str
    observed: float
    null_mean: float
    null_sd: float
    z: float
    p_value: float
    replicates: int


def assortativity_against_nulls(graph: nx.Graph, attribute: str, *, kind: str = "attribute",
                                replicates: int = NULL_REPLICATES, seed: int = 0) -> list[NullComparison]:
    """Observed assortativity against both nulls: label shuffle and degree-preserving rewiring.

    Parameters
    ----------
    graph : networkx.Graph
        At least two edges; every node carries ``attribute``.
    attribute : str
        The node attribute.
    kind : {"attribute", "numeric"}
        Categorical (:func:`attribute_assortativity`) or numeric (:func:`numeric_assortativity`).
    replicates : int
        Null replicates of each kind (fewer for rewiring when the graph is too small or dense to rewire).
    seed : int
        Seed of both nulls' generators.

    Returns
    -------
    list of NullComparison
        The ``label_shuffle`` comparison, then the ``rewiring`` one.

    Notes
    -----
    ``z = (observed - mean(null)) / sd(null)`` and the two-sided empirical
    ``p = (1 + #{|null - mean(null)| >= |observed - mean(null)|}) / (1 + replicates)``. Label shuffle
    permutes the node labels on the fixed graph; rewiring keeps every degree (``nx.double_edge_swap`` /
    ``nx.directed_edge_swap``, chained; on multigraphs edge targets are shuffled among edges). Under two
    replicates, ``z`` and ``p`` are NaN.

    References
    ----------
    .. [1] M. E. J. Newman, "Mixing patterns in networks", Physical Review E 67, 026126, 2003.
    .. [2] S. Maslov and K. Sneppen, "Specificity and stability in topology of protein networks",
       Science 296(5569), 910-913, 2002 (degree-preserving rewiring).
    .. [3] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
       Applications in Genetics and Molecular Biology 9(1), article 39, 2010.

    Examples
    --------
    >>> g = nx.barbell_graph(5, 0)  # two cliques of five joined by one edge, one group each
    >>> nx.set_node_attributes(g, {n: "a" if n < 5 else "b" for n in g}, "group")
    >>> shuffle, rewiring = assortativity_against_nulls(g, "group", replicates=50, seed=1)
    >>> round(shuffle.observed, 6), shuffle.replicates, shuffle.p_value, rewiring.p_value  # p = 1 / 51
    (0.904762, 50, 0.0196078431372549, 0.0196078431372549)
    """
    if kind not in ("attribute", "numeric"):
        raise InputError("homophily", "kind", f"must be attribute or numeric, not {kind!r}")
    if graph.number_of_edges() < 2:
        raise InputError("graph", "edges", "need at least two edges")
    sources, targets, labels = edge_label_arrays(graph, attribute)
    coefficient = _edge_coefficient(labels, kind)
    identity = np.arange(len(labels))
    # The observed value uses the null replicates' own arithmetic (equal to networkx within 1e-12,
    # tested). networkx sums over a set of labels, whose order follows PYTHONHASHSEED: its last bits
    # changed from process to process, and so did p whenever a replicate tied with the observed value.
    observed = coefficient(sources, targets, identity)
    seeds = np.random.SeedSequence(seed).spawn(2)
    shuffle_rng = np.random.default_rng(seeds[0])
    shuffled = [coefficient(sources, targets, shuffle_rng.permutation(len(labels)))
                for _ in range(replicates)]
    rewired = [coefficient(s, t, identity) for s, t in _rewired_edges(graph, seeds[1], replicates)]
    measure = f"{kind}_assortativity:{attribute}"
    return [compare_to_null(measure, "label_shuffle", observed, np.array(shuffled)),
            compare_to_null(measure, "rewiring", observed, np.array(rewired))]


def same_group_tie_share(graph: nx.Graph, attribute: str) -> dict:
    """Share of ties within a group against the share expected from the edge-end label composition.

    Parameters
    ----------
    graph : networkx.Graph
        Every node carries ``attribute``.
    attribute : str
        The node attribute holding each node's group.

    Returns
    -------
    dict
        ``observed`` (share of edge ends whose two nodes share a group), ``expected`` (random mixing) and
        ``ratio`` (observed / expected; NaN when expected is 0).

    Notes
    -----
    ``observed = sum_g e_gg`` and ``expected = sum_g a_g b_g`` with ``e``, ``a``, ``b`` as in
    :func:`attribute_assortativity`; ``r = (observed - expected) / (1 - expected)``.

    References
    ----------
    .. [1] M. McPherson, L. Smith-Lovin and J. M. Cook, "Birds of a feather: homophily in social
       networks", Annual Review of Sociology 27, 415-444, 2001.
    .. [2] M. E. J. Newman, "Mixing patterns in networks", Physical Review E 67, 026126, 2003.

    Examples
    --------
    >>> g = nx.Graph([(0, 1), (2, 3), (1, 2)])
    >>> nx.set_node_attributes(g, {0: "a", 1: "a", 2: "b", 3: "b"}, "group")
    >>> {k: round(v, 4) for k, v in same_group_tie_share(g, "group").items()}
    {'observed': 0.6667, 'expected': 0.5, 'ratio': 1.3333}
    """
    sources, targets, labels = edge_label_arrays(graph, attribute)
    codes, _ = pd.factorize(pd.Series(labels, dtype=object))
    s, t = codes[sources], codes[targets]
    observed = float(np.mean(s == t))
    k = codes.max() + 1
    expected = float(np.bincount(s, minlength=k) @ np.bincount(t, minlength=k)) / len(s) ** 2
    return {"observed": observed, "expected": expected, "ratio": observed / expected if expected else np.nan}


def like_graph(votes: pd.DataFrame, node_attributes: pd.DataFrame | None = None) -> nx.MultiDiGraph:
    """Voter -> author multigraph with one edge per like (``value == 1``), nodes carrying their attributes.

    Parameters
    ----------
    votes : pandas.DataFrame
        ``voter_id``, ``target_agent_id``, ``value``.
    node_attributes : pandas.DataFrame, optional
        Indexed by agent id (e.g. ``agents.set_index("agent_id")``); each row's non-missing values become
        the node's attributes.

    Returns
    -------
    networkx.MultiDiGraph

    Examples
    --------
    >>> votes = pd.DataFrame({"voter_id": [1, 1, 2], "target_agent_id": [2, 2, 1], "value": [1, 1, -1]})
    >>> g = like_graph(votes, pd.DataFrame({"party": ["D", "R"]}, index=[1, 2]))
    >>> g.number_of_edges(), g.nodes[2]["party"]
    (2, 'R')
    """
    for column in ("voter_id", "target_agent_id", "value"):
        if column not in votes.columns:
            raise InputError("votes", column, "missing column")
    graph = nx.MultiDiGraph()
    if node_attributes is not None:
        graph.add_nodes_from((node, row.dropna().to_dict()) for node, row in node_attributes.iterrows())
    likes = votes[votes["value"] == 1]
    graph.add_edges_from(zip(likes["voter_id"], likes["target_agent_id"]))
    return graph


def _edge_coefficient(labels: np.ndarray, kind: str):
    if kind == "attribute":
        codes, uniques = pd.factorize(pd.Series(labels, dtype=object))
        return lambda s, t, perm: categorical_assortativity_from_edges(codes[perm][s], codes[perm][t],
                                                                       len(uniques))
    values = labels.astype(float)
    return lambda s, t, perm: numeric_assortativity_from_edges(values[perm][s], values[perm][t])


def _rewired_edges(graph: nx.Graph, seed: np.random.SeedSequence, replicates: int):
    """Degree-preserving randomisations as (source, target) index arrays (chained swaps)."""
    index = {node: i for i, node in enumerate(graph.nodes)}
    if graph.is_multigraph():
        rng = np.random.default_rng(seed)
        pairs = np.array([(index[u], index[v]) for u, v in graph.edges()], dtype=np.int64)
        for _ in range(replicates):
            yield pairs[:, 0], rng.permutation(pairs[:, 1])
        return
    work = nx.DiGraph(graph) if graph.is_directed() else nx.Graph(graph)
    swap_seed = int(np.random.default_rng(seed).integers(2 ** 31))
    n_edges = work.number_of_edges()
    for r in range(replicates):
        try:
            if work.is_directed():
                nx.directed_edge_swap(work, nswap=n_edges, max_tries=100 * n_edges, seed=swap_seed + r)
            else:
                nx.double_edge_swap(work, nswap=n_edges, max_tries=100 * n_edges, seed=swap_seed + r)
        except (nx.NetworkXAlgorithmError, nx.NetworkXError):
            return  # too small or too dense to rewire: the null keeps the replicates made so far (maybe none)
        pairs = np.array([(index[u], index[v]) for u, v in work.edges()], dtype=np.int64)
        if not work.is_directed():
            pairs = np.concatenate([pairs, pairs[:, ::-1]])
        yield pairs[:, 0], pairs[:, 1]


def compare_to_null(measure: str, null: str, observed: float, draws: np.ndarray) -> NullComparison:
    """An observed coefficient against the finite draws of a null: mean, sd, z and the two-sided empirical p.

    Parameters
    ----------
    measure : str
        The coefficient's name, recorded in the result.
    null : str
        The null's name (``label_shuffle``, ``rewiring``), recorded in the result.
    observed : float
        The coefficient on the observed graph.
    draws : numpy.ndarray
        The coefficient on each null replicate; non-finite draws are left out.

    Returns
    -------
    NullComparison
        ``null_mean``, ``null_sd`` (ddof 1), ``z``, ``p_value`` and the number of finite ``replicates``;
        fewer than two finite draws give nan, and a null without spread gives a nan ``z``.

    Notes
    -----
    With the finite draws ``x_1..x_R``, mean ``m`` and standard deviation ``s``:
    ``z = (observed - m) / s`` and ``p = (1 + #{r : |x_r - m| >= |observed - m|}) / (1 + R)``, the
    empirical p that counts the observed value as one more replicate, so it is never 0.

    References
    ----------
    .. [1] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero: calculating exact
       p-values when permutations are randomly drawn", Statistical Applications in Genetics and Molecular
       Biology 9(1), article 39, 2010.

    Examples
    --------
    >>> result = compare_to_null("r", "label_shuffle", 0.5, np.array([0.0, 0.1, -0.1, np.nan]))
    >>> result.replicates, round(result.z, 6), result.p_value
    (3, 5.0, 0.25)
    """
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return NullComparison(measure, null, observed, np.nan, np.nan, np.nan, np.nan, int(draws.size))
    mean, sd = float(draws.mean()), float(draws.std(ddof=1))
    extreme = int(np.sum(np.abs(draws - mean) >= abs(observed - mean)))
    z = (observed - mean) / sd if sd > 0 else float("nan")
    return NullComparison(measure, null, observed, mean, sd, z, (extreme + 1) / (len(draws) + 1), len(draws))
