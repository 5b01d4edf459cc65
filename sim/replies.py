"""Taking a model's reply: pvsst's strict handling and the reference implementation's lenient one.

``strict`` (preset ``pvsst``): the gateway has validated the reply against the JSON schema; a call that
failed keeps the agent's prior state and its post is the raw text (cut) or ``(no post)``.

``lenient`` (preset ``pvsst_reference``, the facts of PV-SST's reference code):

* the reply is parsed as JSON, else the span from its first ``{`` to its last ``}``; a value that is not
  an object counts as a parse failure (:func:`lenient_json_object`; the gateway retries it);
* post: ``str(post)`` stripped, cut to the character limit, ``(empty)`` if nothing is left;
* opinion: one of the seven labels as given, else the first label (scale order) contained in its
  lower-cased text, else the prior opinion: ``"Strongly Oppose"`` becomes ``oppose`` and
  ``"Lean Support"`` becomes ``support``, because ``oppose`` / ``support`` come first in scale order;
* confidence: a number clamped to [0, 1]; the prior confidence if it is not a number; an integer too
  large for a float makes the reply a failed generation (``(generation failed)``, the prior state);
* reason: cut to 200 characters;
* after every attempt failed to parse: the post is the raw text cut to the limit (or ``(no post)``)
  and the prior opinion and confidence stay; a transport failure gives ``(generation failed)``;
* votes: each entry ``int()``-converted and clamped to [-1, 1], entries that are not integers skipped
  (their post gets no vote), extra entries ignored; a missing or non-list ``votes`` gives no votes (a
  cast ballot without votes: only a parse or transport failure fails a ballot).

Examples
--------
>>> lenient_json_object('Sure: {"post": "hi", "opinion": "Lean Support"} ok')
{'post': 'hi', 'opinion': 'Lean Support'}
>>> reply = lenient_post_reply({"post": "  hello  ", "opinion": "Strongly Oppose", "confidence": 1.4},
...                            "ok", "", prior_stance=1, prior_confidence=0.7, char_limit=180)
>>> reply.post, reply.stance, reply.confidence
('hello', -2, 1.0)
>>> lenient_votes({"votes": [1, "x", -5, 0.9, 1]}, "ok", n_targets=3)
[(0, 1), (2, -1)]
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from pvsst.sim.llm.types import STATUS_OK, TRANSPORT_STATUSES
from pvsst.sim.stance import LABEL_TO_STANCE, OPINION_CHOICES, STANCE_LABELS

NO_POST = "(no post)"
EMPTY_POST = "(empty)"
GENERATION_FAILED = "(generation failed)"
REASON_LIMIT = 200


@dataclass(frozen=True)
class PostReply:
    """What an agent takes from one post call."""

    post: str
    stance: int
    confidence: float
    reason: str
    parse_ok: bool


def lenient_json_object(text: str | None) -> dict | None:
    """The JSON object in ``text`` (whole text, else first ``{`` to last ``}``), or ``None``.

    >>> lenient_json_object('[1, 2]'), lenient_json_object('x {"a": {"b": 1}} y'), lenient_json_object('')
    (None, {'a': {'b': 1}}, None)
    """
    if not text:
        return None
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    except ValueError:
        pass
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start:end + 1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def snap_opinion(value: Any, prior_stance: int) -> int:
    """The stance of an opinion label: exact, else the first label (scale order) inside its lower-cased
    text, else ``prior_stance``.

    >>> snap_opinion("Strongly Oppose", 0), snap_opinion("Lean Support", 0), snap_opinion("unsure", 2)
    (-2, 2, 2)
    """
    text = str(value).strip()
    if text in LABEL_TO_STANCE:
        return LABEL_TO_STANCE[text]
    lowered = text.lower()
    for label in OPINION_CHOICES:
        if label in lowered:
            return LABEL_TO_STANCE[label]
    return prior_stance


def lenient_confidence(value: Any, prior: float) -> float:
    """``float(value)`` clamped to [0, 1]; ``prior`` when it is not a number.

    >>> lenient_confidence("0.4", 0.7), lenient_confidence(-2, 0.7), lenient_confidence(None, 0.7)
    (0.4, 0.0, 0.7)

    An integer too large for a float raises ``OverflowError``: the reference treats that reply as a
    failed generation (:func:`lenient_post_reply`).
    """
    try:
        confidence = float(value)
    except (TypeError, ValueError):
        confidence = prior
    return max(0.0, min(1.0, confidence))


def lenient_post_reply(parsed: dict | None, status: str, text: str | None, *, prior_stance: int,
                       prior_confidence: float, char_limit: int) -> PostReply:
    """The reference implementation's handling of one post call (see the module docstring)."""
    if status in TRANSPORT_STATUSES:
        return PostReply(GENERATION_FAILED, prior_stance, prior_confidence, "", False)
    if status != STATUS_OK or not isinstance(parsed, dict):
        post = (text or "").strip()[:char_limit] or NO_POST
        return PostReply(post, prior_stance, prior_confidence, "parse_error", False)
    post = str(parsed.get("post", "")).strip()[:char_limit] or EMPTY_POST
    opinion = parsed.get("opinion", STANCE_LABELS[prior_stance])
    stance = snap_opinion(opinion, prior_stance)
    try:
        confidence = lenient_confidence(parsed.get("confidence", prior_confidence), prior_confidence)
    except OverflowError:  # a JSON integer beyond a float: the reference's generation fails on it
        return PostReply(GENERATION_FAILED, prior_stance, prior_confidence, "", False)
    reason = str(parsed.get("reason", ""))[:REASON_LIMIT]
    return PostReply(post, stance, confidence, reason, True)


def strict_post_reply(parsed: dict | None, status: str, text: str | None, *, prior_stance: int,
                      prior_confidence: float, char_limit: int) -> PostReply:
    """pvsst's handling: a schema-valid reply sets post, stance and confidence; a failure keeps them."""
    if status == STATUS_OK and isinstance(parsed, dict):
        post = str(parsed["post"]).strip()[:char_limit] or NO_POST
        try:
            confidence = min(1.0, max(0.0, float(parsed["confidence"])))
        except OverflowError:  # the schema bounds it, but a JSON integer beyond a float is no confidence
            return PostReply((text or "").strip()[:char_limit] or NO_POST, prior_stance, prior_confidence, "", False)
        return PostReply(post, LABEL_TO_STANCE[parsed["opinion"]], confidence,
                         str(parsed.get("reason", ""))[:REASON_LIMIT], True)
    return PostReply((text or "").strip()[:char_limit] or NO_POST, prior_stance, prior_confidence, "", False)


def lenient_votes(parsed: dict | None, status: str, n_targets: int) -> list[tuple[int, int]]:
    """``(position, vote)`` pairs the reference implementation accepts from one vote reply."""
    if status != STATUS_OK or not isinstance(parsed, dict):
        return []
    values = parsed.get("votes", [])
    if not isinstance(values, list):
        return []
    accepted = []
    for position, entry in enumerate(values):
        if isinstance(entry, float) and not math.isfinite(entry):
            continue  # int() of nan / inf raises; the entry is not an integer
        try:
            vote = max(-1, min(1, int(entry)))
        except (TypeError, ValueError, OverflowError):
            continue
        if position < n_targets:
            accepted.append((position, vote))
    return accepted


def strict_votes(parsed: dict | None, status: str, n_targets: int) -> list[tuple[int, int]]:
    """pvsst's handling: the schema guarantees one value in {-1, 0, 1} per target."""
    if status != STATUS_OK or not isinstance(parsed, dict):
        return []
    return [(position, int(value)) for position, value in enumerate(parsed["votes"][:n_targets])]


POST_HANDLERS = {"strict": strict_post_reply, "lenient": lenient_post_reply}
VOTE_HANDLERS = {"strict": strict_votes, "lenient": lenient_votes}
