"""Measure identity vectors on the embedded model: hidden states of probe prompts, grouped by attribute value.

A probe prompt is one persona's card and one probe question, ``PROBE_TEMPLATE`` as the user message
(after an optional system message), rendered through the model's own chat template with the generation
header, exactly as a call would send it. The model evaluates it
(:class:`~pvsst.sim.llm.providers.llama_hidden.HiddenStateReader`)
and each stored layer's output is averaged over the prompt's **token span**:

- ``user``: the tokens of the user message's text (card and question), without the chat template's
  role header before it and the end-of-turn marker after it;
- ``prompt``: every token of the prompt (system message, headers, generation header);
- ``last``: the prompt's last token (the end of the generation header, where the answer starts).

For attribute ``a`` with value ``x``, at every stored layer,
``vector[a, x] = mean over prompts of personas with a = x  -  mean over prompts of personas with any value of a``
(a persona without a value for ``a`` is in neither mean of ``a``). Every prompt weighs the same.

What is random (the persona sample, each persona's questions and their order) is drawn from one
``numpy.random.default_rng(seed)``: the same table, questions, settings and seed give the same file.

Examples
--------
>>> questions = default_probes()
>>> len(questions), probe_set_sha256(questions) == probe_set_sha256(list(questions))
(24, True)
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.sim.identity.vectors import FORMAT, FORMAT_VERSION, TOKEN_SPANS, IdentityVectors
from pvsst.sim.llm.providers import embedded
from pvsst.sim.llm.providers.embedded import chat_prompt
from pvsst.sim.llm.providers.llama_hidden import HiddenStateReader, model_shape
from pvsst.sim.llm.types import canonical_json

PROBE_TEMPLATE = "{card}\n\n{question}"
"""The user message of a probe prompt."""
PROBE_SET = "probes_v1.txt"
MAX_VALUES = 64
"""Most distinct values an attribute may have."""
MAX_NUMERIC_VALUES = 12
"""Most distinct values of a numeric attribute column: more reads as a measurement (age, income), to be
binned first (``age_band``)."""


def default_probes() -> list[str]:
    """pvsst's own probe set: 24 everyday and civic questions, one per line of ``probes_v1.txt``."""
    text = resources.files("pvsst.sim.identity").joinpath(PROBE_SET).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def read_probes(path: str | Path) -> list[str]:
    """Probe questions from a text file, one per non-blank line; ``InputError`` if unreadable or empty."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), "probes", f"cannot read the probe questions: {err}") from err
    questions = [line.strip() for line in text.splitlines() if line.strip()]
    if not questions:
        raise InputError(str(path), "probes", "no probe questions (one per line)")
    return questions


def probe_set_sha256(questions: Sequence[str]) -> str:
    """sha256 of the canonical JSON list of the questions (their order included)."""
    return hashlib.sha256(canonical_json([str(q) for q in questions]).encode()).hexdigest()


def probe_messages(card: str, question: str, system: str | None = None) -> list[dict[str, str]]:
    """The chat messages of one probe prompt.

    Examples
    --------
    >>> probe_messages("A woman from Ohio.", "How are you?")
    [{'role': 'user', 'content': 'A woman from Ohio.\\n\\nHow are you?'}]
    """
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": PROBE_TEMPLATE.format(card=card, question=question)}]


def span_of(llama: Any, messages: list[dict[str, str]], span: str) -> tuple[list[int], int, int]:
    """The prompt's tokens (chat template, generation header on) and the ``[start, stop)`` token range of
    ``span`` (see the module text); the ``user`` span is that of the last user message."""
    prompt = chat_prompt(llama, messages).encode("utf-8")
    tokens = list(llama.tokenize(prompt, add_bos=False, special=True))
    if span == "prompt":
        return tokens, 0, len(tokens)
    if span == "last":
        return tokens, len(tokens) - 1, len(tokens)
    ends = np.cumsum([len(llama.detokenize([t], special=True)) for t in tokens])
    if int(ends[-1]) != len(prompt):
        raise InputError("model", "token span", "the tokenizer does not give back the prompt's bytes")
    content = [m["content"] for m in messages if m["role"] == "user"][-1].encode("utf-8")
    first = prompt.rfind(content)
    if not content or first < 0:
        raise InputError("model", "token span", "the user message is not in the rendered prompt")
    starts = ends - np.array([len(llama.detokenize([t], special=True)) for t in tokens])
    inside = np.flatnonzero((ends > first) & (starts < first + len(content)))
    return tokens, int(inside[0]), int(inside[-1]) + 1


def _check_table(personas: pd.DataFrame, attributes: Sequence[str], card_column: str,
                 source: str) -> dict[str, list[str]]:
    """Each attribute's distinct values (as text, sorted); ``InputError`` for a missing column or an
    attribute that cannot give vectors."""
    if not attributes:
        raise InputError(source, "attributes", "name at least one attribute column")
    for column in ("persona_id", card_column, *attributes):
        if column not in personas.columns:
            raise InputError(source, column, f"the persona table has no column {column!r} "
                             f"(columns: {', '.join(map(str, personas.columns))})")
    if personas["persona_id"].duplicated().any():
        raise InputError(source, "persona_id", "persona ids must be unique")
    values = {}
    for attribute in attributes:
        present = sorted({str(v) for v in personas[attribute] if not pd.isna(v)})
        if len(present) < 2:
            raise InputError(source, attribute, f"has {len(present)} distinct value(s): a vector is a difference "
                             "from the mean over values, so it needs at least two")
        numeric = pd.api.types.is_numeric_dtype(personas[attribute]) and not pd.api.types.is_bool_dtype(
            personas[attribute])
        limit = MAX_NUMERIC_VALUES if numeric else MAX_VALUES
        if len(present) > limit:
            raise InputError(source, attribute, f"has {len(present)} distinct {'numeric ' if numeric else ''}values "
                             f"(at most {limit}): bin it first (age_band, not age)")
        values[attribute] = present
    return values


def probe_plan(n_rows: int, n_questions: int, *, seed: int, n_personas: int | None = None,
               questions_per_persona: int | None = None) -> list[tuple[int, int]]:
    """``(row, question)`` pairs, in evaluation order: ``n_personas`` rows drawn without replacement (all
    rows, in table order, when ``None``), each with ``questions_per_persona`` questions in a drawn order.

    Examples
    --------
    >>> probe_plan(4, 3, seed=1, n_personas=2, questions_per_persona=2) == probe_plan(4, 3, seed=1, n_personas=2,
    ...                                                                             questions_per_persona=2)
    True
    >>> len(probe_plan(4, 3, seed=1))
    12
    """
    n_personas = n_rows if n_personas is None else int(n_personas)
    per_persona = n_questions if questions_per_persona is None else int(questions_per_persona)
    if not 1 <= n_personas <= n_rows:
        raise InputError("personas", "n_personas", f"must lie in 1..{n_rows} (the table's rows), got {n_personas}")
    if not 1 <= per_persona <= n_questions:
        raise InputError("probes", "questions_per_persona", f"must lie in 1..{n_questions}, got {per_persona}")
    rng = np.random.default_rng(seed)
    rows = range(n_rows) if n_personas == n_rows else sorted(int(r) for r in rng.choice(n_rows, n_personas,
                                                                                        replace=False))
    return [(row, int(q)) for row in rows for q in rng.permutation(n_questions)[:per_persona]]


def extract_vectors(personas: pd.DataFrame, attributes: Sequence[str], questions: Sequence[str] | None = None, *,
                    model: str = "smollm2-135m", layers: Sequence[int] | None = None, span: str = "user",
                    seed: int = 0, n_personas: int | None = None, questions_per_persona: int | None = None,
                    system: str | None = None, card_column: str = "card", provenance: dict[str, Any] | None = None,
                    on_prompt: Callable[[int, int], None] | None = None, source: str = "personas") -> IdentityVectors:
    """Identity vectors of ``attributes`` on embedded model ``model`` (see the module text).

    Parameters
    ----------
    personas
        One row per persona: ``persona_id``, the card text (``card_column``) and the attribute columns.
    questions
        The probe questions (default :func:`default_probes`).
    layers
        Blocks whose outputs are stored (default: all, ``0 .. n_layer - 1``).
    span
        The token span of :data:`~pvsst.sim.identity.vectors.TOKEN_SPANS`.
    provenance
        More header fields (the CLI adds the persona file and card style).
    source
        How errors name the persona table (its file).
    on_prompt
        Called with ``(done, total)`` after each probe prompt.

    Examples
    --------
    >>> table = pd.DataFrame({"persona_id": ["a", "b"], "sex": ["female", "male"],
    ...                       "card": ["I am a woman.", "I am a man."]})
    >>> vectors = extract_vectors(table, ["sex"], ["How are you?"], layers=[10, 11])  # doctest: +SKIP
    >>> vectors.vectors.shape, float(abs(vectors.vectors.sum(axis=0)).max()) < 1e-3  # doctest: +SKIP
    ((2, 2, 576), True)
    """
    questions = default_probes() if questions is None else [str(q) for q in questions]
    if not questions or any(not q.strip() for q in questions):
        raise InputError("probes", "questions", "give one or more non-empty probe questions")
    if span not in TOKEN_SPANS:
        raise InputError("identity vectors", "span", f"must be one of {', '.join(TOKEN_SPANS)}, got {span!r}")
    values = _check_table(personas, attributes, card_column, source)
    plan = probe_plan(len(personas), len(questions), seed=seed, n_personas=n_personas,
                      questions_per_persona=questions_per_persona)
    llama = embedded.load_model(model)
    n_layer, n_embd = model_shape(llama)
    layers = list(range(n_layer)) if layers is None else sorted({int(layer) for layer in layers})
    if not layers or not 0 <= layers[0] <= layers[-1] < n_layer:
        raise InputError("identity vectors", "layers",
                         f"must lie in 0..{n_layer - 1} for embedded/{model}, got {layers}")

    cards = personas[card_column].astype(str).tolist()
    labels = {a: [None if pd.isna(v) else str(v) for v in personas[a]] for a in attributes}
    sums = {(a, v): np.zeros((len(layers), n_embd)) for a in attributes for v in values[a]}
    totals = {a: np.zeros((len(layers), n_embd)) for a in attributes}
    prompts = {key: 0 for key in sums}
    members: dict[tuple[str, str], set[int]] = {key: set() for key in sums}
    with HiddenStateReader(llama, layers) as reader:
        for done, (row, question) in enumerate(plan, start=1):
            tokens, start, stop = span_of(llama, probe_messages(cards[row], questions[question], system), span)
            pooled = reader.read(tokens)[:, start:stop].astype(np.float64).mean(axis=1)
            for attribute in attributes:
                value = labels[attribute][row]
                if value is not None:
                    sums[(attribute, value)] += pooled
                    totals[attribute] += pooled
                    prompts[(attribute, value)] += 1
                    members[(attribute, value)].add(row)
            if on_prompt is not None:
                on_prompt(done, len(plan))

    entries = [key for key in sums if prompts[key] > 0]  # a value no sampled persona holds has no vector
    vectors = np.stack([sums[key] / prompts[key] - totals[key[0]] / sum(prompts[(key[0], v)] for v in values[key[0]])
                        for key in entries]).astype(np.float32)
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for attribute, value in entries:
        counts.setdefault(attribute, {})[value] = {"personas": len(members[(attribute, value)]),
                                                   "prompts": prompts[(attribute, value)]}
    sampled = [str(personas["persona_id"].iloc[row]) for row in dict.fromkeys(row for row, _ in plan)]
    header = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "model": f"embedded/{model}", "model_file": embedded.gguf_path(model).name,
        "model_sha256": embedded.model_sha256(model), "n_layer": n_layer, "n_embd": n_embd, "layers": layers,
        "token_span": span, "probe_template": PROBE_TEMPLATE, "system": system,
        "probe_set_sha256": probe_set_sha256(questions), "probe_questions": len(questions),
        "questions_per_persona": questions_per_persona or len(questions), "prompts": len(plan),
        "persona_ids": sampled, "persona_sample_sha256": hashlib.sha256(canonical_json(sampled).encode()).hexdigest(),
        "card_column": card_column, "entries": [list(key) for key in entries], "attributes": counts,
        "vector": "mean(hidden | value) - mean(hidden | any value), per layer",
        "seed": int(seed), "pvsst_version": _pvsst_version(), **(provenance or {}),
    }
    return IdentityVectors(header, vectors)


def _pvsst_version() -> str:
    try:
        return metadata.version("pvsst")
    except metadata.PackageNotFoundError:
        return "unknown"
