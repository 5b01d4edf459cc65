"""The stance-judge interface and the judged-stance table it fills.

A stance judge reads post texts written on one topic and returns, for each, one of the seven stance
labels of :data:`pvsst.sim.stance.OPINION_CHOICES` (``strongly support`` = +3 ... ``strongly oppose`` = -3).
Judges take a batch of posts so that a judge backed by a language model can send its calls together; a
judge whose ``records_calls`` is true (:class:`pvsst.sim.judges.llm_judge.LLMJudge`) also receives each
post's ``(trial_id, round, agent_id)`` as ``keys``, to tag its calls' provenance records.

The judged-stance table has one row per judged post: ``trial_id, round, agent_id, judge, judged_label,
judged_stance`` (the label's score on the -3..3 scale; both empty where a language-model judge's call
failed, so the post was not judged). ``analysis.consistency`` reads it beside
``posts.parquet`` (whose ``stance`` column is the stance the agent reported in the same reply).

Examples
--------
>>> import pandas as pd
>>> from pvsst.sim.judges.lexicon import LexiconJudge
>>> from pvsst.sim.topics import get_topic
>>> posts = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": ["a01", "a02"],
...                       "text": ["labels build trust and provenance", "stigma for artists"]})
>>> judged_stances(LexiconJudge(), posts, get_topic("ai_labels"))[["agent_id", "judged_stance"]].values.tolist()
[['a01', 2], ['a02', -1]]
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.sim.stance import LABEL_TO_STANCE
from pvsst.sim.topics import Topic

JUDGED_COLUMNS = ("trial_id", "round", "agent_id", "judge", "judged_label", "judged_stance")


@runtime_checkable
class StanceJudge(Protocol):
    """Anything with a ``name`` and ``judge(texts, topic) -> labels`` (one stance label per text)."""

    name: str

    def judge(self, texts: Sequence[str], topic: Topic) -> list[str]: ...


def judged_stances(judge: StanceJudge, posts: pd.DataFrame, topic: Topic) -> pd.DataFrame:
    """The judged-stance table of ``posts`` (one trial's, or any posts written on ``topic``).

    Parameters
    ----------
    judge : the stance judge.
    posts : ``trial_id, round, agent_id, text`` (a run's ``posts.parquet``; other columns are ignored).
    topic : the topic the posts were written on.

    Returns
    -------
    DataFrame with :data:`JUDGED_COLUMNS`, in the order of ``posts``. A label outside the seven is an
    :class:`InputError` naming the judge; ``None`` (a judge that records calls and whose call failed)
    leaves ``judged_label`` and ``judged_stance`` empty.
    """
    for column in ("trial_id", "round", "agent_id", "text"):
        if column not in posts.columns:
            raise InputError("posts", column, "missing column")
    texts = [str(t) for t in posts["text"]]
    if getattr(judge, "records_calls", False):  # it tags each call with the post it judges
        keys = list(zip(posts["trial_id"].astype(str), posts["round"].astype(int), posts["agent_id"].astype(str)))
        labels = list(judge.judge(texts, topic, keys=keys))
    else:
        labels = list(judge.judge(texts, topic))
    if len(labels) != len(posts):
        raise InputError(f"judge {judge.name}", "labels", f"returned {len(labels)} labels for {len(posts)} posts")
    unknown = sorted({label for label in labels if label is not None and label not in LABEL_TO_STANCE})
    if unknown:
        raise InputError(f"judge {judge.name}", "labels", f"not a stance label: {unknown[0]!r}")
    return pd.DataFrame({"trial_id": posts["trial_id"].to_numpy(), "round": posts["round"].to_numpy(),
                         "agent_id": posts["agent_id"].to_numpy(), "judge": judge.name,
                         "judged_label": labels,
                         "judged_stance": pd.array([LABEL_TO_STANCE.get(label) for label in labels], dtype="Int64")},
                        columns=list(JUDGED_COLUMNS))
