"""A materials template: ``string.Template`` text, kept byte for byte, with blocks shown only for a value.

A template file is used exactly as written: every character, line breaks at the end of the file included
(pvsst's own files end without one). ``$name`` (or ``${name}``) inserts a value and ``$$`` is a literal
``$``. A *block* ``${#name}TEXT${/name}`` puts TEXT, exactly as written between the two markers (line
breaks included, placeholders filled), into the prompt only when ``name``'s value is not empty; else
nothing. So an instruction line followed by an empty line, both for adversaries alone, is written
``$agenda${#agenda}`` + two line breaks + ``${/agenda}``: honest agents (empty ``agenda``) get neither.
Blocks do not nest; a block's ``name`` must be a placeholder the template may use.

Examples
--------
>>> t = MaterialTemplate.parse("A: $a\\n${#b}B: $b\\n${/b}end\\n", allowed=("a", "b"))
>>> t.substitute({"a": 1, "b": ""})
'A: 1\\nend\\n'
>>> t.substitute({"a": 1, "b": "yes"})
'A: 1\\nB: yes\\nend\\n'
>>> sorted(t.identifiers()), t.conditions()
(['a', 'b'], ('b',))
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from string import Template

_MARKER = re.compile(r"\$\{([#/])([^}]*)\}")
_NAME = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


class TemplateSyntaxError(ValueError):
    """A template's text breaks the syntax; the message says where and how."""


@dataclass(frozen=True)
class MaterialTemplate:
    """A parsed template: pieces of text, each shown always (``condition`` None) or only when the value
    of ``condition`` is not empty."""

    text: str
    pieces: tuple[tuple[str | None, Template], ...]

    @classmethod
    def parse(cls, text: str, allowed: tuple[str, ...] | None = None) -> MaterialTemplate:
        """Parse ``text``; raises :class:`TemplateSyntaxError` for a bad block or placeholder syntax."""
        pieces: list[tuple[str | None, Template]] = []
        open_name: str | None = None
        start = 0
        for match in _MARKER.finditer(text):
            dollars = len(text[:match.start()]) - len(text[:match.start()].rstrip("$"))
            if dollars % 2:
                continue  # `$${#x}`: an escaped dollar, then plain text
            kind, name = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            if not _NAME.match(name):
                raise TemplateSyntaxError(f"line {line}: bad block marker {match.group(0)!r} "
                                          "(write ${#name} ... ${/name})")
            if allowed is not None and name not in allowed:
                raise TemplateSyntaxError(f"line {line}: block on ${name}, which this template does not have "
                                          f"(it may use: {', '.join('$' + a for a in allowed) or 'none'})")
            if kind == "#":
                if open_name is not None:
                    raise TemplateSyntaxError(f"line {line}: block ${{#{name}}} opened inside block "
                                              f"${{#{open_name}}} (blocks do not nest)")
                pieces.append((None, _checked(text[start:match.start()], line)))
                open_name = name
            else:
                if open_name != name:
                    raise TemplateSyntaxError(f"line {line}: ${{/{name}}} closes no open ${{#{name}}} block")
                pieces.append((name, _checked(text[start:match.start()], line)))
                open_name = None
            start = match.end()
        if open_name is not None:
            raise TemplateSyntaxError(f"block ${{#{open_name}}} is never closed (end it with ${{/{open_name}}})")
        pieces.append((None, _checked(text[start:], text.count("\n", 0, start) + 1)))
        return cls(text, tuple((c, t) for c, t in pieces if t.template or c is not None))

    def substitute(self, fields: dict[str, object]) -> str:
        """The text with every placeholder filled; a block only where its value's text is not empty."""
        return "".join(template.substitute(fields) for condition, template in self.pieces
                       if condition is None or str(fields.get(condition, "")) != "")

    def identifiers(self) -> set[str]:
        """The placeholders the text inserts (block conditions not counted)."""
        return {name for _, template in self.pieces for name in template.get_identifiers()}

    def conditions(self) -> tuple[str, ...]:
        """The names blocks depend on, in order."""
        return tuple(c for c, _ in self.pieces if c is not None)

    def literal_pieces(self) -> list[str]:
        """The fixed text between placeholders and block markers (``$$`` read as ``$``)."""
        out: list[str] = []
        for _, template in self.pieces:
            out.extend(_literal_pieces(template.template))
        return out


def _checked(text: str, line: int) -> Template:
    template = Template(text)
    if not template.is_valid():
        raise TemplateSyntaxError(f"invalid placeholder syntax near line {line} (write $$ for a literal $, "
                                  "${#name} ... ${/name} for a block)")
    return template


def _literal_pieces(text: str) -> list[str]:
    """The template's text between placeholders (``$$`` read as ``$``)."""
    pieces = Template.pattern.split(text)
    # Template.pattern has four groups (escaped, named, braced, invalid): split yields text, then 4 groups.
    out = [pieces[0]]
    for start in range(1, len(pieces), 5):
        escaped, rest = pieces[start], pieces[start + 4]
        if escaped is not None:
            out[-1] += "$" + rest
        else:
            out.append(rest)
    return out
