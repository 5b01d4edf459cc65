"""`pvsst models`: the built-in model providers and whether each can run on this machine."""
from __future__ import annotations

import typer

from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
rich_table = lazy_module("rich.table")
registry = lazy_module("pvsst.sim.llm.providers.registry")


def models() -> None:
    """List the built-in model providers (embedded, scripted, litellm pass-through) and whether each
    can run here. Nothing is downloaded or loaded, and no server is contacted."""
    table = rich_table.Table(title="pvsst model providers")
    table.add_column("provider", style="bold")
    table.add_column("kind")
    table.add_column("runs here")
    table.add_column("detail", overflow="fold")
    for info in registry.available_providers():
        table.add_row(info.name, info.kind, "[green]yes[/green]" if info.runnable else "[red]no[/red]", info.detail)
    rich_console.Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("models")(models)
