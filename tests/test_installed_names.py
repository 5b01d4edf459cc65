"""pvsst installs one import name, ``pvsst``, so a user's own ``analysis.py``, ``experiments/`` or
``sim.py`` (common names in research projects) can sit beside it.

The wheel test builds the wheel from a copy of the checkout, installs it into a fresh virtual
environment (the project's dependencies are made visible through a ``.pth`` file naming this
environment's site-packages, so nothing is downloaded; the editable install's finder there is not
loaded, as a ``.pth`` line adds a folder without reading the ``.pth`` files in it), and then runs
``pvsst run``, ``pvsst analyze`` and ``import pvsst.analysis`` from a folder holding the user's own
modules of those names, with that folder on ``PYTHONPATH``. The run's store must equal, table for table,
the same spec run by this checkout: the installed package computes the same numbers.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from runner_helpers import small_smoke_spec
from store_checksum import store_checksum

from pvsst.experiments.cli import main

REPO = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
SKIPPED = {"__pycache__"}


def shipped_folders() -> list[str]:
    """Every folder under a mapped source folder that holds a file, as the package name it installs as."""
    names = []
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = REPO / folder
        for path in sorted([base, *(p for p in base.rglob("*") if p.is_dir())]):
            rel = path.relative_to(base)
            if SKIPPED & set(rel.parts) or any(part.endswith(".egg-info") for part in rel.parts):
                continue
            if any(child.is_file() for child in path.iterdir()):
                names.append(".".join([name, *rel.parts]))
    return names


def test_package_list_covers_every_source_folder():
    """pyproject lists packages one by one (package-dir maps them); a folder added without an entry
    would be missing from the wheel."""
    assert sorted(SETUPTOOLS["packages"]) == sorted(shipped_folders())


def tracked_package_files() -> set[str]:
    """Files git tracks under the mapped folders, by the path they have inside the wheel."""
    listed = subprocess.run(["git", "ls-files", *SETUPTOOLS["package-dir"].values()], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.split()
    wheel_paths = set()
    for rel in listed:
        top, _, rest = rel.partition("/")
        package = next(name for name, folder in SETUPTOOLS["package-dir"].items() if folder == top)
        wheel_paths.add("/".join([*package.split("."), rest]))
    return wheel_paths


@pytest.mark.slow
def test_wheel_runs_beside_a_users_own_analysis_experiments_and_sim(tmp_path):
    # The wheel, built from a copy (the build writes build/ and egg-info where it runs).
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    for folder in SETUPTOOLS["package-dir"].values():
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(source)], check=True, capture_output=True, timeout=300)
    wheel = next(wheels.glob("pvsst-*.whl"))
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert not [name for name in in_wheel if name.split("/")[0] in ("sim", "personas", "experiments", "analysis")]
    if (REPO / ".git").exists():
        missing = {p for p in tracked_package_files() if not p.endswith(".pyc")} - in_wheel
        assert not missing, sorted(missing)[:10]

    # A fresh environment with only the wheel installed; the dependencies come from this one.
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-compile", "-q",
                    str(wheel)], check=True, capture_output=True, timeout=300)

    # The user's folder: modules of their own named like pvsst's packages, importable from there.
    user = tmp_path / "project"
    (user / "experiments").mkdir(parents=True)
    (user / "analysis.py").write_text("OWNER = 'user analysis.py'\n")
    (user / "sim.py").write_text("OWNER = 'user sim.py'\n")
    (user / "experiments" / "__init__.py").write_text("OWNER = 'user experiments/'\n")
    spec = small_smoke_spec(user / "study", "[101]")
    env = {**os.environ, "PYTHONPATH": str(user), "PVSST_CACHE": str(tmp_path / "cache.sqlite")}
    env.pop("VIRTUAL_ENV", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*args], cwd=user, env=env, capture_output=True, text=True, timeout=600)

    pvsst = str(env_dir / "bin" / "pvsst")   # the spec's lock was made by this checkout: the wheel accepts it
    ran = run(pvsst, "run", str(spec), "--out", "run", "--workers", "1")
    assert ran.returncode == 0, ran.stderr
    analyzed = run(pvsst, "analyze", "run")
    assert analyzed.returncode == 0, analyzed.stderr
    assert (user / "run" / "analysis" / "contrasts.csv").stat().st_size > 0
    # package data (census tables, card templates) is found inside the installed wheel
    synthesized = run(pvsst, "personas", "synth", "--n", "200", "--seed", "1", "--out", "people.parquet")
    assert synthesized.returncode == 0, synthesized.stderr
    shown = run(pvsst, "personas", "show", "people.parquet", "--card", "profile", "--n", "1")
    assert shown.returncode == 0 and shown.stdout.strip(), shown.stderr

    probe = run(str(python), "-c", "import analysis, experiments, sim, pvsst.analysis, pvsst.analysis.survey.fidelity, "
                "pvsst.experiments.cli; print(analysis.OWNER, experiments.OWNER, sim.OWNER, sep='|'); "
                "print(pvsst.analysis.__file__); print(pvsst.open_run('run').kind)")
    assert probe.returncode == 0, probe.stderr
    owners, location, kind = probe.stdout.strip().splitlines()
    assert owners == "user analysis.py|user experiments/|user sim.py"
    assert Path(location).is_relative_to(site) and kind == "study"

    # The same spec run by this checkout gives the same store.
    here = tmp_path / "checkout-run"
    assert main(["run", str(spec), "--out", str(here), "--workers", "1"]) == 0
    assert store_checksum(user / "run") == store_checksum(here)
