"""The messages of a thread study's calls: the opening post, a comment, a vote, from the thread templates.

The wording is a template set (:data:`pvsst.sim.materials.catalog.THREAD_TEMPLATES`): pvsst's own, or a
study's materials directory holding every thread template (:func:`load_thread_materials`), rendered byte
for byte. A comment request shows the persona's card (``$persona``), its profile block (one
``thread_profile_line`` per attribute it has, :mod:`pvsst.personas.inferable`), its posting style, the
whole path from the post down to the node it answers (one ``thread_path_item`` per node, the post
first, the persona's own nodes marked), the length asked for and, for a critic, the critic note. Text a
persona wrote enters another prompt through :func:`pvsst.sim.prompts.agent_text.render_agent_text`.

Examples
--------
>>> from pvsst.sim.topics import get_topic
>>> m = load_thread_materials()
>>> persona = {"persona_id": "p2", "card": "a nurse", "posting_style": "warm", "age": 41}
>>> msgs = comment_messages(m, get_topic("ai_labels"), persona,
...     [PathNode("p1", "Labels?", 0), PathNode("p2", "yes", 1), PathNode("p3", "no", 2)],
...     min_words=1, max_words=10, critic=True)
>>> print(msgs[1]["content"])  # doctest: +NORMALIZE_WHITESPACE
TOPIC: Should AI-generated content be labeled on social platforms?
YOU: a nurse
YOUR PROFILE:
- age: 41
HOW YOU WRITE: warm
THREAD (the opening post first, then each reply down to the one you answer):
@p1: "Labels?"
  @p2 (you): "yes"
    @p3: "no"
ATTITUDE: you disagree with the message you answer. Say so and push back.
<BLANKLINE>
TASK: write your reply to the last message of the thread, as yourself, in 1 to 10 words.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pvsst.personas.inferable import attributes_of, true_label
from pvsst.sim.materials.catalog import THREAD_TEMPLATES
from pvsst.sim.materials.template_set import TemplateSet, load_template_set
from pvsst.sim.prompts.agent_text import render_agent_text
from pvsst.sim.topics import Topic

INDENT = "  "
"""What a path item's ``$indent`` holds per level of depth."""


def load_thread_materials(directory: str | Path | None = None) -> TemplateSet:
    """The thread templates of ``directory`` when it holds them (all of them), else pvsst's."""
    return load_template_set(directory, THREAD_TEMPLATES, "thread")


@dataclass(frozen=True)
class PathNode:
    """One node of a path shown in a comment request: its author's id, its text and its depth."""

    author: str
    text: str
    depth: int


def profile_text(materials: TemplateSet, persona: Mapping[str, object]) -> str:
    """The persona's profile block: one line per attribute it has a value for ('' when none)."""
    return "\n".join(materials.render("thread_profile_line", attribute=a.name.replace("_", " "),
                                      value=true_label(a, persona)) for a in attributes_of(persona))


def _persona_fields(materials: TemplateSet, persona: Mapping[str, object]) -> dict[str, object]:
    return {"persona": str(persona.get("card", "")), "posting_style": str(persona.get("posting_style", "")),
            "profile": profile_text(materials, persona)}


def _system(materials: TemplateSet, kind: str) -> dict[str, str]:
    return {"role": "system", "content": materials.render(kind)}


def post_messages(materials: TemplateSet, topic: Topic, persona: Mapping[str, object]) -> tuple[dict[str, str], ...]:
    """System + user messages asking the author for the thread's opening post on ``topic``."""
    user = materials.render("thread_post", question=topic.question, **_persona_fields(materials, persona))
    return _system(materials, "thread_post_system"), {"role": "user", "content": user}


def path_text(materials: TemplateSet, path: Sequence[PathNode], persona_id: str, render: str = "data") -> str:
    """The path block: one ``thread_path_item`` per node, the post first; the persona's own nodes marked."""
    return "\n".join(materials.render("thread_path_item", indent=INDENT * node.depth, author=node.author,
                                      depth=node.depth, you="you" if node.author == persona_id else "",
                                      text=render_agent_text(node.text, render))
                     for node in path)


def comment_messages(materials: TemplateSet, topic: Topic, persona: Mapping[str, object], path: Sequence[PathNode], *,
                     min_words: int, max_words: int, critic: bool, render: str = "data") -> tuple[dict[str, str], ...]:
    """System + user messages asking ``persona`` for a reply to the last node of ``path`` (post first)."""
    user = materials.render(
        "thread_comment", question=topic.question, **_persona_fields(materials, persona),
        path=path_text(materials, path, str(persona.get("persona_id", "")), render),
        min_words=min_words, max_words=max_words, depth=len(path),
        critic_note=materials.render("thread_critic_note") if critic else "")
    return _system(materials, "thread_comment_system"), {"role": "user", "content": user}


def vote_messages(materials: TemplateSet, topic: Topic, persona: Mapping[str, object],
                  comments: Sequence[tuple[str, str]], render: str = "data") -> tuple[dict[str, str], ...]:
    """System + user messages asking ``persona`` for one vote per comment; ``comments`` is ``[(author, text)]``."""
    lines = "\n".join(materials.render("thread_vote_item", index=i, author=author, text=render_agent_text(text, render))
                      for i, (author, text) in enumerate(comments))
    user = materials.render("thread_vote", question=topic.question, **_persona_fields(materials, persona),
                            comments=lines, n_comments=len(comments))
    return _system(materials, "thread_vote_system"), {"role": "user", "content": user}
