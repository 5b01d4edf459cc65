"""A content-addressed response cache on SQLite, safe with several writer processes.

Keys are :meth:`pvsst.sim.llm.types.LLMRequest.cache_key` (sha256 over model, messages, schema, sampling
parameters and seed). Only successful replies are stored, so a rerun replays them without a provider
call. The database runs in WAL mode with a busy timeout, so several processes (local executor workers,
Ray tasks on one machine) can read and write the same file at once.

A row that does not read back as a reply (its JSON corrupt, a count that is not a number: a disk or an
edit damaged it) is dropped, recorded in the ``dropped`` table, and read as a miss, so the call is
asked again instead of failing its trial; :meth:`ResponseCache.dropped` lists what was dropped.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tenacity

from pvsst.core.errors import InputError
from pvsst.sim.llm.stops import RunStop


def _is_lock_error(err: BaseException) -> bool:
    return isinstance(err, sqlite3.OperationalError) and ("locked" in str(err) or "busy" in str(err))


def _retry_while_locked(fn: Callable[[], None], timeout_s: float) -> None:
    """Call ``fn`` again (with jittered back-off) while another process holds the lock, up to ``timeout_s``."""
    for attempt in tenacity.Retrying(
            retry=tenacity.retry_if_exception(_is_lock_error), reraise=True,
            stop=tenacity.stop_after_delay(timeout_s), wait=tenacity.wait_random_exponential(0.01, 1.0)):
        with attempt:
            fn()


class ReplayMiss(RunStop):
    """Raised in replay-only mode when a request is not in the cache; ``str(err)`` is one line."""

    exit_code = 4
    status = "replay_miss"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT,
    parsed TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    stores INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS dropped (
    key TEXT NOT NULL,
    reason TEXT NOT NULL,
    at REAL NOT NULL
)
"""
_FIELDS = ("model", "text", "parsed", "prompt_tokens", "completion_tokens", "cost_usd", "created")


def _row_problem(record: dict[str, Any]) -> str | None:
    """Why a stored row cannot be a reply (a field of the wrong type), or ``None``."""
    if not isinstance(record["model"], str):
        return "model: not text"
    if record["text"] is not None and not isinstance(record["text"], str):
        return "text: not text"
    if record["parsed"] is not None and not isinstance(record["parsed"], str):
        return "parsed: not JSON text"
    for name in ("prompt_tokens", "completion_tokens"):
        if not isinstance(record[name], int):
            return f"{name}: not an integer"
    if not isinstance(record["cost_usd"], (int, float)):
        return "cost_usd: not a number"
    return None


class ResponseCache:
    """SQLite cache of model replies keyed by request hash.

    Parameters
    ----------
    path
        The database file; parent directories are created. ``":memory:"`` gives a private cache.
    busy_timeout_s
        How long a writer waits for another process's lock before failing.

    Examples
    --------
    >>> cache = ResponseCache(":memory:")
    >>> cache.put("k1", {"model": "scripted/echo", "text": "hi", "parsed": None})
    >>> cache.get("k1")["text"], cache.get("k2"), len(cache)
    ('hi', None, 1)
    >>> cache.stats()["hits"], cache.stats()["misses"]
    (1, 1)
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0):
        self.path = str(path)
        if self.path != ":memory:":
            try:
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise InputError(self.path, "cache", f"cannot create the cache directory: {err}") from err
            self.path = str(Path(self.path).expanduser())
        try:
            self._conn = sqlite3.connect(self.path, timeout=busy_timeout_s, check_same_thread=False,
                                         isolation_level=None)
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            _retry_while_locked(self._set_up, busy_timeout_s)
        except sqlite3.DatabaseError as err:
            raise InputError(self.path, "cache", f"not a usable SQLite cache: {err}") from err
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def _set_up(self) -> None:
        # Switching to WAL takes an exclusive lock and SQLite does not call the busy handler for it,
        # so workers opening a fresh file at the same moment see "database is locked" at once; the
        # mode is persistent, so it is only switched when the file is not in WAL already.
        if self._conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._conn.execute("PRAGMA journal_mode = WAL")
        # WAL + NORMAL: durable across application crashes, no fsync per commit.
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.executescript(_SCHEMA)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record for ``key`` (text, parsed JSON, tokens, model, created) or ``None`` (a miss, or
        a corrupt row, which is dropped and recorded).

        Examples
        --------
        >>> cache = ResponseCache(":memory:")
        >>> cache.put("k1", {"model": "m", "text": "hi", "parsed": {"a": 1}})
        >>> _ = cache._conn.execute("UPDATE responses SET parsed = '{broken' WHERE key = 'k1'")
        >>> cache.get("k1"), "k1" in cache, cache.dropped()[0]["reason"][:31]
        (None, False, 'parsed: not JSON (Expecting pro')
        """
        with self._lock:
            row = self._conn.execute(
                f"SELECT {', '.join(_FIELDS)} FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
        record = dict(zip(_FIELDS, row))
        problem = _row_problem(record)
        if problem is None:
            try:
                record["parsed"] = None if record["parsed"] is None else json.loads(record["parsed"])
            except (ValueError, TypeError) as err:
                problem = f"parsed: not JSON ({err})"[:200]
        with self._lock:
            if problem is None:
                self.hits += 1
                return record
            self.misses += 1
            self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
            self._conn.execute("INSERT INTO dropped (key, reason, at) VALUES (?, ?, ?)", (key, problem, time.time()))
        return None

    def dropped(self) -> list[dict[str, Any]]:
        """The corrupt rows dropped from this file so far (key, reason, at), oldest first."""
        with self._lock:
            rows = self._conn.execute("SELECT key, reason, at FROM dropped ORDER BY at").fetchall()
        return [{"key": key, "reason": reason, "at": at} for key, reason, at in rows]

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store (or replace) the reply for ``key``; ``record`` needs ``model`` and ``text``."""
        parsed = record.get("parsed")
        values = (
            key,
            str(record["model"]),
            record.get("text"),
            None if parsed is None else json.dumps(parsed, ensure_ascii=False),
            int(record.get("prompt_tokens", 0) or 0),
            int(record.get("completion_tokens", 0) or 0),
            float(record.get("cost_usd", 0.0) or 0.0),
            float(record.get("created", time.time())),
        )
        with self._lock:
            # `stores` counts how often a key was written: above 1 means the same call was made twice
            # (a resume that repeated finished work), which the crash-resume tests check never happens.
            self._conn.execute(
                f"INSERT INTO responses (key, {', '.join(_FIELDS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET "
                + ", ".join(f"{f} = excluded.{f}" for f in _FIELDS) + ", stores = stores + 1",
                values)
            self.writes += 1

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def repeated_keys(self) -> int:
        """How many keys were stored more than once (over every process that used the file)."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses WHERE stores > 1").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        """Entries in the file, keys stored more than once, and this process's hit / miss / write counts."""
        return {"path": self.path, "entries": len(self), "repeated_keys": self.repeated_keys(),
                "hits": self.hits, "misses": self.misses, "writes": self.writes}

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
