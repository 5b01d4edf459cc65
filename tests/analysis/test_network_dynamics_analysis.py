"""Homophily grows by selection under follow dynamics, and `pvsst analyze`'s tables see it."""
from __future__ import annotations

import json

import networkx as nx
from engine_helpers import scripted_trial

from pvsst.analysis.network.dynamics import follow_graph_at
from pvsst.analysis.store.reader import load_run
from pvsst.analysis.study.run_analysis import homophily_table, network_dynamics_table
from pvsst.experiments.run.store import write_table_directory
from pvsst.experiments.study.trial_pipeline import trial_files
from pvsst.sim.network import parse_network_spec


def test_selection_builds_stance_homophily_into_the_follow_graph(tmp_path):
    result = scripted_trial("follows", seed=5, n_agents=24, n_rounds=6, follow_dynamics=True,
                            network=parse_network_spec("erdos_renyi:p=0.2"))
    write_table_directory(tmp_path / "trials", result.config.trial_id,
                          *trial_files(result, {"trial_id": result.config.trial_id}))
    (tmp_path / "manifest.json").write_text(json.dumps({}))
    data = load_run(tmp_path)

    dynamics = network_dynamics_table(data).set_index("analysis")
    # imitate agents like (and so follow) accounts on their side: new ties form at small stance distance
    assert dynamics.loc["selection", "coefficient"] < 0 and dynamics.loc["selection", "p_value"] < 0.01
    assert dynamics.loc["influence", "n_observations"] > 0

    side = dict(zip(data.agents["agent_id"], (data.agents["initial_stance"] > 0).astype(int)))
    first = follow_graph_at(data.edges, 0, side)
    last = follow_graph_at(data.edges, int(data.edges["round"].max()), side)
    nx.set_node_attributes(first, side, "side")
    nx.set_node_attributes(last, side, "side")
    assert (nx.attribute_assortativity_coefficient(last, "side")
            > nx.attribute_assortativity_coefficient(first, "side") + 0.3)

    homophily = homophily_table(data, replicates=50)
    follow = homophily[(homophily["graph"] == "follow")
                       & (homophily["measure"] == "attribute_assortativity:initial_side")]
    assert len(follow) == 2 and (follow["z"] > 3).all()  # against both nulls
    assert set(homophily["graph"]) == {"follow", "likes"}
