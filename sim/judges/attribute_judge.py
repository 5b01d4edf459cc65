"""An attribute-inference judge: a model guesses an author's personal attributes from their comments.

SynthPAI's task (Yukhymenko et al. 2024, "A Synthetic Dataset for Personal Attribute Inference"): a
model reads everything one author wrote and, for each attribute, gives its top three guesses, likeliest
first, with a certainty from 1 to 5. Here the attributes are those of
:mod:`pvsst.personas.inferable` the author's persona has a true value for (age, sex, location,
education, income band, relationship status where the table has it); the reply is structured output
(:func:`attribute_schema`: categorical guesses restricted to the attribute's labels, ages whole numbers),
asked through the gateway like every call, so it is cached, retried and on record. The wording is the
``attribute_judge`` template set (pvsst's, or a directory's whole set, byte for byte). The guesses are
scored against the personas' true values by ``pvsst.analysis.threads.attribute_inference``, which reads
only the tables.

The guesses table (:data:`GUESS_COLUMNS`) has one row per guess: ``judge`` (the model), ``author`` (a
persona id), ``attribute``, ``rank`` (1 = top guess), ``guess`` (a label, an age as digits),
``certainty``, ``n_comments`` (texts the judge read), ``status`` and ``call_id`` of the call. A failed
call leaves one row per attribute asked with ``rank`` 0 and no guess, so it is scored as a miss.

Examples
--------
>>> import pandas as pd
>>> from pvsst.sim.llm.gateway import Gateway
>>> comments = pd.DataFrame({"author": ["p1", "p1"], "text": ["I am 41 years old.", "I live in Ohio."],
...                          "reply_ok": True})
>>> agents = pd.DataFrame({"persona_id": ["p1"], "age": [41], "state_name": ["Ohio"]})
>>> with Gateway() as gateway:
...     table = attribute_guesses(AttributeJudge("scripted/attribute_reader", gateway), comments, agents)
>>> table[["attribute", "rank", "guess", "certainty"]].values.tolist()
[['age', 1, '41', 5], ['location', 1, 'Ohio', 5]]
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.inferable import InferableAttribute, attributes_of, get_attribute
from pvsst.sim.llm.providers.registry import ensure_runnable
from pvsst.sim.llm.types import LLMRequest, LLMResult
from pvsst.sim.materials.catalog import ATTRIBUTE_JUDGE_TEMPLATES
from pvsst.sim.materials.template_set import TemplateSet, load_template_set
from pvsst.sim.prompts.agent_text import render_agent_text

ATTRIBUTE_PHASE = "attribute_judge"
TOP_GUESSES = 3
CERTAINTY_RANGE = (1, 5)
GUESS_COLUMNS = ("judge", "author", "attribute", "rank", "guess", "certainty", "n_comments", "status", "call_id")


def load_attribute_judge_materials(directory: str | Path | None = None) -> TemplateSet:
    """The attribute judge's templates of ``directory`` when it holds them (all of them), else pvsst's."""
    return load_template_set(directory, ATTRIBUTE_JUDGE_TEMPLATES, "attribute judge")


def attribute_schema(attributes: Sequence[InferableAttribute]) -> dict:
    """The reply schema: per attribute ``{"guesses": [1..3 values], "certainty": 1..5}``.

    >>> schema = attribute_schema([get_attribute("sex")])
    >>> schema["properties"]["sex"]["properties"]["guesses"]["items"]
    {'type': 'string', 'enum': ['male', 'female']}
    """
    def item(attribute: InferableAttribute) -> dict:
        if attribute.kind == "age":
            return {"type": "integer", "minimum": 0, "maximum": 120}
        return {"type": "string", "enum": list(attribute.labels)}

    properties = {a.name: {"type": "object", "properties": {
        "guesses": {"type": "array", "items": item(a), "minItems": 1, "maxItems": TOP_GUESSES},
        "certainty": {"type": "integer", "minimum": CERTAINTY_RANGE[0], "maximum": CERTAINTY_RANGE[1]}},
        "required": ["guesses", "certainty"], "additionalProperties": False} for a in attributes}
    return {"type": "object", "properties": properties, "required": [a.name for a in attributes],
            "additionalProperties": False}


@dataclass(frozen=True)
class AuthorTexts:
    """Everything one author wrote (in table order) and the attributes to guess about them."""

    author: str
    texts: tuple[str, ...]
    attributes: tuple[str, ...]


class AttributeJudge:
    """Guesses authors' attributes with ``model`` through ``gateway`` (see the module docstring).

    Parameters
    ----------
    model : the judge's model string.
    gateway : the gateway every call goes through.
    materials : the attribute-judge templates (default: pvsst's).
    seed : the request seed of every call (the authors' texts differ, so every call has its own key).
    temperature, max_tokens : sampling of the calls (0: the most likely guesses where the provider honours it).
    render : how the comments enter the prompt (``data``: one line each, quotes escaped; ``verbatim``).
    """

    def __init__(self, model: str, gateway, materials: TemplateSet | None = None, *, seed: int = 0,
                 temperature: float = 0.0, max_tokens: int = 400, render: str = "data"):
        ensure_runnable(model)
        self.model, self.gateway = model, gateway
        self.materials = materials if materials is not None else load_attribute_judge_materials()
        self.seed, self.temperature = int(seed), float(temperature)
        self.max_tokens, self.render = int(max_tokens), render

    def messages(self, author: AuthorTexts) -> tuple[dict[str, str], ...]:
        m = self.materials
        comments = "\n".join(m.render("attribute_judge_comment", index=i, text=render_agent_text(t, self.render))
                             for i, t in enumerate(author.texts))
        items = []
        for attribute in map(get_attribute, author.attributes):
            options = ", ".join(f'"{label}"' for label in attribute.labels)
            items.append(m.render("attribute_judge_item", attribute=attribute.name, question=attribute.question,
                                  options=options))
        user = m.render("attribute_judge", comments=comments, attributes="\n".join(items), n_comments=len(author.texts))
        return ({"role": "system", "content": m.render("attribute_judge_system")}, {"role": "user", "content": user})

    def request(self, author: AuthorTexts) -> LLMRequest:
        schema = attribute_schema([get_attribute(name) for name in author.attributes])
        return LLMRequest(model_name=self.model, messages=self.messages(author), schema=schema,
                          temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed,
                          agent_id=author.author, phase=ATTRIBUTE_PHASE)

    def guess(self, authors: Sequence[AuthorTexts]) -> pd.DataFrame:
        """The guesses table (:data:`GUESS_COLUMNS`) for ``authors``, one call each."""
        requests = [self.request(a) for a in authors]
        results = self.gateway.run(requests)
        rows = [row for author, result in zip(authors, results, strict=True) for row in self._rows(author, result)]
        frame = pd.DataFrame(rows, columns=list(GUESS_COLUMNS))
        return frame.astype({"rank": "int16", "certainty": "Int8", "n_comments": "int32"})

    def _rows(self, author: AuthorTexts, result: LLMResult) -> list[tuple]:
        base = (self.model, author.author)
        tail = (len(author.texts), result.record.status, result.record.call_id)
        rows = []
        for name in author.attributes:
            answer = result.parsed.get(name) if result.ok and isinstance(result.parsed, dict) else None
            if not isinstance(answer, dict):
                rows.append((*base, name, 0, None, None, *tail))
                continue
            for rank, value in enumerate(answer.get("guesses", [])[:TOP_GUESSES], start=1):
                rows.append((*base, name, rank, str(value), int(answer["certainty"]), *tail))
        return rows


def author_texts(comments: pd.DataFrame, agents: pd.DataFrame, *, max_comments: int | None = None) -> list[AuthorTexts]:
    """Each author of ``comments`` with their texts (failed replies left out) and the attributes their
    persona (a row of ``agents`` with that ``persona_id``) has; authors with no text or no attribute are
    left out. ``max_comments`` keeps each author's first texts only."""
    for column in ("author", "text"):
        if column not in comments.columns:
            raise InputError("comments", column, "missing column")
    if "persona_id" not in agents.columns:
        raise InputError("agents", "persona_id", "missing column")
    personas = agents.drop_duplicates("persona_id").set_index("persona_id", drop=False)
    kept = comments[comments["reply_ok"].astype(bool)] if "reply_ok" in comments.columns else comments
    out = []
    for author, rows in kept.groupby("author", sort=True):
        texts = tuple(str(t) for t in rows["text"] if str(t).strip())[:max_comments]
        if author not in personas.index or not texts:
            continue
        attributes = tuple(a.name for a in attributes_of(personas.loc[author].to_dict()))
        if attributes:
            out.append(AuthorTexts(str(author), texts, attributes))
    return out


def attribute_guesses(judge: AttributeJudge, comments: pd.DataFrame, agents: pd.DataFrame, *,
                      max_comments: int | None = None) -> pd.DataFrame:
    """The guesses table of every author of ``comments`` (see :func:`author_texts` and the module docstring)."""
    return judge.guess(author_texts(comments, agents, max_comments=max_comments))
