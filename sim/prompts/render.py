"""Turn an agent's situation into chat messages, using the versioned templates.

Examples
--------
>>> from sim.topics import get_topic
>>> from sim.feeds import FeedItem
>>> msgs = post_messages(PromptTemplates("v1"), get_topic("ai_labels"), persona="retired nurse",
...     posting_style="warm", stance=2, confidence=0.7, memory=[], feed=[], feed_note=FIRST_ROUND_NOTE,
...     char_limit=180)
>>> msgs[1]["content"].splitlines()[0]
'TOPIC: Should AI-generated content be labeled on social platforms?'
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sim.prompts.templates import PromptTemplates, opinion_choices_text
from sim.stance import STANCE_LABELS
from sim.topics import Topic

if TYPE_CHECKING:  # pragma: no cover
    from sim.feeds import FeedItem

FIRST_ROUND_NOTE = "This is the first round. Nobody has posted yet."
CONTROL_NOTE = "You see only the topic and your own persona. No other posts are visible."
ADVERSARY_NOTE = "Post your own view. You do not see other users' posts."
EMPTY_FEED_NOTE = "No posts from others are visible to you this round."


def feed_text(feed: Sequence["FeedItem"], note: str | None) -> str:
    """The feed block of a post prompt: one line per post, with like counts when the policy shows them."""
    if note is not None:
        return note
    if not feed:
        return EMPTY_FEED_NOTE
    ranked = any(item.show_likes for item in feed)
    lines = ["Posts from the previous round, ranked by likes:" if ranked else "Posts from the previous round:"]
    for item in feed:
        likes = f"[{item.likes} likes] " if item.show_likes else ""
        lines.append(f'- {likes}@{item.agent_id} ({item.label}): "{item.text}"')
    return "\n".join(lines)


def memory_text(memory: Sequence[dict]) -> str:
    if not memory:
        return "(none)"
    return "\n".join(
        f'- round {m["round"]}: you said "{m["post"]}" (opinion: {STANCE_LABELS[m["stance"]]}, '
        f'confidence: {m["confidence"]:.2f})'
        for m in memory
    )


def post_messages(templates: PromptTemplates, topic: Topic, *, persona: str, posting_style: str,
                  stance: int, confidence: float, memory: Sequence[dict], feed: Sequence["FeedItem"],
                  feed_note: str | None, char_limit: int, agenda: tuple[str, str] | None = None,
                  ) -> tuple[dict[str, str], ...]:
    """System + user messages asking for one post and an updated opinion.

    ``agenda`` is ``(pushed_opinion_label, angle)`` for adversary accounts, ``None`` for honest agents.
    """
    agenda_text = ""
    if agenda is not None:
        agenda_text = templates.render("agenda", pushed_opinion=agenda[0], angle=agenda[1])
    user = templates.render(
        "post",
        question=topic.question,
        persona=persona,
        posting_style=posting_style,
        opinion=STANCE_LABELS[stance],
        confidence=f"{confidence:.2f}",
        agenda=agenda_text,
        memory=memory_text(memory),
        feed=feed_text(feed, feed_note),
        char_limit=char_limit,
        choices=opinion_choices_text(),
    )
    return ({"role": "system", "content": templates.render("post_system")}, {"role": "user", "content": user})


def vote_messages(templates: PromptTemplates, topic: Topic, *, persona: str, stance: int,
                  posts: Sequence[tuple[str, str]]) -> tuple[dict[str, str], ...]:
    """System + user messages asking for one vote per post; ``posts`` is ``[(agent_id, text), ...]``."""
    lines = "\n".join(f'[{i}] @{agent_id}: "{text}"' for i, (agent_id, text) in enumerate(posts))
    user = templates.render("vote", question=topic.question, persona=persona, opinion=STANCE_LABELS[stance],
                            posts=lines, n_posts=len(posts))
    return ({"role": "system", "content": templates.render("vote_system")}, {"role": "user", "content": user})


def estimate_prompt_tokens(phase: str, *, feed_size: int = 5, votes_per_voter: int = 5,
                           post_char_limit: int = 180, memory_rounds: int = 3, version: str = "v1") -> int:
    """Approximate prompt tokens of a typical call (4 characters per token, full memory and feed).

    Used by ``pvsst estimate``; an upper-middle estimate, not a count.
    """
    from sim.feeds import FeedItem
    from sim.topics import get_topic

    templates = PromptTemplates(version)
    topic = get_topic("identity_verification")
    text = "x" * int(post_char_limit * 0.6)
    if phase == "post":
        feed = [FeedItem(f"a{i:02d}", "community organizer", text, 3, False, True) for i in range(feed_size)]
        memory = [{"round": r, "post": text, "stance": 1, "confidence": 0.7} for r in range(memory_rounds)]
        msgs = post_messages(templates, topic, persona="retired engineer; posting style: plain-spoken",
                             posting_style="plain-spoken, wants evidence", stance=1, confidence=0.7,
                             memory=memory, feed=feed, feed_note=None, char_limit=post_char_limit)
    elif phase == "vote":
        msgs = vote_messages(templates, topic, persona="retired engineer; posting style: plain-spoken",
                             stance=1, posts=[(f"a{i:02d}", text) for i in range(votes_per_voter)])
    else:
        raise ValueError(f"unknown phase {phase!r}")
    return sum(len(m["content"]) for m in msgs) // 4 + 4 * len(msgs)
