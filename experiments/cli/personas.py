"""`pvsst personas`: synthesise a census-seeded persona population, and show persona cards.

Thin wrappers over :func:`pvsst.personas.synthesis.synthesize`, :func:`pvsst.personas.records.write_personas`,
:func:`pvsst.personas.records.read_personas` and :func:`pvsst.personas.cards.personas_for_simulation`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from pvsst.core.errors import InputError

_STAGES = ("load census marginals", "rake", "integerise and sample",
           "draw ages, incomes and survey attributes", "assemble", "fit report", "write")


def fit_report_path(out: Path) -> Path:
    """``FILE.fit.csv`` beside the persona file ``FILE``."""
    return out.with_name(out.name + ".fit.csv")


def _write_csv_atomic(frame, path: Path) -> None:
    from pvsst.core.atomic import atomic_file

    with atomic_file(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6f")


def _print_fit_report(result, console: Console) -> None:
    table = Table(title="Fit report: target vs achieved (percent of base)", show_lines=False)
    for column, justify in (("marginal", "left"), ("category", "left"), ("base", "left"),
                            ("target %", "right"), ("achieved %", "right"), ("abs error pp", "right")):
        table.add_column(column, justify=justify)
    for row in result.fit_report.itertuples(index=False):
        table.add_row(row.marginal, str(row.category), row.base, f"{row.target:.3f}",
                      f"{row.achieved:.3f}", f"{row.abs_error_pp:.3f}")
    console.print(table)
    for marginal, source in result.fit_report.groupby("marginal", sort=False)["source"].first().items():
        console.print(f"source of {marginal}: {source}")
    console.print(result.summary())


def synth(
    n: int = typer.Option(..., "--n", help="Number of personas (adults 18+)."),
    geography: str = typer.Option("US", "--geography", help="US, or state codes / names, comma-separated."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same file)."),
    out: Path = typer.Option(..., "--out", help="Persona file to write (.parquet or .csv)."),
    census_dir: Optional[Path] = typer.Option(None, "--census-dir", hidden=True,
                                              help="Read census marginals from here instead of the vendored copy."),
) -> None:
    """Synthesise N census-raked personas; write FILE and FILE.fit.csv and print the fit report."""
    from pvsst.personas.census import load_census_tables
    from pvsst.personas.records import FORMATS, write_personas
    from pvsst.personas.synthesis import check_synthesis_arguments, synthesize

    if out.suffix.lower() not in FORMATS:
        raise InputError(str(out), "--out", "persona file must end in .parquet or .csv")
    check_synthesis_arguments(n, geography, seed)
    load_census_tables(census_dir)          # a corrupt marginal file fails here, before any output
    console = Console()
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                        TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    with progress:
        task = progress.add_task("personas", total=len(_STAGES))

        def on_stage(name: str) -> None:
            progress.update(task, description=name, completed=_STAGES.index(name))

        result = synthesize(n, geography=geography, seed=seed, census_dir=census_dir, on_stage=on_stage)
        on_stage("write")
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_csv_atomic(result.fit_report, fit_report_path(out))
        write_personas(result.personas, out)
        progress.update(task, completed=len(_STAGES))
    _print_fit_report(result, console)
    console.print(f"wrote {out} and {fit_report_path(out)}")


def show(
    file: Path = typer.Argument(..., help="Persona file (.parquet or .csv)."),
    card: str = typer.Option("profile", "--card", help="Card style: profile, backstory, label (or STYLE_vN)."),
    n: int = typer.Option(5, "--n", help="How many personas to show (from the top)."),
) -> None:
    """Show the first K personas of FILE as cards, with their label and posting style."""
    from pvsst.personas.cards import load_template, personas_for_simulation
    from pvsst.personas.records import read_personas

    if n < 1:
        raise InputError("personas show", "--n", f"must be at least 1, got {n}")
    load_template(card)
    frame = read_personas(file)
    shown = personas_for_simulation(frame.head(n), card_style=card)
    for row in shown.itertuples(index=False):
        typer.echo(f"{row.persona_id}  [{row.label}]  posting style: {row.posting_style}")
        typer.echo(f"  {row.card}")
    typer.echo(f"({len(shown)} of {len(frame):,} personas in {file}, card style {card})")


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Census-seeded persona populations and persona cards.", no_args_is_help=True)
    sub.command("synth")(synth)
    sub.command("show")(show)
    app.add_typer(sub, name="personas")
