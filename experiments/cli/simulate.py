"""`pvsst simulate`: one trial from the command line, run as a one-trial study through the run kernel."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pvsst.experiments.cli.folder_options import out_option
from pvsst.experiments.cli.gateway_options import gateway_options
from pvsst.experiments.cli.lazy import lazy_module
from pvsst.experiments.cli.summary import print_summary

rich_console = lazy_module("rich.console")
one_trial = lazy_module("pvsst.experiments.study.one_trial")


@gateway_options()
def simulate(
    topic: Optional[str] = typer.Option(None, "--topic",
                                        help="Built-in topic id (ai_labels, identity_verification, "
                                        "chronological_default, political_ad_targeting)."),
    topic_file: Optional[Path] = typer.Option(None, "--topic-file",
                                              help="YAML with topics: [{id, question, support_angle, oppose_angle}] "
                                              "(the first is used, or --topic picks one)."),
    condition: str = typer.Option("likes", "--condition",
                                  help="control, likes, likes_hidden, unranked, follows, single_source, "
                                  "distributed_sources."),
    agents: Optional[int] = typer.Option(None, "--agents", help="Honest agents (default: the protocol's)."),
    rounds: Optional[int] = typer.Option(None, "--rounds", help="Rounds (default: the protocol's)."),
    seed: int = typer.Option(101, "--seed", help="Trial seed (all randomness and request seeds derive from it)."),
    model_name: str = typer.Option("embedded/smollm2-135m", "--model",
                                   help="Model string (embedded/..., scripted/..., or any litellm model)."),
    network: str = typer.Option("complete", "--network",
                                help="complete | erdos_renyi:p=0.1 | barabasi_albert:m=3 | watts_strogatz:k=4,p=0.1 | "
                                "sbm:attribute=A,homophily=H,p=P | edgelist:path=FILE"),
    feed_size: Optional[int] = typer.Option(None, "--feed-size", help="Posts per feed (default: the protocol's)."),
    push: Optional[str] = typer.Option(None, "--push",
                                       help="support or oppose (default: PV-SST's seed map, else seed parity)."),
    personas: Optional[Path] = typer.Option(None, "--personas",
                                            help="Persona records (CSV/Parquet), as a spec's personas.path."),
    feed_candidates: Optional[str] = typer.Option(None, "--feed-candidates",
                                                  help="population or followees (default: the protocol's)."),
    follow_dynamics: bool = typer.Option(False, "--follow-dynamics", help="Follow on like, unfollow on downvote."),
    seed_formula: Optional[str] = typer.Option(None, "--seed-formula",
                                               help="Request-seed formula: pvsst or hashed (large populations; "
                                               "default: the protocol's)."),
    protocol: str = typer.Option("pvsst", "--protocol",
                                 help="Procedure preset: pvsst or pvsst_reference (the reference implementation's "
                                 "mechanics)."),
    out: Path = out_option("Run directory; the trial is written to OUT/trials/<trial_id> (an existing one is resumed).",
                           Path("runs/simulate")),
    gateway: dict | None = None,
) -> None:
    """Run one trial as a one-trial study and write it as `pvsst run` would (same trial id, same metrics.json).

    The options become a study spec, written to OUT/simulate.yaml (its condition beside a second arm,
    since a study compares two; only the asked trial is run); the run is recorded in OUT/manifest.json
    as a deviation from an unfrozen spec. `pvsst run OUT/simulate.yaml --out RUN --deviation TEXT` runs
    both arms of the same study.
    """
    spec = one_trial.one_trial_spec(
        topic=topic, topic_file=topic_file, condition=condition, agents=agents, rounds=rounds, seed=seed,
        model_name=model_name, network=network, feed_size=feed_size, push=push, personas=personas,
        feed_candidates=feed_candidates, follow_dynamics=follow_dynamics, seed_formula=seed_formula, protocol=protocol)
    summary, trial_dir, metrics = one_trial.simulate_one_trial(spec, out, gateway)
    if metrics:
        rich_console.Console().print(f"{trial_dir}: {metrics['n_calls']} calls ({metrics['cache_hits']} cached), "
                                     "final similarity "
                                     f"{metrics.get('final_honest_pairwise_similarity', float('nan')):.4f}",
                                     highlight=False)
    print_summary(summary)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
