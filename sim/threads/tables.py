"""The tables of one thread (docs/threads.md lists them with their columns), built column-wise.

- ``comments``: one row per node, the opening post first (``depth`` 0, ``round`` -1, ``action`` ``post``),
  then the replies in the order they joined the thread. ``comment_id`` is ``<thread_id>:<node>``,
  ``parent_id`` is empty for the post, ``root_id`` is the post's id; ``author`` is a persona id;
  ``critic`` says whether the author was a critic that round; ``length_class`` is ``short``/``long``
  (empty for the post); ``reply_ok`` is false where the call failed (its ``text`` is then empty);
  ``prompt_sha256`` and ``call_id`` link to ``prompts`` and ``llm_calls``.
- ``actions``: every action a persona drew: ``outcome`` is ``comment``, ``abstain`` or ``no_parent`` (it
  drew a comment but had no node to reply to), with the comment's id where it wrote one.
- ``agents``: one row per participant: ``role`` ``author`` or ``engaged`` (``order``: the engaged
  persona's turn in each round, -1 for the author) and the persona's attributes (its card left out).
- ``comment_votes`` (empty unless the settings turn votes on): ``value`` +1 / 0 / -1, ``ok`` false for
  a ballot whose call failed (its rows count no vote).
- ``llm_calls`` and ``prompts``: as for a trial (``pvsst.sim.llm.types.CALL_RECORD_FIELDS``,
  ``pvsst.sim.llm.prompt_table``).

Examples
--------
>>> rec = ThreadRecorder()
>>> rec.comments.add("c:0", None, "c:0", "c", 0, "p1", -1, "post", False, None, "hi", True, "h", "k")
>>> rec.comments.frame().dtypes[["depth", "round", "critic"]].astype(str).tolist()
['int16', 'int32', 'bool']
"""
from __future__ import annotations

from pvsst.sim.llm.prompt_table import PromptLog
from pvsst.sim.recorder import TableBuilder

COMMENT_COLUMNS = ("comment_id", "parent_id", "root_id", "thread_id", "depth", "author", "round", "action", "critic",
                   "length_class", "text", "reply_ok", "prompt_sha256", "call_id")
ACTION_COLUMNS = ("thread_id", "round", "author", "action", "outcome", "comment_id")
COMMENT_VOTE_COLUMNS = ("thread_id", "round", "voter", "comment_id", "value", "ok")
THREAD_DTYPES = {"depth": "int16", "round": "int32", "critic": "bool", "reply_ok": "bool", "action": None,
                 "value": "int8", "ok": "bool"}
ACTION_DTYPES = {"round": "int32", "action": "int16"}

POST_ACTION = "post"
COMMENT_ACTION = "comment"
OUTCOMES = ("comment", "abstain", "no_parent")


class ThreadRecorder:
    """The event tables of one thread and the texts of its requests."""

    def __init__(self) -> None:
        self.comments = TableBuilder(COMMENT_COLUMNS, THREAD_DTYPES)
        self.actions = TableBuilder(ACTION_COLUMNS, ACTION_DTYPES)
        self.comment_votes = TableBuilder(COMMENT_VOTE_COLUMNS, THREAD_DTYPES)
        self.prompts = PromptLog()
