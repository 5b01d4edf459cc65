"""The report of a thread run (``pvsst report RUN`` on a ``schedule: threads`` run).

Computes the thread analysis (:func:`pvsst.analysis.threads.run_analysis.analyze_thread_run`, which
also refreshes ``RUN/analysis/``) and writes ``RUN/report/``: ``report.md``, ``report.html`` and
``figures/`` with the largest thread drawn as a tree and the depth histogram of every thread's
comments. The sections: the study (spec, seed, parameters, deviations), thread shape, the figures,
reply homophily against the within-thread rewiring null, lexical convergence by depth and along paths,
and attribute inference (each judge's top-1 / top-3 accuracy beside the majority and random baselines;
a note says how to add it when no judge has run).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pvsst.analysis.figures.style import FIGURE_FORMATS
from pvsst.analysis.figures.threads import depth_histogram_figure, thread_tree_figure
from pvsst.analysis.report.build import REPORT_FORMATS, ReportResult, draw_figures, figure_markdown, write_report
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import deviations_markdown, markdown_table
from pvsst.analysis.threads.run_analysis import ThreadAnalysis, analyze_thread_run
from pvsst.analysis.threads.run_tables import is_thread_run
from pvsst.core.atomic import check_replaceable
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.run_layout import MANIFEST, REPORT

ATTRIBUTE_COLUMNS = ("judge", "attribute", "n_authors", "n_failed", "top1", "top1_low", "top1_high", "top3",
                     "top3_low", "top3_high", "majority_top1", "majority_top3", "random_top1", "random_top1_low",
                     "random_top1_high", "random_top3", "random_top3_low", "random_top3_high")
HOMOPHILY_COLUMNS = ("measure", "observed", "null_mean", "null_sd", "z", "p_value", "replicates")


def thread_figure_plans(analysis: ThreadAnalysis) -> list[FigurePlan]:
    """The report's figures: the largest thread as a tree (ties: the first), then the depth histogram."""
    largest = str(analysis.shape.sort_values("n_comments", ascending=False, kind="stable")["thread_id"].iloc[0])
    return [FigurePlan("Threads", lambda: thread_tree_figure(analysis.comments, largest), f"thread tree {largest}"),
            FigurePlan("Threads", lambda: depth_histogram_figure(analysis.comments), "depth histogram")]


def thread_markdown(manifest: dict, analysis: ThreadAnalysis, figures, figure_formats: Sequence[str],
                    notes: Sequence[str]) -> str:
    """The report's Markdown (see the module docstring)."""
    spec = manifest.get("spec") or {}
    settings = spec.get("threads") or {}
    parameters = ", ".join(f"`{k}` {v}" for k, v in sorted(settings.items()) if not isinstance(v, dict))
    shape = analysis.shape
    parts = [f"# Thread study: {spec.get('title') or spec.get('id', '')}", "",
             f"Spec `{spec.get('id')}`, model `{spec.get('model')}`, master seed {spec.get('seed')}; SynthPAI's "
             "engagement model (Yukhymenko et al. 2024).", "", f"Parameters: {parameters}.", "",
             deviations_markdown(manifest.get("deviations") or [], manifest.get("frozen_sha256"),
                                 manifest.get("spec_sha256")), "",
             "## Thread shape", "",
             f"{len(shape)} threads, {int(shape['n_comments'].sum())} comments, maximum depth "
             f"{int(shape['max_depth'].max())}.", "", markdown_table(shape), "",
             "Comments per depth over every thread:", "", markdown_table(analysis.depth), "",
             "### Figures", "", figure_markdown(figures, figure_formats), "",
             "## Reply homophily", "",
             "A reply is an edge from the replier to the author of what it answers; observed same-group share and "
             "assortativity by persona attribute against degree-preserving rewiring within each thread.", ""]
    homophily = analysis.homophily
    parts += [markdown_table(homophily[list(HOMOPHILY_COLUMNS)]) if not homophily.empty else "_(no attribute to "
              "group by)_", "", "## Lexical convergence", "",
              "TF-IDF cosine of each reply with its parent beside its mean cosine with the thread's other messages:",
              "", markdown_table(analysis.similarity), "",
              f"Root-to-leaf paths: mean pairwise cosine {analysis.paths['similarity'].mean():.4f} against "
              f"{analysis.paths['null_mean'].mean():.4f} for random node sets of the same size "
              f"({len(analysis.paths)} paths).", "", "## Attribute inference", ""]
    attributes = analysis.attributes
    if attributes.empty:
        parts += ["No attribute judge has read this run: `pvsst judge attributes RUN --model M`, then "
                  "`pvsst report RUN` again.", ""]
    else:
        parts += ["Each judge's top-1 and top-3 accuracy (95% Wilson intervals) per attribute, beside the majority "
                  "baselines (best constant guesses, in hindsight) and the random baselines with their 2.5-97.5% "
                  "ranges:",
                  "", markdown_table(attributes[list(ATTRIBUTE_COLUMNS)]), ""]
    if notes:
        parts += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(parts)


def build_thread_report(run_dir: str | Path, *, formats: Sequence[str] = REPORT_FORMATS,
                        figure_formats: Sequence[str] = FIGURE_FORMATS, replicates: int = 200,
                        progress: Callable[[str], None] | None = None) -> ReportResult:
    """Write ``RUN/report/`` for a thread run (see the module docstring).

    Parameters
    ----------
    run_dir : a thread run's folder.
    formats, figure_formats : report formats (``md``, ``html``) and figure formats (``png``, ``pdf``).
    replicates : rewiring replicates of each reply-homophily null.
    progress : called with a label after each step.

    Returns
    -------
    ReportResult
        The report folder, the files written and the figures.

    Examples
    --------
    >>> import tempfile
    >>> try:
    ...     build_thread_report(tempfile.mkdtemp())
    ... except InputError as err:
    ...     print(err.problem)
    not a thread run (run `pvsst run` on a `schedule: threads` spec)
    """
    run_dir = Path(run_dir)
    check_replaceable(run_dir / REPORT)
    step = progress or (lambda label: None)
    if not is_thread_run(run_dir):
        raise InputError(str(run_dir), MANIFEST, "not a thread run (run `pvsst run` on a `schedule: threads` spec)")
    manifest = read_json(run_dir / MANIFEST, "manifest")
    step("thread analysis")
    analysis = analyze_thread_run(run_dir, replicates=replicates)
    figures, notes = draw_figures(thread_figure_plans(analysis), step)
    markdown = thread_markdown(manifest, analysis, figures, figure_formats, notes)
    step("writing")
    spec = manifest.get("spec") or {}
    files = write_report(run_dir / REPORT, markdown, figures, formats, figure_formats,
                         title=f"pvsst thread report: {spec.get('title') or run_dir.name}")
    return ReportResult(run_dir / REPORT, files, figures, [], notes)
