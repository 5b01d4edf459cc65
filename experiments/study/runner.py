"""The study runner: frozen spec -> design -> trials (resumable) -> run store, through the run kernel.

``run_study`` refuses a spec that is not frozen or has changed since it was frozen unless a deviation
is given (recorded in the manifest with both hashes). It skips trials whose directory has DONE, so a
killed run resumes where it stopped; one response cache per run directory means a resumed trial replays
its finished calls instead of repeating them. ``gateway`` overrides fields of the spec's gateway
configuration (:class:`~pvsst.sim.llm.config.GatewayConfig`), recorded in the manifest as a deviation;
``trial_ids`` runs only those trials of the design (``pvsst simulate``: a one-trial study). A spec with
an ``audit`` section then runs its first-round audit (:mod:`pvsst.experiments.audit.job`).
``retry_degraded`` runs the degraded units of an earlier session again.

``run_dir`` must be new, empty or a run folder of this spec (:func:`pvsst.core.run_folder.check_run_folder`);
the run holds its lock from start to end (:func:`pvsst.core.run_folder.run_folder_lock`), so a second
run on the same folder is refused, naming the first.

Examples
--------
>>> summary = run_study("experiments/specs/scripted_smoke.yaml", "/tmp/pvsst-doctest-run",
...                     progress=False)  # doctest: +SKIP
>>> summary.line()  # doctest: +SKIP
'32 trials: 32 done, 0 failed, 0 skipped; 10176 calls, 0 cache hits, $0.0000'
"""
from __future__ import annotations

from pathlib import Path

from pvsst.core.run_folder import claimed_run_folder
from pvsst.experiments.audit.job import audit_job, check_members
from pvsst.experiments.run.kernel import run_units
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.study.input import open_study
from pvsst.experiments.study.job import check_options, study_job


def run_study(spec_path: str | Path, run_dir: str | Path, *, executor: str | None = None,
              workers: int | None = None, replay_only: bool = False, deviation: str | None = None,
              budget_usd: float | None = None, ray_address: str | None = None, progress: bool = True,
              gateway: dict | None = None, trial_ids: list[str] | None = None,
              retry_degraded: bool = False) -> RunSummary:
    """Run (or resume) every trial of a frozen spec into ``run_dir``; see the module docstring."""
    study = open_study(spec_path, deviation, gateway, trial_ids)
    members = None if trial_ids else check_members(study)  # a bad audit setting stops the run before any trial
    check_options(workers, budget_usd)
    options = dict(executor=executor, workers=workers, replay_only=replay_only, budget_usd=budget_usd,
                   ray_address=ray_address, progress=progress, retry_degraded=retry_degraded)
    with claimed_run_folder(run_dir):
        summary = run_units(study_job(study, Path(run_dir), **options))
        if members is not None and not summary.stopped:
            summary.then = run_units(audit_job(study, Path(run_dir), members, spent=summary, **options))
    return summary
