"""The reply schemas of post and vote requests (the prompt wording lives in a materials directory).

Examples
--------
>>> post_schema(180)["properties"]["post"]["maxLength"]
180
>>> vote_schema(3)["properties"]["votes"]["minItems"]
3
"""
from __future__ import annotations

from pvsst.sim.stance import OPINION_CHOICES


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
