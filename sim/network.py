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

from pathlib import Path
from typing import Annotated, Literal

import networkx as nx
import numpy as np
import pandas as pd
from pydantic import Field, StringConstraints, ValidationError, model_validator

from pvsst.core.bounds import MAX_AGENTS
from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file
from pvsst.core.validation import SpecFieldError, StrictModel, describe_validation_error

NETWORK_PARAMETERS: dict[str, tuple[str, ...]] = {
    "complete": (),
    "erdos_renyi": ("p",),
    "barabasi_albert": ("m",),
    "watts_strogatz": ("k", "p"),
    "sbm": ("attribute", "p", "homophily"),
    "edgelist": ("path",),
}
"""Network kind -> the parameters it requires (and the only ones it accepts)."""

NETWORK_KINDS = tuple(NETWORK_PARAMETERS)
_Share = Annotated[float, Field(ge=0.0, le=1.0)]
_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class NetworkSpec(StrictModel):
    """The initial follow graph among honest agents (used by the ``follows`` arm and followee feeds).

    The one definition of a network: the study spec's ``trial.network`` section is this model.
    Kinds: ``complete`` (everyone follows everyone), ``erdos_renyi`` (tie probability ``p``),
    ``barabasi_albert`` (``m`` ties per new node), ``watts_strogatz`` (ring of ``k`` neighbours, rewiring
    probability ``p``), ``sbm`` (groups by persona ``attribute``; within-group tie probability ``p``,
    between-group ``p * (1 - homophily)``), ``edgelist`` (``source target`` lines of agent ids at
    ``path``, relative to the spec file). A kind takes exactly its parameters (``NETWORK_PARAMETERS``).
    Every generator is seeded from the trial seed.

    Examples
    --------
    >>> NetworkSpec(kind="watts_strogatz", k=4, p=0.1).kind
    'watts_strogatz'
    """


    kind: Literal["complete", "erdos_renyi", "barabasi_albert", "watts_strogatz", "sbm", "edgelist"] = "complete"
    p: _Share | None = None
    m: Annotated[int, Field(ge=1, le=MAX_AGENTS)] | None = None
    k: Annotated[int, Field(ge=2, le=MAX_AGENTS)] | None = None
    homophily: _Share | None = None
    attribute: _Text | None = None
    path: _Text | None = None

    @model_validator(mode="after")
    def _parameters_match_kind(self) -> NetworkSpec:
        needed = NETWORK_PARAMETERS[self.kind]
        for name in ("p", "m", "k", "homophily", "attribute", "path"):
            given = getattr(self, name) is not None
            if name in needed and not given:
                raise SpecFieldError(name, f"required by network kind {self.kind!r}")
            if given and name not in needed:
                raise SpecFieldError(name, f"not used by network kind {self.kind!r} (it takes: "
                                       f"{', '.join(needed) or 'no parameters'})")
        return self


def parse_network_spec(text: str) -> NetworkSpec:
    """Parse ``kind[:key=value,...]`` into a :class:`NetworkSpec`; ``InputError`` naming the parameter."""
    kind, _, rest = text.strip().partition(":")
    if kind not in NETWORK_PARAMETERS:
        raise InputError("network", "kind", f"unknown network {kind!r} ({', '.join(NETWORK_KINDS)})")
    values: dict[str, object] = {"kind": kind}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in NetworkSpec.model_fields or key == "kind":
            raise InputError("network", key or part, f"unknown network parameter in {text!r}")
        try:
            values[key] = {"p": float, "homophily": float, "m": int, "k": int}.get(key, str)(value)
        except ValueError:
            raise InputError("network", key, f"not a number: {value!r}") from None
    try:
        return NetworkSpec(**values)  # type: ignore[arg-type]
    except ValidationError as err:
        raise InputError("network", *describe_validation_error(err)) from None


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
    path = regular_file(Path(spec.path or ""), "network.path", text=True)
    try:
        graph = nx.read_edgelist(path, create_using=nx.DiGraph, nodetype=str, data=False)
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, "network.path",
                         f"unreadable edge list ({getattr(err, 'strerror', None) or err})") from None
    except (TypeError, ValueError, IndexError) as err:
        raise InputError(path, "network.path", f"malformed edge list ({err})") from None
    unknown = set(graph.nodes) - set(agent_ids)
    if unknown:
        raise InputError(path, "network.path",
                         f"unknown agent id {sorted(unknown)[0]!r} (agents are {agent_ids[0]}..{agent_ids[-1]})")
    graph.add_nodes_from(agent_ids)
    return graph
