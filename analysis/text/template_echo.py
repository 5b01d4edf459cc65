"""Template echo: posts that repeat the prompt's own wording instead of writing a post.

A post *echoes* its templates when it repeats a run of five words of a template's fixed text (the text
between placeholders, so a run never spans an inserted value such as the topic or another post) or
holds one of the templates' placeholders (``$feed``, ``${persona}``) or bracketed stand-ins
(``<your post>``). Small models do this when a prompt's wording confuses them; the share of such posts
is an audit of the study materials. The templates come from the run store (``RUN/materials/*.txt``,
copied there when the run started), so this reads no package but the store.

Examples
--------
>>> templates = {"post": "TOPIC: $question\\nThis is the first round, nobody wrote yet.\\n"
...                      "Reply {\\"post\\": \\"<your post>\\"}"}
>>> echo_flags(["this is the first round of it", "labels help", "<your post>", "I like $question"], templates)
[True, False, True, True]
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from pvsst.core.run_layout import MATERIALS

RUN_LENGTH = 5
_WORD = re.compile(r"[a-z0-9']+")
_PLACEHOLDER = re.compile(r"\$(?:\{([_a-z][_a-z0-9]*)\}|([_a-z][_a-z0-9]*))", re.IGNORECASE)
_BRACKETED = re.compile(r"<[^<>\n]{1,60}>")


def read_templates(run_dir: str | Path) -> dict[str, str]:
    """The template texts kept in a run store (``RUN/materials/*.txt``), by template name."""
    folder = Path(run_dir) / MATERIALS
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.txt"))}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def template_runs(templates: Mapping[str, str], n: int = RUN_LENGTH) -> set[tuple[str, ...]]:
    """Every run of ``n`` words of the templates' fixed text (pieces between placeholders)."""
    runs: set[tuple[str, ...]] = set()
    for text in templates.values():
        for piece in _PLACEHOLDER.split(text.replace("$$", "$")):
            words = _words(piece or "")
            runs.update(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    return runs


def template_markers(templates: Mapping[str, str]) -> set[str]:
    """The placeholders (``$name`` and ``${name}``) and bracketed stand-ins (``<...>``) of the templates."""
    markers: set[str] = set()
    for text in templates.values():
        for braced, named in _PLACEHOLDER.findall(text):
            name = braced or named
            markers.update({f"${name}", f"${{{name}}}"})
        markers.update(match.lower() for match in _BRACKETED.findall(text))
    return markers


def echo_flags(posts: Iterable[str], templates: Mapping[str, str], n: int = RUN_LENGTH) -> list[bool]:
    """For each post: does it repeat an ``n``-word run of the templates or hold one of their markers?"""
    runs, markers = template_runs(templates, n), template_markers(templates)
    flags = []
    for post in posts:
        text = str(post)
        words = _words(text)
        repeated = any(tuple(words[i:i + n]) in runs for i in range(len(words) - n + 1))
        flags.append(repeated or any(marker in text.lower() for marker in markers))
    return flags


def echo_summary(posts: Iterable[str], templates: Mapping[str, str]) -> dict:
    """``{"posts", "echo_posts", "echo_share"}`` over ``posts``; the share is ``None`` without posts.

    Examples
    --------
    >>> echo_summary(["a b", "first round nobody wrote yet"], {"note": "First round, nobody wrote yet."})
    {'posts': 2, 'echo_posts': 1, 'echo_share': 0.5}
    """
    flags = echo_flags(posts, templates)
    hits = sum(flags)
    return {"posts": len(flags), "echo_posts": hits, "echo_share": hits / len(flags) if flags else None}
