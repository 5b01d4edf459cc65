"""The folder a whole pytest session shares, across its xdist workers."""
from __future__ import annotations

import os
from pathlib import Path


def session_folder(tmp_path_factory) -> Path:
    """This session's base temporary folder; under xdist, the folder above the workers' own
    (``popen-gwN/..``), so every worker of the session sees the same one."""
    base = Path(tmp_path_factory.getbasetemp())
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
