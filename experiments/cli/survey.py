"""`pvsst survey run` and `pvsst survey score`: simulate a survey, then measure its distributional fidelity."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from pvsst.experiments.cli.gateway_options import (API_BASE, MAX_CONCURRENCY, REQUEST_TIMEOUT, REQUESTS_PER_MINUTE,
                                                   STRUCTURED_OUTPUT, gateway_overrides)

survey_app = typer.Typer(help="Simulate survey answers and score them against real survey data.",
                         no_args_is_help=True)


@survey_app.command("run")
def run(
    survey: Path = typer.Argument(..., help="Survey instrument (YAML), frozen with `pvsst prereg freeze`."),
    out: Path = typer.Option(..., "--out", help="Run directory (created; an existing one is resumed)."),
    model: Optional[List[str]] = typer.Option(None, "--model", help="Model to ask (repeat for several); overrides the instrument's (recorded as a deviation)."),
    personas: Optional[str] = typer.Option(None, "--personas", help="respondents (matched to real respondents) or census."),
    n: Optional[int] = typer.Option(None, "--n", help="Number of personas; overrides the instrument's."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Run seed (request seeds derive from it)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Units in parallel (processes)."),
    replay_only: bool = typer.Option(False, "--replay-only", help="Serve every call from the run's cache; a miss stops the run (exit 4)."),
    deviation: Optional[str] = typer.Option(None, "--deviation", help="Run a changed or unfrozen instrument; the text is recorded in the manifest."),
    elicitation: Optional[str] = typer.Option(None, "--elicitation", help="sample, logprobs or verbalized for every condition (default: each condition's own)."),
    max_concurrency: Optional[int] = MAX_CONCURRENCY,
    requests_per_minute: Optional[int] = REQUESTS_PER_MINUTE,
    request_timeout: Optional[float] = REQUEST_TIMEOUT,
    api_base: Optional[str] = API_BASE,
    structured_output: Optional[str] = STRUCTURED_OUTPUT,
) -> None:
    """Ask every persona every question under every condition (every model), plus the reference controls.

    The instrument must be frozen and unchanged (else exit 2) unless --deviation is given; --model,
    --personas, --n, --seed and the gateway options (--max-concurrency, --requests-per-minute,
    --request-timeout, --api-base, --structured-output) are recorded in the manifest as deviations.
    The data must be as frozen (its sha256 is in the lock) unless --deviation is given.
    Exit codes: 0 done; 1 some units failed, a write failed, or a unit or model is degraded (more of
    its calls failed than analysis.parse_failure_threshold); 2 bad input (also: changed data);
    4 replay-only cache miss; 130 / 143 stopped by Ctrl-C / SIGTERM (rerun to resume).
    """
    from pvsst.experiments.cli.summary import print_summary
    from pvsst.experiments.survey.runner import run_survey

    if personas is not None and personas not in ("respondents", "census"):
        from pvsst.core.errors import InputError

        raise InputError("--personas", personas, "must be respondents or census")
    if elicitation is not None and elicitation not in ("sample", "logprobs", "verbalized"):
        from pvsst.core.errors import InputError

        raise InputError("--elicitation", elicitation, "must be sample, logprobs or verbalized")
    summary = run_survey(survey, out, model=model or None, personas=personas, n=n, seed=seed, workers=workers,
                         replay_only=replay_only, deviation=deviation, elicitation=elicitation,
                         gateway=gateway_overrides(max_concurrency=max_concurrency,
                                                   requests_per_minute=requests_per_minute,
                                                   request_timeout_s=request_timeout, api_base=api_base,
                                                   structured_output=structured_output))
    print_summary(summary)


def _cell(value: float) -> str:
    return "" if value != value else f"{value:.3f}".replace("-0.000", "0.000")


@survey_app.command("score")
def score(
    run_dir: Path = typer.Argument(..., help="A survey run directory written by `pvsst survey run`."),
    draws: Optional[int] = typer.Option(None, "--draws", help="Bootstrap draws; default: the instrument's."),
) -> None:
    """Write RUN/analysis/fidelity.csv and print a per-question table (model beside the controls)."""
    from pvsst.analysis.survey.scoring import question_summary, score_survey_run, write_fidelity

    table = score_survey_run(run_dir, draws=draws)
    path = write_fidelity(table, run_dir)
    summary = question_summary(table)
    view = Table(title=f"Distributional fidelity (KL with smoothing; noise = 95% band of a perfect simulator) -> {path}")
    for column in summary.columns:
        if column in ("question", "model", "condition", "elicitation"):  # names are never cut; numbers give way
            view.add_column(column, justify="left", no_wrap=True,
                            min_width=max([len(column), *(len(str(v)) for v in summary[column])]))
        else:
            view.add_column(column, justify="right")
    for row in summary.itertuples(index=False):
        view.add_row(*[str(v) if isinstance(v, str) else _cell(float(v)) for v in row])
    Console(width=200).print(view)


def register(app: typer.Typer) -> None:
    app.add_typer(survey_app, name="survey")
