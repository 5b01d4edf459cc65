"""`pvsst protocol new DIR`: start a study-materials directory from a copy of pvsst's own."""
from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

protocol_app = typer.Typer(help="Study materials and protocol: templates, persona tables, account ids.",
                           no_args_is_help=True)


@protocol_app.command("new")
def new(directory: Path = typer.Argument(..., help="Directory to create (or an empty one) for the materials.")) -> None:
    """Copy pvsst's materials into DIRECTORY; edit them, then name DIRECTORY as `protocol.materials`."""
    from pvsst.sim.materials import MATERIAL_FILES, copy_materials, load_materials

    copied = copy_materials(directory)
    load_materials(directory)
    console = Console(highlight=False, soft_wrap=True)
    for path in copied:
        console.print(f"{path}  ({MATERIAL_FILES[path.name]})", markup=False)
    console.print(f"{len(copied)} files; set `protocol: {{materials: {directory}}}` in the spec (relative to "
                  "the spec file), then `pvsst prereg freeze SPEC`.", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(protocol_app, name="protocol")
