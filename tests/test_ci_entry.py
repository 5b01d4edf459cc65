"""``.ci/run`` fails, naming the paths, when ``make test`` leaves anything in the checkout: an untracked
or changed file, or an ignored one (a run folder, Ray's session folder) other than the environment,
bytecode and pytest's cache. It runs here in a throwaway repository whose ``make test`` writes files."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _checkout(folder: Path, recipe: str) -> Path:
    (folder / ".ci").mkdir(parents=True)
    shutil.copy2(ROOT / ".ci" / "run", folder / ".ci" / "run")
    shutil.copy2(ROOT / ".gitignore", folder / ".gitignore")
    (folder / "Makefile").write_text(f"test:\n\t{recipe}\n")
    (folder / "pkg").mkdir()
    (folder / "pkg" / "module.py").write_text("")
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@localhost"]
    subprocess.run([*git, "init", "-q"], cwd=folder, check=True)
    subprocess.run([*git, "add", "-A"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=folder, check=True)
    return folder


def _ci(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(folder / ".ci" / "run")], cwd=folder, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("make") is None, reason="needs git and make")
def test_ci_fails_on_what_the_tests_leave_and_passes_on_what_installing_makes(tmp_path):
    clean = _checkout(tmp_path / "clean", "mkdir -p .venv/bin .pytest_cache pkg/__pycache__ && "
                                          "touch .venv/bin/python pkg/__pycache__/module.pyc .pytest_cache/v")
    passed = _ci(clean)
    assert passed.returncode == 0 and "left the checkout clean" in passed.stdout, passed.stderr

    dirty = _checkout(tmp_path / "dirty", "mkdir -p ray/session_1 runs/quick && touch ray/session_1/log "
                                          "runs/quick/manifest.json stray.csv && echo x > pkg/module.py")
    failed = _ci(dirty)
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert lines[0].startswith("ci: the checkout is not clean after make test")
    assert sorted(lines[1:]) == sorted([" M pkg/module.py", "?? stray.csv", "!! ray/", "!! runs/"])
