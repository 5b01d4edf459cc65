"""Shared test configuration.

This file puts ``tests/`` on ``sys.path``, so the helper modules beside it (``reference_paths``,
``engine_helpers``, ``runner_helpers``, ...) import from any test, benchmarks included.
"""
import os

import pytest


@pytest.fixture
def show(capsys):
    """``print`` that bypasses pytest's output capture: benchmarks report their ratios with it."""
    def _show(*args, **kwargs):
        with capsys.disabled():
            print(*args, **kwargs)
    return _show


# The longest tests (one to three minutes each on 2 cores, measured with PVSST_TEST_TIMELINE), longest first.
LONGEST_FIRST = ("test_ray_cluster.py", "test_spec_coverage.py", "test_runner_crash_resume.py",
                 "test_engine_embedded.py", "test_survey_embedded.py", "test_survey_spec_coverage.py")


def pytest_collection_modifyitems(config, items):
    """Slow tests first, the longest spread over the workers. pytest-xdist (``--dist worksteal``) hands
    each of its W workers one contiguous W-th of the list, and an idle worker takes tests from the end of
    a busy one's queue. So each W-th starts with every W-th slow test (longest first) and ends on short
    ones: no worker is left finishing a two-minute test alone while the other idles."""
    def rank(item) -> tuple[bool, int]:
        name = item.path.name if hasattr(item, "path") else ""
        longest = LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
        return item.get_closest_marker("slow") is None, longest

    ordered = sorted(items, key=rank)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    slow = [item for item in ordered if item.get_closest_marker("slow") is not None]
    fast = ordered[len(slow):]
    share = -(-len(items) // workers)  # the size of each worker's first batch, rounded up
    chunks = [slow[k::workers] for k in range(workers)]
    for chunk in chunks:
        while len(chunk) < share and fast:
            chunk.append(fast.pop(0))
    items[:] = [item for chunk in chunks for item in chunk] + fast


def pytest_runtest_logstart(nodeid, location):
    _timeline("start", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _timeline("end", nodeid)


def _timeline(event: str, nodeid: str) -> None:
    """With ``PVSST_TEST_TIMELINE=FILE``, append ``time worker event test`` lines to FILE (to see which
    tests overlap and which one a run ends on)."""
    import os
    import time

    path = os.environ.get("PVSST_TEST_TIMELINE")
    if path:
        with open(path, "a") as timeline:
            timeline.write(f"{time.time():.2f} {os.environ.get('PYTEST_XDIST_WORKER', 'main')} {event} {nodeid}\n")
