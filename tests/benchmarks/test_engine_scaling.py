"""Engine cost per agent-round under `scripted/imitate` stays flat with size.

Each size runs in its own process (so peak memory is that size's own), on a Barabasi-Albert follow
graph (m=3) with followee feeds: one interpreter imports the engine once and forks a fresh child per
size (the child's peak RSS counts from the fork, as a new process's would from its start). Prints agent-rounds per
second, the time per agent-round relative to
the smallest size, and peak RSS. Asserts correctness only (every call ok, every agent posted every round).

Default sizes keep `make test` short: 200 / 600 / 2,000 agents x 2 rounds. The full sizes
(1,000 / 10,000 / 100,000 agents x 5 rounds, about 30 minutes on 2 busy cores) run with
``PVSST_BENCH_FULL=1`` (``make bench``).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import pytest

FULL = os.environ.get("PVSST_BENCH_FULL") == "1"
SIZES = (1_000, 10_000, 100_000) if FULL else (200, 600, 2_000)
ROUNDS = 5 if FULL else 2


def measure(n_agents: int, n_rounds: int) -> dict:
    from pvsst.sim.llm.config import GatewayConfig
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.network import NetworkSpec
    from pvsst.sim.topics import get_topic
    from pvsst.sim.trial.run import run_trial
    from pvsst.sim.trial.settings import TrialSetup

    config = TrialSetup(trial_id=f"bench{n_agents}", model_name="scripted/imitate", topic=get_topic("ai_labels"),
                         condition="likes", seed=1, n_agents=n_agents, n_rounds=n_rounds,
                         network=NetworkSpec(kind="barabasi_albert", m=3), feed_candidates="followees",
                         request_seed_formula="hashed")
    gateway = Gateway(GatewayConfig(max_concurrency=64))
    started = time.perf_counter()
    result = run_trial(config, gateway)
    elapsed = time.perf_counter() - started
    return {"n_agents": n_agents, "rounds": n_rounds, "seconds": elapsed,
            "posts": len(result.posts), "ok_calls": int((result.llm_calls["status"] == "ok").sum()),
            "calls": len(result.llm_calls), "exposures": len(result.exposures),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


@pytest.mark.benchmark
@pytest.mark.slow
def test_cost_per_agent_round_is_flat_across_sizes(capsys):
    done = subprocess.run([sys.executable, __file__, str(ROUNDS), *map(str, SIZES)], capture_output=True, text=True,
                          timeout=7200)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.strip().splitlines()[-len(SIZES):]]
    assert [row["n_agents"] for row in rows] == list(SIZES)
    for n, row in zip(SIZES, rows):
        assert row["posts"] == n * ROUNDS and row["ok_calls"] == row["calls"] == 2 * n * ROUNDS
    base = rows[0]["seconds"] / (rows[0]["n_agents"] * ROUNDS)
    with capsys.disabled():
        print(f"\nengine scaling, scripted/imitate, Barabasi-Albert m=3, {ROUNDS} rounds"
              f"{' (full sizes)' if FULL else ' (quick sizes; PVSST_BENCH_FULL=1 for 1k/10k/100k x 5)'}")
        for row in rows:
            per = row["seconds"] / (row["n_agents"] * ROUNDS)
            print(f"  {row['n_agents']:>7} agents: {row['seconds']:8.1f} s, "
                  f"{row['n_agents'] * ROUNDS / row['seconds']:8.0f} agent-rounds/s, "
                  f"time per agent-round x{per / base:.2f} of the smallest, peak RSS {row['peak_rss_mib']:.0f} MiB")


def measure_each_in_a_child(n_rounds: int, sizes: list[int]) -> None:
    """Import the engine once, then measure each size in a child forked for it; print one JSON line per size."""
    import pvsst.sim.trial.run  # noqa: F401 - imported here once, not in every child

    for n_agents in sizes:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            code = 1
            try:
                os.write(write_end, json.dumps(measure(n_agents, n_rounds)).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            line = pipe.read().decode()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"the child measuring {n_agents} agents failed (status {status})")
        print(line, flush=True)


if __name__ == "__main__":
    measure_each_in_a_child(int(sys.argv[1]), [int(n) for n in sys.argv[2:]])
