"""Turn an agent's situation into chat messages, using the templates of a materials directory.

Text another agent wrote (feed posts, posts to vote on, the agent's own memory) goes in through
:func:`pvsst.sim.prompts.agent_text.render_agent_text`: as data (one line, quotes escaped) under
``render="data"``, as written under ``render="verbatim"``. Every number a template receives is printed
by the protocol's ``number_format`` (:func:`format_number`).

Examples
--------
>>> from pvsst.sim.materials import load_materials
>>> from pvsst.sim.topics import get_topic
>>> msgs = post_messages(load_materials(), get_topic("ai_labels"), persona="retired nurse",
...     posting_style="warm", stance=2, confidence=0.7, memory=[], feed=[], feed_note=FIRST_ROUND_NOTE,
...     char_limit=180)
>>> msgs[1]["content"].splitlines()[0]
'TOPIC: Should AI-generated content be labeled on social platforms?'
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pvsst.sim.feeds import FeedItem
from pvsst.sim.materials import Materials, load_materials
from pvsst.sim.prompts.agent_text import render_agent_text
from pvsst.sim.prompts.templates import opinion_choices_text
from pvsst.sim.stance import STANCE_LABELS
from pvsst.sim.topics import Topic, get_topic

if TYPE_CHECKING:  # pragma: no cover
    from pvsst.sim.feeds import FeedItem

# Feed notes: the materials template shown instead of a feed.
FIRST_ROUND_NOTE = "first_round_note"
CONTROL_NOTE = "control_note"
ADVERSARY_NOTE = "adversary_note"
EMPTY_FEED_NOTE = "empty_feed_note"

NUMBER_FORMATS = ("two_decimals", "python")


def format_number(value: object, number_format: str = "two_decimals") -> object:
    """``value`` as a template prints it: a float with two decimals (``two_decimals``) or as Python's
    ``str(float)`` prints it (``python``); integers and text as they are.

    Examples
    --------
    >>> [format_number(x) for x in (0.7, 0.675, 1.0, 3)]
    ['0.70', '0.68', '1.00', 3]
    >>> [format_number(x, "python") for x in (0.7, 0.675, 1.0, 3)]
    ['0.7', '0.675', '1.0', 3]
    """
    if number_format not in NUMBER_FORMATS:
        raise ValueError(f"unknown number_format {number_format!r} ({', '.join(NUMBER_FORMATS)})")
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return f"{float(value):.2f}" if number_format == "two_decimals" else str(float(value))
    return value


def _fill(materials: Materials, kind: str, number_format: str, **fields: object) -> str:
    return materials.render(kind, **{name: format_number(value, number_format) for name, value in fields.items()})


def feed_text(materials: Materials, feed: Sequence["FeedItem"], note: str | None, render: str = "data",
              number_format: str = "two_decimals") -> str:
    """The feed block of a post prompt: a header, then one line per post (with like counts if shown)."""
    if note is not None:
        return materials.render(note)
    if not feed:
        return materials.render(EMPTY_FEED_NOTE)
    ranked = any(item.show_likes for item in feed)
    lines = [materials.render("feed_header_ranked" if ranked else "feed_header")]
    for item in feed:
        lines.append(_fill(materials, "feed_item_ranked" if item.show_likes else "feed_item", number_format,
                           likes=item.likes, agent_id=item.agent_id, label=item.label,
                           text=render_agent_text(item.text, render)))
    return "\n".join(lines)


def memory_text(materials: Materials, memory: Sequence[dict], render: str = "data",
                number_format: str = "two_decimals") -> str:
    """The agent's own last posts, one line each (the memory template), or the empty-memory note."""
    if not memory:
        return materials.render("memory_empty")
    return "\n".join(
        _fill(materials, "memory_line", number_format, round=m["round"], post=render_agent_text(m["post"], render),
              opinion=STANCE_LABELS[m["stance"]], confidence=m["confidence"])
        for m in memory
    )


def post_messages(materials: Materials, topic: Topic, *, persona: str, posting_style: str,
                  stance: int, confidence: float, memory: Sequence[dict], feed: Sequence["FeedItem"],
                  feed_note: str | None, char_limit: int, agenda: tuple[str, str] | None = None,
                  render: str = "data", number_format: str = "two_decimals") -> tuple[dict[str, str], ...]:
    """System + user messages asking for one post and an updated opinion.

    ``agenda`` is ``(pushed_opinion_label, angle)`` for adversary accounts, ``None`` for honest agents.
    ``feed_note`` names a note template shown instead of the feed (``FIRST_ROUND_NOTE``, ...).
    ``number_format`` prints every number the templates receive (:func:`format_number`).
    """
    agenda_text = ""
    if agenda is not None:
        agenda_text = materials.render("agenda", pushed_opinion=agenda[0], angle=agenda[1])
    user = _fill(
        materials, "post", number_format,
        question=topic.question,
        persona=persona,
        posting_style=posting_style,
        opinion=STANCE_LABELS[stance],
        confidence=confidence,
        agenda=agenda_text,
        memory=memory_text(materials, memory, render, number_format),
        feed=feed_text(materials, feed, feed_note, render, number_format),
        char_limit=char_limit,
        choices=opinion_choices_text(),
    )
    return ({"role": "system", "content": materials.render("post_system")}, {"role": "user", "content": user})


def vote_messages(materials: Materials, topic: Topic, *, persona: str, stance: int,
                  posts: Sequence[tuple[str, str]], render: str = "data",
                  confidence: float | None = None, number_format: str = "two_decimals") -> tuple[dict[str, str], ...]:
    """System + user messages asking for one vote per post; ``posts`` is ``[(agent_id, text), ...]``."""
    lines = "\n".join(_fill(materials, "vote_item", number_format, index=i, agent_id=agent_id,
                            text=render_agent_text(text, render))
                      for i, (agent_id, text) in enumerate(posts))
    user = _fill(materials, "vote", number_format, question=topic.question, persona=persona,
                 opinion=STANCE_LABELS[stance], posts=lines, n_posts=len(posts), choices=opinion_choices_text(),
                 confidence="" if confidence is None else confidence)
    return ({"role": "system", "content": materials.render("vote_system")}, {"role": "user", "content": user})


def estimate_prompt_tokens(phase: str, *, feed_size: int = 5, votes_per_voter: int = 5,
                           post_char_limit: int = 180, memory_rounds: int = 3,
                           materials: Materials | None = None) -> int:
    """Approximate prompt tokens of a typical call (4 characters per token, full memory and feed).

    Used by ``pvsst estimate``; an upper-middle estimate, not a count.
    """
    materials = materials or load_materials()
    topic = get_topic("identity_verification")
    text = "x" * int(post_char_limit * 0.6)
    if phase == "post":
        feed = [FeedItem(f"a{i:02d}", "community organizer", text, 3, False, True) for i in range(feed_size)]
        memory = [{"round": r, "post": text, "stance": 1, "confidence": 0.7} for r in range(memory_rounds)]
        msgs = post_messages(materials, topic, persona="retired engineer; posting style: plain-spoken",
                             posting_style="plain-spoken, wants evidence", stance=1, confidence=0.7,
                             memory=memory, feed=feed, feed_note=None, char_limit=post_char_limit)
    elif phase == "vote":
        msgs = vote_messages(materials, topic, persona="retired engineer; posting style: plain-spoken",
                             stance=1, posts=[(f"a{i:02d}", text) for i in range(votes_per_voter)])
    else:
        raise ValueError(f"unknown phase {phase!r}")
    return sum(len(m["content"]) for m in msgs) // 4 + 4 * len(msgs)
