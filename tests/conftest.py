"""Shared test configuration.

This file puts ``tests/`` on ``sys.path``, so the helper modules beside it (``reference_paths``,
``engine_helpers``, ``runner_helpers``, ...) import from any test, benchmarks included.
"""
import os
import shutil
import tempfile
import time

import pytest

RAY_TMPDIR = pytest.StashKey[tuple]()


def pytest_configure(config):
    """Ray started by a test (``ray.init``, ``ray start``, in this process or a child) keeps its session
    folder in a temporary folder of this process, removed at the end: never ``/tmp/ray`` shared with
    other users of the machine, nor the working directory (where an empty ``TMPDIR`` sends it)."""
    config.stash[RAY_TMPDIR] = (os.environ.get("RAY_TMPDIR"), tempfile.mkdtemp(prefix="pvsst-ray-"))
    os.environ["RAY_TMPDIR"] = config.stash[RAY_TMPDIR][1]


def pytest_unconfigure(config):
    if RAY_TMPDIR not in config.stash:
        return
    previous, ours = config.stash[RAY_TMPDIR]
    shutil.rmtree(ours, ignore_errors=True)
    if previous is None:
        os.environ.pop("RAY_TMPDIR", None)
    else:
        os.environ["RAY_TMPDIR"] = previous


@pytest.fixture
def first_listed():
    """``scripted/first_listed``: a survey respondent that always answers the first option listed
    (``first_listed_provider``), registered for the test."""
    from pvsst.sim.llm.providers.registry import register_scripted_provider

    register_scripted_provider("first_listed", "first_listed_provider:FirstListedProvider")


@pytest.fixture
def show(capsys):
    """``print`` that bypasses pytest's output capture: benchmarks report their ratios with it."""
    def _show(*args, **kwargs):
        with capsys.disabled():
            print(*args, **kwargs)
    return _show


# The longest tests (one to three minutes each on 2 cores, measured with PVSST_TEST_TIMELINE), longest first.
LONGEST_FIRST = ("test_ray_cluster.py", "test_spec_coverage.py", "test_survey_spec_coverage.py",
                 "test_engine_embedded.py", "test_thread_study.py", "test_study_runner_crash_resume.py",
                 "test_survey_embedded.py")


def pytest_collection_modifyitems(config, items):
    """Modules with a slow test first, the longest of them at the very front, each module's tests kept
    together in their own order (a module-scoped fixture its slow and quick tests share is set up once).
    pytest-xdist (``--dist worksteal``) hands each worker a contiguous share of the list and an idle
    worker takes tests from the end of a busy one's queue, so the run ends on short tests instead of one
    worker finishing a two-minute test alone."""
    slow_modules = {item.path for item in items if hasattr(item, "path") and item.get_closest_marker("slow")}

    def rank(item) -> tuple[bool, int]:
        path = getattr(item, "path", None)
        name = path.name if path is not None else ""
        longest = LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
        return path not in slow_modules, longest

    items.sort(key=rank)


def pytest_runtest_logstart(nodeid, location):
    _timeline("start", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _timeline("end", nodeid)


def _timeline(event: str, nodeid: str) -> None:
    """With ``PVSST_TEST_TIMELINE=FILE``, append ``time worker event cpu test`` lines to FILE (to see which
    tests overlap, which one a run ends on, and what each costs: ``cpu`` is the worker's user + system
    seconds so far, its finished child processes included)."""
    path = os.environ.get("PVSST_TEST_TIMELINE")
    if path:
        cpu = sum(os.times()[:4])
        with open(path, "a") as timeline:
            timeline.write(f"{time.time():.2f} {os.environ.get('PYTEST_XDIST_WORKER', 'main')} {event} {cpu:.2f} "
                           f"{nodeid}\n")
