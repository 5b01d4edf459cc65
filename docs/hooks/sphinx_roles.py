"""Griffe extension: Sphinx cross-reference roles in docstrings become mkdocstrings cross-references.

The docstrings say ``:class:`analysis.paired.PairedContrast``` (the numpy convention, which also
reads well in ``help()``). mkdocstrings does not read Sphinx roles, so before rendering each role
becomes an optional cross-reference: a link where the target is documented on the site, plain code
where it is not (a short name, a third-party object). ``~`` keeps only the last name as the title.
"""
from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):`(~?)([^`<>]+)`")


def rewrite_roles(text: str) -> str:
    """Replace every Sphinx role in ``text`` by an optional autorefs cross-reference.

    >>> rewrite_roles("see :func:`~analysis.paired.paired_block_contrast`")
    'see <autoref identifier="analysis.paired.paired_block_contrast" optional><code>paired_block_contrast</code></autoref>'
    """
    def replace(match: re.Match) -> str:
        tilde, target = match[1], match[2].strip().rstrip("()")
        title = target.rsplit(".", 1)[-1] if tilde else target
        return (f'<autoref identifier="{html.escape(target)}" optional>'
                f"<code>{html.escape(title)}</code></autoref>")

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = rewrite_roles(obj.docstring.value)
