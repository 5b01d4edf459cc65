"""The code and the tests cite only documents that ship with the repository: the team's design brief
lives outside it, so no source file may name it (a reader of the package could not open it). The
byte-for-byte copy of PV-SST's published reference folder (``tests/data/pvsst_reference/``) is theirs
and is left as published."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRIEF = "DESIGN" + ".md"  # spelled in two parts so this file does not cite it either


def test_no_tracked_source_file_cites_the_design_brief():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    sources = [ROOT / name for name in tracked.splitlines() if not name.startswith("tests/data/pvsst_reference/")
               and name.endswith((".py", ".md", ".yaml", ".yml", ".toml", ".txt")) or name == "Makefile"]
    citing = [str(path.relative_to(ROOT)) for path in sources if path.is_file() and BRIEF in path.read_text(errors="replace")]
    assert citing == [], citing
