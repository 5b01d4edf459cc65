"""`pvsst judge RUN --judge NAME`: stance judgments of every post of a run, with provenance and agreement.

Runs the judge job (:mod:`pvsst.experiments.judge.job`) through the run kernel, writes
``RUN/analysis/judgments/``, prints the calls made and the agreement of every pair of judges that judged
the run. A judge call that failed makes the command exit 1 (rerun it: the trials whose calls failed are
asked again, successful calls come from the cache).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pvsst.core.errors import InputError
from pvsst.core.run_layout import MANIFEST
from pvsst.experiments.cli.folder_options import run_argument
from pvsst.experiments.cli.gateway_options import gateway_options
from pvsst.experiments.cli.lazy import lazy_module
from pvsst.experiments.cli.summary import print_summary

rich_console = lazy_module("rich.console")
store = lazy_module("pvsst.analysis.store.reader")
judge_job = lazy_module("pvsst.experiments.judge.job")
attribute_job = lazy_module("pvsst.experiments.threads.attribute_job")

ATTRIBUTES_WORD = "attributes"


@gateway_options()
def judge_command(
    run: Path = run_argument("A run directory (with manifest.json and trials/)."),
    judge: str = typer.Option(None, "--judge", help="`lexicon` or a model string (default: the spec's "
                              "analysis.stance_judge)."),
    materials: Path = typer.Option(None, "--materials", help="A directory holding judge_system.txt and "
                                   "judge.txt (default: pvsst's judge templates)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Request seed of every judge call."),
    thread_run: Optional[Path] = typer.Argument(None, metavar="[THREAD_RUN]", help="After the word `attributes`: "
                                                "a thread run whose authors' attributes --model guesses."),
    model: Optional[str] = typer.Option(None, "--model", help="`pvsst judge attributes RUN`: the model that guesses."),
    max_comments: Optional[int] = typer.Option(None, "--max-comments", min=1, help="`pvsst judge attributes`: "
                                               "read at most this many comments of each author."),
    gateway: dict | None = None,
) -> None:
    """Judge the stance of every post of RUN and write RUN/analysis/judgments/; or, as `pvsst judge
    attributes RUN --model M`, guess every author's attributes from their comments in a thread run
    (RUN/attributes/; `pvsst analyze` scores them).

    The gateway options override the run spec's execution section for the judge's calls."""
    if thread_run is not None or str(run) == ATTRIBUTES_WORD:
        _judge_attributes(run, thread_run, model, seed, max_comments, gateway)
        return
    if judge is None:
        if not (run / MANIFEST).is_file():
            store.load_run(run)  # the one-line error for a missing run
        spec = store.load_run(run).manifest.get("spec") or {}
        judge = (spec.get("analysis") or {}).get("stance_judge")
        if judge is None:
            raise InputError("pvsst judge", "--judge", "give a judge (`lexicon` or a model string); the run's "
                             "spec names none in analysis.stance_judge")
    result = judge_job.judge_run(run, judge, materials=materials, seed=seed, gateway=gateway, progress=False)
    console = rich_console.Console(highlight=False, soft_wrap=True)
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


def _judge_attributes(word: Path, run: Path | None, model: str | None, seed: int, max_comments: int | None,
                      gateway: dict | None) -> None:
    if str(word) != ATTRIBUTES_WORD or run is None:
        raise InputError("pvsst judge", "RUN", f"give one run folder, or `attributes RUN --model M` (got {word} {run})")
    if model is None:
        raise InputError("pvsst judge attributes", "--model", "give the model that guesses the attributes")
    result = attribute_job.judge_attributes(run, model, seed=seed, max_comments=max_comments, gateway=gateway,
                                            progress=False)
    console = rich_console.Console(highlight=False, soft_wrap=True)
    for row in result.table.to_dict("records"):
        console.print(f"{row['judge']} {row['attribute']}: {int(row['n_authors'])} authors, top-1 {row['top1']:.3f} "
                      f"[{row['top1_low']:.3f}, {row['top1_high']:.3f}], top-3 {row['top3']:.3f}; majority "
                      f"{row['majority_top1']:.3f}, random {row['random_top1']:.3f} [{row['random_top1_low']:.3f}, "
                      f"{row['random_top1_high']:.3f}]", markup=False)
    print_summary(result.summary)


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
