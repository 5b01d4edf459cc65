"""`pvsst judge RUN --judge NAME`: stance judgments of every post of a run, with provenance and agreement.

Runs the judge job (:mod:`pvsst.experiments.judge.job`) through the run kernel, writes
``RUN/analysis/judgments/``, prints the calls made and the agreement of every pair of judges that judged
the run. A judge call that failed makes the command exit 1 (rerun it: the trials whose calls failed are
asked again, successful calls come from the cache).
"""
from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from pvsst.experiments.cli.folder_options import run_argument


def judge_command(
    run: Path = run_argument("A run directory (with manifest.json and trials/)."),
    judge: str = typer.Option(None, "--judge", help="`lexicon` or a model string (default: the spec's "
                              "analysis.stance_judge)."),
    materials: Path = typer.Option(None, "--materials", help="A directory holding judge_system.txt and "
                                   "judge.txt (default: pvsst's judge templates)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Request seed of every judge call."),
) -> None:
    """Judge the stance of every post of RUN and write RUN/analysis/judgments/."""
    from pvsst.analysis.store import load_run
    from pvsst.core.errors import InputError
    from pvsst.experiments.cli.summary import print_summary
    from pvsst.experiments.judge.job import judge_run

    if judge is None:
        if not (run / "manifest.json").is_file():
            load_run(run)  # the one-line error for a missing run
        spec = load_run(run).manifest.get("spec") or {}
        judge = (spec.get("analysis") or {}).get("stance_judge")
        if judge is None:
            raise InputError("pvsst judge", "--judge", "give a judge (`lexicon` or a model string); the run's "
                             "spec names none in analysis.stance_judge")
    result = judge_run(run, judge, materials=materials, seed=seed, progress=False)
    console = Console(highlight=False, soft_wrap=True)
    p = result.provenance
    if p:
        console.print(f"judge {p['judge']}: {p['judged']}/{p['posts']} posts judged; {p['calls']} calls, "
                      f"{p['cache_hits']} from the cache; wrote {result.table_path}", markup=False)
    for row in result.agreement.to_dict("records"):
        console.print(f"agreement {row['first_judge']} vs {row['second_judge']}: {int(row['n'])} posts, raw "
                      f"{row['raw_agreement']:.3f}, side {row['side_agreement']:.3f}, weighted kappa linear "
                      f"{row['kappa_linear']:.3f}, quadratic {row['kappa_quadratic']:.3f}", markup=False)
    if result.failed_calls:
        console.print(f"error: {result.failed_calls} of {p['calls']} judge calls failed "
                      f"({', '.join(f'{k}: {v}' for k, v in p['failed_statuses'].items())}); rerun "
                      "`pvsst judge` to try them again", markup=False)
    print_summary(result.summary)


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
