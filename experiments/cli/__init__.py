"""The ``pvsst`` command: thin wrappers over functions of the four packages.

Every command module in ``experiments/cli`` adds its commands to :data:`app`. Bad input anywhere
raises an ``InputError``; :func:`main` prints it as one line and exits with code 2. A run stopped by a
signal or a failed write raises ``RunStopped``: one line, and its exit code (130, 143 or 1).
"""
from __future__ import annotations

import functools
import importlib
import os
import sys

import click
import typer

from pvsst.core.errors import InputError, RunStopped

EXIT_INPUT_ERROR = 2


def _click_exceptions(name: str) -> tuple[type[BaseException], ...]:
    """click's exception class ``name``, and typer's own copy of it where typer vendors click (the
    command typer builds raises that copy, which is not a subclass of click's)."""
    classes = [getattr(click.exceptions, name)]
    try:
        classes.append(getattr(importlib.import_module("typer._click.exceptions"), name))
    except (ImportError, AttributeError):
        pass
    return tuple(dict.fromkeys(classes))


USAGE_ERRORS = _click_exceptions("UsageError")
ABORTS = _click_exceptions("Abort")

app = typer.Typer(
    name="pvsst",
    help="Preregistered LLM-agent social simulation: run, analyse, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@functools.cache
def _command() -> click.Command:
    """The click command of :data:`app` with every command registered, built once per process (typer
    builds it anew on each ``app(...)`` call, ~20 ms; in-process callers such as the tests call
    :func:`main` thousands of times)."""
    from pvsst.experiments.cli.commands import register_all

    register_all(app)
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) its exit code."""
    try:
        code = _command()(args=argv, standalone_mode=False)
    except InputError as err:
        print(f"pvsst: error: {err}", file=sys.stderr)
        code = EXIT_INPUT_ERROR
    except RunStopped as err:
        print(f"pvsst: {err}", file=sys.stderr)
        code = err.exit_code
    except USAGE_ERRORS as err:
        hint = f" (in {err.ctx.command_path})" if err.ctx is not None else ""
        print(f"pvsst: error: {err.format_message()}{hint}", file=sys.stderr)
        code = EXIT_INPUT_ERROR
    except ABORTS:
        print("pvsst: aborted", file=sys.stderr)
        code = 130
    code = int(code or 0) if isinstance(code, int) or code is None else 0
    if argv is None and code >= 128:
        # Stopped by a signal: everything finished is on disk and the workers are gone; leave without
        # the interpreter's exit handlers, which would join a process pool's threads.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    if argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    main()
