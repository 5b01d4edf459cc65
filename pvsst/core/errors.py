"""The one exception this package raises for bad user input (the CLI turns it into exit code 2), a run
stopped from outside, and the one-line form of an operating-system error.

Examples
--------
>>> import errno
>>> os_error_line(OSError(errno.ENOSPC, "No space left on device", "/runs/r1/trials/t1"))
'/runs/r1/trials/t1: no space left on device'
>>> os_error_line(OSError("Error writing bytes to file. Detail: [errno 28] No space left on device"), "/runs/r1")
'/runs/r1: no space left on device'
"""
from __future__ import annotations

import os
import re
from pathlib import Path


class InputError(ValueError):
    """Bad input: ``str(err)`` is one line naming the file, the field and the problem."""

    def __init__(self, source: str, field: str, problem: str):
        self.source, self.field, self.problem = str(source), str(field), str(problem)
        super().__init__(f"{self.source}: {self.field}: {self.problem}")


class RunStopped(Exception):
    """A run stopped from outside its input (a signal, an operating-system error while writing):
    ``str(err)`` is one line saying what stopped, what is kept and how to go on; ``exit_code`` is the
    command's exit status (130 Ctrl-C, 143 SIGTERM, 1 a failed write)."""

    def __init__(self, message: str, exit_code: int):
        self.exit_code = int(exit_code)
        super().__init__(message)


def os_errno(err: OSError) -> int | None:
    """The error number of ``err``, also where a library kept it only in the text (pyarrow: ``[errno 28]``)."""
    if err.errno:
        return err.errno
    found = re.search(r"\[errno (\d+)\]", str(err), flags=re.IGNORECASE)
    return int(found.group(1)) if found else None


def os_error_line(err: OSError, fallback: str | Path | None = None) -> str:
    """``PATH: problem`` for an ``OSError``: the path it names, else ``fallback``; the problem in the
    system's words, lower case (at most 200 characters of the error's own text when it has no number)."""
    code, path = os_errno(err), getattr(err, "filename", None) or fallback
    problem = os.strerror(code).lower() if code else " ".join(str(err).split())[:200]
    return f"{path}: {problem}" if path is not None else problem
