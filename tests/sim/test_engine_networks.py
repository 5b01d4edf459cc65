"""Networks, followee feeds and follow dynamics: who can see whom, and how follow edges change over rounds."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from engine_helpers import scripted_trial

from pvsst.core.errors import InputError
from pvsst.sim.network import NetworkSpec, build_follow_graph, parse_network_spec
from pvsst.sim.seeds import request_seed

IDS = [f"a{i:02d}" for i in range(12)]


@pytest.mark.parametrize("text, edges", [
    ("complete", 12 * 11),
    ("barabasi_albert:m=2", 2 * 2 * (12 - 2)),   # m (n - m) undirected ties, both directions
    ("watts_strogatz:k=4,p=0.0", 12 * 4),         # ring lattice: n k / 2 ties, both directions
])
def test_generators_give_the_textbook_edge_counts(text, edges):
    graph = build_follow_graph(parse_network_spec(text), IDS, None, np.random.default_rng(0))
    assert sorted(graph.nodes) == IDS and graph.number_of_edges() == edges


def test_generators_are_seeded():
    spec = parse_network_spec("erdos_renyi:p=0.3")
    a = build_follow_graph(spec, IDS, None, np.random.default_rng(5))
    b = build_follow_graph(spec, IDS, None, np.random.default_rng(5))
    c = build_follow_graph(spec, IDS, None, np.random.default_rng(6))
    assert sorted(a.edges) == sorted(b.edges) != sorted(c.edges)


def test_sbm_homophily_puts_every_tie_inside_groups():
    personas = pd.DataFrame({"group": ["x"] * 6 + ["y"] * 6})
    graph = build_follow_graph(NetworkSpec(kind="sbm", attribute="group", homophily=1.0, p=0.8), IDS, personas,
                               np.random.default_rng(1))
    group = dict(zip(IDS, personas["group"]))
    assert graph.number_of_edges() > 0
    assert all(group[u] == group[v] for u, v in graph.edges)


def test_edge_list_file_is_read_and_validated(tmp_path):
    good = tmp_path / "edges.txt"
    good.write_text("a00 a01\na01 a02\n")
    graph = build_follow_graph(NetworkSpec(kind="edgelist", path=str(good)), IDS, None, np.random.default_rng(0))
    assert sorted(graph.edges) == [("a00", "a01"), ("a01", "a02")] and graph.number_of_nodes() == 12
    with pytest.raises(InputError, match="missing.txt: network.path: no such file"):
        build_follow_graph(NetworkSpec(kind="edgelist", path=str(tmp_path / "missing.txt")), IDS, None,
                           np.random.default_rng(0))
    with pytest.raises(InputError, match="network.path: a directory, not a regular file"):  # refused unread
        build_follow_graph(NetworkSpec(kind="edgelist", path=str(tmp_path)), IDS, None, np.random.default_rng(0))


def test_followee_feeds_only_show_followed_accounts():
    result = scripted_trial("likes", n_agents=30, n_rounds=3, network=parse_network_spec("barabasi_albert:m=2"),
                            feed_candidates="followees")
    edges = result.edges[result.edges["round"] == 0]
    follows = set(zip(edges["source"], edges["target"]))
    assert len(result.exposures) > 0
    assert all((v, s) in follows for v, s in zip(result.exposures["viewer_id"], result.exposures["shown_agent_id"]))


def test_follow_dynamics_records_the_graph_each_round_it_changes():
    result = scripted_trial("follows", n_agents=12, n_rounds=4, network=parse_network_spec("erdos_renyi:p=0.2"),
                            follow_dynamics=True)
    rounds = sorted(result.edges["round"].unique())
    assert rounds[0] == 0 and len(rounds) > 1
    first = set(map(tuple, result.edges[result.edges["round"] == 0][["source", "target"]].to_numpy()))
    last = set(map(tuple, result.edges[result.edges["round"] == rounds[-1]][["source", "target"]].to_numpy()))
    assert first != last
    # a like of an honest author's post in round r means the voter follows the author afterwards
    likes = result.votes[(result.votes["value"] == 1) & ~result.votes["target_agent_id"].str.startswith("x")]
    r = int(likes["round"].min())
    snapshot = result.edges[result.edges["round"] == max(x for x in rounds if x <= r + 1)]
    follows = set(zip(snapshot["source"], snapshot["target"]))
    liked = likes[likes["round"] == r]
    assert all((v, t) in follows for v, t in zip(liked["voter_id"], liked["target_agent_id"]))


def test_request_seeds_follow_the_pvsst_formula():
    result = scripted_trial("single_source", n_agents=6, n_rounds=2)
    calls = result.llm_calls
    post = calls[(calls["phase"] == "post") & (calls["agent_id"] == "a03") & (calls["round"] == 1)]
    vote = calls[(calls["phase"] == "vote") & (calls["agent_id"] == "a05") & (calls["round"] == 0)]
    adversary = calls[(calls["phase"] == "post") & (calls["agent_id"] == "x00") & (calls["round"] == 1)]
    assert post["request_seed"].item() == 101 * 100000 + 1 * 1000 + 1 * 500 + 3 == request_seed(101, 1, 1, 3)
    assert vote["request_seed"].item() == 101 * 100000 + 0 + 2 * 500 + 5
    assert adversary["request_seed"].item() == 101 * 100000 + 1000 + 500 + 6  # ordinal after the 6 honest agents


def test_mesa_model_step_is_the_round():
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.model import SocialModel
    from pvsst.sim.topics import get_topic
    from pvsst.sim.trial.settings import TrialSetup

    model = SocialModel(TrialSetup(trial_id="m", model_name="scripted/imitate", topic=get_topic("ai_labels"),
                                    condition="likes", seed=3, n_agents=6, n_rounds=2), Gateway())
    model.step()
    assert model.steps == 1 and len(model.platform.rounds) == 1
    model.step()
    assert len(model.platform.rounds) == 2 and len(model.agents) == 6
    assert isinstance(model.platform.follow_graph, nx.DiGraph)
