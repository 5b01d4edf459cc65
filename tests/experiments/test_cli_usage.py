"""Command-line usage errors (a missing argument, an unknown option or command) are bad input like
any other: one line on stderr, exit 2, no traceback, in-process and as the installed command."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pvsst.experiments.cli import main

CASES = [(["run"], "Missing argument 'spec'"),
         (["run", "--bogus", "x"], "No such option: --bogus"),
         (["frobnicate"], "No such command 'frobnicate'")]


@pytest.mark.parametrize(("args", "fragment"), CASES)
def test_usage_errors_exit_2_with_one_line(args, fragment, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pvsst: error: ") and fragment in err and "\n" not in err, err


def test_the_installed_command_exits_2_without_a_traceback():
    command = Path(sys.executable).with_name("pvsst")
    done = subprocess.run([str(command), "run"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 2
    assert done.stderr.strip() == "pvsst: error: Missing argument 'spec'. (in pvsst run)", done.stderr
