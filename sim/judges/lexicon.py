"""A deterministic stance judge: counts the topic lexicon's support and oppose words in a post.

The lexicons are pvsst's own (``sim/data/imitate_lexicons.yaml``, the words of the scripted writers):
per-topic words plus generic ones, or generic ones plus the question's words for a topic without an
entry. With ``n = |support words in the post| - |oppose words in the post|`` (distinct words),

.. math::

    \\hat s = \\operatorname{sign}(n) \\cdot \\min(3, \\max(1, |n| - 1)), \\qquad \\hat s = 0 \\text{ when } n = 0,

so a post carrying ``1 + |s|`` words of its side (how ``scripted/imitate`` and the planted-effect
providers write a post of stance ``s``) is read back as ``s`` when no other lexicon word intervenes.
It is a test instrument and a floor for language-model judges, not a validated measure of stance.

Examples
--------
>>> from pvsst.sim.topics import get_topic
>>> judge = LexiconJudge()
>>> judge.judge(["labels build trust, provenance and clarity", "stigma hurts artists", "coffee"],
...             get_topic("ai_labels"))
['strongly support', 'lean oppose', 'neutral']
"""
from __future__ import annotations

from collections.abc import Sequence

from pvsst.sim.llm.providers.imitate import lexicon_for
from pvsst.sim.stance import STANCE_LABELS
from pvsst.sim.topics import Topic


def lexicon_score(text: str, topic: Topic) -> int:
    """The judged stance (-3..3) of one post (see the module docstring for the rule).

    Examples
    --------
    >>> from pvsst.sim.topics import get_topic
    >>> lexicon_score("ban microtargeting to protect voters and elections", get_topic("political_ad_targeting"))
    3
    """
    net = lexicon_for(topic.question).infer_net(text)
    if net == 0:
        return 0
    return (1 if net > 0 else -1) * min(3, max(1, abs(net) - 1))


class LexiconJudge:
    """``lexicon``: the stance judge of :func:`lexicon_score` (deterministic, no model)."""

    name = "lexicon"

    def judge(self, texts: Sequence[str], topic: Topic) -> list[str]:
        return [STANCE_LABELS[lexicon_score(text, topic)] for text in texts]
