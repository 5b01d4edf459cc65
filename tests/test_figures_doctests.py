"""The runnable examples in the docstrings of the figures and report modules."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ("analysis.figures.style", "analysis.figures.summaries", "analysis.figures.similarity",
           "analysis.figures.stance", "analysis.figures.forest", "analysis.figures.network",
           "analysis.figures.fidelity", "analysis.report.verdicts", "analysis.report.audits",
           "analysis.report.markdown", "analysis.report.html_page", "analysis.report.build")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
