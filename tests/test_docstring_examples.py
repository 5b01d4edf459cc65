"""Every docstring example of the installed ``pvsst`` package runs, under the module's installed name.

The source folders (``sim/``, ``personas/``, ...) are mapped to ``pvsst.sim``, ``pvsst.personas``, ... by
pyproject's ``package-dir``. pytest's ``--doctest-modules`` derives a module's name from its folders
(``sim/model.py`` would be module ``model`` of a top-level package ``sim``), which would execute each
module a second time under a name that is not installed: two copies of every class, provider registrations
run twice, tracebacks naming modules nobody can import. So the package folders are not test paths; this
file imports each module as ``import pvsst.<...>`` does, finds its examples with :mod:`doctest` and runs
each docstring as one test (pytest's default ``ELLIPSIS`` option, as ``--doctest-modules`` used).
``--doctest-modules`` still collects the helper modules under ``tests/``.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil
import tomllib
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def package_roots() -> list[str]:
    """The import names pyproject maps to a source folder (``pvsst``, ``pvsst.sim``, ...)."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return sorted(config["tool"]["setuptools"]["package-dir"])


def installed_modules() -> list[str]:
    """Every module under the package roots, by its installed name (``__main__`` modules left out:
    importing one runs the command)."""
    names: set[str] = set()
    for root in package_roots():
        package = importlib.import_module(root)
        names.add(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}.", onerror=_raise):
            if info.name.rpartition(".")[2] != "__main__":
                names.add(info.name)
    return sorted(names)


def _raise(name: str) -> None:
    raise ImportError(f"cannot import {name} while collecting docstring examples")


def docstring_examples() -> dict[str, doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found: dict[str, doctest.DocTest] = {}
    for name in installed_modules():
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if test.examples:
                found[test.name] = test
    return found


EXAMPLES = docstring_examples()


def test_examples_are_found_in_every_package():
    """The walk reaches each mapped folder: a broken mapping would silently run no examples."""
    packages = {name.split(".")[1] for name in EXAMPLES if name.count(".")}   # "pvsst" is the root's own
    assert {"core", "sim", "personas", "experiments", "analysis"} <= packages, sorted(packages)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_docstring_example(name: str):
    test = EXAMPLES[name]
    test.globs = dict(test.globs)      # a fresh namespace per run (the runner clears it afterwards)
    report: list[str] = []
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
