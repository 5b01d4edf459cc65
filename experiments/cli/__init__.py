"""The ``pvsst`` command: thin wrappers over functions of the four packages.

Every command module in ``experiments/cli`` (the table :data:`pvsst.experiments.cli.commands.COMMAND_MODULES`)
adds its commands to :data:`app`. A command module imports only typer and light modules at its top and
names what it runs with :func:`~pvsst.experiments.cli.lazy.lazy_module`, so ``pvsst --help`` and
``pvsst run --help`` import none of it. Bad input anywhere
raises an ``InputError``; :func:`main` prints it as one line and exits with code 2. A run stopped by a
signal or a failed write raises ``RunStopped``: one line, and its exit code (130, 143 or 1); any other
refusal of the operating system is one line and exit code 1. Every line is redacted
(:mod:`pvsst.core.redaction`); a closed stdout (``| head``) does not stop a command.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from pvsst.core.errors import InputError, RunStopped, os_error_line
from pvsst.core.redaction import redact
from pvsst.experiments.cli.commands import register_all
from pvsst.experiments.cli.groups import command_group

EXIT_INPUT_ERROR = 2
EXIT_OS_ERROR = 1
MAX_LINE = 2000


def _usage_error() -> type[BaseException]:
    """click's ``UsageError`` as the commands raise it: typer's own copy of click where typer vendors it
    (the commands typer builds raise that copy, not a subclass of click's), else click's."""
    try:
        return importlib.import_module("typer._click.exceptions").UsageError
    except (ImportError, AttributeError):
        return importlib.import_module("click.exceptions").UsageError


USAGE_ERRORS = (_usage_error(),)
ABORTS = (typer.Abort,)

app = command_group("Preregistered LLM-agent social simulation: run, analyse, report.", name="pvsst")


@functools.cache
def _command():
    """The click command of :data:`app` with every command registered, built once per process (typer
    builds it anew on each ``app(...)`` call, ~20 ms; in-process callers such as the tests call
    :func:`main` thousands of times)."""
    register_all(app)
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) its exit code."""
    with pipe_safe_stdout():
        code = _run(argv)
    if argv is None and code >= 128:
        # Stopped by a signal: everything finished is on disk and the workers are gone; leave without
        # the interpreter's exit handlers, which would join a process pool's threads.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    if argv is None:
        sys.exit(code)
    return code


def _run(argv: list[str] | None) -> int:
    try:
        code = _command()(args=argv, standalone_mode=False)
    except InputError as err:
        _say(f"error: {err}")
        code = EXIT_INPUT_ERROR
    except RunStopped as err:
        _say(str(err))
        code = err.exit_code
    except USAGE_ERRORS as err:
        hint = f" (in {err.ctx.command_path})" if err.ctx is not None else ""
        _say(f"error: {err.format_message()}{hint}")
        code = EXIT_INPUT_ERROR
    except ABORTS:
        _say("aborted")
        code = 130
    except OSError as err:  # the system refused something no check foresaw: one line, not a traceback
        _say(f"error: {os_error_line(err)}")
        code = EXIT_OS_ERROR
    except MemoryError:
        _say("error: out of memory")
        code = EXIT_OS_ERROR
    return int(code or 0) if isinstance(code, int) or code is None else 0


def _say(message: str) -> None:
    """Print one line on stderr, secrets redacted, line breaks folded, at most :data:`MAX_LINE` characters."""
    line = " ".join(redact(message).split())
    print(f"pvsst: {line if len(line) <= MAX_LINE else line[:MAX_LINE - 3] + '...'}", file=sys.stderr)


@contextmanager
def pipe_safe_stdout() -> Iterator[None]:
    """Keep going when the reader of stdout goes away (``pvsst run ... | head -c1``): what is printed is
    informational, so a closed pipe sends the rest to ``/dev/null`` and the run finishes as it would."""
    stream = _PipeSafe(sys.stdout)
    previous, sys.stdout = sys.stdout, stream
    try:
        yield
    finally:
        if sys.stdout is stream:
            sys.stdout = previous


class _PipeSafe:
    """A stdout whose writes never raise ``BrokenPipeError``: after the first one they go nowhere."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self) -> None:
        try:  # the interpreter flushes stdout at exit: point its descriptor at /dev/null too
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
        self._stream = open(os.devnull, "w")

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


if __name__ == "__main__":  # pragma: no cover
    main()
