"""Run one thread and collect its tables: the thread engine's entry point.

:func:`run_thread` runs a :class:`~pvsst.sim.threads.plan.ThreadPlan` through a gateway and returns a
:class:`ThreadResult` whose :meth:`~ThreadResult.tables` a run writes like a trial's (one folder per
thread, written by the same table writer); the thread's invariants are asserted before the result is
returned (:mod:`pvsst.sim.threads.invariants`), so a thread that broke one is never written.

Examples
--------
>>> from pvsst.sim.llm.gateway import Gateway
>>> from pvsst.sim.persona_table import load_persona_table
>>> from pvsst.sim.threads.plan import plan_threads
>>> from pvsst.sim.threads.settings import ThreadSettings
>>> from pvsst.sim.topics import get_topic
>>> plan = plan_threads(ThreadSettings(engaged_profiles=8), load_persona_table(), [get_topic("ai_labels")],
...                     seed=11, model_name="scripted/thread_commenter")[0]
>>> result = run_thread(plan, Gateway())
>>> sorted(result.tables())
['actions', 'agents', 'comment_votes', 'comments', 'llm_calls', 'prompts']
>>> len(result.llm_calls) == len(result.comments), result.agents["role"].value_counts().to_dict()
(True, {'engaged': 8, 'author': 1})
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from pvsst.sim.llm.types import CALL_RECORD_FIELDS
from pvsst.sim.threads.invariants import assert_thread_invariants
from pvsst.sim.threads.model import ThreadModel
from pvsst.sim.threads.plan import ThreadPlan

THREAD_TABLES = ("comments", "actions", "agents", "comment_votes", "llm_calls", "prompts")
"""The tables of one thread's folder."""


@dataclass
class ThreadResult:
    """The tables of one finished thread plus its plan."""

    plan: ThreadPlan
    comments: pd.DataFrame
    actions: pd.DataFrame
    agents: pd.DataFrame
    comment_votes: pd.DataFrame
    llm_calls: pd.DataFrame
    prompts: pd.DataFrame
    elapsed_s: float

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in THREAD_TABLES}


def thread_agents_frame(plan: ThreadPlan) -> pd.DataFrame:
    """One row per participant: thread id, persona id, role, turn (-1 for the author), persona attributes."""
    rows = []
    for order, (role, persona) in enumerate([("author", plan.author), *(("engaged", p) for p in plan.engaged)]):
        row = {"thread_id": plan.thread_id, "persona_id": str(persona["persona_id"]), "role": role, "order": order - 1}
        for key, value in persona.items():
            if key not in ("card", "persona_id"):
                row[key if key not in row else f"persona_{key}"] = value
        rows.append(row)
    return pd.DataFrame(rows)


def run_thread(plan: ThreadPlan, gateway, on_round: Callable[[int], None] | None = None) -> ThreadResult:
    """Run one thread through ``gateway``; raises :class:`~pvsst.sim.threads.invariants.ThreadInvariantError`
    if the finished thread breaks a rule its settings promise."""
    started = time.perf_counter()
    gateway.drain_records()
    model = ThreadModel(plan, gateway, on_round)
    model.run()
    calls = pd.DataFrame([r.to_dict() for r in gateway.drain_records()], columns=list(CALL_RECORD_FIELDS))
    rec = model.recorder
    comments = rec.comments.frame()
    assert_thread_invariants(comments, plan.settings)
    return ThreadResult(plan, comments, rec.actions.frame(), thread_agents_frame(plan), rec.comment_votes.frame(),
                        calls, rec.prompts.frame(), time.perf_counter() - started)
