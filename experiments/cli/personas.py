"""`pvsst personas`: synthesise a census-seeded persona population, show persona cards, measure identity vectors.

Thin wrappers over :func:`pvsst.personas.synthesis.synthesize`, :func:`pvsst.personas.records.write_personas`,
:func:`pvsst.personas.records.read_personas`, :func:`pvsst.personas.cards.personas_for_simulation` and
:func:`pvsst.sim.identity.extraction.extract_vectors`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pvsst.core.atomic import atomic_file
from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
rich_progress = lazy_module("rich.progress")
rich_table = lazy_module("rich.table")
cards = lazy_module("pvsst.personas.cards")
census = lazy_module("pvsst.personas.census")
records = lazy_module("pvsst.personas.records")
synthesis = lazy_module("pvsst.personas.synthesis")
extraction = lazy_module("pvsst.sim.identity.extraction")
identity_vectors = lazy_module("pvsst.sim.identity.vectors")
registry = lazy_module("pvsst.sim.llm.providers.registry")

_STAGES = ("load census marginals", "rake", "integerise and sample",
           "draw ages, incomes and survey attributes", "assemble", "fit report", "write")


def fit_report_path(out: Path) -> Path:
    """``FILE.fit.csv`` beside the persona file ``FILE``."""
    return out.with_name(out.name + ".fit.csv")


def _write_csv_atomic(frame, path: Path) -> None:
    with atomic_file(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6f")


def _print_fit_report(result, console) -> None:
    table = rich_table.Table(title="Fit report: target vs achieved (percent of base)", show_lines=False)
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
    if out.suffix.lower() not in records.FORMATS:
        raise InputError(str(out), "--out", "persona file must end in .parquet or .csv")
    synthesis.check_synthesis_arguments(n, geography, seed)
    census.load_census_tables(census_dir)          # a corrupt marginal file fails here, before any output
    console = rich_console.Console()
    progress = _progress(rich_progress.TextColumn("{task.description}"))
    with progress:
        task = progress.add_task("personas", total=len(_STAGES))

        def on_stage(name: str) -> None:
            progress.update(task, description=name, completed=_STAGES.index(name))

        result = synthesis.synthesize(n, geography=geography, seed=seed, census_dir=census_dir, on_stage=on_stage)
        on_stage("write")
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_csv_atomic(result.fit_report, fit_report_path(out))
        records.write_personas(result.personas, out)
        progress.update(task, completed=len(_STAGES))
    _print_fit_report(result, console)
    console.print(f"wrote {out} and {fit_report_path(out)}")


def show(
    file: Path = typer.Argument(..., help="Persona file (.parquet or .csv)."),
    card: str = typer.Option("profile", "--card", help="Card style: profile, backstory, label (or STYLE_vN)."),
    n: int = typer.Option(5, "--n", help="How many personas to show (from the top)."),
) -> None:
    """Show the first K personas of FILE as cards, with their label and posting style."""
    if n < 1:
        raise InputError("personas show", "--n", f"must be at least 1, got {n}")
    cards.load_template(card)
    frame = records.read_personas(file)
    shown = cards.personas_for_simulation(frame.head(n), card_style=card)
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
    if out.suffix.lower() != ".npz":
        raise InputError(str(out), "--out", "the vectors file must end in .npz")
    prefix, name = registry.split_model(model)
    if prefix != "embedded":
        raise InputError("model", model, "identity vectors need a local llama.cpp model (embedded/...)")
    registry.ensure_runnable(model)
    cards.load_template(card)
    questions = extraction.read_probes(probes) if probes is not None else None
    stored = identity_vectors.parse_layers(layers) if layers is not None else None
    table = cards.personas_for_simulation(records.read_personas(file), card_style=card)
    provenance = {"persona_file": file.name, "persona_file_sha256": file_sha256(file), "card_style": card,
                  "probe_file": probes.name if probes is not None else "pvsst probes_v1"}
    progress = _progress(rich_progress.TextColumn("probe prompts"),
                         rich_progress.TextColumn("{task.completed}/{task.total}"))
    with progress:
        task = progress.add_task("probe prompts", total=None)
        result = extraction.extract_vectors(table, [a.strip() for a in attributes.split(",") if a.strip()], questions,
                                 model=name, layers=stored, span=span, seed=seed, n_personas=n_personas,
                                 questions_per_persona=questions_per_persona, provenance=provenance, source=str(file),
                                 on_prompt=lambda done, total: progress.update(task, completed=done, total=total))
        sha256 = identity_vectors.save_vectors(result, out)
    console = rich_console.Console()
    table_out = rich_table.Table(title=f"Identity vectors: {result.header['prompts']} probe prompts, span {span}")
    for column, justify in (("attribute", "left"), ("value", "left"), ("personas", "right"), ("prompts", "right")):
        table_out.add_column(column, justify=justify)
    for attribute, counts in result.header["attributes"].items():
        for value, count in counts.items():
            table_out.add_row(attribute, value, str(count["personas"]), str(count["prompts"]))
    console.print(table_out)
    typer.echo(f"wrote {out} (sha256 {sha256})")


def _progress(label, *more):
    """A transient progress bar on stderr: a spinner, ``label``, the bar, ``more`` columns, the time."""
    return rich_progress.Progress(rich_progress.SpinnerColumn(), label, rich_progress.BarColumn(), *more,
                                  rich_progress.TimeElapsedColumn(), console=rich_console.Console(stderr=True),
                                  transient=True)


def register(app: typer.Typer) -> None:
    sub = command_group("Census-seeded persona populations and persona cards.")
    sub.command("synth")(synth)
    sub.command("show")(show)
    sub.command("vectors")(vectors)
    app.add_typer(sub, name="personas")
