"""`pvsst simulate`: one trial from the command line."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import Progress

from pvsst.sim.llm.config import DEFAULT_MAX_CONCURRENCY, GatewayConfig


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
    personas: Optional[Path] = typer.Option(None, "--personas", help="Persona table (CSV/Parquet) with persona_id, label, posting_style[, card]."),
    feed_candidates: Optional[str] = typer.Option(None, "--feed-candidates", help="population or followees (default: the protocol's)."),
    follow_dynamics: bool = typer.Option(False, "--follow-dynamics", help="Follow on like, unfollow on downvote."),
    seed_formula: Optional[str] = typer.Option(None, "--seed-formula", help="Request-seed formula: pvsst or hashed (large populations; default: the protocol's)."),
    protocol: str = typer.Option("pvsst", "--protocol", help="Procedure preset: pvsst or pvsst_reference (the reference implementation's mechanics)."),
    out: Path = typer.Option(Path("runs/simulate"), "--out", help="Directory; the trial is written to OUT/trials/<trial_id>."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Response cache (SQLite); default OUT/cache.sqlite."),
    max_concurrency: Optional[int] = typer.Option(
        None, "--max-concurrency", help=f"Model calls in flight (default {DEFAULT_MAX_CONCURRENCY})."),
) -> None:
    """Run one trial and write its tables and metrics (with a progress bar over rounds)."""
    from pvsst.analysis.outcomes import trial_outcomes
    from pvsst.core.errors import InputError
    from pvsst.sim.llm.cache import ResponseCache
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.llm.providers.registry import validate_model_name
    from pvsst.sim.network import parse_network_spec
    from pvsst.sim.persona_table import load_persona_table
    from pvsst.sim.protocol import protocol_from_preset
    from pvsst.sim.topics import get_topic, load_topic_file
    from pvsst.sim.trial.run import prepare_trial, run_trial
    from pvsst.sim.trial.settings import TrialSetup
    from pvsst.experiments.run.store import write_materials, write_trial
    from pvsst.experiments.run.trial_pipeline import markup_audit

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
    gateway_config = GatewayConfig().with_options("simulate", max_concurrency=max_concurrency)
    table = load_persona_table(personas) if personas is not None else None
    trial_id = f"{chosen.id}__s{seed}__{condition}"
    given = {"n_agents": agents, "n_rounds": rounds, "feed_size": feed_size, "feed_candidates": feed_candidates,
             "request_seed_formula": seed_formula}  # unset options keep TrialSetup's defaults
    config = TrialSetup(trial_id=trial_id, model_name=model_name, topic=chosen, condition=condition, seed=seed,
                         push_direction=push, network=parse_network_spec(network), follow_dynamics=follow_dynamics,
                         protocol=protocol_from_preset(protocol),
                         **{name: value for name, value in given.items() if value is not None})
    if config.network.kind == "edgelist" and not os.access(config.network.path, os.R_OK):
        raise InputError(config.network.path, "network.path", "edge list file is missing or unreadable")
    social_model = prepare_trial(config, table)
    # Everything is validated: only now is anything written.
    out.mkdir(parents=True, exist_ok=True)
    gateway = Gateway.from_config(gateway_config, ResponseCache(cache or out / "cache.sqlite"),
                                  max_attempts=config.max_attempts)
    with Progress(transient=False) as bar:
        task = bar.add_task(f"{trial_id}", total=config.n_rounds)
        result = run_trial(config, gateway, table, on_round=lambda done: bar.update(task, completed=done),
                           model=social_model)
    metrics = trial_outcomes(result.agents, result.posts, result.votes, result.exposures,
                             push_direction=config.push_direction, adversarial=config.arm.adversarial,
                             n_rounds=config.n_rounds, similarity_edge_cases=config.protocol.similarity_edge_cases)
    metrics = {"protocol": config.protocol.preset, "trial_id": trial_id, "model": config.model_name, "topic_id": chosen.id, "seed": seed, "condition": condition,
               "push_direction": config.push_direction, **metrics,
               "n_calls": len(result.llm_calls), "cache_hits": int(result.llm_calls["cached"].sum()),
               **markup_audit(result)}
    path = write_trial(result, out / "trials", metrics)
    write_materials(out, social_model.materials.directory)
    gateway.close()
    Console().print(f"{path}: {len(result.posts)} posts, {len(result.votes)} votes, "
                    f"{int(result.exposures['is_adversarial'].sum()) if len(result.exposures) else 0} adversarial "
                    f"impressions, {metrics['n_calls']} calls ({metrics['cache_hits']} cached), "
                    f"final similarity {metrics.get('final_honest_pairwise_similarity', float('nan')):.4f}",
                    highlight=False)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
