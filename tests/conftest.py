"""Shared test configuration.

This file puts ``tests/`` on ``sys.path``, so the helper modules beside it (``reference_paths``,
``engine_helpers``, ``runner_helpers``, ...) import from any test, benchmarks included.
"""
import pytest


@pytest.fixture
def show(capsys):
    """``print`` that bypasses pytest's output capture: benchmarks report their ratios with it."""
    def _show(*args, **kwargs):
        with capsys.disabled():
            print(*args, **kwargs)
    return _show
