"""Network figures: assortativity against its null distribution, and a drawing of one small trial.

The homophily figure reads ``RUN/analysis/homophily.csv`` (one row per trial x graph x measure x null:
observed, null_mean, null_sd, z, p_value, replicates). The null distribution is drawn as its central
95% range under a normal approximation, ``null_mean +- 1.96 null_sd``, beside the observed coefficient.

The network drawing shows one trial's final follow graph (or, when follows are off, its like graph:
voter -> author, width by likes), nodes coloured by final stance on a colour-blind-safe diverging map.

Examples
--------
>>> import pandas as pd
>>> homophily = pd.DataFrame({"trial_id": ["t1", "t2"], "graph": "likes", "null": "label_shuffle",
...                           "measure": "attribute_assortativity:initial_side", "observed": [0.3, 0.1],
...                           "null_mean": [0.0, 0.0], "null_sd": [0.1, 0.1], "z": [3.0, 1.0],
...                           "p_value": [0.01, 0.3], "replicates": 200})
>>> figure = homophily_null_figure(homophily)
>>> figure.data["outside_null_95"].tolist()
[True, False]
>>> figure.close()
"""
from __future__ import annotations

import matplotlib as mpl
import networkx as nx
import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import OKABE_ITO, STANCE_CMAP, PaperFigure, in_style, legend_above, new_figure
from pvsst.analysis.network.dynamics import follow_graph_at
from pvsst.analysis.network.homophily import like_graph
from pvsst.analysis.study.outcomes import stance_paths
from pvsst.core.errors import InputError

DEFAULT_MEASURE = "attribute_assortativity:initial_side"
NORMAL_95 = 1.959963984540054  # scipy.stats.norm.ppf(0.975)
MAX_TRIALS_SHOWN = 24
MAX_NETWORK_NODES = 60
STANCE_RANGE = (-3.0, 3.0)


def homophily_null_rows(homophily: pd.DataFrame, measure: str = DEFAULT_MEASURE,
                        null: str = "label_shuffle") -> pd.DataFrame:
    """Rows of one measure against one null, with the null's normal 95% range and whether it is left."""
    for column in ("trial_id", "graph", "measure", "null", "observed", "null_mean", "null_sd"):
        if column not in homophily.columns:
            raise InputError("homophily", column, "missing column")
    rows = homophily[(homophily["measure"] == measure) & (homophily["null"] == null)].copy()
    rows = rows.dropna(subset=["observed", "null_mean", "null_sd"])
    if rows.empty:
        raise InputError("homophily", measure, f"no finite rows against the {null} null")
    rows["null_low"] = rows["null_mean"] - NORMAL_95 * rows["null_sd"]
    rows["null_high"] = rows["null_mean"] + NORMAL_95 * rows["null_sd"]
    rows["outside_null_95"] = (rows["observed"] < rows["null_low"]) | (rows["observed"] > rows["null_high"])
    return rows.sort_values(["graph", "trial_id"], kind="stable").reset_index(drop=True)


@in_style
def homophily_null_figure(homophily: pd.DataFrame, measure: str = DEFAULT_MEASURE, *,
                          null: str = "label_shuffle", max_trials: int = MAX_TRIALS_SHOWN) -> PaperFigure:
    """Observed assortativity per trial (points) against the null's 95% range (grey bars), per graph.

    ``data``: the plotted rows (up to ``max_trials`` per graph, in trial order) with null_low, null_high,
    outside_null_95 and ``y`` (the row position; trials share rows across panels).
    """
    rows = homophily_null_rows(homophily, measure, null)
    totals = rows.groupby("graph", sort=True).size()
    rows = rows.groupby("graph", sort=True, group_keys=False).head(max_trials).reset_index(drop=True)
    graphs = list(totals.index)
    trials = sorted(rows["trial_id"].astype(str).unique())
    rows["y"] = -rows["trial_id"].astype(str).map({t: i for i, t in enumerate(trials)}).astype(float)
    figure = new_figure(height=1.0 + 0.11 * len(trials), ncols=len(graphs), sharey=True)
    for ax, graph in zip(figure.axes, graphs):
        panel = rows[rows["graph"] == graph]
        ax.hlines(panel["y"], panel["null_low"], panel["null_high"], color="0.75", linewidth=2.5,
                  label=f"null 95% range ({null.replace('_', ' ')})")
        ax.plot(panel["null_mean"], panel["y"], "|", color="0.35", markersize=4, label="null mean")
        ax.plot(panel["observed"], panel["y"], "o", color=OKABE_ITO[6], markersize=3, label="observed")
        ax.axvline(0.0, color="0.5", linewidth=0.6, linestyle="--", zorder=0)
        ax.set_title(f"{graph} graph")
        ax.set_xlabel("assortativity r (-1..1)")
    figure.axes[0].set_yticks(-np.arange(len(trials), dtype=float), trials, fontsize=4.5)
    legend_above(figure, figure.axes[0])
    attribute = measure.split(":", 1)[-1]
    counts = "; ".join(f"{g}: observed outside the null 95% range in "
                       f"{int(rows[rows['graph'] == g]['outside_null_95'].sum())}"
                       f" of {int((rows['graph'] == g).sum())} trials shown ({int(totals[g])} in all)"
                       for g in graphs)
    replicates = (f"{int(rows['replicates'].min())}" if "replicates" in rows.columns and len(rows) else "?")
    caption = (f"Homophily: Newman assortativity of {attribute} ({measure.split(':')[0].replace('_', ' ')}) "
               f"per trial (points) against the {null.replace('_', ' ')} null (grey bar: mean +- 1.96 SD of "
               f"{replicates}+ null replicates, normal approximation; tick: null mean). {counts}.")
    return PaperFigure(f"homophily_{attribute}_{null}", figure, caption, rows)


def trial_network(agents: pd.DataFrame, posts: pd.DataFrame, votes: pd.DataFrame | None,
                  edges: pd.DataFrame | None) -> tuple[nx.DiGraph, str]:
    """(graph, kind) of one trial: its final follow graph, or its like graph when it has no follows.

    Like graphs are collapsed to a DiGraph whose ``weight`` is the number of likes.
    """
    nodes = list(agents["agent_id"])
    if edges is not None and len(edges):
        return follow_graph_at(edges, int(edges["round"].max()), nodes), "follow"
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    if votes is not None and len(votes):
        for u, v in like_graph(votes).edges():
            weight = graph.edges[u, v]["weight"] + 1 if graph.has_edge(u, v) else 1
            graph.add_edge(u, v, weight=weight)
    return graph, "like"


@in_style
def network_figure(agents: pd.DataFrame, posts: pd.DataFrame, votes: pd.DataFrame | None = None,
                   edges: pd.DataFrame | None = None, *, trial_label: str = "", seed: int = 0,
                   max_nodes: int = MAX_NETWORK_NODES) -> PaperFigure:
    """One trial's network, honest agents coloured by final stance (adversaries as black squares).

    ``data``: agent_id, role, final_stance (NaN for adversaries), x, y (the seeded spring layout).
    """
    if len(agents) > max_nodes:
        raise InputError("agents", "agent_id", f"{len(agents)} agents: network drawings are for trials of "
                                               f"<= {max_nodes} agents")
    graph, kind = trial_network(agents, posts, votes, edges)
    final = stance_paths(agents, posts)
    final_stance = final.iloc[:, -1] if final.shape[1] else agents.set_index("agent_id")["initial_stance"]
    roles = (agents.set_index("agent_id")["role"] if "role" in agents.columns
             else pd.Series("honest", index=agents["agent_id"]))
    layout = nx.spring_layout(graph, seed=seed, weight="weight" if kind == "like" else None)
    data = pd.DataFrame({"agent_id": list(graph.nodes)})
    data["role"] = data["agent_id"].map(roles).fillna("honest")
    data["final_stance"] = data["agent_id"].map(final_stance).astype(float)
    data[["x", "y"]] = np.array([layout[n] for n in graph.nodes])
    figure = new_figure(height=3.0)
    ax = figure.axes[0]
    widths = [0.3 + 0.3 * graph.edges[e].get("weight", 1) for e in graph.edges]
    nx.draw_networkx_edges(graph, layout, ax=ax, width=widths, edge_color="0.6", alpha=0.6, arrowsize=5,
                           node_size=60)
    honest = data[data["role"] != "adversary"]
    norm = mpl.colors.Normalize(*STANCE_RANGE)
    cmap = mpl.colormaps[STANCE_CMAP]
    ax.scatter(honest["x"], honest["y"], color=cmap(norm(honest["final_stance"].to_numpy(float))), s=60,
               edgecolors="0.2", linewidths=0.5, zorder=3)
    adversaries = data[data["role"] == "adversary"]
    if len(adversaries):
        ax.scatter(adversaries["x"], adversaries["y"], marker="s", s=50, color="black", zorder=3,
                   label="adversary")
        ax.legend(loc="lower left", fontsize=6)
    colorbar = figure.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, ticks=range(-3, 4))
    colorbar.set_label("final stance (-3 oppose .. +3 support)")
    ax.set_axis_off()
    n_edges = graph.number_of_edges()
    what = ("follow ties at the last round" if kind == "follow"
            else "like ties (voter -> author; width grows with the number of likes)")
    caption = (f"Network of trial {trial_label}: {len(honest)} honest agents coloured by final stance"
               + (f", {len(adversaries)} adversary accounts as black squares" if len(adversaries) else "")
               + f"; {n_edges} {what}. Spring layout (seed {seed}); a single trial, so no interval.")
    return PaperFigure("network_trial", figure, caption, data)
