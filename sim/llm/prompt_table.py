"""Prompts on record: the full text of every request, deduplicated by its ``prompt_sha256``.

``prompts.parquet`` of a trial (and of a survey run) holds one row per distinct request text:
``prompt_sha256``, ``system`` (the system messages, joined by a blank line), ``user`` (the user
messages, likewise), ``messages_json`` (the messages exactly as hashed) and ``n_messages``. The sha256
of ``messages_json`` is the ``prompt_sha256`` of every ``llm_calls`` row that links to it, so the
stored text reproduces each call's hash (:func:`check_prompt_table`).

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> msgs = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"})
>>> table = prompt_table([LLMRequest(model_name="m", messages=msgs), LLMRequest(model_name="m", messages=msgs, seed=2)])
>>> len(table), table.loc[0, "system"], table.loc[0, "user"]
(1, 'be brief', 'hi')
>>> table.loc[0, "prompt_sha256"] == LLMRequest(model_name="m", messages=msgs).prompt_sha256()
True
>>> check_prompt_table(table)
[]
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import pandas as pd

from pvsst.sim.llm.types import LLMRequest, LLMResult, canonical_json

PROMPT_COLUMNS = ("prompt_sha256", "system", "user", "messages_json", "n_messages")
CALL_CHUNK = 4096
"""Requests go to the gateway in chunks of this many, so a huge population never holds every task at once."""


class PromptLog:
    """Collects the distinct request texts of a run as they are sent (memory: one entry per text)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple] = {}

    def add(self, requests: Iterable[LLMRequest]) -> None:
        for request in requests:
            key = request.prompt_sha256()
            if key not in self._rows:
                self._rows[key] = _row(key, request.messages)

    def __len__(self) -> int:
        return len(self._rows)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self._rows.values()), columns=list(PROMPT_COLUMNS)).astype({"n_messages": "int16"})


def send_on_record(gateway, requests: Sequence[LLMRequest], log: PromptLog) -> list[LLMResult]:
    """Put ``requests``' texts on record in ``log``, then run them through ``gateway`` in chunks of
    :data:`CALL_CHUNK`; the results come back in request order."""
    log.add(requests)
    results: list[LLMResult] = []
    for start in range(0, len(requests), CALL_CHUNK):
        results.extend(gateway.run(requests[start:start + CALL_CHUNK]))
    return results


def prompt_table(requests: Iterable[LLMRequest]) -> pd.DataFrame:
    """The ``prompts.parquet`` table of ``requests`` (one row per distinct ``prompt_sha256``, first-seen order)."""
    log = PromptLog()
    log.add(requests)
    return log.frame()


def check_prompt_table(prompts: pd.DataFrame, calls: pd.DataFrame | None = None) -> list[str]:
    """Problems of a prompt table: rows whose text does not hash to their key, calls without a row.

    Returns an empty list when every row reproduces its ``prompt_sha256`` (and, given ``calls``, every
    call's ``prompt_sha256`` has its row).
    """
    problems = [f"prompt {key[:12]}: stored text hashes to {hashlib.sha256(text.encode()).hexdigest()[:12]}"
                for key, text in zip(prompts["prompt_sha256"], prompts["messages_json"])
                if hashlib.sha256(text.encode()).hexdigest() != key]
    if calls is not None:
        known = set(prompts["prompt_sha256"])
        problems += [f"call {cid}: no stored prompt {key[:12]}" for cid, key in zip(calls["call_id"],
                                                                                   calls["prompt_sha256"])
                     if key not in known]
    return problems


def _row(key: str, messages: tuple[dict[str, str], ...]) -> tuple:
    def joined(role: str) -> str:
        return "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == role)

    return (key, joined("system"), joined("user"), canonical_json(list(messages)), len(messages))
