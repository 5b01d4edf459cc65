"""What a refused command shows: one line on stderr, ``pvsst: error: ...``, naming the problem and no
traceback (a researcher must see at once what to fix)."""
from __future__ import annotations

from pvsst.experiments.cli import main


def error_line(capture) -> str:
    """The stderr a refused command wrote, read from ``capture`` (``capsys``, or ``capfd`` where the error
    may come from another layer): exactly one line, starting ``pvsst: error: ``."""
    err = capture.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("pvsst: error: "), err
    return err


def refused(capture, argv: list[str]) -> str:
    """Run ``pvsst`` with ``argv``: it must exit 2 with one error line, which is returned."""
    assert main(argv) == 2
    return error_line(capture)
