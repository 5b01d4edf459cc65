"""Thread figures: one thread drawn as a tree, and the depth histogram of every thread's comments.

The tree is laid out by its own shape: each leaf gets the next slot from left to right in depth-first
order (replies in the order they were written), each inner node sits at the mean of its children's
slots, and depth runs downward from the post. Critics' comments are drawn in vermillion.

Examples
--------
>>> import pandas as pd
>>> comments = pd.DataFrame({"comment_id": ["t:0", "t:1", "t:2", "t:3"], "parent_id": [None, "t:0", "t:1", "t:0"],
...     "thread_id": "t", "depth": [0, 1, 2, 1], "author": ["a", "b", "c", "d"], "critic": [False, False, True, False]})
>>> tree = thread_tree_figure(comments, "t")
>>> tree.data[["comment_id", "x", "depth"]].values.tolist()
[['t:0', 0.5, 0], ['t:1', 0.0, 1], ['t:2', 0.0, 2], ['t:3', 1.0, 1]]
>>> tree.close()
>>> histogram = depth_histogram_figure(comments)
>>> histogram.data["n_comments"].tolist()
[2, 1]
>>> histogram.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import OKABE_ITO, PaperFigure, in_style, new_figure
from pvsst.analysis.threads.shape import depth_counts, depth_distribution, require_columns

COMMENT_COLOR = OKABE_ITO[5]   # blue
CRITIC_COLOR = OKABE_ITO[6]    # vermillion
POST_COLOR = OKABE_ITO[0]


def tree_layout(comments: pd.DataFrame, thread_id: str) -> pd.DataFrame:
    """``comment_id, parent_id, author, depth, critic, x`` of one thread (see the module docstring)."""
    require_columns(comments, ("comment_id", "parent_id", "thread_id", "depth"))
    nodes = comments[comments["thread_id"] == thread_id].reset_index(drop=True)
    children: dict[str, list[int]] = {}
    for position, parent in enumerate(nodes["parent_id"]):
        children.setdefault(parent if isinstance(parent, str) else "", []).append(position)
    x = np.zeros(len(nodes))
    next_slot = 0
    # Depth first, without recursion (a thread under the original's caps can be deep): a node is placed
    # when it is met the second time, after all of its children.
    stack = [(root, False) for root in reversed(children.get("", []))]
    while stack:
        position, children_placed = stack.pop()
        kids = children.get(nodes.at[position, "comment_id"], [])
        if not kids:
            x[position] = next_slot
            next_slot += 1
        elif children_placed:
            x[position] = float(np.mean(x[kids]))
        else:
            stack.append((position, True))
            stack.extend((kid, False) for kid in reversed(kids))
    critic = nodes["critic"].astype(bool) if "critic" in nodes.columns else pd.Series(False, index=nodes.index)
    author = nodes["author"] if "author" in nodes.columns else pd.Series("", index=nodes.index)
    return pd.DataFrame({"comment_id": nodes["comment_id"], "parent_id": nodes["parent_id"], "author": author,
                         "depth": nodes["depth"].astype(int), "critic": critic, "x": x})


@in_style
def thread_tree_figure(comments: pd.DataFrame, thread_id: str) -> PaperFigure:
    """One thread as a tree: the post on top, each reply one level below what it answers.

    ``data`` holds one row per node: comment_id, parent_id, author, depth, critic, x.
    """
    layout = tree_layout(comments, thread_id)
    figure = new_figure(height=2.6)
    ax = figure.axes[0]
    position = layout.set_index("comment_id")
    for _, row in layout[layout["parent_id"].notna()].iterrows():
        parent = position.loc[row["parent_id"]]
        ax.plot([parent["x"], row["x"]], [parent["depth"], row["depth"]], color="#999999", linewidth=0.5, zorder=1)
    for is_critic, color, label in ((False, COMMENT_COLOR, "comment"), (True, CRITIC_COLOR, "critic's comment")):
        rows = layout[(layout["critic"] == is_critic) & layout["parent_id"].notna()]
        ax.scatter(rows["x"], rows["depth"], s=9, color=color, label=label, zorder=2)
    posts = layout[layout["parent_id"].isna()]
    ax.scatter(posts["x"], posts["depth"], s=24, marker="s", color=POST_COLOR, label="post", zorder=3)
    ax.invert_yaxis()
    ax.set_xticks([])
    ax.set_ylabel("depth (0: the post)")
    ax.set_yticks(sorted(layout["depth"].unique()))
    ax.spines["bottom"].set_visible(False)
    ax.legend(loc="lower right", fontsize=6)
    n_replies = int(layout["parent_id"].notna().sum())
    caption = (f"Thread {thread_id}: {n_replies} comments under one post, maximum depth {int(layout['depth'].max())}. "
               "Each comment sits one level below the message it answers; leaves are spaced left to right in the "
               f"order they were written; {int(layout['critic'].sum())} critics' comments in vermillion.")
    return PaperFigure(f"thread_tree_{thread_id}", figure, caption, layout)


@in_style
def depth_histogram_figure(comments: pd.DataFrame) -> PaperFigure:
    """Comments by depth over every thread (bars), with the range over threads (lines).

    ``data`` holds one row per depth: depth, n_comments, share, thread_min, thread_max.
    """
    pooled = depth_distribution(comments)
    per_thread = depth_counts(comments)
    threads = per_thread["thread_id"].unique()
    grid = (per_thread[per_thread["depth"] > 0].pivot(index="thread_id", columns="depth", values="n_nodes")
            .reindex(index=threads, columns=pooled["depth"]).fillna(0))
    pooled["thread_min"] = grid.min(axis=0).to_numpy() if len(pooled) else []
    pooled["thread_max"] = grid.max(axis=0).to_numpy() if len(pooled) else []
    figure = new_figure()
    ax = figure.axes[0]
    ax.bar(pooled["depth"], pooled["n_comments"] / max(len(threads), 1), color=COMMENT_COLOR,
           label="mean per thread")
    ax.vlines(pooled["depth"], pooled["thread_min"], pooled["thread_max"], color=POST_COLOR, linewidth=1.0,
              label="range over threads")
    ax.set_xlabel("depth (1: a direct reply to the post)")
    ax.set_ylabel("comments per thread")
    ax.set_xticks(pooled["depth"].tolist())
    ax.legend(fontsize=6)
    caption = (f"Comments by depth: bars are the mean number per thread over {len(threads)} thread(s) "
               f"({int(pooled['n_comments'].sum())} comments); lines span the fewest to the most in one thread.")
    return PaperFigure("thread_depth_histogram", figure, caption, pooled)
