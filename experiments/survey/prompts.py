"""Survey prompts: the versioned templates ``sim/prompts/survey_{system,question}_v1.txt``, the reply
schema (an enum of option codes; for ``verbalized`` conditions a probability per code, with the
``survey_{system,question}_verbalized_v1.txt`` templates) and the seed of every request.

A prompt for a scripted model (the reference controls) ends with the machine-readable
``SURVEY-REFERENCE`` line of :mod:`pvsst.experiments.survey.controls`; language models never see it.

Examples
--------
>>> from pvsst.experiments.survey.spec import load_survey
>>> spec = load_survey("experiments/surveys/gss2018_spending.yaml")
>>> answer_schema(("yes", "no"))["properties"]["answer"]["enum"]
['yes', 'no']
>>> text = question_prompt(spec, spec.questions[0], spec.conditions[0], card=None)
>>> text.splitlines()[-5:-1]
['Options:', '- too_little: Too little', '- about_right: About right', '- too_much: Too much']
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources
from string import Template

import numpy as np

from pvsst.experiments.survey.spec import ConditionSpec, QuestionSpec, SurveySpec

DIVERSITY_REQUEST = ("People in the United States hold very different views on this. Give the answer of "
                     "one particular person, not simply the most common answer.")


@lru_cache(maxsize=None)
def _template(kind: str, version: str) -> Template:
    name = f"survey_{kind}_{version}.txt"
    return Template(resources.files("pvsst.sim.prompts").joinpath(name).read_text(encoding="utf-8").rstrip("\n"))


def _render(kind: str, version: str, **fields: str) -> str:
    template = _template(kind, version)
    expected = set(template.get_identifiers())
    if expected != set(fields):
        raise ValueError(f"template survey_{kind}_{version}: fields {sorted(expected)}, given {sorted(fields)}")
    return template.substitute(fields)


def answer_schema(codes: tuple[str, ...]) -> dict:
    """The JSON schema of a reply: ``{"answer": <one of codes>}``."""
    return {"type": "object", "properties": {"answer": {"type": "string", "enum": list(codes)}},
            "required": ["answer"], "additionalProperties": False}


def option_order(spec: SurveySpec, question: QuestionSpec, persona_id: str) -> tuple[str, ...]:
    """The option codes in the order ``persona_id`` is shown them (``sampling.option_order``).

    ``shuffled`` draws a permutation from the run seed, persona and question (not the condition, so
    every condition shows a persona the same order); the non-substantive option, when offered, stays last.

    Examples
    --------
    >>> from pvsst.experiments.survey.spec import load_survey
    >>> spec = load_survey("experiments/surveys/gss2018_spending.yaml")
    >>> option_order(spec, spec.questions[0], "p1")
    ('too_little', 'about_right', 'too_much')
    >>> shuffled = spec.model_copy(update={"sampling": spec.sampling.model_copy(update={"option_order": "shuffled"})})
    >>> sorted(option_order(shuffled, spec.questions[0], "p1")) == sorted(spec.questions[0].codes)
    True
    >>> option_order(shuffled, spec.questions[0], "p1") == option_order(shuffled, spec.questions[0], "p1")
    True
    """
    codes = tuple(question.codes)
    if spec.sampling.option_order == "reversed":
        return codes[::-1]
    if spec.sampling.option_order == "shuffled":
        rng = np.random.default_rng(survey_request_seed(spec.seed, "option_order", persona_id, question.id, 0))
        return tuple(codes[i] for i in rng.permutation(len(codes)))
    return codes


def question_prompt(spec: SurveySpec, question: QuestionSpec, condition: ConditionSpec, card: str | None,
                    reference: str | None = None, order: tuple[str, ...] | None = None) -> str:
    """The user message asking ``question`` under ``condition`` (``card``: the persona card, if any;
    ``order``: the option codes in display order, default as the instrument lists them)."""
    labels = {o.code: o.label for o in question.options}
    lines = [f"- {code}: {labels[code]}" for code in (order or question.codes)]
    if spec.non_substantive.policy == "offered":
        lines.append(f"- {spec.non_substantive.code}: {spec.non_substantive.label}")
    return _render(
        "question_verbalized" if condition.elicitation == "verbalized" else "question", spec.prompt_version,
        persona_block=f"Answer as this person would:\n{card}\n\n" if card else "",
        preamble_block=f"{spec.preamble}\n\n" if spec.preamble else "",
        wording=question.wording,
        options="\n".join(lines),
        diversity_block=f"{DIVERSITY_REQUEST}\n" if condition.diversity_request else "",
        reference_block=f"\n{reference}" if reference else "",
    )


def system_prompt(spec: SurveySpec, condition: ConditionSpec | None = None) -> str:
    """The system message; a ``verbalized`` condition asks for a probability per option instead of one code."""
    verbalized = condition is not None and condition.elicitation == "verbalized"
    return _render("system_verbalized" if verbalized else "system", spec.prompt_version)


def survey_request_seed(run_seed: int, condition: str, persona_id: str, question: str, sample: int) -> int:
    """The first 31 bits of sha256 over (run seed, condition, persona, question, sample): stable when
    personas, questions or conditions are added or removed.

    Examples
    --------
    >>> survey_request_seed(1, "direct", "p1", "q", 0) == survey_request_seed(1, "direct", "p1", "q", 0)
    True
    """
    digest = hashlib.sha256(f"{run_seed}:{condition}:{persona_id}:{question}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
