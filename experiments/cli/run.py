"""`pvsst run`: run (or resume) a frozen study spec into a run directory."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pvsst.core.errors import InputError
from pvsst.experiments.cli.folder_options import RETRY_DEGRADED, out_option
from pvsst.experiments.cli.gateway_options import gateway_options
from pvsst.experiments.cli.lazy import lazy_module
from pvsst.experiments.cli.summary import print_summary

runner = lazy_module("pvsst.experiments.study.runner")
thread_runner = lazy_module("pvsst.experiments.threads.runner")
spec_kind = lazy_module("pvsst.experiments.spec.thread_study")
epidemic_kind = lazy_module("pvsst.experiments.spec.epidemic_study")
epidemic_runner = lazy_module("pvsst.experiments.epidemic.runner")


@gateway_options()
def run(
    spec: Path = typer.Argument(..., help="Study spec (YAML), frozen with `pvsst prereg freeze`."),
    out: Path = out_option("Run directory: new or empty (created), or a run of this spec (resumed)."),
    executor: Optional[str] = typer.Option(None, "--executor",
                                           help="local (process pool) or ray; default: the spec's."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Trials in parallel; default: the spec's."),
    replay_only: bool = typer.Option(False, "--replay-only",
                                     help="Serve every call from the run's cache; a miss stops the run (exit 4)."),
    deviation: Optional[str] = typer.Option(
        None, "--deviation", help="Run a changed or unfrozen spec; the text is recorded in the manifest."),
    budget: Optional[float] = typer.Option(None, "--budget",
                                           help="Spending cap in USD; reaching it stops the run cleanly (exit 3)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Address of a running Ray cluster."),
    retry_degraded: bool = RETRY_DEGRADED,
    gateway: dict | None = None,
) -> None:
    """Run every trial of a frozen spec (every thread of a `schedule: threads` spec, every replicate of a
    `schedule: epidemic` spec); skips those already DONE (resume).

    The gateway options override the spec's execution section for this run (recorded in the manifest
    as a deviation); a resumed run is given them again. OUT must be new, empty or a run of this spec; a
    second command on the same folder while this one runs is refused (exit 2), naming this one.
    --retry-degraded runs the degraded trials again.

    Exit codes: 0 all trials done; 1 some trials failed, or are degraded (more of their model calls
    failed than the spec's analysis.parse_failure_threshold; both recorded in the manifest), or a write
    failed (no space, permissions); 2 bad input (unfrozen or changed spec, invalid spec); 3 budget
    reached; 4 replay-only cache miss; 130 / 143 stopped by Ctrl-C / SIGTERM (rerun to resume).
    """
    if epidemic_kind.is_epidemic_spec(spec):
        given = {"--executor": executor, "--replay-only": replay_only or None, "--budget": budget,
                 "--ray-address": ray_address, "--retry-degraded": retry_degraded or None,
                 **{f"--{name.replace('_', '-')}": value for name, value in (gateway or {}).items()}}
        for option, value in given.items():
            if value is not None:
                raise InputError(str(spec), option, "an epidemic spec makes no model call: the option does not apply")
        print_summary(epidemic_runner.run_epidemic(spec, out, deviation=deviation, workers=workers))
        return
    run_spec = thread_runner.run_thread_study if spec_kind.is_thread_spec(spec) else runner.run_study
    summary = run_spec(spec, out, executor=executor, workers=workers, replay_only=replay_only, deviation=deviation,
                       budget_usd=budget, ray_address=ray_address, gateway=gateway, retry_degraded=retry_degraded)
    print_summary(summary)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
