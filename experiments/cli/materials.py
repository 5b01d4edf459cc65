"""`pvsst protocol new DIR`: start a study-materials directory from a copy of pvsst's own."""
from __future__ import annotations

from pathlib import Path

import typer

from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")
materials = lazy_module("pvsst.sim.materials")

protocol_app = command_group("Study materials and protocol: templates, persona tables, account ids.")


@protocol_app.command("new")
def new(directory: Path = typer.Argument(..., help="Directory to create (or an empty one) for the materials.")) -> None:
    """Copy pvsst's materials into DIRECTORY; edit them, then name DIRECTORY as `protocol.materials`."""
    copied = materials.copy_materials(directory)
    materials.load_materials(directory)
    console = rich_console.Console(highlight=False, soft_wrap=True)
    for path in copied:
        console.print(f"{path}  ({materials.MATERIAL_FILES[path.name]})", markup=False)
    console.print(f"{len(copied)} files; set `protocol: {{materials: {directory}}}` in the spec (relative to "
                  "the spec file), then `pvsst prereg freeze SPEC`.", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(protocol_app, name="protocol")
