"""``pvsst analyze RUN``: outcomes, per-round curves, preregistered contrasts and homophily of a run.

Writes ``RUN/analysis/`` atomically (a temporary folder renamed into place):

==========================  ========================================================================
trial_outcomes.csv          one row per completed trial: factors + outcomes recomputed from its tables
per_round.csv               one row per trial x round: alignment, pushed-side share, similarity, errors
contrasts.csv               the published PV-SST columns for every planned contrast x metric x stratum,
                            then the settings used (randomization method and draws, bootstrap draws
                            and seed, alpha)
headline.csv                per contrast, the primary metric overall: statistics, consistency
                            criterion (with its shares), the plan's multiplicity-adjusted p across the
                            plan's metrics (with the method), mixed-model coefficient
homophily.csv               per trial: assortativity of the like graph (voter -> author) and, where
                            the network is stored, of the final follow graph, against both nulls,
                            with the same-group tie share
network_dynamics.csv        per trial whose follow graph changed: selection (logit of new follows
                            on stance-side distance) and influence (lagged stance on followees')
excluded_blocks.csv         blocks left out of a contrast, with the reason
parse_failures.csv          per arm: post and vote parse-failure rates (mean, max, trials above the
                            preregistered threshold) and the threshold
belief_consistency.csv      per model x arm x consistency metric: mean over blocks with its
                            block-bootstrap interval, and the judge the post measure used
stance_consistency.csv      per honest agent-round with a judged post: reported and judged stance,
                            exact and side agreement, contradiction, signed gap (empty unjudged)
judge_agreement.csv         per pair of stance judges that judged the run: raw and side agreement,
                            linear and quadratic weighted kappa
judgments/                  kept as ``pvsst judge`` wrote it (the stance judgments and their provenance)
study_audit*.csv            with an ``audit`` section in the spec: the counterfactual first-round audit
                            per audit unit x question (:mod:`pvsst.analysis.study.audit`)
==========================  ========================================================================

``trial_outcomes.csv`` carries the consistency columns of
:func:`pvsst.analysis.study.outcomes.belief_consistency_outcomes` and ``stance_judge`` (the judge whose
judgments the ``stance_*`` columns read; empty without judgments).
"""
from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.consistency.judgments import JUDGMENTS_DIR, agreement_table, choose_judge, read_judgments
from pvsst.analysis.consistency.run_summary import agent_round_table, belief_consistency_table, require_contrast_metrics
from pvsst.analysis.network.dynamics import follow_graph_at, influence_effect, selection_effect
from pvsst.analysis.network.homophily import assortativity_against_nulls, like_graph, same_group_tie_share
from pvsst.analysis.stats.contrast_table import PairedContrastAnalysis, paired_contrast_table
from pvsst.analysis.stats.paired import IncompleteBlocksWarning, require_arms
from pvsst.analysis.stats.plan import RunPlan, plan_from_spec
from pvsst.analysis.stats.preregistered_checks import (
    adjusted_p_values,
    consistency_check,
    mixed_model_contrast,
    parse_failure_table,
)
from pvsst.analysis.store.reader import TRIAL_FACTOR_COLUMNS, RunTables, load_run
from pvsst.analysis.study.audit import STUDY_AUDIT_FILES, score_study_audit
from pvsst.analysis.study.outcomes import (
    CONSISTENCY_COLUMNS,
    OUTCOME_COLUMNS,
    belief_consistency_by_trial,
    empty_consistency,
    per_round_outcomes,
    trial_outcomes,
)
from pvsst.core.atomic import atomic_directory, check_replaceable
from pvsst.core.errors import InputError
from pvsst.core.run_folder import holds_run_folder
from pvsst.core.run_layout import ANALYSIS, MANIFEST, TRIALS

ADVERSARY_ROLE = "adversary"
HOMOPHILY_REPLICATES = 200
ANALYSIS_FILES = ("trial_outcomes.csv", "per_round.csv", "contrasts.csv", "headline.csv", "homophily.csv",
                  "network_dynamics.csv", "excluded_blocks.csv", "parse_failures.csv", "belief_consistency.csv",
                  "stance_consistency.csv", "judge_agreement.csv")
DYNAMICS_COLUMNS = ["trial_id", "analysis", "term", "coefficient", "std_error", "p_value", "n_observations",
                    "note"]


@dataclass(frozen=True)
class RunAnalysis:
    """What :func:`analyze_run` computed and wrote."""

    out_dir: Path
    plan: RunPlan
    trial_outcomes: pd.DataFrame
    per_round: pd.DataFrame
    contrasts: PairedContrastAnalysis
    headline: pd.DataFrame
    homophily: pd.DataFrame


def collect_trial_outcomes(data: RunTables, progress: Callable[[], None] | None = None,
                           judged: pd.DataFrame | None = None, judge: str | None = None
                           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trial outcome table, per-round table) of every completed trial, recomputed from its tables.

    A trial whose agents/posts tables are absent keeps the outcomes of its ``metrics.json``. ``judged``
    is the judged-stance table of ``judge`` (the post measure of belief-behaviour consistency).
    """
    _require_trials(data)
    grouped = {name: _by_trial(getattr(data, name)) for name in ("agents", "posts", "votes", "exposures")}
    consistency_rows = None  # every trial's at once, when the first trial read from its tables needs them
    outcome_rows, round_frames = [], []
    for metrics in data.trials.to_dict("records"):
        trial_id = metrics["trial_id"]
        factors = {c: metrics[c] for c in TRIAL_FACTOR_COLUMNS if c in metrics}
        agents, posts = grouped["agents"].get(trial_id), grouped["posts"].get(trial_id)
        if agents is None or posts is None or posts.empty:
            outcome_rows.append({**factors, **{c: metrics.get(c) for c in (*OUTCOME_COLUMNS, *CONSISTENCY_COLUMNS)},
                                 "stance_judge": ""})
        else:
            push = metrics.get("push_direction")
            if push is None:
                raise InputError(f"trial {trial_id}", "push_direction", "missing from metrics.json")
            adversarial = bool("role" in agents.columns and (agents["role"] == ADVERSARY_ROLE).any())
            n_rounds = int(metrics.get("n_rounds") or posts["round"].nunique())
            # The trial's protocol setting, as recorded in its metrics.json (absent before it existed).
            edge_cases = metrics.get("similarity_edge_cases")
            edge_cases = edge_cases if isinstance(edge_cases, str) else "pvsst"
            outcomes = trial_outcomes(agents, posts, grouped["votes"].get(trial_id),
                                      grouped["exposures"].get(trial_id), push_direction=push,
                                      adversarial=adversarial, n_rounds=n_rounds, similarity_edge_cases=edge_cases)
            if consistency_rows is None:
                readable = judged is not None and not judged.empty and "trial_id" in judged.columns
                judgments = judged if judge and readable else None
                consistency_rows = belief_consistency_by_trial(data.agents, data.posts, data.votes, judgments)
            consistency = consistency_rows.get(trial_id) or empty_consistency()
            outcome_rows.append({**factors, **outcomes, **consistency, "stance_judge": judge or ""})
            round_frames.append(per_round_outcomes(agents, posts, push_direction=push,
                                                   similarity_edge_cases=edge_cases).assign(**factors))
        if progress is not None:
            progress()
    per_round = pd.concat(round_frames, ignore_index=True) if round_frames else pd.DataFrame()
    if not per_round.empty:
        front = [c for c in TRIAL_FACTOR_COLUMNS if c in per_round.columns]
        per_round = per_round[front + [c for c in per_round.columns if c not in front]]
    return pd.DataFrame(outcome_rows), per_round


def homophily_table(data: RunTables, *, replicates: int = HOMOPHILY_REPLICATES, seed: int = 0) -> pd.DataFrame:
    """Per trial: assortativity of the like graph and (where edges are stored) of the final follow graph.

    Attributes: the agents' initial side (sign of the initial stance, categorical) and initial stance
    (numeric), plus every categorical persona column with 2-20 levels.
    """
    columns = ["trial_id", "graph", "measure", "null", "observed", "null_mean", "null_sd", "z", "p_value",
               "replicates", "same_group_observed", "same_group_expected"]
    trial_ids = sorted(set(data.edges.get("trial_id", [])) | set(data.votes.get("trial_id", [])))
    rows = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # Degenerate graphs (one group only, constant values) have an undefined coefficient: nan.
        warnings.simplefilter("ignore", RuntimeWarning)
        edges_by_trial = dict(tuple(data.edges.groupby("trial_id"))) if not data.edges.empty else {}
        no_edges = data.edges.iloc[0:0]
        for trial_id in trial_ids:
            rows += _trial_homophily(data, trial_id, edges_by_trial.get(trial_id, no_edges), replicates, seed)
    return pd.DataFrame(rows, columns=columns)


def network_dynamics_table(data: RunTables) -> pd.DataFrame:
    """Selection and influence for every trial whose follow graph changed during the trial.

    Selection uses the distance between the two agents' stance sides at the previous round; influence
    regresses each agent's stance on its own and its followees' mean stance one round earlier.
    """
    rows = []
    if data.edges.empty:
        return pd.DataFrame(columns=DYNAMICS_COLUMNS)
    for trial_id, edges in data.edges.groupby("trial_id", sort=True):
        if edges["round"].nunique() < 2:
            continue
        nodes = pd.unique(edges[["source", "target"]].to_numpy().ravel())
        agents = data.agents[(data.agents["trial_id"] == trial_id) & data.agents["agent_id"].isin(nodes)]
        posts = data.posts[(data.posts["trial_id"] == trial_id) & data.posts["agent_id"].isin(nodes)]
        # Align with the edges table: the graph recorded at round r is the one in effect after round
        # r - 1's votes, so round r carries the stance after round r - 1 (round 0: the initial stance).
        stances = pd.concat([
            agents.assign(round=0)[["round", "agent_id",
                                    "initial_stance"]].rename(columns={"initial_stance": "stance"}),
            posts[["round", "agent_id", "stance"]].assign(round=posts["round"] + 1),
        ], ignore_index=True)
        stances["side"] = np.sign(stances["stance"])
        for name, compute in (("selection", lambda: selection_effect(edges, stances, "side")),
                              ("influence", lambda: influence_effect(edges, stances))):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    effect = compute()
                rows.append({"trial_id": trial_id, **effect.__dict__, "note": ""})
            except (InputError, ValueError, np.linalg.LinAlgError) as err:
                rows.append({"trial_id": trial_id, "analysis": name, "note": str(err)})
    return pd.DataFrame(rows, columns=DYNAMICS_COLUMNS)


def _trial_homophily(data: RunTables, trial_id: str, edges: pd.DataFrame, replicates: int,
                     seed: int) -> list[dict]:
    """Homophily rows of one trial: its final follow graph and its like graph (honest agents)."""
    rows = []
    agents = data.agents[data.agents["trial_id"] == trial_id]
    if "role" in agents.columns:
        agents = agents[agents["role"] == "honest"]
    agents = agents.set_index("agent_id")
    attributes = _homophily_attributes(agents)
    graphs = []
    if not edges.empty:
        graphs.append(("follow", follow_graph_at(edges, int(edges["round"].max()), attributes.index)))
    votes = data.votes[data.votes["trial_id"] == trial_id] if not data.votes.empty else data.votes
    if not votes.empty:
        graphs.append(("likes", like_graph(votes)))
    for name, graph in graphs:
        graph.add_nodes_from((n, dict(row)) for n, row in attributes.iterrows() if n in graph)
        graph.remove_nodes_from([n for n in list(graph) if n not in attributes.index])
        if graph.number_of_edges() < 2:
            continue
        for attribute in attributes.columns:
            kind = "numeric" if attribute == "initial_stance" else "attribute"
            same = same_group_tie_share(graph, attribute) if kind == "attribute" else {}
            for comparison in assortativity_against_nulls(graph, attribute, kind=kind,
                                                          replicates=replicates, seed=seed):
                rows.append({"trial_id": trial_id, "graph": name, **comparison.__dict__,
                             "same_group_observed": same.get("observed", np.nan),
                             "same_group_expected": same.get("expected", np.nan)})
    return rows


def headline_table(analysis: PairedContrastAnalysis, table: pd.DataFrame, plan: RunPlan) -> pd.DataFrame:
    """Per contrast: the primary metric's overall statistics, consistency verdict, adjusted p, mixed model.

    The adjusted p is the plan's ``multiplicity`` rule across the contrast's metrics (overall rows); the
    row records the rule and the consistency shares it was judged by.
    """
    frame = analysis.frame
    settings = plan.settings
    consistency = settings.consistency
    rows = []
    for contrast in plan.contrasts:
        overall = frame[(frame["contrast"] == contrast.name) & (frame["stratum_type"] == "overall")]
        adjusted = dict(zip(overall["metric"], adjusted_p_values(overall["randomization_p"].to_numpy(),
                                                                 settings.multiplicity)))
        primary = overall[overall["metric"] == plan.primary_metric]
        if primary.empty:
            continue
        row = primary.iloc[0].to_dict()
        verdict = consistency_check(frame, contrast.name, plan.primary_metric,
                                    min_model_share=consistency.min_model_share,
                                    min_topic_share=consistency.min_topic_share)
        row.update(adjusted_p=float(adjusted[plan.primary_metric]), multiplicity=settings.multiplicity,
                   consistency_pass=verdict.passed,
                   models_positive=f"{verdict.models_positive}/{verdict.n_models}",
                   topics_positive=f"{verdict.topics_positive}/{verdict.n_topics}",
                   min_model_share=consistency.min_model_share, min_topic_share=consistency.min_topic_share)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                effect = mixed_model_contrast(table, contrast.treatment, contrast.control,
                                              plan.primary_metric, block=plan.block, contrast=contrast.name,
                                              alpha=settings.alpha)
            row.update(mixed_coefficient=effect.coefficient, mixed_ci_low=effect.ci_low,
                       mixed_ci_high=effect.ci_high, mixed_p=effect.p_value)
        except (InputError, ValueError, np.linalg.LinAlgError):
            row.update(mixed_coefficient=np.nan, mixed_ci_low=np.nan, mixed_ci_high=np.nan, mixed_p=np.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def analyze_plan(table: pd.DataFrame, plan: RunPlan, metrics, strata, source: str) -> PairedContrastAnalysis:
    """The paired contrast table of ``plan`` on a per-trial table, every setting taken from the plan."""
    settings = plan.settings
    return paired_contrast_table(table, plan.contrasts, metrics, block=plan.block, strata=strata,
                                 draws=settings.bootstrap_draws, seed=settings.bootstrap_seed,
                                 alpha=settings.alpha, randomization=settings.randomization, source=source)


@holds_run_folder
def analyze_run(run_dir: str | Path, *, progress: Callable[[], None] | None = None,
                homophily_replicates: int = HOMOPHILY_REPLICATES) -> RunAnalysis:
    """Load a run, compute every table of ``RUN/analysis/`` and write them atomically (refused at once, before
    anything is computed, while ``RUN/analysis/`` holds a file pvsst did not write)."""
    check_replaceable(Path(run_dir) / ANALYSIS, keep=(JUDGMENTS_DIR,))
    data = load_run(run_dir)
    _require_trials(data)
    # The plan is checked against the arms the trials record before any outcome is computed, so a
    # bad frozen plan is reported at once, not after every trial's tables were read and scored.
    conditions = data.trials["condition"].dropna().unique() if "condition" in data.trials else []
    plan = plan_from_spec(data.manifest.get("spec"), conditions, source=str(Path(run_dir) / MANIFEST))
    if not plan.contrasts:
        raise InputError(str(run_dir), "contrasts", "none planned, and no PV-SST contrast has both arms")
    if "condition" in data.trials:
        for contrast in plan.contrasts:
            require_arms(data.trials["condition"], contrast, source=str(Path(run_dir) / TRIALS))
    out_dir = Path(run_dir) / ANALYSIS
    judgments = {name: table for name, (table, _) in read_judgments(out_dir).items()}
    judge = choose_judge(list(judgments), plan.settings.stance_judge,
                         source=f"{Path(run_dir) / MANIFEST}: spec.analysis.stance_judge")
    outcomes, per_round = collect_trial_outcomes(data, progress, judgments.get(judge), judge)
    require_contrast_metrics(outcomes, plan.contrasts, source=str(Path(run_dir) / MANIFEST))
    metrics = tuple(m for m in plan.metrics if m in outcomes.columns and outcomes[m].notna().any())
    strata = tuple(s for s in plan.strata if s in outcomes.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteBlocksWarning)  # reported in excluded_blocks.csv
        contrasts = analyze_plan(outcomes, plan, metrics, strata, source=str(Path(run_dir) / TRIALS))
    headline = headline_table(contrasts, outcomes, plan)
    homophily = homophily_table(data, replicates=homophily_replicates, seed=plan.settings.bootstrap_seed)
    dynamics = network_dynamics_table(data)
    audit = score_study_audit(run_dir)
    audit_tables = {} if audit is None else {file: getattr(audit, name) for name, file in STUDY_AUDIT_FILES.items()}
    _write_atomically(out_dir, {**audit_tables, "trial_outcomes.csv": outcomes, "per_round.csv": per_round,
                                "contrasts.csv": contrasts.frame, "headline.csv": headline,
                                "homophily.csv": homophily, "network_dynamics.csv": dynamics,
                                "excluded_blocks.csv": contrasts.excluded_blocks,
                                "parse_failures.csv": parse_failure_table(
                                    outcomes, plan.settings.parse_failure_threshold),
                                "belief_consistency.csv": belief_consistency_table(outcomes, plan, judge),
                                "stance_consistency.csv": agent_round_table(data, judgments.get(judge)),
                                "judge_agreement.csv": agreement_table(judgments)})
    return RunAnalysis(out_dir, plan, outcomes, per_round, contrasts, headline, homophily)


def _require_trials(data: RunTables) -> None:
    if data.trials.empty:
        raise InputError(str(data.path), TRIALS, "no completed trial (no DONE marker)")


def _write_atomically(out_dir: Path, tables: dict[str, pd.DataFrame]) -> None:
    """Replace ``out_dir`` by the tables, keeping the stance judgments ``pvsst judge`` wrote there."""
    with atomic_directory(out_dir, ledger=True, keep=(JUDGMENTS_DIR,)) as staging:
        if (out_dir / JUDGMENTS_DIR).is_dir():
            shutil.copytree(out_dir / JUDGMENTS_DIR, staging / JUDGMENTS_DIR)
        for name, frame in tables.items():
            frame.to_csv(staging / name, index=False)


def _by_trial(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    if frame.empty or "trial_id" not in frame.columns:
        return {}
    return {trial_id: rows for trial_id, rows in frame.groupby("trial_id", sort=False)}


def _homophily_attributes(agents: pd.DataFrame) -> pd.DataFrame:
    attributes = pd.DataFrame(index=agents.index)
    attributes["initial_side"] = np.sign(agents["initial_stance"].astype(float)).map(
        {1.0: "support", -1.0: "oppose", 0.0: "neutral"})
    attributes["initial_stance"] = agents["initial_stance"].astype(float)
    skip = {"trial_id", "role", "persona_id", "initial_stance", "initial_confidence"}
    for column in agents.columns:
        if column not in skip and agents[column].dtype == object and 2 <= agents[column].nunique() <= 20:
            attributes[column] = agents[column]
    return attributes
