"""Reply homophily: do personas answer comments by personas of their own group more than chance allows?

A reply is a directed edge from the replier to the author of the node it answers (the post's author for a
direct reply), kept per thread. With each end labelled by a persona attribute (``party``, ``sex``, ...):

- ``same_group_share``: the share of replies whose two ends are in the same group;
- ``assortativity``: Newman's categorical assortativity of the reply edges,
  ``r = (sum_g e_gg - sum_g a_g b_g) / (1 - sum_g a_g b_g)`` (Newman 2003, "Mixing patterns in networks",
  Phys. Rev. E 67; :func:`pvsst.analysis.network.homophily.categorical_assortativity_from_edges`).

**The null** is degree-preserving rewiring *within each thread* without self-replies: starting from the
observed replies, pick a reply uniformly, then another reply of the same thread uniformly, and swap their
targets unless that would make a persona answer itself (Maslov & Sneppen 2002, "Specificity and stability
in topology of protein networks", Science 296; the switch chain on a directed multigraph). Every swap keeps,
in every thread, how many replies each persona wrote and how many it received, and who took part; one
replicate is as many swap attempts as there are replies, chained from the previous replicate. So the null
asks whether the *pairing* of repliers and targets is more same-group than the thread's own participation
and activity make it. ``z`` and the two-sided empirical ``p`` are those of
:func:`pvsst.analysis.network.homophily.compare_to_null`.

SynthPAI's parent choice does not look at who wrote a node beyond the persona's own path, so under the
thread procedure with scripted models both measures should sit inside their null.

Examples
--------
>>> import pandas as pd
>>> comments = pd.DataFrame({"comment_id": ["t:0", "t:1", "t:2", "t:3", "t:4"],
...                          "parent_id": [None, "t:0", "t:1", "t:0", "t:3"], "thread_id": "t",
...                          "author": ["A", "B", "C", "D", "E"]})
>>> agents = pd.DataFrame({"persona_id": list("ABCDE"), "party": ["x", "x", "x", "y", "y"]})
>>> edges = reply_edges(comments, agents, "party")
>>> edges[["replier", "target", "same_group"]].values.tolist()
[['B', 'A', True], ['C', 'B', True], ['D', 'A', False], ['E', 'D', True]]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.network.homophily import NullComparison, categorical_assortativity_from_edges, compare_to_null
from pvsst.analysis.threads.shape import replies_of, require_columns
from pvsst.core.errors import InputError

NULL_REPLICATES = 200
NULL_NAME = "within_thread_rewiring"
EDGE_COLUMNS = ("thread_id", "comment_id", "replier", "target", "replier_group", "target_group", "same_group")


def reply_edges(comments: pd.DataFrame, agents: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """One row per reply (:data:`EDGE_COLUMNS`): replier, the answered node's author, both groups.

    Replies whose replier or target has no value of ``attribute`` are left out.
    """
    require_columns(comments, ("comment_id", "parent_id", "thread_id", "author"))
    require_columns(agents, ("persona_id", attribute), "agents")
    group = agents.drop_duplicates("persona_id").set_index("persona_id")[attribute]
    author_of = comments.set_index("comment_id")["author"]
    replies = replies_of(comments)
    edges = pd.DataFrame({"thread_id": replies["thread_id"].to_numpy(), "comment_id": replies["comment_id"].to_numpy(),
                          "replier": replies["author"].to_numpy(),
                          "target": replies["parent_id"].map(author_of).to_numpy()})
    edges["replier_group"] = edges["replier"].map(group)
    edges["target_group"] = edges["target"].map(group)
    edges = edges.dropna(subset=["replier_group", "target_group"]).reset_index(drop=True)
    edges["same_group"] = edges["replier_group"].astype(str) == edges["target_group"].astype(str)
    return edges[list(EDGE_COLUMNS)]


def rewired_targets(threads: np.ndarray, sources: np.ndarray, targets: np.ndarray, rng: np.random.Generator,
                    replicates: int):
    """Yield ``replicates`` target arrays of the within-thread switch chain of the module docstring.

    ``threads``, ``sources``, ``targets`` are integer codes per reply; every yielded array keeps each
    thread's multiset of targets and never pairs a source with itself.
    """
    targets = targets.copy()
    n = len(targets)
    members = {t: np.flatnonzero(threads == t) for t in np.unique(threads)}
    same_thread = [members[t] for t in threads]
    for _ in range(replicates):
        firsts = rng.integers(n, size=n)
        picks = rng.random(n)
        for i, u in zip(firsts, picks):
            pool = same_thread[i]
            j = pool[int(u * len(pool))]
            if i != j and sources[i] != targets[j] and sources[j] != targets[i]:
                targets[i], targets[j] = targets[j], targets[i]
        yield targets.copy()


def reply_homophily(comments: pd.DataFrame, agents: pd.DataFrame, attribute: str, *,
                    replicates: int = NULL_REPLICATES, seed: int = 0) -> list[NullComparison]:
    """Observed ``same_group_share`` and ``assortativity`` of replies by ``attribute`` against the null.

    Needs at least two replies; a thread with a single reply cannot be rewired (it keeps its pairing).
    """
    edges = reply_edges(comments, agents, attribute)
    if len(edges) < 2:
        raise InputError("comments", "replies", f"need at least two replies with a known {attribute}")
    people, _ = pd.factorize(pd.concat([edges["replier"], edges["target"]], ignore_index=True))
    sources, targets = people[:len(edges)], people[len(edges):]
    codes, levels = pd.factorize(pd.concat([edges["replier_group"], edges["target_group"]], ignore_index=True)
                                 .astype(str))
    group_of = np.zeros(people.max() + 1, dtype=np.int64)
    group_of[people] = codes
    threads, _ = pd.factorize(edges["thread_id"])

    def measures(target_codes: np.ndarray) -> tuple[float, float]:
        s, t = group_of[sources], group_of[target_codes]
        return float(np.mean(s == t)), categorical_assortativity_from_edges(s, t, len(levels))

    observed = measures(targets)
    draws = np.array([measures(t) for t in rewired_targets(threads, sources, targets, np.random.default_rng(seed),
                                                            replicates)]).reshape(-1, 2)
    return [compare_to_null(f"same_group_share:{attribute}", NULL_NAME, observed[0], draws[:, 0]),
            compare_to_null(f"assortativity:{attribute}", NULL_NAME, observed[1], draws[:, 1])]


def homophily_table(results: list[NullComparison]) -> pd.DataFrame:
    """The comparisons as a table (one row each), as ``RUN/analysis/`` stores them."""
    return pd.DataFrame([vars(r) for r in results])
