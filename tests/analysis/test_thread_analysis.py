"""Thread analysis: shape by hand, reply homophily and lexical convergence against planted effects and
nulls, the indented tree and the two thread figures."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from thread_helpers import census_personas, run_study, study_tables

from pvsst.analysis.figures.threads import depth_histogram_figure, thread_tree_figure
from pvsst.analysis.threads.convergence import path_similarity, reply_parent_similarity, similarity_by_depth
from pvsst.analysis.threads.reply_homophily import reply_edges, reply_homophily, rewired_targets
from pvsst.analysis.threads.shape import children_distribution, depth_distribution, thread_shape
from pvsst.analysis.threads.tree_text import format_thread
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.llm.providers.thread_scripted import ThreadCommenter
from pvsst.sim.threads.settings import ThreadSettings


@pytest.fixture(scope="module")
def study() -> dict[str, pd.DataFrame]:
    return study_tables(run_study(ThreadSettings(n_threads=3, engaged_profiles=30), census_personas(45)))


def hand_tree() -> pd.DataFrame:
    #      0
    #   1  2  3
    #  4 5    6
    #  7
    parents = [None, 0, 0, 0, 1, 1, 3, 4]
    depths = [0, 1, 1, 1, 2, 2, 2, 3]
    return pd.DataFrame({"comment_id": [f"t:{i}" for i in range(8)],
                         "parent_id": [None if p is None else f"t:{p}" for p in parents], "thread_id": "t",
                         "depth": depths, "author": list("ABCDBCDE"), "round": [-1, 0, 0, 0, 0, 1, 1, 1],
                         "text": ["x"] * 8})


def test_shape_by_hand():
    shape = thread_shape(hand_tree()).iloc[0]
    assert (shape["n_comments"], shape["max_depth"], shape["max_width"]) == (7, 3, 3)
    assert shape["direct_reply_share"] == 3 / 7
    assert shape["mean_depth"] == (1 * 3 + 2 * 3 + 3) / 7
    assert shape["mean_branching"] == 7 / 4  # nodes 0, 1, 3, 4 have replies
    assert shape["n_authors"] == 4
    assert depth_distribution(hand_tree())["n_comments"].tolist() == [3, 3, 1]
    assert children_distribution(hand_tree()).set_index("n_replies")["n_nodes"].to_dict() == {0: 4, 1: 2, 2: 1, 3: 1}


def planted_replies(same_group_rate: float, seed: int = 0, threads: int = 6, replies: int = 60) -> tuple:
    """Threads where each reply answers a same-group comment with probability ``same_group_rate``."""
    rng = np.random.default_rng(seed)
    people = [f"p{i}" for i in range(30)]
    group = {p: "ab"[i % 2] for i, p in enumerate(people)}
    rows = []
    for t in range(threads):
        rows.append((f"t{t}:0", None, f"t{t}", 0, "post_author"))
        for n in range(1, replies + 1):
            author = people[int(rng.integers(len(people)))]
            earlier = [r for r in rows if r[2] == f"t{t}" and r[4] != author and r[4] != "post_author"]
            want_same = rng.random() < same_group_rate
            pool = [r for r in earlier if (group[r[4]] == group[author]) == want_same] or earlier or [rows[-n]]
            parent = pool[int(rng.integers(len(pool)))]
            rows.append((f"t{t}:{n}", parent[0], f"t{t}", parent[3] + 1, author))
    comments = pd.DataFrame(rows, columns=["comment_id", "parent_id", "thread_id", "depth", "author"])
    agents = pd.DataFrame({"persona_id": [*people, "post_author"], "side": [*(group[p] for p in people), "a"]})
    return comments, agents


def test_planted_reply_homophily_is_detected_and_its_absence_is_not():
    comments, agents = planted_replies(0.9)
    share, assortativity = reply_homophily(comments, agents, "side", replicates=100)
    assert share.observed > 0.8 and share.null_mean < 0.6 and share.p_value < 0.02 and share.z > 5
    assert assortativity.observed > 0.6 and assortativity.p_value < 0.02
    comments, agents = planted_replies(0.5, seed=1)
    share, _ = reply_homophily(comments, agents, "side", replicates=100)
    assert abs(share.z) < 3 and share.p_value > 0.02


def test_the_null_keeps_each_threads_degrees_and_never_pairs_a_persona_with_itself():
    comments, agents = planted_replies(0.9)
    edges = reply_edges(comments, agents, "side")
    people, names = pd.factorize(pd.concat([edges["replier"], edges["target"]], ignore_index=True))
    sources, targets = people[:len(edges)], people[len(edges):]
    threads, _ = pd.factorize(edges["thread_id"])
    changed = 0
    for rewired in rewired_targets(threads, sources, targets, np.random.default_rng(0), 5):
        assert (rewired != sources).all()
        for t in np.unique(threads):
            in_thread = threads == t
            assert sorted(rewired[in_thread]) == sorted(targets[in_thread])
        changed = max(changed, int((rewired != targets).sum()))
    assert changed > len(edges) / 2


def test_the_thread_procedure_shows_no_reply_homophily(study):
    # SynthPAI's parent choice ignores who wrote a node (beyond the persona's own path): a null result
    for attribute in ("party", "sex"):
        share, assortativity = reply_homophily(study["comments"], study["agents"], attribute, replicates=100)
        assert share.p_value > 0.01 and abs(share.z) < 3, (attribute, share)


class EchoFreeCommenter(ThreadCommenter):
    """The commenter without copying the words of what it answers."""

    name = "thread_commenter_no_copy"
    copy_probability = 0.0


def test_lexical_convergence_sees_planted_copying():
    register_scripted_provider("thread_commenter_no_copy", f"{__name__}:EchoFreeCommenter")
    settings = ThreadSettings(n_threads=2, engaged_profiles=30)
    copying = study_tables(run_study(settings, census_personas(45)))["comments"]
    plain = study_tables(run_study(settings, census_personas(45),
                                   model="scripted/thread_commenter_no_copy"))["comments"]
    gap = {name: similarity_by_depth(reply_parent_similarity(c))["difference"].mean()
           for name, c in (("copying", copying), ("plain", plain))}
    assert gap["copying"] > gap["plain"] + 0.05, gap
    paths = path_similarity(copying, draws=50)
    assert (paths["similarity"] - paths["null_mean"]).mean() > 0.05


def test_no_convergence_where_texts_are_independent_of_the_tree(study):
    comments = study["comments"].copy()
    rng = np.random.default_rng(0)
    for thread_id, rows in comments.groupby("thread_id"):  # texts shuffled among a thread's nodes
        comments.loc[rows.index, "text"] = rng.permutation(rows["text"].to_numpy())
    pairs = reply_parent_similarity(comments)
    difference = pairs["parent_cosine"] - pairs["others_cosine"]
    assert abs(difference.mean()) < 3 * difference.std() / np.sqrt(len(difference))
    paths = path_similarity(comments, draws=50)
    spread = (paths["similarity"] - paths["null_mean"])
    assert abs(spread.mean()) < 0.03


def test_path_similarity_is_pvssts_metric_on_the_path():
    from pvsst.analysis.text.lexical import mean_offdiagonal_cosine, tfidf_matrix

    comments = hand_tree().assign(text=["cats purr", "cats nap", "dogs bark", "fish", "cats purr loudly", "nap time",
                                        "fish swim", "purr purr"])
    paths = path_similarity(comments, draws=0).set_index("leaf_id")
    rows = tfidf_matrix(comments["text"])
    assert paths.loc["t:7", "similarity"] == pytest.approx(mean_offdiagonal_cosine(rows[[0, 1, 4, 7]]), abs=1e-12)
    assert paths.loc["t:7", "length"] == 4


def test_the_tree_prints_every_node_under_its_parent(study):
    comments = study["comments"]
    thread = comments[comments["thread_id"] == "thread-001"]
    lines = format_thread(comments, "thread-001", max_chars=40).splitlines()
    assert len(lines) == len(thread) + 1
    depths = [(len(line) - len(line.lstrip(" "))) // 2 for line in lines[1:]]
    assert sorted(depths) == sorted(thread["depth"].tolist())
    assert all(b <= a + 1 for a, b in zip(depths, depths[1:]))  # depth-first: one level down at most
    assert lines[1].startswith(f"@{thread.iloc[0]['author']} [post] ")


def test_thread_figures_plot_the_tables(study):
    comments = study["comments"]
    tree = thread_tree_figure(comments, "thread-000")
    layout = tree.data
    leaves = layout[~layout["comment_id"].isin(layout["parent_id"])]
    assert sorted(leaves["x"]) == list(range(len(leaves)))  # one slot per leaf
    assert len(layout) == int((comments["thread_id"] == "thread-000").sum())
    tree.close()
    histogram = depth_histogram_figure(comments)
    assert histogram.data["n_comments"].tolist() == depth_distribution(comments)["n_comments"].tolist()
    assert "3 thread(s)" in histogram.caption
    histogram.close()
