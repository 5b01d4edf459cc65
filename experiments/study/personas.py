"""Resolve a spec's persona source into the persona table the engine seats agents from.

``default`` uses the engine's built-in personas; ``census`` synthesises a raked population once per run
(``RUN/personas.parquet``); ``file`` reads the user's table. Cards are rendered with the spec's style.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.core.run_layout import PERSONAS
from pvsst.experiments.spec.study import StudySpec
from pvsst.personas.cards import personas_for_simulation
from pvsst.personas.records import read_personas, write_personas
from pvsst.personas.synthesis import synthesize

# Spec card-style names -> persona card templates.
CARD_STYLES = {"pvsst_short": "label", "third_person": "profile", "first_person": "backstory"}


def persona_frame(spec: StudySpec, spec_dir: Path) -> pd.DataFrame | None:
    """The spec's persona records before cards are rendered (``None`` for the built-in personas): a
    census population synthesised with the spec's persona seed, or the user's file."""
    source = spec.personas
    if source.source == "default":
        return None
    if source.source == "census":
        n = source.n or max(1000, spec.trial.n_agents)
        return synthesize(n, geography=source.geography or "US", seed=source.seed or 0).personas
    path = Path(source.path)
    return read_personas(path if path.is_absolute() else spec_dir / path)


def with_cards(spec: StudySpec, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the ``card``, ``label`` and ``posting_style`` the engine reads, in the spec's card style."""
    return personas_for_simulation(frame, card_style=CARD_STYLES[spec.personas.card_style])


def resolve_personas(spec: StudySpec, spec_dir: Path, run_dir: Path) -> str | None:
    """Path of the run's persona table (written once), or ``None`` for the built-in personas."""
    if spec.personas.source == "default":
        return None
    target = run_dir / PERSONAS
    if target.is_file():
        return str(target)
    table = with_cards(spec, persona_frame(spec, spec_dir))
    run_dir.mkdir(parents=True, exist_ok=True)
    write_personas(table, target)
    return str(target)
