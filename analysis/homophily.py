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
    """Newman's categorical assortativity (``nx.attribute_assortativity_coefficient``)."""
    return float(nx.attribute_assortativity_coefficient(graph, attribute))


def numeric_assortativity(graph: nx.Graph, attribute: str) -> float:
    """Newman's scalar assortativity (``nx.numeric_assortativity_coefficient``)."""
    return float(nx.numeric_assortativity_coefficient(graph, attribute))


def edge_label_arrays(graph: nx.Graph, attribute: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source node index, target node index, node labels) arrays; undirected edges appear both ways."""
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
    """Newman's ``r`` from integer label codes at the two ends of each edge."""
    mixing = np.bincount(source_codes * n_levels + target_codes, minlength=n_levels ** 2).astype(float)
    mixing = mixing.reshape(n_levels, n_levels) / mixing.sum()
    expected = float(mixing.sum(axis=1) @ mixing.sum(axis=0))
    return float((np.trace(mixing) - expected) / (1 - expected))


def numeric_assortativity_from_edges(source_values: np.ndarray, target_values: np.ndarray) -> float:
    """Pearson correlation of the values at the two ends of each edge."""
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
    """Observed assortativity against both nulls (label shuffle, degree-preserving rewiring).

    ``kind`` is ``"attribute"`` (categorical) or ``"numeric"``.
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
    """Share of ties within a group vs the share expected from the edge-end label composition.

    Returns ``{"observed", "expected", "ratio"}``; expected is ``sum_g a_g b_g`` (random mixing).
    """
    sources, targets, labels = edge_label_arrays(graph, attribute)
    codes, _ = pd.factorize(pd.Series(labels, dtype=object))
    s, t = codes[sources], codes[targets]
    observed = float(np.mean(s == t))
    k = codes.max() + 1
    expected = float(np.bincount(s, minlength=k) @ np.bincount(t, minlength=k)) / len(s) ** 2
    return {"observed": observed, "expected": expected, "ratio": observed / expected if expected else np.nan}


def like_graph(votes: pd.DataFrame, node_attributes: pd.DataFrame | None = None) -> nx.MultiDiGraph:
    """Voter -> author multigraph with one edge per like (``value == 1``), nodes carrying attributes.

    ``node_attributes`` is indexed by agent id (e.g. ``agents.set_index("agent_id")``).
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
    """``observed`` against the finite ``draws`` of a null: mean, sd, z and the two-sided empirical p of the
    module docstring; fewer than two finite draws give nan."""
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return NullComparison(measure, null, observed, np.nan, np.nan, np.nan, np.nan, int(draws.size))
    mean, sd = float(draws.mean()), float(draws.std(ddof=1))
    extreme = int(np.sum(np.abs(draws - mean) >= abs(observed - mean)))
    z = (observed - mean) / sd if sd > 0 else float("nan")
    return NullComparison(measure, null, observed, mean, sd, z, (extreme + 1) / (len(draws) + 1), len(draws))
