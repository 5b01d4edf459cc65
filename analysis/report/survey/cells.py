"""The survey report's cell-run part: post-stratified estimates, states against the survey, figures.

A cell run (``RUN/cells.parquet``) gets, beside the survey report's fidelity sections, the tables that
``pvsst survey score`` writes to ``RUN/analysis/`` (computed here first when ``estimates.csv`` is
missing; :func:`pvsst.analysis.survey.cells.states.write_cell_analysis`) and the state figures of
:mod:`pvsst.analysis.figures.survey.states`: per question, a tile map of the simulated share of the first
option, a tile map of its error against the survey, a scatter of simulated against real state shares
with the identity line and the cell oracle and MRP beside the model, and one figure of the per-group errors
(every model beside the four yardsticks), with the same errors in a per-group table.

Examples
--------
>>> analysis = read_cell_analysis(read_scored_run("RUN"))  # doctest: +SKIP
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.figures.survey.states import group_errors_figure, state_scatter_figure, state_tile_map_figure
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import bullet_list, markdown_table
from pvsst.analysis.report.survey.election import election_markdown, mrp_markdown
from pvsst.analysis.report.survey.tables import degraded_sources, estimate, number
from pvsst.analysis.survey.cells.estimates import ESTIMATES_FILE, SURVEY_SAMPLE
from pvsst.analysis.survey.cells.mrp import MRP
from pvsst.analysis.survey.cells.state_scores import CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM
from pvsst.analysis.survey.cells.states import (
    ELECTION_FILE,
    NOTES_FILE,
    YARDSTICKS,
    cell_analysis,
    write_cell_analysis,
)
from pvsst.analysis.survey.units import ScoredRun
from pvsst.core.input_files import read_json
from pvsst.core.run_layout import ANALYSIS

STATE_TABLES = ("state_scores.csv", "state_correlations.csv", "state_pairs.csv", "group_scores.csv")
# Persona attributes drawn from survey respondents of the persona's demographic cell, not from the census.
SURVEY_DRAWN = ("party_id", "party", "ideology", "religiosity", "posting_style")


@dataclass
class CellAnalysis:
    """The cell-run tables of ``RUN/analysis/`` (empty frames where the run has no state comparison)."""

    estimates: pd.DataFrame
    attributes: tuple[str, ...]
    scores: pd.DataFrame = field(default_factory=pd.DataFrame)
    correlations: pd.DataFrame = field(default_factory=pd.DataFrame)
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    groups: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)
    election: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def has_states(self) -> bool:
        return not self.scores.empty


def read_cell_analysis(run: ScoredRun) -> CellAnalysis:
    """The cell-run tables, computing them first (from ``run``) when ``analysis/estimates.csv`` is missing."""
    folder = Path(run.path) / ANALYSIS
    notes = []
    if not (folder / ESTIMATES_FILE).is_file():
        write_cell_analysis(*cell_analysis(run), run.path)
        notes.append(f"`{folder / ESTIMATES_FILE}` was missing, so this report post-stratified the run first")
    tables = {name: pd.read_csv(folder / name, keep_default_na=True) for name in STATE_TABLES
              if (folder / name).is_file()}
    if (folder / NOTES_FILE).is_file():
        notes += list(read_json(folder / NOTES_FILE, "cell notes").get("notes") or [])
    election = pd.read_csv(folder / ELECTION_FILE) if (folder / ELECTION_FILE).is_file() else pd.DataFrame()
    return CellAnalysis(pd.read_csv(folder / ESTIMATES_FILE), run.population.attributes,
                        *(tables.get(name, pd.DataFrame()) for name in STATE_TABLES), notes, election)


SCATTER_YARDSTICKS = (CELL_ORACLE, MRP, NATIONAL_MARGINAL, UNIFORM)
"""Drawn beside the models on the state scatter and the group errors: the survey's cells, MRP, the nation's
shares, equal shares."""


def _model_sources(scores: pd.DataFrame) -> list[str]:
    return [s for s in dict.fromkeys(scores["source"].astype(str)) if s not in YARDSTICKS]


def cell_figures(analysis: CellAnalysis, labels: Mapping[tuple[str, str], str] | None = None) -> list[FigurePlan]:
    """Per question: the simulated-share tile map, the error tile map, the state scatter; then group errors."""
    if not analysis.has_states:
        return []
    plans, scores = [], analysis.scores
    sources = _model_sources(scores)
    if not sources:
        return []
    model = sources[0]
    for question in dict.fromkeys(scores["question"].astype(str)):
        part = scores[scores["question"].astype(str) == question]
        option = str(part["option"].iloc[0])
        label = (labels or {}).get((question, option), option)
        rows = part[(part["source"] == model) & (part["option"].astype(str) == option)].set_index("state")
        plans += [
            FigurePlan("States", lambda r=rows, q=question, lab=label: state_tile_map_figure(
                r["simulated"], label=f"simulated share '{lab}'", name=f"state_map_{q}",
                caption=f"Simulated share of '{lab}' ({q}) per state, post-stratified with the population's cell "
                        f"counts; source {model}. Tile grid: 50 states and DC as equal squares; n = {len(r)} "
                        "states."), f"state map {question}"),
            FigurePlan("States", lambda r=rows, q=question, lab=label: state_tile_map_figure(
                r["error"], label=f"error of '{lab}' (simulated - survey)", diverging=True,
                name=f"state_error_map_{q}",
                caption=f"Error of the simulated share of '{lab}' ({q}) against the survey's state share "
                        f"(simulated - real; 0 white, diverging colours); source {model}; n = {len(r)} states."),
                f"state error map {question}"),
            FigurePlan("States", lambda p=part, q=question, o=option: state_scatter_figure(
                p, o, sources=[s for s in (*sources, *SCATTER_YARDSTICKS) if s in set(p["source"])],
                name=f"state_scatter_{q}"), f"state scatter {question}")]
    groups = analysis.groups
    if not groups.empty:
        first = groups.groupby("question", sort=False)["option"].transform("first")
        chosen = groups[(groups["option"] == first) & groups["source"].isin([*sources, *SCATTER_YARDSTICKS])]
        chosen = chosen.assign(group=chosen["question"].astype(str) + ": " + chosen["group"].astype(str))
        plans.append(FigurePlan("Groups", lambda c=chosen: group_errors_figure(
            c[["group", "source", "abs_error"]], label="absolute error of the first option's share",
            name="group_errors"), "group errors"))
    return plans


def group_table(groups: pd.DataFrame) -> pd.DataFrame:
    """Per question x group (the first option): the survey's share and each source's absolute error, the
    models first, then the cell oracle, MRP, the national marginal and uniform.

    Examples
    --------
    >>> groups = pd.DataFrame({"question": "q", "option": "y", "group": "sex=f", "real": 0.4,
    ...                        "source": ["m | c", "mrp", "uniform"], "abs_error": [0.1, 0.02, 0.1]})
    >>> group_table(groups).values.tolist()
    [['q', 'sex=f', '0.4', '0.1', '0.02', '0.1']]
    """
    first = groups.groupby("question", sort=False)["option"].transform("first")
    chosen = groups[groups["option"] == first]
    present = list(dict.fromkeys(chosen["source"].astype(str)))
    order = [s for s in present if s not in YARDSTICKS] + [s for s in SCATTER_YARDSTICKS if s in present]
    rows = []
    for (question, group), part in chosen.groupby(["question", "group"], sort=False):
        errors = part.set_index(part["source"].astype(str))["abs_error"]
        rows.append({"question": question, "group": group, "survey share": number(part["real"].iloc[0]),
                     **{source: number(errors[source]) if source in errors else "" for source in order}})
    return pd.DataFrame(rows)


def _estimates_markdown(estimates: pd.DataFrame) -> str:
    first = estimates.groupby("question", sort=False)["option"].transform("first")
    group_first = (estimates["level"] == "group") & (estimates["option"] == first)
    shown = estimates[(estimates["level"] == "national") | group_first]
    rows = [{"source": f"{r.model} | {r.condition} ({r.elicitation})", "question": r.question, "domain": r.domain,
             "option": r.option, "estimate": (number(r.estimate) + " (exact)") if r.interval == "exact"
             else (number(r.estimate) + " (survey sample)") if r.interval == SURVEY_SAMPLE
             else estimate(r.estimate, r.ci_low, r.ci_high), "population": f"{r.population:,.0f}",
             "coverage": number(r.coverage)} for r in shown.itertuples()]
    return markdown_table(pd.DataFrame(rows))


def _summary_frame(analysis: CellAnalysis) -> pd.DataFrame:
    scores, rows = analysis.scores, []
    per_state = scores.drop_duplicates(["question", "source", "state"])
    correlations = analysis.correlations
    for (question, source), part in per_state.groupby(["question", "source"], sort=False):
        options = scores[(scores["question"] == question) & (scores["source"] == source)]
        corr = correlations[(correlations["question"] == question) & (correlations["source"] == source)].iloc[0]
        pooled = 100 * (1 - part["total_variation"].sum() / part["total_variation_uniform"].sum())
        rows.append({"question": question, "source": source, "states": len(part),
                     "mean |error|": number(options["abs_error"].mean()),
                     "mean JS distance": number(part["js_distance"].mean()),
                     "pooled SimBench": number(pooled), "median SimBench": number(part["simbench"].median()),
                     "r across states": f"{corr['option']}: " + (
                         "0 (constant by construction)" if bool(corr["constant"]) else number(corr["correlation"]))})
    return pd.DataFrame(rows)


def _composition_markdown(analysis: CellAnalysis) -> str:
    oracle = analysis.scores[analysis.scores["source"] == CELL_ORACLE]
    if oracle.empty:
        return "No cell oracle (see the notes)."
    lines = []
    geography = analysis.estimates[analysis.estimates["level"] == "geography"].drop_duplicates("domain")
    population = geography.set_index("domain")["population"]
    for question, part in oracle.groupby("question", sort=False):
        option = part["option"].iloc[0]
        rows = part[part["option"] == option].assign(move=lambda f: f["error"].abs())
        top = rows.sort_values("move", ascending=False).head(5)
        weights = rows["state"].map(population).to_numpy(float)
        lines.append(f"`{question}`, share of `{option}` in the nation: the survey's raw share "
                     f"{number(np.average(rows['real'], weights=rows['respondents']))} (respondents as sampled), the "
                     f"cell oracle's {number(np.average(rows['simulated'], weights=weights))} (the same cells' "
                     "answers weighted by the population's counts, over the cells with a respondent): the gap is "
                     "the difference between the survey sample's make-up and the population's.")
        lines.append(f"`{question}`, share of `{option}`: the cell oracle moves states by a median of "
                     f"{number(rows['move'].median())} (max {number(rows['move'].max())}) from the survey's raw "
                     f"state shares; largest: " + ", ".join(f"{r.state} {r.error:+.3f}" for r in top.itertuples())
                     + f"; population coverage of the oracle's cells {number(rows['coverage'].min())} at least.")
    return bullet_list(lines)


def state_table(analysis: CellAnalysis, question: str) -> pd.DataFrame:
    """Per state, for the question's first option: the survey's share with its interval, the cell oracle's
    share and how far it moves the state (the composition effect with national cells), whether that move
    leaves the survey's interval, the MRP reference's share, how many other states the survey cannot tell
    it apart from, and the first model source's share (column ``model``)."""
    scores = analysis.scores[analysis.scores["question"] == question]
    option = scores["option"].iloc[0]
    scores = scores[scores["option"] == option]
    pairs = analysis.pairs[(analysis.pairs["question"] == question) & (analysis.pairs["option"] == option)]
    undecided = pairs[~pairs["distinguishable"].astype(bool)]
    twins = pd.concat([undecided["state_a"], undecided["state_b"]]).value_counts()
    real = scores.drop_duplicates("state").set_index("state")
    oracle = scores[scores["source"] == CELL_ORACLE].set_index("state")
    mrp = scores[scores["source"] == MRP].set_index("state")
    models = _model_sources(analysis.scores)
    model = scores[scores["source"] == models[0]].set_index("state") if models else None
    rows = []
    for state, r in real.iterrows():
        row = {"state": state, "respondents": int(r["respondents"]),
               f"survey '{option}'": estimate(r["real"], r["survey_ci_low"], r["survey_ci_high"])}
        if state in oracle.index:
            o = oracle.loc[state]
            row.update({"cell oracle": number(o["simulated"]), "move": f"{o['error']:+.3f}",
                        "outside survey CI": "yes" if not r["survey_ci_low"] <= o["simulated"] <= r["survey_ci_high"]
                        else "no"})
        if state in mrp.index:
            row["MRP"] = number(mrp.loc[state, "simulated"])
        row["states not told apart"] = int(twins.get(state, 0))
        if model is not None and state in model.index:
            row["model"] = number(model.loc[state, "simulated"])
        rows.append(row)
    return pd.DataFrame(rows)


def _noise_markdown(analysis: CellAnalysis) -> str:
    pairs = analysis.pairs
    lines = []
    for (question, option), part in pairs.groupby(["question", "option"], sort=False):
        undecided = part[~part["distinguishable"].astype(bool)]
        examples = ", ".join(f"{a}-{b}" for a, b in undecided[["state_a", "state_b"]].head(6).itertuples(index=False))
        lines.append(f"`{question}` / `{option}`: {len(undecided):,} of {len(part):,} state pairs cannot be told apart "
                     f"by the survey's own bootstrap (e.g. {examples or 'none'})")
    if "bh_family" in pairs and len(pairs):
        lines.append(f"Told apart when the bootstrap p of the difference, adjusted by Benjamini-Hochberg across "
                     f"{pairs['bh_family'].iloc[0]}, is below 1 - the interval level.")
    se = analysis.scores.drop_duplicates(["question", "state", "option"])
    lines.append(f"Survey standard error of a state share: median {number(se['survey_se'].median())}, "
                 f"largest {number(se['survey_se'].max())} ({se.sort_values('survey_se').iloc[-1]['state']}).")
    return bullet_list(lines)


def implication_markdown(attributes) -> str:
    """What cells defined with survey-drawn attributes (party, ideology) mean for the comparison; '' if none."""
    drawn = [a for a in attributes if a in SURVEY_DRAWN]
    if not drawn:
        return ""
    return ("**Cells with survey-drawn attributes.** The census carries no " + ", ".join(f"`{a}`" for a in drawn)
            + ": each census persona draws them from CCES respondents of its demographic cell (age group, sex, race / "
            "ethnicity, college degree, Census region; pvsst.personas.survey_attributes). So the population's counts "
            "in these cells are the census "
            "demographics times the *survey's own* within-cell distribution of these attributes: a state's party "
            "or ideology mix differs from the nation's only through its demographics, never through its own "
            "political make-up. The cell oracle and the model are scored against CCES answers of respondents "
            "who also supplied these distributions, so part of the agreement is built in (the comparison is not "
            "independent of the survey), and state differences that run through party or ideology beyond "
            "demographics cannot be reproduced by any source here: read state errors as a lower bound on what "
            "a real state population would show.")


def cell_markdown(analysis: CellAnalysis, figure_text: str) -> str:
    """The cell-run section of the survey report."""
    lines = ["## Population estimates and states", "",
             "Post-stratified shares (`analysis/estimates.csv`): estimate_d = sum_c N_dc / N_d p_c over the cells "
             "c of domain d, with Wilson intervals from each cell's sampled answers, exact for a model's "
             "distributions, and no interval (survey sample) for a control whose distributions are estimated "
             "from the survey's respondents (its sampling error is the survey's). National rows (every option) "
             "and group rows (the first option) below; every state and option in the CSV. coverage: the "
             "answered cells' share of the domain's population.", "",
             _estimates_markdown(analysis.estimates), ""]
    implication = implication_markdown(analysis.attributes)
    if implication:
        lines += [implication, ""]
    if not analysis.has_states:
        return "\n".join(lines + [bullet_list([f"note: {n}" for n in analysis.notes]) if analysis.notes else "",
                                  "", figure_text])
    lines += ["### States against the survey", "",
              markdown_table(_summary_frame(analysis)), "",
              "Per question and source over the states (`analysis/state_scores.csv`): mean absolute error of the "
              "option shares, mean Jensen-Shannon distance, SimBench pooled over states (100 (1 - sum_g "
              "TV(p_g, h_g) / sum_g TV(u, h_g))) and its median (per-state SimBench is unstable near 50/50, so "
              "no mean is shown), and the correlation of simulated with real state shares. The national "
              "marginal and uniform are the same in every state: their correlation is 0 by construction. The "
              "cell oracle (the survey's own answers per cell, post-stratified with the population's counts) "
              "is a reference, not a ceiling: what a simulator answering every cell like its respondents "
              "scores; a source that ignores the cells, such as the national marginal, can score better.", "",
              mrp_markdown(analysis.scores), "",
              *(["### Groups against the survey", "", markdown_table(group_table(analysis.groups)), "",
                 "Per group (the first option; every option in `analysis/group_scores.csv`): the survey's group "
                 "share and each source's absolute error, the yardsticks last: the cell oracle and MRP "
                 "post-stratified with the population's counts of the group in every state (MRP's part of each "
                 "state from its leave-state-out fit), the national marginal and uniform.", ""]
                if not analysis.groups.empty else []),
              "### Composition effect", "", _composition_markdown(analysis), "",
              "### The survey's own noise", "", _noise_markdown(analysis), ""]
    if not analysis.election.empty:
        lines += [election_markdown(analysis.election), ""]
    for question in dict.fromkeys(analysis.scores["question"].astype(str)):
        lines += [f"### Every state: `{question}`", "", markdown_table(state_table(analysis, question)), "",
                  f"model: `{(_model_sources(analysis.scores) or ['none'])[0]}`; move: the cell oracle's share minus "
                  f"the survey's raw share (with national cells, the composition "
                  "effect); outside survey CI: whether the oracle leaves the survey's own 95% bootstrap interval; "
                  "states not told apart: other states whose difference from this one the survey's bootstrap "
                  "cannot resolve (BH-adjusted bootstrap p across every question x option x state pair at least "
                  "1 - the interval level; pairs in `analysis/state_pairs.csv`).", ""]
    if analysis.notes:
        lines += [bullet_list([f"note: {n}" for n in analysis.notes]), ""]
    lines += ["### State figures", "", figure_text, ""]
    return "\n".join(lines)


def simbench_markdown(fidelity: pd.DataFrame, threshold: float) -> str:
    """Per source: pooled, median and mean SimBench over the questions (the data set), with intervals;
    a source degraded by failed calls (above ``threshold``) shows its status instead of numbers."""
    wanted = ("pooled_simbench", "median_simbench", "mean_simbench")
    rows = fidelity[fidelity["metric"].isin(wanted) & (fidelity["group"].astype(str) == "all")]
    if rows.empty:
        return "No SimBench rows in `analysis/fidelity.csv` (scored before SimBench was added: rescore the run)."
    keys = [k for k in ("provider", "condition", "elicitation") if k in rows]
    degraded = degraded_sources(fidelity, threshold)
    out = []
    for key, part in rows.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key))
        row["status"] = degraded.get(key, "ok")
        by = part.set_index("metric")
        for metric in wanted:
            r = by.loc[metric] if metric in by.index else None
            if key in degraded:
                row[metric.replace("_", " ")] = "not reported (degraded)"
            elif r is None or pd.isna(r["value"]):
                row[metric.replace("_", " ")] = "n/a (no answers)"
            else:
                row[metric.replace("_", " ")] = estimate(r["value"], r["ci_low"], r["ci_high"])
        out.append(row)
    per_question = fidelity[(fidelity["metric"] == "simbench") & (fidelity["group"].astype(str) == "all")]
    text = [markdown_table(pd.DataFrame(out)), "",
            "SimBench = 100 (1 - TV(model, human) / TV(uniform, human)), TV = total variation: 0 = no closer than "
            "uniform, 100 = the human distribution. Pooled over the data set's questions: 100 (1 - sum_q TV_q / "
            "sum_q TVu_q); median over questions; the mean is shown for comparison with SimBench's tables but "
            "is unstable where a question's human answers are near uniform. Per question (`simbench` rows of "
            f"`analysis/fidelity.csv`): {len(per_question)} row(s), range "
            f"{number(per_question['value'].min())} to {number(per_question['value'].max())}."]
    return "\n".join(text)
