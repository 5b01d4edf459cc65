"""``pvsst verify RUN``: check a run folder against what pvsst wrote (:func:`pvsst.core.integrity.verify_run`)."""
from __future__ import annotations

from pathlib import Path

import typer

from pvsst.core.integrity import verify_run
from pvsst.experiments.cli.folder_options import run_argument


def verify_command(
        run: Path = run_argument("A run folder (of `pvsst run`, `pvsst simulate` or `pvsst survey run`).")) -> None:
    """Check every finished unit's files against the sha256 its DONE marker records, and that every unit the
    manifest records as finished is there.

    Exit codes: 0 intact; 2 a file changed, missing or truncated, a corrupt or missing manifest, or a run
    writing the folder right now (each named on one line).
    """
    print(verify_run(run))


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_command)
