"""``pvsst simulate``: one trial from a few options, run as a one-trial study through the run kernel.

:func:`one_trial_spec` turns the options into a study spec (its condition beside a second arm, since a
study compares two); :func:`simulate_one_trial` writes it to ``OUT/simulate.yaml`` and runs only the asked
trial with :func:`~pvsst.experiments.study.runner.run_study`, recorded in the manifest as a deviation from
an unfrozen spec, so the trial has the trial id and ``metrics.json`` that ``pvsst run`` gives it.

Examples
--------
>>> spec = one_trial_spec(topic="ai_labels", topic_file=None, condition="likes", agents=4, rounds=2, seed=101,
...                       model_name="scripted/imitate", network="complete", feed_size=None, push=None,
...                       personas=None, feed_candidates=None, follow_dynamics=False, seed_formula=None,
...                       protocol="pvsst")
>>> spec.factors.conditions, spec.trial.n_agents
(['likes', 'control'], 4)
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml
from pydantic import ValidationError

from pvsst.core.atomic import write_text
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.run_folder import claimed_run_folder
from pvsst.core.run_layout import METRICS, SIMULATE_SPEC, TRIALS
from pvsst.core.validation import describe_validation_error
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.spec.design import trial_id
from pvsst.experiments.spec.study import StudySpec
from pvsst.experiments.study.files import check_study_files
from pvsst.experiments.study.runner import run_study
from pvsst.sim.llm.providers.registry import validate_model_name
from pvsst.sim.network import parse_network_spec
from pvsst.sim.topics import get_topic, load_topic_file
from pvsst.sim.trial.settings import default_push_direction


def simulate_one_trial(spec: StudySpec, out: Path, gateway: dict | None = None) -> tuple[RunSummary, Path, dict]:
    """Write ``spec`` to ``OUT/simulate.yaml`` and run its one trial (its first model, topic, seed and
    condition) into ``out``; return the summary, the trial's folder and its metrics (``{}`` when it failed)."""
    document = spec.model_dump(mode="json", exclude_defaults=True)
    document["push_direction"]["by_seed"] = spec.push_direction.by_seed  # integer keys, as a spec writes them
    factors = spec.factors
    one = trial_id(factors.models[0], factors.topics[0].id, factors.seeds[0], factors.conditions[0])
    text = yaml.safe_dump(document, sort_keys=False)
    with claimed_run_folder(out):  # everything is validated: only now is anything written
        _require_same_simulation(out, text)
        path = write_text(out / SIMULATE_SPEC, text)
        summary = run_study(path, out, workers=1, deviation=f"pvsst simulate: the one trial {one}",
                            gateway=gateway, trial_ids=[one])
    metrics = read_json(out / TRIALS / one / METRICS, "metrics") if summary.done else {}
    return summary, out / TRIALS / one, metrics


def _require_same_simulation(out: Path, text: str) -> None:
    """Refuse an ``out`` that holds another run (a survey, a study, a simulation of other options): its
    files stay as they are."""
    manifest = RunManifest.load(out)
    if manifest is None:
        return
    manifest.require_kind("study")
    spec = out / SIMULATE_SPEC
    if not spec.is_file() or spec.read_text(encoding="utf-8") != text:
        raise InputError(out / SIMULATE_SPEC, "--out", "this folder holds another run (not `pvsst simulate` with "
                         "these options); give a new --out")


def one_trial_spec(*, topic, topic_file, condition, agents, rounds, seed, model_name, network, feed_size, push,
                   personas, feed_candidates, follow_dynamics, seed_formula, protocol):
    """The study spec of ``pvsst simulate``'s options (validated; any problem is an ``InputError``)."""
    if topic_file is not None:
        topics = {t.id: t for t in load_topic_file(topic_file)}
        if topic is not None and topic not in topics:
            raise InputError(topic_file, "topics", f"no topic with id {topic!r}")
        chosen = topics[topic] if topic else next(iter(topics.values()))
    elif topic is not None:
        chosen = get_topic(topic)
    else:
        raise InputError("--topic", "topic", "give --topic ID or --topic-file FILE")
    validate_model_name(model_name)
    other = "likes" if condition == "control" else "control"
    given = {"n_agents": agents, "n_rounds": rounds, "feed_size": feed_size, "feed_candidates": feed_candidates,
             "request_seed_formula": seed_formula, "follow_dynamics": follow_dynamics or None,
             "network": _network(parse_network_spec(network))}
    data = {
        "id": "simulate", "title": f"pvsst simulate: {chosen.id}, {condition}, seed {seed}",
        "hypotheses": [{"id": "H_simulate", "statement": f"{condition} against {other}", "contrast": "simulate",
                        "metric": "final_honest_pairwise_similarity", "direction": "positive"}],
        "outcomes": {"primary": ["final_honest_pairwise_similarity"]},
        "factors": {"models": [model_name], "topics": [dataclasses.asdict(chosen)], "seeds": [seed],
                    "conditions": [condition, other]},
        "push_direction": {"by_seed": {seed: push or default_push_direction(seed)}},
        "trial": {name: value for name, value in given.items() if value is not None},
        "protocol": {"preset": protocol},
        "analysis": {"contrasts": {"simulate": {"treatment": condition, "control": other}}},
        "execution": {"workers": 1},
    }
    if personas is not None:
        data["personas"] = {"source": "file", "path": str(personas.resolve())}
    try:
        spec = StudySpec.model_validate(data)
    except ValidationError as err:
        raise InputError("pvsst simulate", *describe_validation_error(err)) from None
    check_study_files(spec, Path.cwd())  # the edge list and persona file, as a run reads them
    return spec


def _network(network) -> dict:
    """The network section; an edge list named relative to this folder, as an absolute path (the spec is
    written to OUT, and a spec's paths are relative to its own folder)."""
    if network.kind == "edgelist":
        network = network.model_copy(update={"path": str(Path(network.path).resolve())})
    return network.model_dump(mode="json", exclude_none=True)
