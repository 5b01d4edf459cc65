"""A stopped run leaves without joining its process pool; the pool's semaphores are then cleaned up by
multiprocessing's resource tracker, which must not print a warning after the run's one-line message."""
from __future__ import annotations

import subprocess
import sys

import pytest

LEAK_ONE_SEMAPHORE = """
import multiprocessing, os
from pvsst.experiments.run.run_guard import start_resource_tracker_quietly
if {quiet}:
    start_resource_tracker_quietly()
lock = multiprocessing.get_context("spawn").Lock()
os._exit(0)
"""


@pytest.mark.parametrize("quiet", [False, True])
def test_the_tracker_cleans_up_without_a_word_only_when_started_quietly(quiet):
    done = subprocess.run([sys.executable, "-c", LEAK_ONE_SEMAPHORE.format(quiet=quiet)], capture_output=True,
                          text=True, timeout=120)
    # the tracker writes while the process exits; capture_output waits for every holder of the pipe
    assert done.returncode == 0
    if quiet:
        assert done.stderr == ""
    else:  # the control: without it, the warning reaches the driver's stderr
        assert "leaked semaphore" in done.stderr
