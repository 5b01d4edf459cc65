"""RUN/manifest.json: what was run, from which frozen spec, with what software, and how each trial ended.

The manifest is rewritten atomically (temp file + rename) after every trial, so a killed run always
leaves a readable manifest that says which trials finished.
"""
from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pvsst.core.atomic import write_json
from pvsst.experiments.spec.prereg import package_versions

MANIFEST = "manifest.json"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def environment() -> dict[str, str]:
    """The lock's package versions plus the platform this run executed on."""
    return {**package_versions(), "platform": platform.platform()}


@dataclass
class RunManifest:
    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: str | Path) -> "RunManifest | None":
        path = Path(run_dir) / MANIFEST
        if not path.is_file():
            return None
        return cls(path, json.loads(path.read_text(encoding="utf-8")))

    @classmethod
    def create(cls, run_dir: str | Path, **fields: Any) -> "RunManifest":
        manifest = cls(Path(run_dir) / MANIFEST, {"created_at": utc_now(), "deviations": [], "runs": [], **fields})
        return manifest

    @property
    def trials(self) -> dict[str, dict]:
        return self.data.setdefault("trials", {})

    def set_trial(self, trial_id: str, **fields: Any) -> None:
        self.trials.setdefault(trial_id, {}).update(fields)

    def save(self) -> None:
        write_json(self.path, self.data)
