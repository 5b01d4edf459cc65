"""`pvsst prereg freeze|verify|show SPEC`: preregister a spec by hash and check it later.

Exit codes of ``verify``: 0 the spec matches its lock; 1 it does not (the changed fields and a
unified diff of the canonical spec are printed); 2 no lock, a corrupt lock, or an invalid spec.
"""
from __future__ import annotations

import json
from pathlib import Path

import typer

from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
prereg = lazy_module("pvsst.experiments.prereg.freeze")
lock_file = lazy_module("pvsst.experiments.spec.lock")

EXIT_MISMATCH = 1

prereg_app = command_group("Preregister a study spec or survey instrument: freeze it by hash, verify it, show it.")


@prereg_app.command("freeze")
def freeze_command(
    spec: Path = typer.Argument(..., help="The study spec (YAML)."),
    force: bool = typer.Option(False, "--force", help="Overwrite a lock that belongs to a different spec."),
) -> None:
    """Validate SPEC, check what a run of it reads (data, columns, materials, edge list, personas, models),
    and write SPEC.lock.json (sha256 of the canonical spec, of its materials or data, UTC time, versions)."""
    lock = prereg.freeze(spec, force=force)
    console = rich_console.Console(highlight=False, soft_wrap=True)
    console.print(f"sha256 {lock.spec_sha256}", markup=False)
    console.print(f"lock   {lock_file.lock_path(spec)} (frozen {lock.frozen_at})", markup=False)


@prereg_app.command("verify")
def verify_command(spec: Path = typer.Argument(..., help="The study spec (YAML).")) -> None:
    """Exit 0 when SPEC matches its lock, 1 (printing what changed) when it does not."""
    result = prereg.verify(spec)
    console = rich_console.Console(highlight=False, soft_wrap=True)
    for change in result.version_changes:
        console.print(f"note: package version changed since freezing: {change}", markup=False)
    if result.ok:
        console.print(f"OK: {spec} matches its lock (sha256 {result.current_sha256}, "
                      f"frozen {result.lock.frozen_at})", markup=False)
        return
    console.print(f"MISMATCH: {spec} hashes to {result.current_sha256}, but its lock froze "
                  f"{result.frozen_sha256} ({result.lock.frozen_at})", markup=False)
    for path in result.changed_materials:
        console.print(f"changed materials file: {path}", markup=False)
    for data in result.changed_data:
        console.print(f"changed data: {data}", markup=False)
    for change in result.changed_fields:
        console.print(f"changed: {change}", markup=False)
    console.print("\n".join(result.diff), markup=False)
    raise typer.Exit(EXIT_MISMATCH)


@prereg_app.command("show")
def show_command(
    spec: Path = typer.Argument(..., help="The study spec (YAML)."),
    as_json: bool = typer.Option(False, "--json", help="Print the canonical spec as JSON instead of YAML."),
) -> None:
    """Print the canonical spec or instrument (fully defaulted, built-in topics resolved) and its sha256."""
    document = prereg.load_document(spec)
    data = document.canonical
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) if as_json else lock_file.canonical_yaml(data)
    console = rich_console.Console(highlight=False, soft_wrap=True)
    console.print(text.rstrip("\n"), markup=False)
    console.print(f"# sha256 {document.sha256}", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(prereg_app, name="prereg")
