"""Griffe extension: the docstrings' numpy/Sphinx conventions, read the way mkdocstrings renders them.

- Sphinx cross-reference roles: the docstrings say ``:class:`pvsst.analysis.stats.paired.PairedContrast```
  (the numpy convention, which also reads well in ``help()``). mkdocstrings does not read Sphinx
  roles, so before rendering each role becomes an optional cross-reference: a link where the target
  is documented on the site, plain code where it is not (a short name, a third-party object). ``~``
  keeps only the last name as the title.
- A section headed ``Example`` (singular) is read as the numpy ``Examples`` section, so its doctest
  renders as code instead of a Markdown heading over loose text.
- A doctest outside an ``Examples`` section (a short docstring whose example follows its summary)
  is fenced as a ``pycon`` code block, so it renders as code instead of nested Markdown block quotes,
  and its output (``['0.70']``) is not read as a Markdown link.
"""
from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):`(~?)([^`<>]+)`")
SINGULAR_EXAMPLE = re.compile(r"^Example\n-------$", re.MULTILINE)
SECTION_RULE = re.compile(r"^-{3,}$")


def rewrite_roles(text: str) -> str:
    """Replace every Sphinx role in ``text`` by an optional autorefs cross-reference.

    >>> rewrite_roles("see :func:`~pvsst.analysis.stats.paired.paired_block_contrast`")
    ... # doctest: +NORMALIZE_WHITESPACE
    'see <autoref identifier="pvsst.analysis.stats.paired.paired_block_contrast"
    optional><code>paired_block_contrast</code></autoref>'
    """
    def replace(match: re.Match) -> str:
        tilde, target = match[1], match[2].strip().rstrip("()")
        title = target.rsplit(".", 1)[-1] if tilde else target
        return (f'<autoref identifier="{html.escape(target)}" optional>'
                f"<code>{html.escape(title)}</code></autoref>")

    return ROLE.sub(replace, text)


def fence_loose_doctests(text: str) -> str:
    r"""Fence each doctest (a ``>>>`` line and what follows it up to an empty line) that lies outside
    an ``Examples`` section as a ``pycon`` code block.

    >>> fence_loose_doctests("Summary.\n\n>>> f(1)\n['a']")
    "Summary.\n\n```pycon\n>>> f(1)\n['a']\n```"
    >>> fence_loose_doctests("Examples\n--------\n>>> 1\n1")
    'Examples\n--------\n>>> 1\n1'
    """
    lines, out, section, fenced = text.split("\n"), [], "", False
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and SECTION_RULE.match(lines[i + 1].strip()) and line.strip():
            section = line.strip()
        if fenced and not line.strip():
            out.append("```")
            fenced = False
        elif not fenced and line.startswith(">>>") and section != "Examples":
            out.append("```pycon")
            fenced = True
        out.append(line)
    if fenced:
        out.append("```")
    return "\n".join(out)


def normalize(text: str) -> str:
    r"""Every rewrite of a docstring's text.

    >>> normalize("Example\n-------\n>>> 1")
    'Examples\n--------\n>>> 1'
    """
    return rewrite_roles(fence_loose_doctests(SINGULAR_EXAMPLE.sub("Examples\n--------", text)))


class DocstringConventions(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = normalize(obj.docstring.value)
