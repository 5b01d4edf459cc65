"""The code and the tests cite only documents that ship with the repository: the team's design brief
lives outside it, so no source file may name it (a reader of the package could not open it). The
byte-for-byte copy of PV-SST's published reference folder (``tests/data/pvsst_reference/``) is theirs
and is left as published. What users and the package read sends them to that copy, never to the folder
beside the checkout it was copied from (a clone does not have it)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRIEF = "DESIGN" + ".md"  # spelled in two parts so this file does not cite it either


def _tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()


def test_no_tracked_source_file_cites_the_design_brief():
    tracked = "\n".join(_tracked())
    sources = [ROOT / name for name in tracked.splitlines() if not name.startswith("tests/data/pvsst_reference/")
               and name.endswith((".py", ".md", ".yaml", ".yml", ".toml", ".txt")) or name == "Makefile"]
    citing = [str(path.relative_to(ROOT)) for path in sources
              if path.is_file() and BRIEF in path.read_text(errors="replace")]
    assert citing == [], citing


def test_docs_and_package_name_the_reference_copy_not_the_shared_folder():
    outside = re.compile(r"(?<![\w/])(\.\./)?shared/reference")
    readers = [name for name in _tracked() if name.endswith((".py", ".md", ".yaml", ".yml"))
               and not name.startswith("tests/")]
    naming = [f"{name}:{number}" for name in readers if (ROOT / name).is_file()
              for number, line in enumerate((ROOT / name).read_text(errors="replace").splitlines(), 1)
              if outside.search(line)]
    assert naming == [], f"say tests/data/pvsst_reference/ instead: {naming}"
    assert (ROOT / "tests" / "data" / "pvsst_reference" / "pvsst_v1_core_results.csv").is_file()
