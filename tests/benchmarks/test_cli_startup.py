"""Benchmark: the start of ``pvsst --help`` and ``pvsst run --help`` against ``python -c pass``.

Each command is started as a new process (the console script's interpreter, bytecode already
compiled) five times, side by side with ``python -c pass``; printed: the median wall time of each and
its ratio to ``python -c pass``. The target is under 0.3 s each; what makes it deterministic is checked
in ``tests/experiments/test_cli_imports.py`` (no pandas, litellm or :mod:`pvsst.sim` at start).
Asserted: the commands succeed (nothing about the times).
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.benchmark

PVSST = Path(sys.executable).with_name("pvsst")
REPEATS = 5


def _median_seconds(command: list[str]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def test_cli_start_against_an_empty_interpreter():
    commands = {"python -c pass": [sys.executable, "-c", "pass"], "pvsst --help": [str(PVSST), "--help"],
                "pvsst run --help": [str(PVSST), "run", "--help"]}
    for command in commands.values():  # warm: bytecode written, files in the page cache
        subprocess.run(command, check=True, capture_output=True)
    seconds = {name: _median_seconds(command) for name, command in commands.items()}
    base = seconds["python -c pass"]
    for name, value in seconds.items():
        print(f"{name:18s} {value:6.3f} s  ({value / base:5.1f}x python -c pass)")
