"""Follow networks from networkx generators, seeded from the trial's ``network`` stream.

Edge u -> v means u follows v (u sees v's posts under followee-restricted feeds). Undirected
generators give mutual follows.

Spec strings (CLI ``--network`` and spec files)::

    complete                          everyone follows everyone (PV-SST's implicit network)
    erdos_renyi:p=0.1                 G(n, p)
    barabasi_albert:m=3               preferential attachment
    watts_strogatz:k=4,p=0.1          small world
    sbm:attribute=group,homophily=0.8,p=0.3
                                      stochastic block model over a persona attribute: within-group
                                      tie probability p, between-group p * (1 - homophily)
    edgelist:path=FILE                "source target" lines of agent ids

Examples
--------
>>> import numpy as np
>>> spec = parse_network_spec("barabasi_albert:m=2")
>>> g = build_follow_graph(spec, [f"a{i}" for i in range(10)], None, np.random.default_rng(1))
>>> g.number_of_nodes(), g.number_of_edges()
(10, 32)
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from personas.errors import InputError

NETWORK_KINDS = ("complete", "erdos_renyi", "barabasi_albert", "watts_strogatz", "sbm", "edgelist")


@dataclass(frozen=True)
class NetworkSpec:
    kind: str = "complete"
    p: float = 0.1
    m: int = 3
    k: int = 4
    homophily: float = 0.0
    attribute: str | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in NETWORK_KINDS:
            raise InputError("network", "kind", f"unknown network {self.kind!r} ({', '.join(NETWORK_KINDS)})")
        if not 0.0 <= self.p <= 1.0:
            raise InputError("network", "p", f"must be in [0, 1], got {self.p}")
        if not 0.0 <= self.homophily <= 1.0:
            raise InputError("network", "homophily", f"must be in [0, 1], got {self.homophily}")
        if self.m < 1 or self.k < 1:
            raise InputError("network", "m" if self.m < 1 else "k", "must be >= 1")
        if self.kind == "edgelist" and not self.path:
            raise InputError("network", "path", "edgelist needs path=FILE")
        if self.kind == "sbm" and not self.attribute:
            raise InputError("network", "attribute", "sbm needs attribute=COLUMN of the persona table")


def parse_network_spec(text: str) -> NetworkSpec:
    """Parse ``kind[:key=value,...]`` into a :class:`NetworkSpec`."""
    kind, _, rest = text.strip().partition(":")
    names = {f.name: f.type for f in fields(NetworkSpec)}
    values: dict[str, object] = {"kind": kind}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in names or key == "kind":
            raise InputError("network", key or part, f"unknown network parameter in {text!r}")
        try:
            values[key] = {"p": float, "homophily": float, "m": int, "k": int}.get(key, str)(value)
        except ValueError:
            raise InputError("network", key, f"not a number: {value!r}") from None
    return NetworkSpec(**values)  # type: ignore[arg-type]


def _mutual(graph: nx.Graph) -> nx.DiGraph:
    return nx.DiGraph(graph)  # each undirected edge becomes two follows


def build_follow_graph(spec: NetworkSpec, agent_ids: list[str], personas: pd.DataFrame | None,
                       rng: np.random.Generator) -> nx.DiGraph:
    """The initial follow graph over ``agent_ids`` (honest agents, in ordinal order)."""
    n = len(agent_ids)
    seed = int(rng.integers(2**31 - 1))
    if spec.kind == "complete":
        graph = nx.complete_graph(n, create_using=nx.DiGraph)
    elif spec.kind == "erdos_renyi":
        graph = _mutual(nx.fast_gnp_random_graph(n, spec.p, seed=seed))
    elif spec.kind == "barabasi_albert":
        if spec.m >= n:
            raise InputError("network", "m", f"barabasi_albert needs m < agents ({spec.m} >= {n})")
        graph = _mutual(nx.barabasi_albert_graph(n, spec.m, seed=seed))
    elif spec.kind == "watts_strogatz":
        if spec.k >= n:
            raise InputError("network", "k", f"watts_strogatz needs k < agents ({spec.k} >= {n})")
        graph = _mutual(nx.watts_strogatz_graph(n, spec.k, spec.p, seed=seed))
    elif spec.kind == "sbm":
        return _sbm(spec, agent_ids, personas, seed)
    else:
        return _edgelist(spec, agent_ids)
    return nx.relabel_nodes(graph, dict(enumerate(agent_ids)))


def _sbm(spec: NetworkSpec, agent_ids: list[str], personas: pd.DataFrame | None, seed: int) -> nx.DiGraph:
    if personas is None or spec.attribute not in personas.columns:
        raise InputError("network", "attribute", f"persona table has no column {spec.attribute!r}")
    labels = personas[spec.attribute].astype(str).tolist()
    groups = sorted(set(labels))
    order = sorted(range(len(agent_ids)), key=lambda i: (groups.index(labels[i]), i))
    sizes = [labels.count(g) for g in groups]
    p_out = spec.p * (1.0 - spec.homophily)
    probs = [[spec.p if a == b else p_out for b in range(len(groups))] for a in range(len(groups))]
    graph = nx.stochastic_block_model(sizes, probs, nodelist=[agent_ids[i] for i in order], seed=seed)
    return _mutual(graph)


def _edgelist(spec: NetworkSpec, agent_ids: list[str]) -> nx.DiGraph:
    path = Path(spec.path or "")
    try:
        graph = nx.read_edgelist(path, create_using=nx.DiGraph, nodetype=str, data=False)
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, "network.path", f"unreadable edge list ({getattr(err, 'strerror', None) or err})") from None
    except (TypeError, ValueError, IndexError) as err:
        raise InputError(path, "network.path", f"malformed edge list ({err})") from None
    unknown = set(graph.nodes) - set(agent_ids)
    if unknown:
        raise InputError(path, "network.path", f"unknown agent id {sorted(unknown)[0]!r} (agents are {agent_ids[0]}..{agent_ids[-1]})")
    graph.add_nodes_from(agent_ids)
    return graph
