"""A study run into a full filesystem: one line naming the path and the problem, exit 1, the finished
trials intact; a rerun with space completes it, equal to a clean run.

The filesystem is a real 1600 KiB tmpfs in a private mount namespace (``unshare -m``, as root), grown
with ``mount -o remount`` for the rerun; where that is not allowed, the test is skipped with the reason
and the in-process test below (a Parquet writer that raises ENOSPC) still runs.
"""
from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from runner_helpers import assert_same_run_store, small_smoke_spec, trial_dirs

from pvsst.experiments.cli import main
from pvsst.sim.llm.cache import ResponseCache


def _can_mount_tmpfs(where: Path) -> str:
    """'' when a private tmpfs can be mounted here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    where.mkdir()
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {where}"],
                           capture_output=True, text=True)
    return "" if probe.returncode == 0 else f"cannot mount a private tmpfs: {probe.stderr.strip()[:120]}"


SCRIPT = ("""set -u
mount -t tmpfs -o size=1600k tmpfs "$MNT"
"$PY" -m pvsst.experiments.cli run "$SPEC" --out "$MNT/run" --workers 2 >/dev/null 2>"$OUT/first.err"; """
          """echo $? >"$OUT/first.rc"
cp -a "$MNT/run" "$OUT/after_failure"
mount -o remount,size=64m "$MNT"
"$PY" -m pvsst.experiments.cli run "$SPEC" --out "$MNT/run" --workers 2 >/dev/null 2>"$OUT/second.err"; """
          """echo $? >"$OUT/second.rc"
cp -a "$MNT/run" "$OUT/final"
""")


@pytest.mark.slow
def test_a_study_run_into_a_tiny_tmpfs_fails_in_one_line_and_resumes_with_space(tmp_path):
    reason = _can_mount_tmpfs(tmp_path / "mnt")
    if reason:
        pytest.skip(reason)
    spec = small_smoke_spec(tmp_path / "spec", "[101, 211]")  # 16 small trials, ~1.4 MiB in all
    out = tmp_path / "out"
    out.mkdir()
    env = {"MNT": str(tmp_path / "mnt"), "SPEC": str(spec), "OUT": str(out), "PY": sys.executable}
    subprocess.run(["unshare", "-m", "bash", "-c", SCRIPT], env={**__import__("os").environ, **env}, check=True,
                   timeout=900)
    first_err = (out / "first.err").read_text().strip()
    assert (out / "first.rc").read_text().strip() == "1", first_err
    assert len(first_err.splitlines()) == 1 and "Traceback" not in first_err, first_err
    assert first_err.startswith(f"pvsst: cannot write {tmp_path / 'mnt' / 'run'}") and \
        "no space left on device" in first_err, first_err
    kept = trial_dirs(out / "after_failure")
    assert 0 < len(kept) < 16, len(kept)

    assert (out / "second.rc").read_text().strip() == "0", (out / "second.err").read_text()
    final = trial_dirs(out / "final")
    assert len(final) == 16 and not list((out / "final" / "trials").glob(".*"))
    for trial_id, folder in kept.items():  # the trials finished before the failure were kept as they were
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == \
            {p.name: p.read_bytes() for p in final[trial_id].iterdir()}, trial_id
    # The clean run is made in this process, one trial after another: stores do not depend on the
    # executor, so the pool's resumed store must equal it too (and no interpreter is started for it).
    clean = tmp_path / "clean"
    assert main(["run", str(spec), "--out", str(clean), "--workers", "1"]) == 0
    assert_same_run_store(clean, out / "final")
    cache = ResponseCache(out / "final" / "cache.sqlite")  # the cache the failed run wrote still serves
    assert len(cache) > 0 and cache.repeated_keys() == 0
    cache.close()


def test_a_parquet_writer_that_finds_no_space_stops_the_run_in_one_line(tmp_path, monkeypatch, capsys):
    import pvsst.experiments.run.store as store

    spec = small_smoke_spec(tmp_path / "spec", "[101]")  # 8 trials, in this process
    write_table, writes = store.write_table, []

    def full_disk(frame, path):
        writes.append(path)
        if len(writes) > 3 * 7:  # the 4th trial's first table: 3 trials fit
            raise OSError(f"Error writing bytes to file. Detail: [errno {errno.ENOSPC}] No space left on device")
        write_table(frame, path)

    monkeypatch.setattr(store, "write_table", full_disk)
    out = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(out), "--workers", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"pvsst: cannot write {out / 'trials'}") and "no space left on device" in err, err
    assert "3 of 8 trials finished" in err and "resume with: pvsst run" in err, err
    assert len(trial_dirs(out)) == 3
    assert not [p for p in (out / "trials").iterdir() if p.name.startswith(".")]  # the staging dir is gone

    monkeypatch.setattr(store, "write_table", write_table)
    assert main(["run", str(spec), "--out", str(out), "--workers", "1"]) == 0
    assert main(["run", str(spec), "--out", str(tmp_path / "clean"), "--workers", "1"]) == 0
    assert_same_run_store(tmp_path / "clean", out)


def test_a_survey_run_whose_folder_turns_read_only_stops_in_one_line_and_resumes(tmp_path, monkeypatch, capsys):
    import yaml
    from builders import weighted_frame, weighted_instrument

    import pvsst.experiments.run.store as store
    from pvsst.experiments.prereg.freeze import freeze

    data = tmp_path / "answers.csv"
    weighted_frame(n=120).to_csv(data, index=False)
    spec = weighted_instrument(data)
    spec["execution"]["chunk_size"] = 20
    path = tmp_path / "survey.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    freeze(path)
    write_table, writes = store.write_table, []

    def read_only(frame, target):
        if Path(target).parent.parent.name == "units" and Path(target).parent not in writes:
            writes.append(Path(target).parent)  # a unit's staging directory
        if len(writes) > 3:  # the 4th unit's first table
            raise OSError(errno.EROFS, "Read-only file system", str(target))
        write_table(frame, target)

    monkeypatch.setattr(store, "write_table", read_only)
    out = tmp_path / "run"
    assert main(["survey", "run", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "read-only file system" in err and str(out / "units") in err, err
    assert "3 of " in err and "units finished" in err, err
    assert len(list((out / "units").glob("*/DONE"))) == 3
    monkeypatch.setattr(store, "write_table", write_table)
    assert main(["survey", "run", str(path), "--out", str(out)]) == 0
    assert "3 skipped" in json.loads((out / "manifest.json").read_text())["runs"][-1]["summary"]
