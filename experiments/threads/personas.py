"""The persona table of a thread study: the spec's persona source, with cards, checked against the threads.

``census`` synthesises a raked pool of :attr:`~pvsst.experiments.spec.thread_study.ThreadStudySpec.census_size`
personas with the persona seed (default: the study's master seed); ``file`` reads the user's table;
``default`` is PV-SST's built-in table. A table too small for ``n_threads`` authors plus
``engaged_profiles`` engaged personas is an ``InputError`` (exit 2) before anything is written.

Examples
--------
>>> from pvsst.experiments.spec.thread_study import load_thread_spec
>>> table = thread_personas(load_thread_spec("experiments/specs/threads_scripted.yaml"), Path("experiments/specs"))
>>> len(table), {"card", "age", "sex", "state"} <= set(table.columns)
(60, True)
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.experiments.spec.thread_study import ThreadStudySpec
from pvsst.experiments.study.personas import CARD_STYLES
from pvsst.personas.cards import personas_for_simulation
from pvsst.personas.records import read_personas
from pvsst.personas.synthesis import synthesize
from pvsst.sim.persona_table import load_persona_table


def thread_personas(spec: ThreadStudySpec, spec_dir: Path) -> pd.DataFrame:
    """The study's persona table with cards (see the module docstring); too small a table is an ``InputError``."""
    source = spec.personas
    if source.source == "default":
        table = load_persona_table()
    else:
        if source.source == "census":
            seed = source.seed if source.seed is not None else spec.seed
            frame = synthesize(spec.census_size, geography=source.geography or "US", seed=seed).personas
        else:
            path = Path(source.path)
            frame = read_personas(path if path.is_absolute() else Path(spec_dir) / path)
        table = personas_for_simulation(frame, card_style=CARD_STYLES[source.card_style])
    spec.threads.check_population(len(table), source="personas")
    return table
