"""A thread as an indented tree of text, as ``pvsst show`` prints it.

One line per node, indented two spaces per level of depth, replies under what they answer in the order
they were written: ``@author [round, length, critic] text``; the post's tag is ``post``, a failed reply's
text reads ``(no reply: the call failed)``. Texts are folded to one line and, with ``max_chars``, cut.

Examples
--------
>>> import pandas as pd
>>> comments = pd.DataFrame({"comment_id": ["t:0", "t:1", "t:2", "t:3"], "parent_id": [None, "t:0", "t:1", "t:0"],
...     "thread_id": "t", "depth": [0, 1, 2, 1], "author": ["p1", "p2", "p3", "p4"], "round": [-1, 0, 0, 1],
...     "length_class": [None, "short", "long", "short"], "critic": [False, False, True, False],
...     "reply_ok": True, "text": ["Labels?", "Yes.", "No,\\nnever.", "Maybe."]})
>>> print(format_thread(comments, "t"))
t: 3 comments, depth 2
@p1 [post] Labels?
  @p2 [r0 short] Yes.
    @p3 [r0 long critic] No, never.
  @p4 [r1 short] Maybe.
"""
from __future__ import annotations

import re

import pandas as pd

from pvsst.analysis.threads.shape import require_columns
from pvsst.core.errors import InputError

FAILED_TEXT = "(no reply: the call failed)"
_SPACE = re.compile(r"\s+")


def _tag(row: pd.Series) -> str:
    if pd.isna(row["parent_id"]):
        return "post"
    parts = [f"r{int(row['round'])}"]
    if isinstance(row.get("length_class"), str):
        parts.append(row["length_class"])
    if bool(row.get("critic", False)):
        parts.append("critic")
    return " ".join(parts)


def format_thread(comments: pd.DataFrame, thread_id: str, *, max_chars: int | None = None) -> str:
    """The thread ``thread_id`` of a comments table as indented text (see the module docstring)."""
    require_columns(comments, ("comment_id", "parent_id", "thread_id", "depth", "author", "round", "text"))
    nodes = comments[comments["thread_id"] == thread_id]
    if nodes.empty:
        known = ", ".join(sorted(map(str, comments["thread_id"].unique()))[:5])
        raise InputError("comments", "thread_id", f"no thread {thread_id!r} (threads: {known})")
    children: dict[str, list[int]] = {}
    for position, parent in enumerate(nodes["parent_id"]):
        children.setdefault(parent if isinstance(parent, str) else "", []).append(position)
    replies = int(nodes["parent_id"].notna().sum())
    lines = [f"{thread_id}: {replies} comments, depth {int(nodes['depth'].max())}"]
    stack = list(reversed(children.get("", [])))
    while stack:
        row = nodes.iloc[stack.pop()]
        ok = bool(row.get("reply_ok", True))
        text = _SPACE.sub(" ", str(row["text"])).strip() if ok else FAILED_TEXT
        if max_chars is not None and len(text) > max_chars:
            text = text[:max(max_chars - 3, 0)] + "..."
        lines.append(f"{'  ' * int(row['depth'])}@{row['author']} [{_tag(row)}] {text}")
        stack.extend(reversed(children.get(row["comment_id"], [])))
    return "\n".join(lines)
