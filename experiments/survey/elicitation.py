"""How a survey condition's answers are elicited: checked before a run, read from each reply.

``sample`` replies carry one answer; ``logprobs`` and ``verbalized`` replies carry a distribution over
the reply codes (:mod:`pvsst.sim.llm.option_probabilities`), stored renormalised with its modal code.
"""
from __future__ import annotations

import json

from pvsst.core.errors import InputError
from pvsst.experiments.survey.spec import SurveySpec
from pvsst.sim.llm.option_probabilities import PROBABILITIES, renormalise
from pvsst.sim.llm.providers.registry import logprobs_problem

DISTRIBUTION_METHODS = ("logprobs", "verbalized")


def reply_answer(parsed, method: str) -> tuple[str | None, str | None]:
    """(answer, probabilities JSON) of a parsed reply: a sampled answer, or for a distribution method
    the renormalised distribution and its modal code (``None, None`` when the reply is unusable, e.g.
    a verbalized distribution of zeros).

    Examples
    --------
    >>> reply_answer({"answer": "yes"}, "sample")
    ('yes', None)
    >>> reply_answer({"probabilities": {"yes": 0.125, "no": 0.375}}, "verbalized")
    ('no', '{"yes": 0.25, "no": 0.75}')
    >>> reply_answer({"probabilities": {"yes": 0.0, "no": 0.0}}, "verbalized")
    (None, None)
    """
    if not isinstance(parsed, dict):
        return None, None
    if method not in DISTRIBUTION_METHODS:
        return parsed.get("answer"), None
    try:
        distribution = renormalise(parsed.get(PROBABILITIES) or {})
    except ValueError:
        return None, None
    return max(distribution, key=distribution.get), json.dumps(distribution)


def check_elicitation(spec: SurveySpec) -> None:
    """Refuse, before any call, a ``logprobs`` condition whose model returns no log-probabilities."""
    for condition in spec.conditions:
        for model in spec.asked_models if condition.elicitation == "logprobs" else ():
            if problem := logprobs_problem(model):
                raise InputError(f"conditions[{condition.id}].elicitation", "logprobs", f"{model}: {problem}")
