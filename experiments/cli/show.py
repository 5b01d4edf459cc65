"""`pvsst show RUN TRIAL`: a stored trial as a transcript (what each agent saw, wrote and voted)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pvsst.core.errors import InputError
from pvsst.core.run_layout import TRIALS
from pvsst.experiments.cli.folder_options import run_argument


def show(
    run: Path = run_argument("Run directory (written by `pvsst run` or `pvsst simulate`)."),
    trial: str = typer.Argument(..., help="Trial id (a folder under RUN/trials)."),
    round: Optional[int] = typer.Option(None, "--round", help="Only this round."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Only this agent id."),
    prompts: bool = typer.Option(False, "--prompts", help="Also print each request's full user message, as stored."),
) -> None:
    """Print a trial round by round: each agent's feed, its post (stance, confidence) and its votes."""
    from pvsst.analysis.store.reader import read_trial_tables
    from pvsst.analysis.study.transcript import transcript

    trial_dir = run / TRIALS / trial
    if not (trial_dir / "posts.parquet").is_file():
        known = sorted(p.name for p in (run / TRIALS).iterdir() if p.is_dir()) if (run / TRIALS).is_dir() else []
        raise InputError(str(trial_dir), "TRIAL", f"no stored trial here (trials: {', '.join(known[:6]) or 'none'})")
    tables = read_trial_tables(trial_dir)
    if agent is not None and agent not in set(tables["posts"]["agent_id"]):
        raise InputError(str(trial_dir / "posts.parquet"), "--agent", f"no agent {agent!r} in this trial")
    if round is not None and round not in set(tables["posts"]["round"]):
        raise InputError(str(trial_dir / "posts.parquet"), "--round", f"no round {round} in this trial")
    text = transcript(tables, round=round, agent=agent, prompts=prompts)
    Console(highlight=False, soft_wrap=True).print(text, markup=False)


def register(app: typer.Typer) -> None:
    app.command("show")(show)
