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


def pytest_collection_modifyitems(config, items):
    """Slow tests first. pytest-xdist (``--dist worksteal``) hands each worker a contiguous share of the
    list and an idle worker takes tests from the end of a busy one's queue, so with the long tests at the
    front the run ends on short ones instead of one worker finishing a two-minute test alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
