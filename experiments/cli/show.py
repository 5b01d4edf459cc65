"""`pvsst show RUN TRIAL`: a stored trial as a transcript (what each agent saw, wrote and voted)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pvsst.core.errors import InputError
from pvsst.core.run_layout import THREADS, TRIALS, table_file
from pvsst.experiments.cli.folder_options import run_argument
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
transcripts = lazy_module("pvsst.analysis.study.transcript")
store = lazy_module("pvsst.analysis.store.reader")
thread_tables = lazy_module("pvsst.analysis.threads.run_tables")
tree_text = lazy_module("pvsst.analysis.threads.tree_text")


def show(
    run: Path = run_argument("Run directory (written by `pvsst run` or `pvsst simulate`)."),
    trial: str = typer.Argument(..., help="Trial id (a folder under RUN/trials), or a thread run's thread id."),
    round: Optional[int] = typer.Option(None, "--round", help="Only this round."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Only this agent id."),
    prompts: bool = typer.Option(False, "--prompts", help="Also print each request's full user message, as stored."),
) -> None:
    """Print a trial round by round: each agent's feed, its post (stance, confidence) and its votes; a
    thread run's thread as an indented tree (each reply under what it answers)."""
    if (run / THREADS).is_dir():
        comments = thread_tables.read_thread(run, trial)["comments"]
        text = tree_text.format_thread(comments, trial)
        rich_console.Console(highlight=False, soft_wrap=True).print(text, markup=False)
        return
    trial_dir = run / TRIALS / trial
    if not (trial_dir / table_file("posts")).is_file():
        known = sorted(p.name for p in (run / TRIALS).iterdir() if p.is_dir()) if (run / TRIALS).is_dir() else []
        raise InputError(str(trial_dir), "TRIAL", f"no stored trial here (trials: {', '.join(known[:6]) or 'none'})")
    tables = store.read_trial_tables(trial_dir)
    if agent is not None and agent not in set(tables["posts"]["agent_id"]):
        raise InputError(str(trial_dir / table_file("posts")), "--agent", f"no agent {agent!r} in this trial")
    if round is not None and round not in set(tables["posts"]["round"]):
        raise InputError(str(trial_dir / table_file("posts")), "--round", f"no round {round} in this trial")
    text = transcripts.transcript(tables, round=round, agent=agent, prompts=prompts)
    rich_console.Console(highlight=False, soft_wrap=True).print(text, markup=False)


def register(app: typer.Typer) -> None:
    app.command("show")(show)
