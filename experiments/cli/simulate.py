"""`pvsst simulate`: one trial from the command line, run as a one-trial study through the run kernel."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Optional

import typer
import yaml
from rich.console import Console

from pvsst.core.atomic import write_text
from pvsst.core.errors import InputError
from pvsst.core.run_folder import claimed_run_folder
from pvsst.core.run_layout import METRICS, SIMULATE_SPEC, TRIALS
from pvsst.experiments.cli.folder_options import out_option
from pvsst.experiments.cli.gateway_options import MAX_CONCURRENCY, gateway_overrides

SPEC_FILE = SIMULATE_SPEC


def simulate(
    topic: Optional[str] = typer.Option(None, "--topic", help="Built-in topic id (ai_labels, identity_verification, chronological_default, political_ad_targeting)."),
    topic_file: Optional[Path] = typer.Option(None, "--topic-file", help="YAML with topics: [{id, question, support_angle, oppose_angle}] (the first is used, or --topic picks one)."),
    condition: str = typer.Option("likes", "--condition", help="control, likes, likes_hidden, unranked, follows, single_source, distributed_sources."),
    agents: Optional[int] = typer.Option(None, "--agents", help="Honest agents (default: the protocol's)."),
    rounds: Optional[int] = typer.Option(None, "--rounds", help="Rounds (default: the protocol's)."),
    seed: int = typer.Option(101, "--seed", help="Trial seed (all randomness and request seeds derive from it)."),
    model_name: str = typer.Option("embedded/smollm2-135m", "--model", help="Model string (embedded/..., scripted/..., or any litellm model)."),
    network: str = typer.Option("complete", "--network", help="complete | erdos_renyi:p=0.1 | barabasi_albert:m=3 | watts_strogatz:k=4,p=0.1 | sbm:attribute=A,homophily=H,p=P | edgelist:path=FILE"),
    feed_size: Optional[int] = typer.Option(None, "--feed-size", help="Posts per feed (default: the protocol's)."),
    push: Optional[str] = typer.Option(None, "--push", help="support or oppose (default: PV-SST's seed map, else seed parity)."),
    personas: Optional[Path] = typer.Option(None, "--personas", help="Persona records (CSV/Parquet), as a spec's personas.path."),
    feed_candidates: Optional[str] = typer.Option(None, "--feed-candidates", help="population or followees (default: the protocol's)."),
    follow_dynamics: bool = typer.Option(False, "--follow-dynamics", help="Follow on like, unfollow on downvote."),
    seed_formula: Optional[str] = typer.Option(None, "--seed-formula", help="Request-seed formula: pvsst or hashed (large populations; default: the protocol's)."),
    protocol: str = typer.Option("pvsst", "--protocol", help="Procedure preset: pvsst or pvsst_reference (the reference implementation's mechanics)."),
    out: Path = out_option("Run directory; the trial is written to OUT/trials/<trial_id> (an existing one is resumed).",
                           Path("runs/simulate")),
    max_concurrency: Optional[int] = MAX_CONCURRENCY,
) -> None:
    """Run one trial as a one-trial study and write it as `pvsst run` would (same trial id, same metrics.json).

    The options become a study spec, written to OUT/simulate.yaml (its condition beside a second arm,
    since a study compares two; only the asked trial is run); the run is recorded in OUT/manifest.json
    as a deviation from an unfrozen spec. `pvsst run OUT/simulate.yaml --out RUN --deviation TEXT` runs
    both arms of the same study.
    """
    from pvsst.experiments.cli.summary import print_summary
    from pvsst.experiments.study.runner import run_study
    from pvsst.experiments.spec.design import trial_id

    spec = one_trial_spec(topic=topic, topic_file=topic_file, condition=condition, agents=agents, rounds=rounds,
                          seed=seed, model_name=model_name, network=network, feed_size=feed_size, push=push,
                          personas=personas, feed_candidates=feed_candidates, follow_dynamics=follow_dynamics,
                          seed_formula=seed_formula, protocol=protocol)
    document = spec.model_dump(mode="json", exclude_defaults=True)
    document["push_direction"]["by_seed"] = spec.push_direction.by_seed  # integer keys, as a spec writes them
    one = trial_id(model_name, spec.factors.topics[0].id, seed, condition)
    with claimed_run_folder(out):  # everything is validated: only now is anything written
        path = write_text(out / SPEC_FILE, yaml.safe_dump(document, sort_keys=False))
        summary = run_study(path, out, workers=1, deviation=f"pvsst simulate: the one trial {one}",
                            gateway=gateway_overrides(max_concurrency=max_concurrency), trial_ids=[one])
    metrics = json.loads((out / TRIALS / one / METRICS).read_text()) if summary.done else {}
    if metrics:
        Console().print(f"{out / TRIALS / one}: {metrics['n_calls']} calls ({metrics['cache_hits']} cached), final "
                        f"similarity {metrics.get('final_honest_pairwise_similarity', float('nan')):.4f}",
                        highlight=False)
    print_summary(summary)


def one_trial_spec(*, topic, topic_file, condition, agents, rounds, seed, model_name, network, feed_size, push,
                   personas, feed_candidates, follow_dynamics, seed_formula, protocol):
    """The study spec of ``pvsst simulate``'s options (validated; any problem is an ``InputError``)."""
    from pydantic import ValidationError

    from pvsst.core.validation import describe_validation_error
    from pvsst.experiments.study.files import check_study_files
    from pvsst.experiments.spec.study import StudySpec
    from pvsst.sim.llm.providers.registry import validate_model_name
    from pvsst.sim.network import parse_network_spec
    from pvsst.sim.topics import get_topic, load_topic_file
    from pvsst.sim.trial.settings import default_push_direction

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


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
