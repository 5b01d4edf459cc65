"""A model's probability of each answer option: the reply shape, renormalisation and token log-probabilities.

Two elicitation methods read a distribution over a question's option codes instead of one sampled
answer (one call per persona x question):

- ``logprobs``: the request carries ``LLMRequest.option_scoring`` (the option codes). The provider
  scores every code as the answer of the reply ``{"answer": "<code>"}`` and the distribution is the
  normalised probability of each code's tokens: the embedded model scores each continuation exactly
  (:func:`pvsst.sim.llm.providers.embedded.option_logprobs`); a litellm provider answers once with
  ``logprobs=True, top_logprobs=20`` and :func:`distribution_from_top_logprobs` reads the options off
  the answer's tokens. Which providers can do this: :func:`pvsst.sim.llm.providers.registry.logprobs_problem`.
- ``verbalized``: the model is asked for ``{"probabilities": {"<code>": p, ...}}`` (schema:
  :func:`distribution_schema`); the reply is validated and renormalised (:func:`renormalise`).

Either way the gateway's parsed reply is ``{"probabilities": {code: p}}`` with the p summing to 1.

Examples
--------
>>> renormalise({"yes": 0.375, "no": 0.125})
{'yes': 0.75, 'no': 0.25}
>>> distribution_schema(("yes", "no"))["properties"]["probabilities"]["required"]
['yes', 'no']
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

PROBABILITIES = "probabilities"
TOP_LOGPROBS = 20  # the most OpenAI's API returns per token; vLLM accepts it too
_ANSWER_VALUE = re.compile(r'"answer"\s*:\s*"')


def distribution_schema(codes: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a distribution reply: a probability in [0, 1] for every code."""
    codes = list(codes)
    return {"type": "object", "properties": {PROBABILITIES: {
        "type": "object", "properties": {c: {"type": "number", "minimum": 0, "maximum": 1} for c in codes},
        "required": codes, "additionalProperties": False}},
        "required": [PROBABILITIES], "additionalProperties": False}


def renormalise(weights: Mapping[str, float]) -> dict[str, float]:
    """``weights`` divided by their sum; ``ValueError`` when one is negative or not finite, or all are 0.

    Examples
    --------
    >>> renormalise({"a": 0.0, "b": 0.0})
    Traceback (most recent call last):
    ...
    ValueError: the probabilities sum to 0
    """
    values = {str(k): float(v) for k, v in weights.items()}
    if any(not math.isfinite(v) or v < 0 for v in values.values()):
        raise ValueError("a probability is negative or not a number")
    total = math.fsum(values.values())
    if total <= 0:
        raise ValueError("the probabilities sum to 0")
    return {k: v / total for k, v in values.items()}


def from_logprobs(logprobs: Mapping[str, float]) -> dict[str, float]:
    """Normalised probabilities from log-probabilities (a softmax, stable for very negative values).

    >>> {k: round(v, 3) for k, v in from_logprobs({"a": math.log(0.2), "b": math.log(0.6)}).items()}
    {'a': 0.25, 'b': 0.75}
    """
    top = max(logprobs.values())
    return renormalise({k: math.exp(v - top) for k, v in logprobs.items()})


def distribution_reply(probabilities: Mapping[str, float]) -> str:
    """The reply text carrying a distribution (what providers return for a distribution request)."""
    return json.dumps({PROBABILITIES: dict(probabilities)})


def _entries(content: Sequence[Any]) -> list[tuple[str, float, list[tuple[str, float]]]]:
    def get(item: Any, name: str) -> Any:
        return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)

    out = []
    for item in content or []:
        alternatives = [(str(get(a, "token")), float(get(a, "logprob"))) for a in (get(item, "top_logprobs") or [])]
        out.append((str(get(item, "token")), float(get(item, "logprob")), alternatives))
    return out


def distribution_from_top_logprobs(content: Sequence[Any], codes: Sequence[str]) -> dict[str, float]:
    """The options' probabilities from the per-token top log-probabilities of a ``{"answer": ...}`` reply.

    ``content`` is OpenAI's ``choices[0].logprobs.content`` (token, logprob, top_logprobs per generated
    token). From the token where the answer's value starts, the walk follows the generated tokens: an
    alternative token that leaves the generated path gives its probability (times the path's) to the
    codes it is a prefix of (split equally when it fits several); the path's own probability goes to
    the code it spells once only that code fits. Tokens that fit no code are dropped, and the result
    is renormalised. ``ValueError`` when no answer value or no option is found.

    Examples
    --------
    >>> content = [{"token": '{"answer": "', "logprob": 0.0, "top_logprobs": []},
    ...            {"token": "yes", "logprob": math.log(0.7),
    ...             "top_logprobs": [{"token": "yes", "logprob": math.log(0.7)},
    ...                              {"token": "no", "logprob": math.log(0.2)},
    ...                              {"token": "maybe", "logprob": math.log(0.1)}]},
    ...            {"token": '"}', "logprob": 0.0, "top_logprobs": []}]
    >>> {k: round(v, 4) for k, v in distribution_from_top_logprobs(content, ["yes", "no"]).items()}
    {'yes': 0.7778, 'no': 0.2222}
    """
    entries = _entries(content)
    text = "".join(token for token, _, _ in entries)
    match = _ANSWER_VALUE.search(text)
    if match is None:
        raise ValueError('no "answer" value in the reply tokens')
    targets = {code: code + '"' for code in codes}
    mass = dict.fromkeys(codes, 0.0)
    start, offset, path_logprob, value = match.end(), 0, 0.0, ""
    for token, logprob, alternatives in entries:
        end = offset + len(token)
        if end <= start:
            offset = end
            continue
        head = text[offset:start] if offset < start else ""  # this token's part before the value

        def fitting(piece: str) -> list[str]:
            candidate = value + piece
            return [c for c, t in targets.items() if t.startswith(candidate) or candidate.startswith(t)]

        for alternative, alt_logprob in alternatives:
            if alternative == token or not alternative.startswith(head):
                continue
            fits = fitting(alternative[len(head):])
            for code in fits:
                mass[code] += math.exp(path_logprob + alt_logprob) / len(fits)
        path_logprob += logprob
        value += token[len(head):]
        fits = fitting("")
        if len(fits) <= 1:
            for code in fits:
                mass[code] += math.exp(path_logprob)
            break
        offset = end
    if not any(mass.values()):
        raise ValueError("no option code among the answer's top log-probabilities")
    return renormalise(mass)
