"""The shape of threads: how deep and wide they grow, how many comments each gets, how many answer the post.

Read from a comments table (one row per node: ``comment_id``, ``parent_id`` empty for the post,
``thread_id``, ``depth``). For thread ``t`` with replies ``R_t`` (every node but the post):

- ``n_comments = |R_t|``; ``max_depth`` and ``mean_depth`` over ``R_t``;
- width at depth ``d``: ``w_t(d) = |{v in R_t : depth(v) = d}|``; ``max_width = max_d w_t(d)``;
- ``direct_reply_share = w_t(1) / |R_t|``: the share of comments that answer the post itself;
- ``mean_branching``: replies per node that has at least one (``|R_t| / |{nodes with a reply}|``).

These are the statistics SynthPAI reports for its threads' structure (Yukhymenko et al. 2024, "A
Synthetic Dataset for Personal Attribute Inference", data set statistics), computed per thread.

Examples
--------
>>> import pandas as pd
>>> comments = pd.DataFrame({"comment_id": ["t:0", "t:1", "t:2", "t:3"], "parent_id": [None, "t:0", "t:0", "t:1"],
...                          "thread_id": "t", "depth": [0, 1, 1, 2]})
>>> shape = thread_shape(comments)
>>> shape[["n_comments", "max_depth", "max_width"]].values.tolist(), shape["direct_reply_share"].round(4).tolist()
([[3, 2, 2]], [0.6667])
>>> depth_counts(comments)["n_nodes"].tolist()
[1, 2, 1]
"""
from __future__ import annotations

import pandas as pd

from pvsst.core.errors import InputError

COMMENT_FIELDS = ("comment_id", "parent_id", "thread_id", "depth")
SHAPE_COLUMNS = ("thread_id", "n_comments", "max_depth", "mean_depth", "max_width", "direct_reply_share",
                 "mean_branching", "n_authors")


def require_columns(frame: pd.DataFrame, columns, table: str = "comments") -> None:
    """An :class:`InputError` naming the first of ``columns`` that ``frame`` lacks."""
    for column in columns:
        if column not in frame.columns:
            raise InputError(table, column, "missing column")


def replies_of(comments: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``comments`` that reply to something (every node but the posts)."""
    return comments[comments["parent_id"].notna()]


def thread_shape(comments: pd.DataFrame) -> pd.DataFrame:
    """One row per thread with the statistics of the module docstring (:data:`SHAPE_COLUMNS`)."""
    require_columns(comments, COMMENT_FIELDS)
    rows = []
    for thread_id, nodes in comments.groupby("thread_id", sort=True):
        replies = replies_of(nodes)
        n = len(replies)
        widths = replies.groupby("depth").size()
        rows.append({
            "thread_id": thread_id, "n_comments": n,
            "max_depth": int(replies["depth"].max()) if n else 0,
            "mean_depth": float(replies["depth"].mean()) if n else float("nan"),
            "max_width": int(widths.max()) if n else 0,
            "direct_reply_share": float(widths.get(1, 0) / n) if n else float("nan"),
            "mean_branching": float(n / replies["parent_id"].nunique()) if n else float("nan"),
            "n_authors": int(replies["author"].nunique()) if "author" in replies.columns else 0,
        })
    return pd.DataFrame(rows, columns=list(SHAPE_COLUMNS))


def depth_counts(comments: pd.DataFrame) -> pd.DataFrame:
    """Nodes per thread and depth (the width profile; depth 0 is the post): ``thread_id, depth, n_nodes``."""
    require_columns(comments, COMMENT_FIELDS)
    counts = comments.groupby(["thread_id", "depth"], sort=True).size()
    return counts.rename("n_nodes").reset_index()


def depth_distribution(comments: pd.DataFrame) -> pd.DataFrame:
    """Replies by depth over every thread: ``depth, n_comments, share`` (shares of all replies)."""
    require_columns(comments, COMMENT_FIELDS)
    counts = replies_of(comments).groupby("depth", sort=True).size().rename("n_comments").reset_index()
    counts["share"] = counts["n_comments"] / counts["n_comments"].sum() if len(counts) else []
    return counts


def children_distribution(comments: pd.DataFrame) -> pd.DataFrame:
    """How many nodes have 0, 1, 2, ... replies: ``n_replies, n_nodes`` (posts and comments alike)."""
    require_columns(comments, COMMENT_FIELDS)
    replies = replies_of(comments).groupby("parent_id").size()
    per_node = comments["comment_id"].map(replies).fillna(0).astype(int)
    return per_node.value_counts().sort_index().rename_axis("n_replies").rename("n_nodes").reset_index()
