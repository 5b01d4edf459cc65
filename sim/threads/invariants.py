"""The rules every thread obeys, checked on its comments table before it is written.

Under ``caps: enforce`` every thread satisfies, and :func:`assert_thread_invariants` checks:

1. depth <= ``max_depth`` for every node;
2. every comment has at most ``max_children`` replies (the post at most ``max_root_replies``, when set);
3. nobody replies to their own comment (or post);
4. no persona replies twice to the same node.

Under ``caps: original`` (the original's fallback) rules 1 and 2 can fail by design; 3 and 4 hold
and are still checked. The structure of the table is checked too: one post per thread at depth 0, every
parent present and one level up.

Examples
--------
>>> import pandas as pd
>>> comments = pd.DataFrame({"comment_id": ["t:0", "t:1", "t:2"], "parent_id": [None, "t:0", "t:1"],
...                          "thread_id": "t", "depth": [0, 1, 2], "author": ["A", "B", "B"]})
>>> thread_invariant_problems(comments, max_depth=5, max_children=3)
['t:2: B replies to its own comment t:1']
"""
from __future__ import annotations

import pandas as pd

from pvsst.sim.threads.settings import ThreadSettings


class ThreadInvariantError(RuntimeError):
    """A thread broke one of the rules of the module docstring; the message lists the first problems."""


def thread_invariant_problems(comments: pd.DataFrame, *, max_depth: int, max_children: int,
                              max_root_replies: int | None = None, caps: str = "enforce") -> list[str]:
    """Every broken rule of ``comments`` (one or more threads' comments table), as lines; empty when none."""
    problems: list[str] = []
    rows = comments.set_index("comment_id", drop=False)
    if not rows.index.is_unique:
        return [f"duplicate comment id {rows.index[rows.index.duplicated()][0]}"]
    parents = comments["parent_id"]
    posts = comments[parents.isna()]
    for thread_id, count in posts.groupby("thread_id").size().items():
        if count != 1:
            problems.append(f"{thread_id}: {count} posts (nodes without a parent)")
    problems += [f"{cid}: the post is at depth {d}" for cid, d in zip(posts["comment_id"], posts["depth"]) if d != 0]
    replies = comments[parents.notna()]
    missing = ~replies["parent_id"].isin(rows.index)
    problems += [f"{cid}: parent {pid} is not in the table"
                 for cid, pid in zip(replies.loc[missing, "comment_id"], replies.loc[missing, "parent_id"])]
    replies = replies[~missing]
    parent_rows = rows.loc[replies["parent_id"]]
    parent_author = parent_rows["author"].to_numpy()
    parent_depth = parent_rows["depth"].to_numpy()
    for cid, author, depth, pid, p_author, p_depth in zip(replies["comment_id"], replies["author"], replies["depth"],
                                                          replies["parent_id"], parent_author, parent_depth):
        if depth != p_depth + 1:
            problems.append(f"{cid}: depth {depth} under a parent at depth {p_depth}")
        if author == p_author:
            problems.append(f"{cid}: {author} replies to its own comment {pid}")
        if caps == "enforce" and depth > max_depth:
            problems.append(f"{cid}: depth {depth} exceeds max_depth {max_depth}")
    twice = replies[replies.duplicated(["parent_id", "author"])]
    problems += [f"{cid}: {author} replies to {pid} a second time"
                 for cid, author, pid in zip(twice["comment_id"], twice["author"], twice["parent_id"])]
    if caps == "enforce":
        counts = replies.groupby("parent_id").size()
        is_post = rows["parent_id"].isna()
        for pid, n in counts.items():
            cap, cap_name = (max_root_replies, "max_root_replies") if is_post[pid] else (max_children, "max_children")
            if cap is not None and n > cap:
                problems.append(f"{pid}: {n} replies, more than {cap_name} {cap}")
    return problems


def assert_thread_invariants(comments: pd.DataFrame, settings: ThreadSettings) -> None:
    """Raise :class:`ThreadInvariantError` if ``comments`` breaks a rule ``settings`` promise."""
    problems = thread_invariant_problems(comments, max_depth=settings.max_depth, max_children=settings.max_children,
                                         max_root_replies=settings.max_root_replies, caps=settings.caps)
    if problems:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise ThreadInvariantError(f"{len(problems)} thread invariant(s) broken: {shown}")
