"""A three-node Ray cluster on this machine whose worker nodes do not see the driver's run folder.

Run by ``tests/experiments/test_ray_cluster.py`` as the first process of ``unshare --net --pid --fork --mount-proc``:
only loopback exists (Ray binds to 127.0.0.1), every process started here ends when this one does (it
is the PID namespace's init), and mounts made here are private to the namespace. The head has no CPUs,
so every block runs on one of two worker nodes (1 CPU each); each worker node runs in a mount
namespace of its own with an empty tmpfs over RUNS, the folder that holds the runs. The driver
(``pvsst run --executor ray``) runs here, beside the head, and sees the real RUNS.

Steps: start the cluster; check the worker nodes see RUNS empty; a clean run; a run during which one
worker node is killed (every process of it, SIGKILL) once some trials are done; the rerun; a run of
STUDY, a spec kept inside RUNS with its own materials directory, edge list and census persona pool (files
no worker node sees). Every driver is ``recording_driver.py``, which keeps the pickle of each block task
it submits in ``PAYLOADS/<step>/`` (PAYLOADS: the folder beside RESULT), so the test can assert that no
payload holds a path of the run. What each step measured is written to ``RESULT`` (JSON).

Usage: ``python ray_namespace_cluster.py SPEC RUNS RESULT STUDY``
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ADDRESS = "127.0.0.1:6379"
RAY = str(Path(sys.executable).with_name("ray"))
RECORDING_DRIVER = str(Path(__file__).with_name("recording_driver.py"))
# No log monitors: the drivers do not ask for workers' output (log_to_driver=False), so they would only
# poll log files (a Python process per node).
NODE_FLAGS = ["--node-ip-address", "127.0.0.1", "--disable-usage-stats", "--object-store-memory", str(100 * 2**20),
              "--include-log-monitor", "false"]
# A killed node is declared dead within a few seconds (defaults: ~30 s), so Ray reruns its task soon.
FAST_HEALTH_CHECKS = {"RAY_health_check_initial_delay_ms": "1000", "RAY_health_check_period_ms": "1000",
                      "RAY_health_check_timeout_ms": "1000", "RAY_health_check_failure_threshold": "3"}


def start_worker_node(runs: Path, env: dict) -> subprocess.Popen:
    """A worker node (raylet and its workers) in its own mount namespace with an empty tmpfs at RUNS and
    one of its own at /tmp/ray (a machine of its own: no session files or sockets shared with others)."""
    start = " ".join([RAY, "start", "--address", ADDRESS, "--num-cpus", "1", "--block", *NODE_FLAGS])
    mounts = f"mount -t tmpfs tmpfs {runs} && mount -t tmpfs tmpfs /tmp/ray"
    return subprocess.Popen(["unshare", "--mount", "sh", "-c", f"{mounts} && exec {start}"],
                            env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cluster_unavailable() -> str | None:
    """Why this cluster cannot run here (None when it can)."""
    import importlib.util
    import shutil

    if os.geteuid() != 0:
        return "namespaces and tmpfs mounts need root"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs unshare (util-linux) and ip (iproute2)"
    if importlib.util.find_spec("ray") is None:
        return "the ray extra is part of pvsst[dev]"
    return None


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (from /proc of this PID namespace)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def kill_node(node: subprocess.Popen) -> int:
    """SIGKILL every process of a worker node at once (a machine that died); return how many."""
    pids = descendants(node.pid)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    node.wait()
    return len(pids)


CHECK_NODES = """
import json, os, sys, time
t0 = time.monotonic()
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
ray.init(address=sys.argv[1], log_to_driver=False)
t1 = time.monotonic()
deadline = time.monotonic() + 180
while time.monotonic() < deadline:
    workers = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) > 0]
    if len(workers) == 2:
        break
    time.sleep(0.5)
t2 = time.monotonic()
@ray.remote(num_cpus=1)
def look(runs, sentinel):
    return {"entries": sorted(os.listdir(runs)), "sees_sentinel": os.path.exists(sentinel)}
seen = [ray.get(look.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                .remote(sys.argv[2], sys.argv[3])) for n in workers]
# A cache server asked for a file the driver's node lacks (a driver off the cluster) fails in one line.
from pvsst.experiments.run.ray_cache import start_cache_server
from pvsst.core.errors import InputError
try:
    start_cache_server(ray, sys.argv[4])
    elsewhere = "started"
except InputError as err:
    elsewhere = str(err)
print(json.dumps({"nodes": len(ray.nodes()), "worker_nodes": len(workers), "seen": seen, "init_s": round(t1 - t0, 1),
                  "nodes_s": round(t2 - t1, 1), "look_s": round(time.monotonic() - t2, 1),
                  "cache_elsewhere": elsewhere}))
"""


def check_nodes(runs: Path, env: dict) -> dict:
    """Wait for both worker nodes; ask each what it sees at RUNS, where the driver put a file."""
    sentinel = runs / "written-by-the-driver"
    sentinel.write_text("x")
    elsewhere = runs / "elsewhere" / "cache.sqlite"  # its folder does not exist on any node
    out = subprocess.run([sys.executable, "-c", CHECK_NODES, ADDRESS, str(runs), str(sentinel), str(elsewhere)],
                         env=env, capture_output=True, text=True, timeout=300)
    sentinel.unlink()
    if out.returncode != 0:
        return {"error": out.stderr[-2000:]}
    # Ray may print its own lines after ours: the report is the last line that is a JSON object.
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": out.stdout[-2000:]}


def run_command(spec: Path, out: Path, payloads: Path) -> list[str]:
    return [sys.executable, RECORDING_DRIVER, str(payloads), "run", str(spec), "--out", str(out), "--executor", "ray",
            "--ray-address", ADDRESS, "--workers", "2"]


def finished(proc: subprocess.CompletedProcess | subprocess.Popen, stdout: str, started: float) -> dict:
    return {"rc": proc.returncode, "tail": stdout[-1500:], "wall_s": round(time.monotonic() - started, 1)}


def clean_run(spec: Path, out: Path, env: dict, payloads: Path) -> dict:
    started = time.monotonic()
    proc = subprocess.run(run_command(spec, out, payloads), env=env, capture_output=True, text=True, timeout=600)
    return finished(proc, proc.stdout + proc.stderr, started)


def done_trials(out: Path) -> list[str]:
    trials = out / "trials"
    return sorted(p.name for p in trials.iterdir() if (p / "DONE").is_file()) if trials.is_dir() else []


def cache_entries(out: Path) -> int:
    with sqlite3.connect(out / "cache.sqlite", timeout=30) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def run_killing_a_node(spec: Path, out: Path, env: dict, payloads: Path, node: subprocess.Popen,
                       after_done: int) -> dict:
    """Start a run; once ``after_done`` trials are done and the next blocks are under way, kill ``node``."""
    started = time.monotonic()
    log = out.with_suffix(".log")
    with log.open("w") as sink:
        proc = subprocess.Popen(run_command(spec, out, payloads), env=env, stdout=sink, stderr=subprocess.STDOUT)
        while proc.poll() is None and len(done_trials(out)) < after_done and time.monotonic() - started < 400:
            time.sleep(0.05)
        time.sleep(1.0)  # the freed worker is into its next block
        at_kill = {"done": done_trials(out), "cache_entries": cache_entries(out),
                   "run_still_going": proc.poll() is None}
        at_kill["killed_processes"] = kill_node(node)
        try:
            proc.wait(timeout=300)
        except subprocess.TimeoutExpired:  # reported as rc None; the test fails on it
            proc.kill()
            proc.wait()
            return {"rc": None, "tail": log.read_text()[-1500:], "at_kill": at_kill}
    return {**finished(proc, log.read_text(), started), "at_kill": at_kill}


def main(spec: Path, runs: Path, result: Path, study: Path) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    Path("/tmp/ray").mkdir(exist_ok=True)
    # This cluster's session files, private to the namespace (and gone with it).
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/tmp/ray"], check=True)
    # Token authentication, with a token of this cluster's own (not the user's ~/.ray/auth_token). Every
    # node keeps its session files in the namespace's /tmp/ray, whatever RAY_TMPDIR or TMPDIR the test
    # session has (an empty TMPDIR would put them in the working directory).
    env = {**os.environ, **FAST_HEALTH_CHECKS, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_TMPDIR": "/tmp"}
    report: dict = {}
    started = time.monotonic()
    try:
        head = subprocess.run([RAY, "start", "--head", "--port", ADDRESS.split(":")[1], "--num-cpus", "0",
                               "--include-dashboard", "false", *NODE_FLAGS], env=env, capture_output=True, text=True,
                              timeout=300)
        if head.returncode != 0:  # the test prints the end of this process's output: say why
            raise RuntimeError(f"ray start --head exited {head.returncode}: {(head.stdout + head.stderr)[-2500:]}")
        head_s = round(time.monotonic() - started, 1)
        nodes = [start_worker_node(runs, env) for _ in range(2)]
        report["cluster"] = {**check_nodes(runs, env), "head_s": head_s, "wall_s": round(time.monotonic() - started, 1)}
        if report["cluster"].get("worker_nodes") != 2:
            return  # the test reports what the check saw
        payloads = result.parent / "payloads"
        report["clean"] = clean_run(spec, runs / "clean", env, payloads / "clean")
        report["killed"] = run_killing_a_node(spec, runs / "killed", env, payloads / "killed", nodes[0], after_done=4)
        report["rerun"] = clean_run(spec, runs / "killed", env, payloads / "rerun")
        report["study"] = clean_run(study, runs / "study-ray", env, payloads / "study")
    finally:
        result.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
