"""The prompt table: the full text of every request, deduplicated and keyed by ``prompt_sha256``.

Provenance rows (``llm_calls.parquet``) and survey responses carry only ``prompt_sha256``
(:meth:`sim.llm.types.LLMRequest.prompt_sha256`: sha256 of the canonical JSON of the message list);
this table gives each hash its text, so anyone can read what a model was asked. Columns:

- ``prompt_sha256``: the key;
- ``system``: the system message(s), joined by a blank line ("" when there is none);
- ``user``: the user message(s), joined by a blank line;
- ``messages_json``: the whole message list as canonical JSON (the exact bytes the hash is taken over).

Examples
--------
>>> from sim.llm.types import LLMRequest
>>> ask = (({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}))
>>> requests = [LLMRequest(model="m", messages=ask, seed=s) for s in range(3)]
>>> table = prompt_table(requests)
>>> len(table), table.loc[0, "system"], table.loc[0, "user"]
(1, 'Be brief.', 'Hi?')
>>> table.loc[0, "prompt_sha256"] == requests[0].prompt_sha256()
True
"""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from sim.llm.types import LLMRequest, canonical_json

PROMPT_COLUMNS = ("prompt_sha256", "system", "user", "messages_json")


def _joined(messages, role: str) -> str:
    return "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == role)


def prompt_table(requests: Iterable[LLMRequest]) -> pd.DataFrame:
    """One row per distinct prompt of ``requests`` (first occurrence order); see the module docstring."""
    rows, seen = [], set()
    for request in requests:
        digest = request.prompt_sha256()
        if digest in seen:
            continue
        seen.add(digest)
        messages_json = canonical_json(list(request.messages))
        rows.append({"prompt_sha256": digest, "system": _joined(request.messages, "system"),
                     "user": _joined(request.messages, "user"), "messages_json": messages_json})
    return pd.DataFrame(rows, columns=list(PROMPT_COLUMNS))


def merge_prompt_tables(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate prompt tables (e.g. one per trial or survey unit), keeping one row per hash.

    Examples
    --------
    >>> a = pd.DataFrame([["h1", "", "x", "[]"]], columns=list(PROMPT_COLUMNS))
    >>> len(merge_prompt_tables([a, a]))
    1
    """
    frames = [t for t in tables if len(t)]
    if not frames:
        return pd.DataFrame(columns=list(PROMPT_COLUMNS))
    merged = pd.concat(frames, ignore_index=True)
    return merged.drop_duplicates("prompt_sha256", keep="first").reset_index(drop=True)
