"""Help answers at once: ``pvsst --help`` and every command's ``--help`` import none of pandas, litellm,
pydantic, rich's console and :mod:`pvsst.sim` (the command modules import only typer and light modules; a
command's implementation is imported when it runs, :mod:`pvsst.experiments.cli.lazy`). Checked in a new
process, where nothing was imported before; the times are printed by ``tests/benchmarks/test_cli_startup.py``.
"""
from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pandas", "litellm", "pydantic", "rich.console", "numpy", "pvsst.sim", "pvsst.analysis")

PROBE = """
import contextlib, io, json, sys
from pvsst.experiments.cli import _command, main

def commands(group, path):
    for name in group.list_commands(None):
        sub = group.get_command(None, name)
        yield path + [name]
        if hasattr(sub, "list_commands"):
            yield from commands(sub, path + [name])

loaded = {}
with contextlib.redirect_stdout(io.StringIO()):
    main(["--help"])
    loaded["pvsst --help"] = sorted(sys.modules)
    for words in commands(_command(), []):
        main([*words, "--help"])
    loaded["every --help"] = sorted(sys.modules)
    main(["run", "--help"])
print(json.dumps(loaded))
"""


def test_help_imports_no_heavy_module():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out.splitlines()[-1])
    for what, modules in loaded.items():
        heavy = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
        assert heavy == [], what
    assert "pvsst.experiments.cli.run" in loaded["every --help"]  # the probe did reach the commands


def test_a_planted_heavy_import_is_seen():
    out = subprocess.run([sys.executable, "-c", "import json, sys, pandas; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    assert "pandas" in json.loads(out)
