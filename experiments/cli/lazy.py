"""How a command reaches what it runs: a module named at the top of the command module, imported on first use.

``pvsst --help`` and ``pvsst run --help`` must answer at once, but the code a command runs (the run
kernel and the jobs, the analysis, litellm, pandas, rich's tables) takes seconds to import. So a command
module imports at its top only typer and light modules of its own package and of :mod:`pvsst.core`,
and names every other module it uses with :func:`lazy_module`::

    runner = lazy_module("pvsst.experiments.study.runner")

    def run(...):
        summary = runner.run_study(spec, out, ...)   # the module is imported here, once

This is the one way the command line defers an import: :func:`lazy_module` returns a stand-in that
imports the module (and its parent packages) with :func:`importlib.import_module` the first time one
of its attributes is read, and hands every attribute over from the module itself (so a test that
replaces a function of the module is seen). A reader follows ``runner.run_study`` to its module by
name, and ``tests/test_import_graph.py`` counts each named module as an import of the command module.
``tests/experiments/test_cli_imports.py`` checks
that ``pvsst --help`` imports none of pandas, litellm and :mod:`pvsst.sim`.

Examples
--------
>>> fractions = lazy_module("fractions")
>>> fractions.Fraction(1, 3) + 1
Fraction(4, 3)
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """The stand-in of a module not imported yet (see the module docstring)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(self.__name__), name)


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, imported the first time one of its attributes is read."""
    return LazyModule(name)
