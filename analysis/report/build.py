"""``pvsst report``: figures plus a Markdown and a self-contained HTML report, written atomically.

:func:`build_run_report` reports one run directory: the frozen hypotheses and plan (from the spec's lock
when it is still beside the spec, else the frozen spec the manifest recorded) beside the results, a
verdict per hypothesis, deviations, the run's checks and the environment. It computes ``RUN/analysis`` first when
that folder is missing. :func:`build_table_report` reports a published per-trial table (PV-SST's
``pvsst_v1_core_results.csv``): every planned contrast, the headline table and the forest plots.

Output (``RUN/report/`` or ``--out``), built in a temporary folder and renamed into place::

    report.md  report.html  figures/<name>.png|pdf  [contrasts.csv  headline.csv  for a table report]
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from pvsst.analysis.figures.style import FIGURE_FORMATS, PaperFigure
from pvsst.analysis.report.checks import (
    RunCheck,
    as_int_if_whole,
    block_check,
    call_health_check,
    exposure_check,
    parse_failure_check,
    usage_check,
)
from pvsst.analysis.report.consistency_section import consistency_markdown
from pvsst.analysis.report.figure_sets import FigurePlan, run_figures, table_figures
from pvsst.analysis.report.html_page import markdown_to_html
from pvsst.analysis.report.markdown import (
    VERDICT_RULE,
    bullet_list,
    design_table,
    deviations_markdown,
    fmt_ci,
    fmt_p,
    fmt_signed,
    headline_markdown,
    hypotheses_table,
    markdown_table,
    overall_contrasts_markdown,
    plan_table,
    verdicts_table,
)
from pvsst.analysis.report.prompt_checks import agent_text_check, template_echo_check
from pvsst.analysis.report.study_audit_section import study_audit_figure_plan, study_audit_markdown
from pvsst.analysis.report.verdicts import NOT_POWERED, HypothesisVerdict, hypotheses_or_default, hypothesis_verdicts
from pvsst.analysis.stats.paired import IncompleteBlocksWarning
from pvsst.analysis.stats.plan import RunPlan, plan_from_spec
from pvsst.analysis.store.reader import load_run, load_trial_table
from pvsst.analysis.study.run_analysis import analyze_plan, analyze_run, headline_table
from pvsst.analysis.text.template_echo import read_templates
from pvsst.core.atomic import atomic_directory, check_replaceable
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.run_folder import holds_run_folder
from pvsst.core.run_layout import ANALYSIS, MANIFEST, REPORT

REPORT_FORMATS = ("md", "html")
ANALYSIS_TABLES = ("trial_outcomes", "per_round", "contrasts", "headline")
OPTIONAL_TABLES = ("homophily", "excluded_blocks", "belief_consistency", "judge_agreement", "study_audit",
                   "study_audit_shares")
SMALL_N_BLOCKS = 6  # below this the exact sign-flip test cannot reach p < 0.05


@dataclass(frozen=True)
class ReportResult:
    """What a report build wrote and found."""

    out_dir: Path
    files: list[Path]
    figures: list[PaperFigure]
    verdicts: list[HypothesisVerdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def markdown_path(self) -> Path:
        return self.out_dir / "report.md"

    @property
    def html_path(self) -> Path:
        return self.out_dir / "report.html"


def parse_formats(text: str | Sequence[str], allowed: Sequence[str], option: str) -> tuple[str, ...]:
    """``"md,html"`` -> ("md", "html"); anything outside ``allowed`` raises :class:`InputError`.

    >>> parse_formats("png, pdf", ("png", "pdf"), "--figures")
    ('png', 'pdf')
    """
    items = [s.strip().lower() for s in (text.split(",") if isinstance(text, str) else text) if s.strip()]
    bad = [s for s in items if s not in allowed]
    if bad or not items:
        raise InputError(option, bad[0] if bad else "(empty)", f"unknown format (choose from {', '.join(allowed)})")
    return tuple(dict.fromkeys(items))


def read_analysis_tables(run_dir: Path, *, homophily_replicates: int = 200) -> tuple[dict[str, pd.DataFrame], bool]:
    """The tables of ``RUN/analysis`` as frames, running the analysis first when any is missing.

    Returns (tables, computed_now).
    """
    analysis_dir = run_dir / ANALYSIS
    computed = False
    if not all((analysis_dir / f"{name}.csv").exists() for name in ANALYSIS_TABLES):
        analyze_run(run_dir, homophily_replicates=homophily_replicates)
        computed = True
    tables = {}
    for name in ANALYSIS_TABLES + OPTIONAL_TABLES:
        path = analysis_dir / f"{name}.csv"
        try:
            tables[name] = pd.read_csv(path) if path.exists() else pd.DataFrame()
        except pd.errors.EmptyDataError:
            tables[name] = pd.DataFrame()
    return tables, computed


def frozen_spec(manifest: Mapping) -> tuple[dict, str]:
    """(frozen spec, where it came from): the lock beside the spec when its hash is the frozen one."""
    spec_path = manifest.get("spec_path")
    frozen_sha = manifest.get("frozen_sha256")
    if spec_path:
        lock = Path(f"{spec_path}.lock.json")
        try:
            payload = read_json(lock, "lock") if lock.is_file() else None
        except InputError:
            payload = None
        if payload and payload.get("spec") and payload.get("spec_sha256") == frozen_sha:
            return dict(payload["spec"]), f"the lock `{lock}` (sha256 `{frozen_sha}`)"
    if manifest.get("deviations"):
        return dict(manifest.get("spec") or {}), ("the spec recorded in the manifest (the run's spec; the "
                                                  "lock was not found, so the frozen version is not shown)")
    return dict(manifest.get("spec") or {}), "the frozen spec recorded in the run's manifest"


def run_checks(manifest: Mapping, outcomes: pd.DataFrame, trials: pd.DataFrame, llm_calls: pd.DataFrame,
               exposures: pd.DataFrame | None, excluded: pd.DataFrame | None, *,
               parse_failure_threshold: float, posts: pd.DataFrame | None = None,
               templates: Mapping[str, str] | None = None) -> list[RunCheck]:
    """Every check of the run the report shows, in report order."""
    return [block_check(manifest, outcomes, excluded), exposure_check(outcomes, exposures),
            parse_failure_check(outcomes, parse_failure_threshold), agent_text_check(trials),
            template_echo_check(posts if posts is not None else pd.DataFrame(), templates or {}),
            usage_check(llm_calls, trials, manifest), call_health_check(manifest, parse_failure_threshold)]


@holds_run_folder
def build_run_report(run_dir: str | Path, *, formats: Sequence[str] = REPORT_FORMATS,
                     figure_formats: Sequence[str] = FIGURE_FORMATS, homophily_replicates: int = 200,
                     progress: Callable[[str], None] | None = None) -> ReportResult:
    """Write ``RUN/report/`` for a run directory (see the module docstring)."""
    run_dir = Path(run_dir)
    check_replaceable(run_dir / REPORT)  # before anything is computed
    step = progress or (lambda label: None)
    data = load_run(run_dir)
    manifest = data.manifest
    step("analysis tables")
    tables, computed = read_analysis_tables(run_dir, homophily_replicates=homophily_replicates)
    outcomes, contrasts = tables["trial_outcomes"], tables["contrasts"]
    if contrasts.empty:
        raise InputError(str(run_dir / ANALYSIS / "contrasts.csv"), "rows", "no contrast results to report")
    conditions = outcomes["condition"].dropna().astype(str).unique() if "condition" in outcomes else []
    spec, spec_source = frozen_spec(manifest)
    plan = plan_from_spec(manifest.get("spec") or spec, conditions, source=str(run_dir / MANIFEST))
    settings = plan.settings
    hypotheses = hypotheses_or_default(spec, contrasts, plan.primary_metric)
    verdicts = hypothesis_verdicts(hypotheses, contrasts, alpha=settings.alpha,
                                   min_model_share=settings.consistency.min_model_share,
                                   min_topic_share=settings.consistency.min_topic_share,
                                   multiplicity=settings.multiplicity)
    pairs = [(v.contrast, v.metric) for v in verdicts if v.n_blocks] + [
        (c.name, plan.primary_metric) for c in plan.contrasts]
    pairs = [p for p in pairs if ((contrasts["contrast"] == p[0]) & (contrasts["metric"] == p[1])).any()]
    primary = next((v for v in verdicts if v.primary), verdicts[0] if verdicts else None)
    network_arm = next((c.treatment for c in plan.contrasts if primary and c.name == primary.contrast), None)
    plans = list(run_figures(data, tables, pairs, plan.primary_metric, network_arm, draws=settings.bootstrap_draws,
                             seed=settings.bootstrap_seed, analysis_dir=run_dir / ANALYSIS))
    if len(tables["study_audit_shares"]):
        plans.append(study_audit_figure_plan(tables["study_audit_shares"]))
    figures, notes = draw_figures(plans, step)
    if computed:
        notes.insert(0, f"`{run_dir / ANALYSIS}` was missing, so this report computed it first")
    checks = run_checks(manifest, outcomes, data.trials, data.llm_calls, data.exposures,
                        tables.get("excluded_blocks"), parse_failure_threshold=settings.parse_failure_threshold,
                        posts=data.posts, templates=read_templates(run_dir))
    notes += _power_notes(verdicts)
    markdown = run_markdown(run_dir, manifest, spec, spec_source, plan, verdicts, tables, figures, checks, notes,
                            figure_formats)
    title = f"pvsst report: {spec.get('title') or manifest.get('spec_id') or run_dir.name}"
    step("writing")
    files = write_report(run_dir / REPORT, markdown, figures, formats, figure_formats, title=title)
    return ReportResult(run_dir / REPORT, files, figures, verdicts, notes)


def build_table_report(table_path: str | Path, out_dir: str | Path, *, formats: Sequence[str] = REPORT_FORMATS,
                       figure_formats: Sequence[str] = FIGURE_FORMATS, plan: RunPlan | None = None,
                       progress: Callable[[str], None] | None = None) -> ReportResult:
    """Write a report of a published per-trial table: contrasts, headline table and forest plots (into
    ``out_dir``, refused at once while it holds a file pvsst did not write)."""
    check_replaceable(out_dir)
    step = progress or (lambda label: None)
    plan = plan or RunPlan.pvsst()
    table = load_trial_table(table_path, required=(*plan.block, "condition"))
    conditions = set(table["condition"].astype(str))
    contrast_set = tuple(c for c in plan.contrasts if {c.treatment, c.control} <= conditions)
    if not contrast_set:
        raise InputError(str(table_path), "condition", "no planned contrast has both of its arms in the table")
    metrics = tuple(m for m in plan.metrics if m in table.columns)
    strata = tuple(s for s in plan.strata if s in table.columns)
    step("statistics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteBlocksWarning)
        plan = replace(plan, contrasts=contrast_set)
        analysis = analyze_plan(table, plan, metrics, strata, source=str(table_path))
    headline = headline_table(analysis, table, plan)
    contrasts = analysis.frame
    plans = list(table_figures(table, contrasts, metrics, plan.primary_metric, draws=plan.settings.bootstrap_draws,
                               seed=plan.settings.bootstrap_seed))
    figures, notes = draw_figures(plans, step)
    markdown = table_markdown(Path(table_path), table, plan, contrasts, headline, analysis.excluded_blocks,
                              figures, notes, figure_formats)
    step("writing")
    files = write_report(Path(out_dir), markdown, figures, formats, figure_formats,
                         title=f"pvsst report: {Path(table_path).name}",
                         extra_tables={"contrasts.csv": contrasts, "headline.csv": headline})
    return ReportResult(Path(out_dir), files, figures, [], notes)


def draw_figures(plans: Iterable[FigurePlan], step: Callable[[str], None]) -> tuple[list[tuple[str, PaperFigure]],
                                                                                    list[str]]:
    figures, notes = [], []
    for plan in plans:
        try:
            figures.append((plan.section, plan.build()))
        except InputError as err:
            notes.append(f"figure '{plan.label}' skipped: {err}")
        step(plan.label)
    return figures, notes


def _power_notes(verdicts: Sequence[HypothesisVerdict]) -> list[str]:
    small = [v for v in verdicts if v.verdict == NOT_POWERED]
    if not small:
        return []
    n = min(v.n_blocks for v in small)
    return [f"not powered: {n} complete block(s) are too few for the preregistered tests to reach alpha "
            f"(an exact sign-flip test needs at least {SMALL_N_BLOCKS} blocks for p < 0.05); read the "
            "estimates as a demonstration of the pipeline, not as findings"]


def figure_markdown(figures: Sequence[tuple[str, PaperFigure]], figure_formats: Sequence[str]) -> str:
    parts, section = [], None
    ext = "png" if "png" in figure_formats else figure_formats[0]
    for number, (heading, figure) in enumerate(figures, 1):
        if heading != section:
            parts += [f"#### {heading}", ""]
            section = heading
        parts += [f"![Figure {number}: {figure.name}](figures/{figure.name}.{ext})", "",
                  f"*Figure {number}.* {figure.caption}", ""]
    return "\n".join(parts) if parts else "_(no figures)_"


def run_markdown(run_dir: Path, manifest: Mapping, spec: Mapping, spec_source: str, plan: RunPlan,
                 verdicts: Sequence[HypothesisVerdict], tables: Mapping[str, pd.DataFrame],
                 figures: Sequence[tuple[str, PaperFigure]], checks: Sequence[RunCheck], notes: Sequence[str],
                 figure_formats: Sequence[str]) -> str:
    """The whole report of a run as Markdown."""
    outcomes = tables["trial_outcomes"]
    deviations = list(manifest.get("deviations") or [])
    frozen_sha, current_sha = manifest.get("frozen_sha256"), manifest.get("spec_sha256")
    check_warnings = [w for check in checks for w in check.warnings]
    blocks = checks[0]
    contrasts_plan = {name: arms for name, arms in (spec.get("analysis") or {}).get("contrasts", {}).items()} \
        if isinstance((spec.get("analysis") or {}).get("contrasts"), Mapping) else \
        {c.name: {"treatment": c.treatment, "control": c.control} for c in plan.contrasts}
    lines = [f"# Preregistration report: {spec.get('title') or manifest.get('spec_id') or run_dir.name}", "",
             f"Run `{run_dir}` - spec `{manifest.get('spec_id', spec.get('id', '?'))}` - spec sha256 "
             f"`{current_sha or '?'}` - frozen at {manifest.get('frozen_at', '?')} - run finished "
             f"{manifest.get('finished_at', '?')}.", "", "## Summary", ""]
    found = [f"{v.id}{' (primary)' if v.primary else ''}: {v.contrast} on {v.metric} = "
             f"{fmt_signed(v.mean_difference)} {fmt_ci(v.ci_low, v.ci_high)} over {v.n_blocks} blocks, "
             f"randomization p = {fmt_p(v.randomization_p)} -> **{v.verdict}**" for v in verdicts]
    lines += [f"- **Preregistered:** {len(verdicts)} hypothesis(es) ({sum(v.primary for v in verdicts)} primary), "
              f"frozen at {manifest.get('frozen_at', '?')} with sha256 `{frozen_sha or '?'}`; "
              f"primary outcome {plan.primary_metric}.",
              f"- **Data:** {len(outcomes)} completed trial(s); {blocks.findings[0]}.",
              "- **Found:**", *[f"  - {f}" for f in found],
              "- **Deviations:** " + ("none recorded" if not deviations else f"{len(deviations)} recorded (section 3): "
                                      + "; ".join(str(d.get("text", "?")) for d in deviations)) + ".",
              f"- **Check warnings:** {'none' if not check_warnings else '; '.join(w[8:] for w in check_warnings)}."]
    if notes:
        lines += ["- **Notes:**", *[f"  - {n}" for n in notes]]
    lines += ["", "## 1. What was preregistered", "", f"Read from {spec_source}.", "",
              "### Hypotheses", "", hypotheses_table(spec.get("hypotheses") or [], contrasts_plan), ""]
    if not spec.get("hypotheses"):
        lines += ["_The spec preregistered no hypotheses; section 2 judges each planned contrast on the primary "
                  "outcome as a two-sided check._", ""]
    lines += ["### Analysis plan", "", plan_table(spec.get("analysis") or {}, spec.get("outcomes")), "",
              f"Blocks are {' x '.join(plan.block)}; strata {', '.join(plan.strata)}; only complete blocks "
              "enter a contrast.", "", "### Design", "", design_table(spec), "",
              "## 2. Results against the plan", "", "### Verdicts", "", VERDICT_RULE, "",
              verdicts_table(verdicts), "",
              f"### Headline: every planned contrast on {plan.primary_metric}", "",
              headline_markdown(tables["headline"]), "",
              _settings_note(plan), "",
              "### All contrasts and metrics (overall)", "", overall_contrasts_markdown(tables["contrasts"]), "",
              "Per-stratum rows (by model, by topic): `analysis/contrasts.csv`.", "",
              "### Figures", "", figure_markdown(figures, figure_formats), "",
              "### Belief-behaviour consistency", "", consistency_markdown(tables), "",
              *(["### Counterfactual first-round audit", "", study_audit_markdown(tables["study_audit"]), ""]
                if len(tables["study_audit"]) else []),
              "## 3. Deviations from the preregistration", "",
              deviations_markdown(deviations, frozen_sha, current_sha), "", "## 4. Checks", ""]
    for check in checks:
        lines += [f"### {check.title}", "", bullet_list(check.findings), ""]
        if len(check.table) and check.title != "Blocks":
            lines += [markdown_table(as_int_if_whole(check.table)), ""]
        elif check.title == "Blocks" and len(check.table):
            incomplete = check.table[~check.table["complete"]]
            if len(incomplete):
                lines += ["Incomplete blocks:", "", markdown_table(incomplete), ""]
    lines += ["## 5. Environment", "", environment_markdown(manifest), ""]
    return "\n".join(lines)


def environment_markdown(manifest: Mapping) -> str:
    """Spec hashes and the package versions of the last run session."""
    runs = manifest.get("runs") or []
    last = runs[-1] if runs else {}
    rows = [{"item": "spec id", "value": manifest.get("spec_id", "?")},
            {"item": "spec sha256 (run)", "value": manifest.get("spec_sha256", "?")},
            {"item": "spec sha256 (frozen)", "value": manifest.get("frozen_sha256", "?")},
            {"item": "frozen at", "value": manifest.get("frozen_at", "?")},
            {"item": "executor", "value": f"{last.get('executor', '?')} ({last.get('workers', '?')} worker(s))"},
            {"item": "run sessions", "value": str(len(runs))}]
    rows += [{"item": name, "value": version} for name, version in sorted((last.get("versions") or {}).items())]
    return markdown_table(pd.DataFrame(rows))


def _settings_note(plan: RunPlan) -> str:
    """How the headline numbers were computed, with the plan's settings."""
    settings = plan.settings
    randomization = settings.randomization
    method = (f"exhaustive up to {randomization.exhaustive_max_n} nonzero pairs, else {randomization.draws:,} "
              "Monte Carlo draws" if randomization.method == "auto" else
              f"{randomization.draws:,} Monte Carlo draws" if randomization.method == "monte_carlo" else "exhaustive")
    return ("Mean/median: paired block differences (treatment - baseline). CI: "
            f"{1 - settings.alpha:.0%} percentile bootstrap over blocks ({settings.bootstrap_draws:,} draws, seed "
            f"{settings.bootstrap_seed}). sign p: exact two-sided sign test. perm p: sign-flip randomization test "
            f"of the mean ({method}). adjusted p: {settings.multiplicity} across the plan's metrics. Mixed model: "
            "random block intercepts (robustness check).")


def table_markdown(table_path: Path, table: pd.DataFrame, plan: RunPlan, contrasts: pd.DataFrame,
                   headline: pd.DataFrame, excluded: pd.DataFrame, figures: Sequence[tuple[str, PaperFigure]],
                   notes: Sequence[str], figure_formats: Sequence[str]) -> str:
    """The report of a published per-trial table as Markdown."""
    n_blocks = int(contrasts.loc[contrasts["stratum_type"] == "overall", "n_blocks"].max())
    lines = [f"# Report of the per-trial table `{table_path.name}`", "",
             f"Source: `{table_path}` ({len(table)} trials, {table['condition'].nunique()} arms, up to {n_blocks} "
             f"complete {' x '.join(plan.block)} blocks per contrast). No run directory: no preregistration lock, "
             "deviations or run checks to show; the plan below is PV-SST's confirmatory plan.", "",
             "## Plan", "",
             markdown_table(pd.DataFrame([{"contrast": c.name, "definition": f"{c.treatment} - {c.control}"}
                                          for c in plan.contrasts])), "",
             f"Metrics: {', '.join(m for m in plan.metrics if m in table.columns)}; primary: {plan.primary_metric}. "
             f"Strata: {', '.join(plan.strata)}. {_settings_note(plan)} Consistency: positive overall and in >= "
             f"{plan.settings.consistency.min_model_share:.0%} of models and >= "
             f"{plan.settings.consistency.min_topic_share:.0%} of topics.",
             "", f"## Headline: every contrast on {plan.primary_metric}", "", headline_markdown(headline), "",
             "## All contrasts and metrics (overall)", "", overall_contrasts_markdown(contrasts), "",
             "Every stratum: `contrasts.csv` (the published table's columns).", ""]
    if len(excluded):
        lines += [f"{len(excluded)} block x contrast x metric rows were excluded as incomplete.", ""]
    if notes:
        lines += ["Notes:", "", bullet_list(notes), ""]
    lines += ["## Figures", "", figure_markdown(figures, figure_formats), ""]
    return "\n".join(lines)


def write_report(out_dir: Path, markdown: str, figures: Sequence[tuple[str, PaperFigure]], formats: Sequence[str],
                 figure_formats: Sequence[str], *, title: str,
                 extra_tables: Mapping[str, pd.DataFrame] | None = None) -> list[Path]:
    """Build the report in a temporary sibling folder, then swap it into ``out_dir`` (atomic per folder)."""
    with atomic_directory(out_dir, ledger=True) as staging:
        ext = "png" if "png" in figure_formats else figure_formats[0]
        images = {}
        for _, figure in figures:
            saved = figure.save(staging / "figures", figure_formats)
            # The HTML embeds the PNG just written (rendering it again would double the report's cost).
            png = next((path for path in saved if path.suffix == ".png"), None)
            images[f"figures/{figure.name}.{ext}"] = png.read_bytes() if png is not None else figure.png_bytes()
            figure.close()
        if "md" in formats:
            (staging / "report.md").write_text(markdown, encoding="utf-8")
        if "html" in formats:
            (staging / "report.html").write_text(markdown_to_html(markdown, images, title=title), encoding="utf-8")
        for name, frame in (extra_tables or {}).items():
            frame.to_csv(staging / name, index=False)
    return sorted(p for p in out_dir.rglob("*") if p.is_file() and not p.name.startswith("."))
