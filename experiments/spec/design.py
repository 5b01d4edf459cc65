"""Design expansion: a spec's factors -> trials -> paired blocks, in the spec's staged run order.

Every model x topic x seed x condition is one trial. A trial's id is built from its own factor values
only (``<model-slug>__<topic>__<seed>__<condition>``), so it stays the same when factors are added,
removed or reordered; that is what lets a resumed or extended run recognise its finished trials.

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec
>>> design = expand(load_spec("experiments/specs/pvsst_confirmatory.yaml"))
>>> len(design.trials), len(design.blocks), design.trials[0].trial_id
(256, 64, 'ollama_chat-qwen3.5-4b__ai_labels__101__control')
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from pvsst.experiments.spec.base import FACTOR_COLUMNS
from pvsst.experiments.spec.study import StudySpec, model_slug

ID_SEPARATOR = "__"


@dataclass(frozen=True)
class ScheduledTrial:
    """One trial to run: its factor values, its block, its push direction and its place in the run order.

    ``stage`` is the 0-based index of the run-order stage (0 when the spec has no stages); ``order`` is
    the 0-based position in the whole run.
    """

    trial_id: str
    block_id: str
    model_name: str
    topic_id: str
    seed: int
    condition: str
    push_direction: str
    stage: int
    order: int


@dataclass(frozen=True)
class Design:
    """The expanded study: trials in run order and the blocks (block id -> trial ids, in run order)."""

    trials: tuple[ScheduledTrial, ...]
    blocks: dict[str, tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.trials)

    def trial(self, trial_id: str) -> ScheduledTrial:
        """The trial with ``trial_id`` (``KeyError`` when there is none)."""
        for plan in self.trials:
            if plan.trial_id == trial_id:
                return plan
        raise KeyError(trial_id)

    def stages(self) -> list[tuple[ScheduledTrial, ...]]:
        """Trials grouped by stage, in run order."""
        return [tuple(group) for _, group in itertools.groupby(self.trials, key=lambda plan: plan.stage)]


def trial_id(model: str, topic_id: str, seed: int, condition: str) -> str:
    """The stable id of one trial (also its directory name in a run store).

    Examples
    --------
    >>> trial_id("ollama/qwen3.5:4b", "ai_labels", 101, "likes")
    'ollama-qwen3.5-4b__ai_labels__101__likes'
    """
    return ID_SEPARATOR.join((model_slug(model), topic_id, str(seed), condition))


def block_id(values: dict[str, object], block_key: list[str]) -> str:
    """The id of the block holding a trial with these factor ``values``.

    Examples
    --------
    >>> block_id({"model": "scripted/imitate", "topic_id": "ai_labels", "seed": 101}, ["model", "topic_id", "seed"])
    'scripted-imitate__ai_labels__101'
    """
    parts = [model_slug(str(values[key])) if key == "model" else str(values[key]) for key in block_key]
    return ID_SEPARATOR.join(parts)


def expand(spec: StudySpec) -> Design:
    """All trials of ``spec`` in its staged run order, and its blocks; deterministic.

    Within a stage trials are sorted by ``run_order.by`` (outermost first), each factor's values in the
    order the spec lists them; factors missing from ``by`` follow in the default order.

    Examples
    --------
    >>> from pvsst.experiments.spec.study import StudySpec
    >>> spec = StudySpec.model_validate({
    ...     "id": "demo", "title": "Demo",
    ...     "hypotheses": [{"id": "H1", "statement": "Likes raise alignment.", "contrast": "lc",
    ...                     "metric": "delta_alignment", "direction": "positive", "primary": True}],
    ...     "outcomes": {"primary": ["delta_alignment"]},
    ...     "factors": {"models": ["scripted/imitate"], "topics": ["ai_labels"], "seeds": [101, 211],
    ...                 "conditions": ["control", "likes"]},
    ...     "analysis": {"contrasts": {"lc": {"treatment": "likes", "control": "control"}}}})
    >>> design = expand(spec)
    >>> [(t.seed, t.condition, t.push_direction) for t in design.trials]
    [(101, 'control', 'support'), (101, 'likes', 'support'), (211, 'control', 'oppose'), (211, 'likes', 'oppose')]
    >>> list(design.blocks)
    ['scripted-imitate__ai_labels__101', 'scripted-imitate__ai_labels__211']
    """
    factors = spec.factors
    levels: dict[str, list] = {"model": list(factors.models), "topic_id": [t.id for t in factors.topics],
                               "seed": list(factors.seeds), "condition": list(factors.conditions)}
    rank = {column: {value: i for i, value in enumerate(values)} for column, values in levels.items()}
    by = list(spec.run_order.by) + [column for column in FACTOR_COLUMNS if column not in spec.run_order.by]
    stages = spec.run_order.stages or []
    directions = spec.push_directions()

    cells = []
    for combination in itertools.product(*(levels[column] for column in FACTOR_COLUMNS)):
        values = dict(zip(FACTOR_COLUMNS, combination))
        stage = next((i for i, s in enumerate(stages) if s.matches(values["model"], values["topic_id"],
                                                                    values["seed"])), 0)
        cells.append((stage, values))
    cells.sort(key=lambda cell: (cell[0], *(rank[column][cell[1][column]] for column in by)))

    trials = []
    blocks: dict[str, list[str]] = {}
    for order, (stage, values) in enumerate(cells):
        plan = ScheduledTrial(
            trial_id=trial_id(values["model"], values["topic_id"], values["seed"], values["condition"]),
            block_id=block_id(values, list(spec.blocks.block_key)),
            model_name=values["model"], topic_id=values["topic_id"], seed=values["seed"],
            condition=values["condition"], push_direction=directions[values["seed"]], stage=stage, order=order,
        )
        trials.append(plan)
        blocks.setdefault(plan.block_id, []).append(plan.trial_id)
    return Design(trials=tuple(trials), blocks={key: tuple(ids) for key, ids in blocks.items()})
