"""Resolve a spec's persona source into the persona table the engine seats agents from.

``default`` uses the engine's built-in personas; ``census`` synthesises a raked population once per run
(``RUN/personas.parquet``); ``file`` reads the user's table. Cards are rendered with the spec's style.
"""
from __future__ import annotations

from pathlib import Path

from pvsst.experiments.spec.study import StudySpec
from pvsst.core.run_layout import PERSONAS

# Spec card-style names -> persona card templates.
CARD_STYLES = {"pvsst_short": "label", "third_person": "profile", "first_person": "backstory"}


def resolve_personas(spec: StudySpec, spec_dir: Path, run_dir: Path) -> str | None:
    """Path of the run's persona table (written once), or ``None`` for the built-in personas."""
    source = spec.personas
    if source.source == "default":
        return None
    target = run_dir / PERSONAS
    if target.is_file():
        return str(target)
    from pvsst.personas.cards import personas_for_simulation
    from pvsst.personas.records import read_personas, write_personas

    if source.source == "census":
        from pvsst.personas.synthesis import synthesize

        n = source.n or max(1000, spec.trial.n_agents)
        frame = synthesize(n, geography=source.geography or "US", seed=source.seed or 0).personas
    else:
        path = Path(source.path)
        frame = read_personas(path if path.is_absolute() else spec_dir / path)
    table = personas_for_simulation(frame, card_style=CARD_STYLES[source.card_style])
    run_dir.mkdir(parents=True, exist_ok=True)
    write_personas(table, target)
    return str(target)
