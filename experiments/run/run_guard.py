"""How a run ends when it is stopped from outside: Ctrl-C, SIGTERM, or an operating-system error while writing.

Both runners (study trials, survey units) execute inside :func:`guarded_run`. There:

- SIGINT (Ctrl-C, sent to the whole foreground process group) and SIGTERM stop the run: the workers
  are stopped (they never see SIGINT themselves: :func:`spawning_quietly`), the interruption is
  recorded in the manifest's current ``runs`` entry, and :class:`~pvsst.core.errors.RunStopped` carries one
  line (what stopped, how many units are finished, the command that resumes) and exit code 128 + the
  signal's number (130, 143);
- an ``OSError`` (no space left, permission denied, read-only filesystem, the run folder removed) or
  SQLite's own word for the same (the response cache's disk is full or read-only) becomes one line
  naming the path and the problem, exit code 1.

Finished units are whole directories renamed into place with a DONE marker, so none is lost; the one
being written is a hidden staging directory, removed on the error or, if the process died first, by
:func:`remove_staging` when the run is resumed. The response cache is SQLite in WAL mode: a write that
fails is rolled back, and the file stays usable.

Examples
--------
>>> failed_write_line(sqlite3.OperationalError("database or disk is full"), "/runs/r1/cache.sqlite")
'/runs/r1/cache.sqlite: no space left on device'
>>> failed_write_line(OSError("Error writing bytes to file. Detail: [errno 28] No space left on device"), "/runs/r1")
'/runs/r1: no space left on device'
"""
from __future__ import annotations

import errno
import os
import shlex
import shutil
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from pathlib import Path

from pvsst.core.errors import RunStopped, os_error_line
from pvsst.core.gateway_options import option_of
from pvsst.experiments.run.manifest import RunManifest, utc_now

EXIT_WRITE_FAILED = 1
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like ``KeyboardInterrupt`` is for SIGINT."""

    signum = signal.SIGTERM


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


def failed_write_line(err: BaseException, fallback: str | Path | None = None) -> str:
    """``PATH: problem`` for an ``OSError`` (:func:`~pvsst.core.errors.os_error_line`) or SQLite's disk-full /
    read-only error: the path it names, else ``fallback``; the problem in the system's words, lower case."""
    if isinstance(err, sqlite3.Error):
        code = errno.ENOSPC if "full" in str(err) else errno.EROFS if "readonly" in str(err) else None
        problem = os.strerror(code).lower() if code else " ".join(str(err).split())[:200]
        return f"{fallback}: {problem}" if fallback is not None else problem
    return os_error_line(err, fallback)


def _is_write_failure(err: BaseException) -> bool:
    if isinstance(err, OSError):
        return True
    text = str(err)
    return isinstance(err, sqlite3.OperationalError) and ("disk" in text or "readonly" in text
                                                          or "unable to open" in text)


@contextmanager
def guarded_run(manifest: RunManifest, *, what: str, unit: str, total: int, finished: Callable[[], int],
                resume: str, cache_path: str | Path | None = None) -> Iterator[None]:
    """Run the body with SIGTERM raised as :class:`Terminated`; turn an interruption or a failed write
    into :class:`~pvsst.core.errors.RunStopped` (see the module docstring).

    ``what`` names the run (``study quickstart``), ``unit`` its units (``trials``), ``finished()`` counts
    the finished units now in the store, ``resume`` is the command that resumes it, ``cache_path`` the
    response cache (named when SQLite reports the disk full). The manifest's current ``runs`` entry records the stop.
    """
    main = threading.current_thread() is threading.main_thread()
    previous = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS} if main else {}
    if main:
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except (KeyboardInterrupt, Terminated) as err:
        if main:
            for signum in _STOP_SIGNALS:  # a second Ctrl-C while stopping changes nothing
                signal.signal(signum, signal.SIG_IGN)
        signum = getattr(err, "signum", signal.SIGINT)
        name = signal.Signals(signum).name
        done = finished()
        manifest.update_run(interrupted={"signal": name, "at": utc_now(), "finished": done, "total": total})
        try:
            manifest.save()
        except OSError:
            pass  # the run folder itself is what failed: the line below still says what happened
        raise RunStopped(f"interrupted by {name}: {what} stopped with {done} of {total} {unit} finished "
                         f"(each finished one is kept); resume with: {resume}", 128 + signum) from None
    except (OSError, sqlite3.OperationalError) as err:
        if not _is_write_failure(err):
            raise
        line = failed_write_line(err, cache_path if isinstance(err, sqlite3.Error) else manifest.path.parent)
        done = finished()
        manifest.update_run(write_failed={"error": line, "at": utc_now(), "finished": done})
        try:
            manifest.save()
        except OSError:
            pass
        raise RunStopped(f"cannot write {line}; {what} stopped with {done} of {total} {unit} finished "
                         f"(each finished one is kept); free the space or fix the folder, then resume with: "
                         f"{resume}", EXIT_WRITE_FAILED) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def preparing(run_dir: str | Path, resume: str) -> Iterator[None]:
    """Turn an ``OSError`` while a run writes its inputs into its folder (before any unit runs) into
    :class:`~pvsst.core.errors.RunStopped`: one line naming the path and the problem, exit code 1."""
    try:
        yield
    except OSError as err:
        raise RunStopped(f"cannot write {failed_write_line(err, run_dir)}; no unit was run; fix it, then "
                         f"run: {resume}", EXIT_WRITE_FAILED) from None


@contextmanager
def spawning_quietly() -> Iterator[None]:
    """Start worker processes inside this block with SIGINT and SIGTERM blocked: a spawned process
    inherits the signal mask, so Ctrl-C at the terminal (sent to every process of the group) reaches
    the driver alone, even while a worker is still importing; the driver stops its workers itself.
    Signals that arrive meanwhile are delivered to the driver when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, set(_STOP_SIGNALS))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def start_resource_tracker_quietly() -> None:
    """Start multiprocessing's resource tracker with its stderr on ``/dev/null``, unless it runs already.

    A stopped run kills its worker processes and leaves without joining the pool, so the pool's
    semaphores are still registered when the driver exits; the tracker then unlinks them, as it
    should, but also prints a ``leaked semaphore`` warning after the run's one-line message. The
    tracker inherits the driver's stderr when it starts, so it is started here with stderr pointed
    elsewhere for the instant of its start.

    Examples
    --------
    >>> start_resource_tracker_quietly()  # idempotent: a running tracker is left as it is
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def ignore_interrupts() -> None:
    """A worker's initializer: SIGINT is the driver's to handle (see :func:`spawning_quietly`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def remove_staging(root: str | Path) -> int:
    """Remove the hidden staging directories (``.NAME.*.tmp``) a killed write left under ``root``;
    return how many. Only the driver writes a run store, so at a run's start none is in use.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / ".t1.abc.tmp").mkdir(); (root / "t2").mkdir()
    >>> remove_staging(root), sorted(p.name for p in root.iterdir())
    (1, ['t2'])
    """
    root = Path(root)
    if not root.is_dir():
        return 0
    stale = [p for p in root.iterdir() if p.is_dir() and p.name.startswith(".") and p.name.endswith(".tmp")]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return len(stale)


def gateway_words(overrides: dict) -> list[str]:
    """The command-line words that give the gateway ``overrides`` (field -> value) again
    (:data:`pvsst.core.gateway_options.GATEWAY_OPTIONS`).

    Examples
    --------
    >>> gateway_words({"max_concurrency": 2, "api_base": None})
    ['--max-concurrency', '2']
    """
    return [word for name, value in overrides.items() if value is not None
            for word in (option_of(name).flag, str(value))]


def resume_command(args: list, run_dir: str | Path, deviation: str | None = None, *, out: bool = True) -> str:
    """The ``pvsst`` command line that resumes a run into ``run_dir`` (a deviation is given again).

    Examples
    --------
    >>> resume_command(["survey", "run", "my survey.yaml"], "runs/s1", "pilot data")
    "pvsst survey run 'my survey.yaml' --out runs/s1 --deviation 'pilot data'"
    """
    words = (["pvsst", *map(str, args)] + (["--out", str(run_dir)] if out else [])
             + (["--deviation", deviation] if deviation else []))
    return " ".join(shlex.quote(word) for word in words)
