"""Folder arguments and options of the run commands: an empty name (an unset shell variable) or a name no
filesystem takes is refused before anything runs (``--out ""`` would otherwise mean the working folder).

Examples
--------
>>> folder_name("runs/r1").as_posix()
'runs/r1'
"""
from __future__ import annotations

from pathlib import Path

import typer

from pvsst.core.errors import InputError
from pvsst.core.run_folder import check_folder_name


def folder_name(value: str | Path) -> Path:
    """The parser of a folder argument or option: ``value`` as a ``Path``, or a usage error (exit 2)."""
    if isinstance(value, Path):
        return value
    try:
        return check_folder_name(value)
    except InputError as err:
        raise typer.BadParameter(err.problem) from None


def out_option(help: str, default: Path | None = ...) -> typer.models.OptionInfo:  # noqa: A002 - typer's word
    """The ``--out`` option of a run command (a folder; see the module docstring)."""
    return typer.Option(default, "--out", help=help, parser=folder_name)


def run_argument(help: str, default: Path | None = ...) -> typer.models.ArgumentInfo:  # noqa: A002
    """The ``RUN`` argument of a command that reads a run folder."""
    return typer.Argument(default, help=help, parser=folder_name)


RETRY_DEGRADED = typer.Option(False, "--retry-degraded", help="Run again the units an earlier session left "
                              "degraded (more failed calls than analysis.parse_failure_threshold); their tables "
                              "are replaced only by a finished new attempt.")
