"""`pvsst report` (not implemented yet)."""
import typer


def register(app: typer.Typer) -> None:
    pass
