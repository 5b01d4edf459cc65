"""`pvsst models`: the built-in model providers and whether each can run on this machine."""
from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from pvsst.sim.llm.providers.registry import available_providers


def models() -> None:
    """List the built-in model providers (embedded, scripted, litellm pass-through) and whether each
    can run here. Nothing is downloaded or loaded, and no server is contacted."""
    table = Table(title="pvsst model providers")
    table.add_column("provider", style="bold")
    table.add_column("kind")
    table.add_column("runs here")
    table.add_column("detail", overflow="fold")
    for info in available_providers():
        table.add_row(info.name, info.kind, "[green]yes[/green]" if info.runnable else "[red]no[/red]", info.detail)
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("models")(models)
