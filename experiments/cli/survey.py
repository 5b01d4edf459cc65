"""`pvsst survey run` and `pvsst survey score`: simulate a survey, then measure its distributional fidelity."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from pvsst.core.errors import InputError
from pvsst.core.run_folder import holds_run_folder
from pvsst.core.run_layout import SURVEY
from pvsst.experiments.cli.folder_options import RETRY_DEGRADED, out_option, run_argument
from pvsst.experiments.cli.gateway_options import gateway_options
from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module
from pvsst.experiments.cli.report import report_command
from pvsst.experiments.cli.summary import print_summary

rich_console = lazy_module("rich.console")
rich_table = lazy_module("rich.table")
survey_score = lazy_module("pvsst.analysis.survey.score")
run_store = lazy_module("pvsst.analysis.store.reader")
audit_report = lazy_module("pvsst.analysis.report.survey.audit")
survey_runner = lazy_module("pvsst.experiments.survey.runner")

survey_app = command_group("Simulate survey answers and score them against real survey data.")


@survey_app.command("run")
@gateway_options()
def run(
    survey: Path = typer.Argument(..., help="Survey instrument (YAML), frozen with `pvsst prereg freeze`."),
    out: Path = out_option("Run directory: new or empty (created), or a run of this instrument (resumed)."),
    model: Optional[List[str]] = typer.Option(None, "--model",
                                              help="Model to ask (repeat for several); overrides the instrument's "
                                              "(recorded as a deviation)."),
    personas: Optional[str] = typer.Option(None, "--personas",
                                           help="respondents (matched to real respondents) or census."),
    n: Optional[int] = typer.Option(None, "--n", help="Number of personas; overrides the instrument's."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Run seed (request seeds derive from it)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Units in parallel (processes)."),
    replay_only: bool = typer.Option(False, "--replay-only",
                                     help="Serve every call from the run's cache; a miss stops the run (exit 4)."),
    deviation: Optional[str] = typer.Option(None, "--deviation",
                                            help="Run a changed or unfrozen instrument; the text is recorded in the "
                                            "manifest."),
    elicitation: Optional[str] = typer.Option(None, "--elicitation",
                                              help="sample, logprobs or verbalized for every condition (default: each "
                                              "condition's own)."),
    retry_degraded: bool = RETRY_DEGRADED,
    gateway: dict | None = None,
) -> None:
    """Ask every persona every question under every condition (every model), plus the reference controls.

    The instrument must be frozen and unchanged (else exit 2) unless --deviation is given; --model,
    --personas, --n, --seed and the gateway options (--max-concurrency, --requests-per-minute,
    --request-timeout, --api-base, --structured-output) are recorded in the manifest as deviations.
    The data must be as frozen (its sha256 is in the lock) unless --deviation is given. OUT must be new,
    empty or a run of this instrument; --retry-degraded runs the degraded units again.
    Exit codes: 0 done; 1 some units failed, a write failed, or a unit or model is degraded (more of
    its calls failed than analysis.parse_failure_threshold); 2 bad input (also: changed data);
    4 replay-only cache miss; 130 / 143 stopped by Ctrl-C / SIGTERM (rerun to resume).
    """
    if personas is not None and personas not in ("respondents", "census"):
        raise InputError("--personas", personas, "must be respondents or census")
    if elicitation is not None and elicitation not in ("sample", "logprobs", "verbalized"):
        raise InputError("--elicitation", elicitation, "must be sample, logprobs or verbalized")
    summary = survey_runner.run_survey(survey, out, model=model or None, personas=personas, n=n, seed=seed,
                                       workers=workers, replay_only=replay_only, deviation=deviation,
                                       elicitation=elicitation, gateway=gateway, retry_degraded=retry_degraded)
    print_summary(summary)


def _cell(value: float) -> str:
    return "" if value != value else f"{value:.3f}".replace("-0.000", "0.000")


@survey_app.command("score")
@holds_run_folder
def score(
    run_dir: Path = run_argument("A survey run directory written by `pvsst survey run`."),
    draws: Optional[int] = typer.Option(None, "--draws", help="Bootstrap draws; default: the instrument's."),
) -> None:
    """Write RUN/analysis/fidelity.csv and print a per-question table (model beside the controls).

    A cell run (RUN/cells.parquet) also gets analysis/estimates.csv (post-stratified national, state and
    group shares) and, when the instrument sets data.geography, state_scores.csv, state_correlations.csv,
    state_pairs.csv and group_scores.csv (against the real survey, beside the yardsticks).
    With an audit section, also the counterfactual audit (RUN/analysis/audit.csv, audit_shares.csv,
    audit_groups.csv); where a stated (verbalized) condition pairs with an enacted one, the
    stated-vs-enacted consistency (RUN/analysis/consistency.csv, consistency_personas.csv).
    With a scenarios section, the decomposition of each decision (RUN/analysis/scenario_shares.csv,
    scenario_effects.csv) and, with a household factor, scenario_households.csv.
    Everything is computed before anything is written: bad input (exit 2) leaves no file behind."""
    scores = survey_score.score_run(run_dir, draws=draws)
    console = rich_console.Console(width=200, highlight=False)
    console.print(_fidelity_view(scores.summary(), scores.files["fidelity"][0]))
    if scores.cells is not None:
        for note in scores.cell_notes:
            console.print(f"[yellow]note:[/] {note}")
        console.print("wrote " + ", ".join(str(p) for p in scores.files["cells"]))
    if scores.audit is not None:
        rich_console.Console(width=200).print(_audit_view(scores.audit.questions, scores.files["audit"][0]))
        for line in audit_report.power_lines(scores.audit.questions):
            if line:
                console.print(line, markup=False)
    if scores.consistency is not None:
        rich_console.Console(width=200).print(_consistency_view(scores.consistency.summary,
                                                                scores.files["consistency"][0]))
    if scores.scenarios is not None:
        for question, result in scores.scenarios.by_question.items():
            parts = [f"{row.factor} {row.share:.1%}" for row in result.shares.itertuples()
                     if row.factor != "all factors"]
            console.print(f"scenario decomposition of {question} (share of explained deviance): " + ", ".join(parts))
        if scores.scenarios.households is not None:
            for row in scores.scenarios.households.itertuples():
                console.print(f"household chaining of {row.question} ({row.model} | {row.condition}): two adults "
                              f"agree {row.agreement:.3f}, correlation {row.correlation:.3f}")
        console.print("wrote " + ", ".join(str(p) for p in scores.files["scenarios"]))


def _fidelity_view(summary, path: Path) -> "rich_table.Table":
    view = rich_table.Table(title=f"Distributional fidelity (KL with smoothing; noise = 95% band of a perfect "
                            f"simulator) -> {path}")
    for column in summary.columns:
        if column in ("question", "model", "condition", "elicitation"):  # names are never cut; numbers give way
            view.add_column(column, justify="left", no_wrap=True,
                            min_width=max([len(column), *(len(str(v)) for v in summary[column])]))
        else:
            view.add_column(column, justify="right")
    for row in summary.itertuples(index=False):
        view.add_row(*[str(v) if isinstance(v, str) else _cell(float(v)) for v in row])
    return view


def _audit_view(questions, path: Path) -> "rich_table.Table":
    view = rich_table.Table(title=f"Counterfactual audit (BH-adjusted p; flagged / exceeds the arity-matched null; "
                            f"mde: the shift flagged with 80% power) -> "
                            f"{path}")
    columns = [c for c in ("model", "condition", "question", "n_sets", "flip_rate", "share_spread",
                           "member_tv", "null_share_spread", "omnibus_p_bh", "flagged", "mde",
                           "arity_p_bh", "exceeds_null")
               if c in questions and questions[c].notna().any()]
    for column in columns:
        view.add_column(column, justify="left" if column in ("model", "condition", "question") else "right",
                        no_wrap=column in ("model", "condition", "question"))
    for row in questions[columns].itertuples(index=False):
        view.add_row(*[v if isinstance(v, str) else str(v) if isinstance(v, (bool, int)) else _cell(float(v))
                       for v in row])
    return view


def _consistency_view(summary, path: Path) -> "rich_table.Table":
    overall = summary[summary["question"] == "all"]
    view = rich_table.Table(title=f"Stated vs enacted answers (total-variation distance, all questions) -> {path}")
    for column in ("model", "stated", "enacted", "metric", "value", "ci_low", "ci_high"):
        view.add_column(column, justify="left" if column in ("model", "stated", "enacted", "metric") else "right")
    for row in overall.itertuples(index=False):
        view.add_row(row.model, row.stated, row.enacted, row.metric, _cell(row.value), _cell(row.ci_low),
                     _cell(row.ci_high))
    return view


@survey_app.command("report")
def report(
    run_dir: Path = run_argument("A survey run directory written by `pvsst survey run`."),
    formats: str = typer.Option("md,html", "--format", help="Report formats, comma-separated: md, html."),
    figures: str = typer.Option("png,pdf", "--figures", help="Figure formats, comma-separated: png, pdf."),
) -> None:
    """Write RUN/report/ (the survey report; `pvsst report RUN` writes the same)."""
    if not run_store.is_survey_run(run_dir):
        raise InputError(run_dir, SURVEY, "not a survey run directory (run `pvsst survey run` first)")

    report_command(run=run_dir, formats=formats, figures=figures, from_table=None, out=None,
                   homophily_replicates=200)


def register(app: typer.Typer) -> None:
    app.add_typer(survey_app, name="survey")
