"""Versioned prompt templates (files beside this module) and the reply schemas.

A template is a ``string.Template`` file named ``<kind>_<version>.txt``. Rendering checks that the
fields given are exactly the template's fields: a missing or an unused field is an error, so a
template edit cannot silently drop information from the prompt.

Examples
--------
>>> t = PromptTemplates("v1")
>>> sorted(t.fields("vote"))
['n_posts', 'opinion', 'persona', 'posts', 'question']
>>> post_schema(180)["properties"]["post"]["maxLength"]
180
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from string import Template

from personas.errors import InputError
from sim.stance import OPINION_CHOICES

TEMPLATE_KINDS = ("post_system", "post", "vote_system", "vote", "agenda")


@lru_cache(maxsize=None)
def _load(kind: str, version: str) -> Template:
    name = f"{kind}_{version}.txt"
    try:
        text = resources.files("sim.prompts").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("trial", "prompt_version", f"no prompt template {name}") from None
    return Template(text.rstrip("\n"))


class PromptTemplates:
    """The set of templates of one version (``v1``)."""

    def __init__(self, version: str = "v1"):
        self.version = version
        for kind in TEMPLATE_KINDS:
            _load(kind, version)

    def fields(self, kind: str) -> set[str]:
        return set(_load(kind, self.version).get_identifiers())

    def render(self, kind: str, **fields: object) -> str:
        template = _load(kind, self.version)
        expected = set(template.get_identifiers())
        missing, unused = expected - set(fields), set(fields) - expected
        if missing or unused:
            raise ValueError(f"template {kind}_{self.version}: missing {sorted(missing)}, unused {sorted(unused)}")
        return template.substitute(fields)


def opinion_choices_text() -> str:
    return ", ".join(f'"{c}"' for c in OPINION_CHOICES)


def post_schema(char_limit: int) -> dict:
    """JSON schema of a post reply: {post, opinion, confidence, reason}."""
    return {
        "type": "object",
        "properties": {
            "post": {"type": "string", "minLength": 1, "maxLength": int(char_limit)},
            "opinion": {"type": "string", "enum": list(OPINION_CHOICES)},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string", "maxLength": 200},
        },
        "required": ["post", "opinion", "confidence", "reason"],
        "additionalProperties": False,
    }


def vote_schema(n_posts: int) -> dict:
    """JSON schema of a vote reply: {votes: [-1|0|1] * n_posts} in feed order."""
    return {
        "type": "object",
        "properties": {
            "votes": {
                "type": "array",
                "items": {"type": "integer", "enum": [-1, 0, 1]},
                "minItems": int(n_posts),
                "maxItems": int(n_posts),
            }
        },
        "required": ["votes"],
        "additionalProperties": False,
    }
