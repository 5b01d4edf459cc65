"""The runnable examples in the docstrings of the spec, preregistration, design and estimate modules."""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODULES = ("experiments.spec", "experiments.spec_base", "experiments.spec_trial", "experiments.spec_analysis",
           "experiments.spec_yaml", "experiments.design", "experiments.prereg", "experiments.estimate")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, monkeypatch):
    monkeypatch.chdir(REPO)  # the examples name shipped specs relative to the repository root
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
