"""The stance judge's wording: two templates, ``judge_system.txt`` and ``judge.txt``, read and hashed.

pvsst ships its own pair beside its other study materials (``sim/materials/pvsst``); a study's materials
directory may hold its own pair (both files, or neither), which then replaces pvsst's. The templates use
the syntax of every materials template (:mod:`pvsst.sim.materials.template`): ``judge.txt`` must insert
``$question`` (the topic) and ``$post`` (the post text, byte for byte) and may insert ``$choices`` (the
seven stance labels, quoted, strongest support first). A judge's provenance records the sha256 of both
files, so a reader can tell which wording produced a judgment.

Examples
--------
>>> m = load_judge_materials()
>>> m.source, sorted(m.hashes)
('pvsst', ['judge.txt', 'judge_system.txt'])
>>> print(m.messages("Should cats vote?", "cats vote, I say yes")[1]["content"].splitlines()[1])
POST: cats vote, I say yes
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pvsst.sim.materials.catalog import JUDGE_TEMPLATES
from pvsst.sim.materials.template_set import TemplateSet, load_template_set
from pvsst.sim.prompts.templates import opinion_choices_text


@dataclass(frozen=True)
class JudgeMaterials(TemplateSet):
    """The judge's two templates, where they came from (``pvsst`` or a directory) and their sha256."""

    def messages(self, question: str, post: str) -> tuple[dict[str, str], ...]:
        """The system and user messages that ask for the stance of ``post`` on ``question``."""
        fields = {"question": question, "post": post, "choices": opinion_choices_text()}
        return ({"role": "system", "content": self.templates["judge_system"].substitute(fields)},
                {"role": "user", "content": self.templates["judge"].substitute(fields)})


def load_judge_materials(directory: str | Path | None = None) -> JudgeMaterials:
    """The judge templates of ``directory`` when it holds them, else pvsst's (``None``: pvsst's).

    A directory holding only one of the two files, an unreadable file, a template with a placeholder it
    may not use or without ``$question`` / ``$post`` is an :class:`InputError` naming the file
    (:func:`pvsst.sim.materials.template_set.load_template_set`).
    """
    found = load_template_set(directory, JUDGE_TEMPLATES, "judge")
    return JudgeMaterials(**vars(found))
