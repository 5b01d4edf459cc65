"""Which figures a report draws, from the analysis tables of a run or from a published per-trial table.

A figure whose inputs are absent (no follow or like graph, no survey data, a trial too large to draw) is
skipped with a note that the report prints, never silently.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.figures.consistency import belief_consistency_figure
from pvsst.analysis.figures.forest import contrast_forest_figure, contrasts_overview_figure
from pvsst.analysis.figures.network import MAX_NETWORK_NODES, homophily_null_figure, network_figure
from pvsst.analysis.figures.similarity import similarity_by_round_figure
from pvsst.analysis.figures.stance import stance_trajectories_figure, survival_by_arm_figure
from pvsst.analysis.figures.style import PaperFigure
from pvsst.analysis.figures.survey.fidelity import distribution_by_group_figure, fidelity_by_question_figure
from pvsst.analysis.store.reader import RunTables
from pvsst.core.errors import InputError

FIDELITY_FILE = "fidelity.csv"
FIDELITY_DISTRIBUTIONS_FILE = "fidelity_distributions.csv"


@dataclass(frozen=True)
class FigurePlan:
    """A figure to draw: its section heading and a function that builds it."""

    section: str
    build: Callable[[], PaperFigure]
    label: str


def contrast_figures(contrasts: pd.DataFrame, pairs: Sequence[tuple[str, str]], primary_metric: str, *,
                     draws: int, seed: int) -> Iterator[FigurePlan]:
    """Forest plots of each (contrast, metric) pair, then all contrasts overall on the primary metric."""
    for contrast, metric in dict.fromkeys(pairs):
        yield FigurePlan("Contrasts", lambda c=contrast, m=metric: contrast_forest_figure(
            contrasts, c, m, draws=draws, seed=seed), f"forest {contrast} / {metric}")
    if contrasts.loc[contrasts["metric"] == primary_metric, "contrast"].nunique() > 1:
        yield FigurePlan("Contrasts", lambda: contrasts_overview_figure(contrasts, primary_metric, draws=draws,
                                                                         seed=seed), "contrasts overview")


def run_figures(data: RunTables, tables: dict[str, pd.DataFrame], pairs: Sequence[tuple[str, str]],
                primary_metric: str, network_arm: str | None, *, draws: int, seed: int,
                analysis_dir: Path) -> Iterator[FigurePlan]:
    """Every figure of a run report, in report order."""
    per_round, outcomes = tables["per_round"], tables["trial_outcomes"]
    if len(per_round):
        yield FigurePlan("Lexical convergence", lambda: similarity_by_round_figure(per_round, draws=draws, seed=seed),
                         "similarity by round")
    yield from contrast_figures(tables["contrasts"], pairs, primary_metric, draws=draws, seed=seed)
    if len(per_round):
        yield FigurePlan("Stance", lambda: stance_trajectories_figure(per_round, draws=draws, seed=seed),
                         "stance trajectories")
    if "opposite_side_survival" in outcomes and outcomes["opposite_side_survival"].notna().any():
        yield FigurePlan("Stance", lambda: survival_by_arm_figure(outcomes, draws=draws, seed=seed),
                         "opposite-side survival")
    consistency = tables.get("belief_consistency", pd.DataFrame())
    if len(consistency):
        yield FigurePlan("Belief-behaviour consistency", lambda: belief_consistency_figure(consistency),
                         "belief-behaviour consistency")
    homophily = tables.get("homophily", pd.DataFrame())
    if len(homophily):
        yield FigurePlan("Homophily and networks", lambda: homophily_null_figure(homophily), "homophily")
    trial_id = network_trial(data, network_arm)
    if trial_id is not None:
        yield FigurePlan("Homophily and networks", lambda: _network(data, trial_id, seed), "network drawing")
    yield from fidelity_figures(analysis_dir)


def fidelity_figures(analysis_dir: Path) -> Iterator[FigurePlan]:
    """Survey-fidelity figures when the run has a fidelity table (and answer distributions)."""
    path = analysis_dir / FIDELITY_FILE
    if path.exists():
        fidelity = pd.read_csv(path)
        yield FigurePlan("Survey fidelity", lambda: fidelity_by_question_figure(fidelity), "fidelity by question")
    distributions_path = analysis_dir / FIDELITY_DISTRIBUTIONS_FILE
    if distributions_path.exists():
        distributions = pd.read_csv(distributions_path)
        question = str(distributions["question"].iloc[0]) if len(distributions) else ""
        yield FigurePlan("Survey fidelity", lambda: distribution_by_group_figure(distributions, question),
                         "answer distributions")


def table_figures(table: pd.DataFrame, contrasts: pd.DataFrame, metrics: Sequence[str], primary_metric: str,
                  *, draws: int, seed: int) -> Iterator[FigurePlan]:
    """Figures of a published per-trial table: forest plots per contrast on the primary metric, an
    overview of all contrasts per metric, and opposite-side survival by arm."""
    names = list(dict.fromkeys(contrasts["contrast"]))
    yield from contrast_figures(contrasts, [(c, primary_metric) for c in names], primary_metric, draws=draws,
                                seed=seed)
    for metric in metrics:
        if metric != primary_metric:
            yield FigurePlan("Contrasts",
                             lambda m=metric: contrasts_overview_figure(contrasts, m, draws=draws, seed=seed),
                             f"contrasts overview {metric}")
    if "opposite_side_survival" in table and table["opposite_side_survival"].notna().any():
        yield FigurePlan("Stance", lambda: survival_by_arm_figure(table, draws=draws, seed=seed),
                         "opposite-side survival")


def network_trial(data: RunTables, arm: str | None) -> str | None:
    """A small trial to draw: the first of ``arm`` (else of any arm) with at most 60 agents."""
    if data.agents.empty or data.posts.empty or data.trials.empty:
        return None
    sizes = data.agents.groupby("trial_id").size()
    trials = data.trials.sort_values("trial_id")
    candidates = trials[trials["condition"] == arm] if arm is not None and "condition" in trials else trials
    for trial_id in list(candidates["trial_id"]) + list(trials["trial_id"]):
        if sizes.get(trial_id, MAX_NETWORK_NODES + 1) <= MAX_NETWORK_NODES:
            return str(trial_id)
    return None


def _network(data: RunTables, trial_id: str, seed: int) -> PaperFigure:
    tables = data.trial(trial_id)
    if tables["posts"].empty:
        raise InputError(trial_id, "posts", "no posts to draw")
    return network_figure(tables["agents"], tables["posts"], tables["votes"], tables["edges"],
                          trial_label=trial_id, seed=seed % (2 ** 32))
