"""`pvsst personas`: synthesise a census-seeded persona population, show persona cards, measure identity vectors.

Thin wrappers over :func:`pvsst.personas.synthesis.synthesize`, :func:`pvsst.personas.records.write_personas`,
:func:`pvsst.personas.records.read_personas`, :func:`pvsst.personas.cards.personas_for_simulation` and
:func:`pvsst.sim.identity.extraction.extract_vectors`.
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


def vectors(
    file: Path = typer.Argument(..., help="Persona file (.parquet or .csv)."),
    attributes: str = typer.Option(..., "--attributes",
                                   help="Attribute columns, comma-separated (e.g. sex,age_band,education,party)."),
    out: Path = typer.Option(..., "--out", help="Vectors file to write (.npz)."),
    probes: Optional[Path] = typer.Option(None, "--probes",
                                          help="Probe questions, one per line (default: pvsst's 24 questions)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the persona sample and the question draw."),
    n_personas: Optional[int] = typer.Option(None, "--n-personas", help="Draw this many personas (default: all)."),
    questions_per_persona: Optional[int] = typer.Option(None, "--questions-per-persona",
                                                        help="Questions drawn per persona (default: all)."),
    layers: Optional[str] = typer.Option(None, "--layers", help="Layers to store, e.g. 8-20 (default: all)."),
    span: str = typer.Option("user", "--span", help="Token span averaged: user, prompt or last."),
    card: str = typer.Option("profile", "--card", help="Card style of the probe prompts (profile, backstory)."),
    model: str = typer.Option("embedded/smollm2-135m", "--model", help="A local llama.cpp model (embedded/...)."),
) -> None:
    """Measure identity vectors (PSII) of the attribute values in FILE on a local model; write OUT."""
    from pvsst.personas.cards import load_template, personas_for_simulation
    from pvsst.personas.records import read_personas
    from pvsst.sim.identity.extraction import extract_vectors, read_probes
    from pvsst.core.input_files import file_sha256
    from pvsst.sim.identity.vectors import parse_layers, save_vectors
    from pvsst.sim.llm.providers.registry import ensure_runnable, split_model

    if out.suffix.lower() != ".npz":
        raise InputError(str(out), "--out", "the vectors file must end in .npz")
    prefix, name = split_model(model)
    if prefix != "embedded":
        raise InputError("model", model, "identity vectors need a local llama.cpp model (embedded/...)")
    ensure_runnable(model)
    load_template(card)
    questions = read_probes(probes) if probes is not None else None
    stored = parse_layers(layers) if layers is not None else None
    table = personas_for_simulation(read_personas(file), card_style=card)
    provenance = {"persona_file": file.name, "persona_file_sha256": file_sha256(file), "card_style": card,
                  "probe_file": probes.name if probes is not None else "pvsst probes_v1"}
    progress = Progress(SpinnerColumn(), TextColumn("probe prompts"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                        TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    with progress:
        task = progress.add_task("probe prompts", total=None)
        result = extract_vectors(table, [a.strip() for a in attributes.split(",") if a.strip()], questions,
                                 model=name, layers=stored, span=span, seed=seed, n_personas=n_personas,
                                 questions_per_persona=questions_per_persona, provenance=provenance, source=str(file),
                                 on_prompt=lambda done, total: progress.update(task, completed=done, total=total))
        sha256 = save_vectors(result, out)
    console = Console()
    table_out = Table(title=f"Identity vectors: {result.header['prompts']} probe prompts, span {span}")
    for column, justify in (("attribute", "left"), ("value", "left"), ("personas", "right"), ("prompts", "right")):
        table_out.add_column(column, justify=justify)
    for attribute, counts in result.header["attributes"].items():
        for value, count in counts.items():
            table_out.add_row(attribute, value, str(count["personas"]), str(count["prompts"]))
    console.print(table_out)
    typer.echo(f"wrote {out} (sha256 {sha256})")


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Census-seeded persona populations and persona cards.", no_args_is_help=True)
    sub.command("synth")(synth)
    sub.command("show")(show)
    sub.command("vectors")(vectors)
    app.add_typer(sub, name="personas")
