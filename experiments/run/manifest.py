"""RUN/manifest.json: what was run, from which frozen input, with what software, and how each unit ended.

The manifest is rewritten atomically (temp file + rename) after every finished unit, so a killed run
always leaves a readable manifest that says which units finished. Every change goes through a method of
:class:`RunManifest`, which redacts what it records (:func:`pvsst.core.redaction.redact_data`: no API key
or URL credential is ever written): the input's record (:meth:`~RunManifest.record`), deviations, one entry per
session in ``runs`` (:meth:`~RunManifest.start_run`, :meth:`~RunManifest.update_run`) and one status
entry per unit under its section (``trials`` of a study, ``units`` of a survey).

Examples
--------
>>> import tempfile
>>> manifest = RunManifest.create(tempfile.mkdtemp(), spec_id="demo")
>>> manifest.declare("trials", {"t1": {"block_id": "b1"}})
>>> manifest.start_run(workers=1)
>>> manifest.set_unit("trials", "t1", status="done", calls=3)
>>> manifest.update_run(summary="1 trials: 1 done")
>>> manifest.units("trials")["t1"], manifest.current_run["summary"]
({'status': 'done', 'block_id': 'b1', 'calls': 3}, '1 trials: 1 done')
"""
from __future__ import annotations

import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pvsst.core.atomic import write_json
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.redaction import redact_data
from pvsst.core.run_layout import MANIFEST, TRIALS
from pvsst.experiments.spec.lock import package_versions


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def environment() -> dict[str, str]:
    """The lock's package versions plus the platform this run executed on."""
    return {**package_versions(), "platform": platform.platform()}


@dataclass
class RunManifest:
    """The manifest of one run directory; read with :meth:`load`, changed through its methods, written with
    :meth:`save`."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: str | Path) -> "RunManifest | None":
        """The manifest of ``run_dir`` (``None``: it has none); an unreadable or corrupt one is an ``InputError``."""
        path = Path(run_dir) / MANIFEST
        if not path.is_file():
            return None
        data = read_json(path, "manifest", hint="restore it from a backup, or give a new --out")
        return cls(path, data)

    @classmethod
    def create(cls, run_dir: str | Path, **fields: Any) -> "RunManifest":
        return cls(Path(run_dir) / MANIFEST, {"created_at": utc_now(), "deviations": [], "runs": [],
                                              **redact_data(fields)})

    @classmethod
    def open(cls, run_dir: str | Path, **fields: Any) -> "RunManifest":
        """The run directory's manifest, or a new one holding ``fields``."""
        return cls.load(run_dir) or cls.create(run_dir, **fields)

    @property
    def kind(self) -> str | None:
        """``survey`` (a ``pvsst survey run``), ``threads`` or ``epidemic`` (``pvsst run`` of a thread or an
        epidemic spec), ``study`` (``pvsst run``, ``pvsst simulate``) or ``None`` (not yet known)."""
        if "survey_id" in self.data:
            return "survey"
        if self.data.get("schedule") in ("threads", "epidemic"):
            return self.data["schedule"]
        return "study" if "spec_sha256" in self.data else None

    def require_kind(self, kind: str) -> None:
        """Refuse (``InputError``) a manifest of another kind of run than ``kind``."""
        if self.kind not in (None, kind):
            raise InputError(self.path, "manifest", f"this folder holds a {self.kind} run, not a {kind} run; "
                             "give a new --out")

    def get(self, name: str, default: Any = None) -> Any:
        """A top-level field of the manifest."""
        return self.data.get(name, default)

    def record(self, **fields: Any) -> None:
        """Set top-level fields (what was run: the input, its hashes, the design)."""
        self.data.update(redact_data(fields))

    def add_deviations(self, records: list[dict], same: Callable[[dict, dict], bool] | None = None) -> None:
        """Append deviation records; with ``same``, one equal to a recorded one is not added again."""
        records = redact_data(records)
        recorded = self.data.setdefault("deviations", [])
        recorded += [d for d in records if same is None or not any(same(d, old) for old in recorded)]

    # -- sessions ------------------------------------------------------------------------------------
    def start_run(self, **fields: Any) -> None:
        """Open this session's entry in ``runs`` (started_at, executor, workers, versions ...)."""
        self.data.setdefault("runs", []).append({"started_at": utc_now(), **redact_data(fields)})

    @property
    def current_run(self) -> dict:
        """This session's entry in ``runs`` (read only: change it with :meth:`update_run`)."""
        return dict(self.data["runs"][-1])

    def discard_run(self) -> None:
        """Remove this session's entry: a session refused before it ran anything leaves no trace."""
        self.data["runs"].pop()

    def update_run(self, **fields: Any) -> None:
        """Add fields to this session's entry (finished_at, summary, interrupted, write_failed)."""
        self.data["runs"][-1].update(redact_data(fields))

    # -- units ---------------------------------------------------------------------------------------
    def units(self, section: str) -> dict[str, dict]:
        """The status entries of a section (``trials`` or ``units``), by unit id."""
        return self.data.setdefault(section, {})

    def declare(self, section: str, entries: Mapping[str, Mapping]) -> None:
        """Enter every planned unit of a section with its fields; a new one is ``pending``."""
        for unit_id, fields in entries.items():
            self.units(section).setdefault(unit_id, {"status": "pending"}).update(redact_data(fields))

    def forget(self, section: str) -> None:
        """Drop a section's entries (a job that starts its units afresh)."""
        self.data.pop(section, None)

    def set_unit(self, section: str, unit_id: str, **fields: Any) -> None:
        """Update one unit's entry (its status, calls, error ...)."""
        self.units(section).setdefault(unit_id, {}).update(redact_data(fields))

    @property
    def trials(self) -> dict[str, dict]:
        """A study run's trial entries."""
        return self.units(TRIALS)

    def save(self) -> None:
        """Write the manifest atomically (every value was redacted as it was recorded)."""
        write_json(self.path, self.data)
