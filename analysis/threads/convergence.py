"""Lexical convergence along threads: do replies echo the words of what they answer?

Each thread's texts (the post and every comment) get PV-SST's TF-IDF rows, fitted on that thread's texts
(:func:`pvsst.analysis.text.lexical.tfidf_matrix`: English stop words removed, rows L2-normalised, so a dot
product is a cosine). Two views:

- **Reply to parent**: for a reply ``v`` to ``u``, ``parent_cosine = x_v . x_u``, beside
  ``others_cosine``, the mean cosine of ``v`` with every other node of its thread but itself and ``u``.
  ``parent_cosine > others_cosine`` on average means replies take up the words of what they answer
  beyond the thread's shared vocabulary.
- **Root-to-leaf paths**: for each leaf, the nodes from the post down to it; ``similarity`` is their mean
  pairwise cosine (:func:`pvsst.analysis.text.lexical.mean_offdiagonal_cosine`, PV-SST's metric on the path),
  and ``null_mean`` the same statistic averaged over ``draws`` random sets of as many nodes of the same
  thread (drawn without replacement, seeded): a path more cohesive than a random set of its thread's
  nodes has converged.

Reference: Usman & Williamson, PV-SST (arXiv 2608.20438) for the similarity metric; the path view is ours.

Examples
--------
>>> import pandas as pd
>>> comments = pd.DataFrame({"comment_id": ["t:0", "t:1", "t:2", "t:3"], "parent_id": [None, "t:0", "t:1", "t:0"],
...     "thread_id": "t", "depth": [0, 1, 2, 1],
...     "text": ["cats purr loudly", "cats purr softly", "dogs bark", "fish swim"]})
>>> pairs = reply_parent_similarity(comments)
>>> pairs["parent_cosine"].round(3).tolist(), pairs["others_cosine"].round(3).tolist()
([0.554, 0.0, 0.0], [0.0, 0.0, 0.0])
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.text.lexical import tfidf_matrix
from pvsst.analysis.threads.shape import require_columns

PATH_NULL_DRAWS = 100
PAIR_COLUMNS = ("thread_id", "comment_id", "depth", "parent_cosine", "others_cosine")
PATH_COLUMNS = ("thread_id", "leaf_id", "length", "similarity", "null_mean")


def _threads(comments: pd.DataFrame):
    """Per thread: its rows, each node's parent position (-1 for the post) and the dense cosine matrix."""
    require_columns(comments, ("comment_id", "parent_id", "thread_id", "depth", "text"))
    for thread_id, nodes in comments.groupby("thread_id", sort=True):
        nodes = nodes.reset_index(drop=True)
        index = {cid: i for i, cid in enumerate(nodes["comment_id"])}
        parents = np.array([index.get(p, -1) if isinstance(p, str) else -1 for p in nodes["parent_id"]])
        x = tfidf_matrix(nodes["text"].fillna("").astype(str))
        yield thread_id, nodes, parents, (x @ x.T).toarray()


def reply_parent_similarity(comments: pd.DataFrame) -> pd.DataFrame:
    """One row per reply (:data:`PAIR_COLUMNS`); a thread of two nodes has no ``others`` (nan)."""
    frames = []
    for thread_id, nodes, parents, cosine in _threads(comments):
        v = np.flatnonzero(parents >= 0)
        u = parents[v]
        n = len(nodes)
        others = (cosine[v].sum(axis=1) - cosine[v, v] - cosine[v, u]) / (n - 2) if n > 2 else np.full(len(v), np.nan)
        frames.append(pd.DataFrame({"thread_id": thread_id, "comment_id": nodes["comment_id"].to_numpy()[v],
                                    "depth": nodes["depth"].to_numpy()[v].astype(int), "parent_cosine": cosine[v, u],
                                    "others_cosine": others}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(PAIR_COLUMNS))


def similarity_by_depth(pairs: pd.DataFrame) -> pd.DataFrame:
    """:func:`reply_parent_similarity` averaged by the reply's depth: ``depth, n_replies, parent_cosine,
    others_cosine, difference`` (parent minus others)."""
    summary = pairs.groupby("depth", sort=True).agg(n_replies=("comment_id", "size"),
                                                    parent_cosine=("parent_cosine", "mean"),
                                                    others_cosine=("others_cosine", "mean")).reset_index()
    summary["difference"] = summary["parent_cosine"] - summary["others_cosine"]
    return summary


def _mean_offdiagonal(cosine: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Mean off-diagonal cosine of each row of node sets ``sets`` (m x k): ``(sum - trace) / (k (k - 1))``,
    :func:`pvsst.analysis.text.lexical.mean_offdiagonal_cosine` of those rows, read off the cosine matrix."""
    k = sets.shape[1]
    block = cosine[sets[:, :, None], sets[:, None, :]]
    return (block.sum(axis=(1, 2)) - np.trace(block, axis1=1, axis2=2)) / (k * (k - 1))


def path_similarity(comments: pd.DataFrame, *, draws: int = PATH_NULL_DRAWS, seed: int = 0) -> pd.DataFrame:
    """One row per root-to-leaf path with two or more nodes (:data:`PATH_COLUMNS`)."""
    rng = np.random.default_rng(seed)
    rows = []
    for thread_id, nodes, parents, cosine in _threads(comments):
        n = len(nodes)
        leaves = sorted(set(range(n)) - set(parents[parents >= 0].tolist()))
        for leaf in leaves:
            path = [leaf]
            while parents[path[-1]] >= 0:
                path.append(int(parents[path[-1]]))
            if len(path) < 2:
                continue
            null_sets = np.argsort(rng.random((draws, n)), axis=1)[:, :len(path)]  # k distinct nodes per draw
            observed = float(_mean_offdiagonal(cosine, np.array([path[::-1]]))[0])
            null = _mean_offdiagonal(cosine, null_sets) if draws else np.array([np.nan])
            rows.append((thread_id, nodes.at[leaf, "comment_id"], len(path), observed, float(null.mean())))
    return pd.DataFrame(rows, columns=list(PATH_COLUMNS))
