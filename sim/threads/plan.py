"""Who takes part in which thread: authors, topics and engaged personas, all drawn from the master seed.

For a study of ``n_threads`` threads over a persona table of ``N`` personas:

- **Authors**: the first ``n_threads`` personas of one random permutation of the table (stream
  ``thread_plan``): distinct, as in SynthPAI, where a thread's author leaves the pool of profiles for
  every later thread.
- **Topic** of thread ``t``: drawn uniformly (with replacement) from the study's topics (stream
  ``thread_plan`` keyed by ``t``).
- **Engaged personas** of thread ``t``: the first ``engaged_profiles`` of a random permutation (same
  keyed stream) of the personas that author neither thread ``t`` nor an earlier one; their order is the
  order in which they act every round. SynthPAI instead asks a checker model whether each of the first
  ``no_profiles`` shuffled profiles is interested in the post and keeps those whose answer contains any
  of the letters y, e, s, a test that almost always passes; the seeded draw replaces it, so engagement
  costs no call and does not depend on a model.

Thread ``t``'s draws use streams keyed by ``t``, so a thread is the same whatever the number of threads.

Examples
--------
>>> from pvsst.sim.topics import get_topic
>>> from pvsst.sim.threads.settings import ThreadSettings
>>> from pvsst.sim.persona_table import load_persona_table
>>> plans = plan_threads(ThreadSettings(n_threads=2, engaged_profiles=5), load_persona_table(),
...                      [get_topic("ai_labels")], seed=7, model_name="scripted/thread_commenter")
>>> [p.thread_id for p in plans], len(plans[0].engaged), plans[0].author["persona_id"] != plans[1].author["persona_id"]
(['thread-000', 'thread-001'], 5, True)
>>> plans[1].author["persona_id"] in [e["persona_id"] for e in plans[1].engaged + plans[0].engaged]
False
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.sim.persona_table import load_persona_table
from pvsst.sim.seeds import RandomStreams
from pvsst.sim.threads.settings import ThreadSettings
from pvsst.sim.topics import Topic


@dataclass(frozen=True)
class ThreadPlan:
    """One thread of a study, ready to run: its id, seed, model, topic, author and engaged personas.

    ``author`` and ``engaged`` are persona rows as dicts (``persona_id``, ``card``, ``posting_style`` and any
    attributes). ``materials`` is the thread templates' directory (``None``: pvsst's).
    """

    thread_id: str
    thread_index: int
    seed: int
    model_name: str
    topic: Topic
    author: dict
    engaged: tuple[dict, ...]
    settings: ThreadSettings
    materials: str | None = None

    @property
    def engaged_ids(self) -> list[str]:
        return [str(p["persona_id"]) for p in self.engaged]


def thread_id_of(index: int, prefix: str = "thread") -> str:
    """``thread-000``, ``thread-001``, ...

    >>> thread_id_of(12)
    'thread-012'
    """
    return f"{prefix}-{index:03d}"


def plan_threads(settings: ThreadSettings, personas: pd.DataFrame, topics: Sequence[Topic], *, seed: int,
                 model_name: str, materials: str | None = None, id_prefix: str = "thread") -> list[ThreadPlan]:
    """Every thread of a study (see the module docstring); an :class:`InputError` when the persona table
    is too small for ``n_threads`` authors plus ``engaged_profiles`` engaged personas, or no topic is given."""
    table = load_persona_table(personas)
    settings.check_population(len(table))
    if not topics:
        raise InputError("threads", "topics", "a thread study needs at least one topic")
    rows = table.to_dict("records")
    streams = RandomStreams(seed)
    authors = [int(i) for i in streams.generator("thread_plan").permutation(len(rows))[:settings.n_threads]]
    plans = []
    for index, author in enumerate(authors):
        rng = streams.generator("thread_plan", index)
        topic = topics[int(rng.integers(len(topics)))]
        taken = set(authors[:index + 1])
        pool = [i for i in range(len(rows)) if i not in taken]
        engaged = [rows[pool[int(i)]] for i in rng.permutation(len(pool))[:settings.engaged_profiles]]
        plans.append(ThreadPlan(thread_id_of(index, id_prefix), index, int(seed), model_name, topic, rows[author],
                                tuple(engaged), settings, materials))
    return plans
