"""The stance judgments of a run (``RUN/analysis/judgments/``): where they are, which to use, how judges agree.

``pvsst judge RUN --judge NAME`` writes, per judge, ``<slug>.parquet`` (the judged-stance table of
:mod:`pvsst.sim.judges.stance_judge`) and ``<slug>.json`` (its provenance: the judge, its templates'
sha256, calls and cache hits), where the slug is the judge name with every character outside
``[A-Za-z0-9._-]`` replaced by ``-``. ``pvsst analyze`` keeps the folder and reads it here: the
post measure of belief-behaviour consistency uses one judge (:func:`choose_judge`), and every pair of
judges gives its agreement (:func:`agreement_table`).

Examples
--------
>>> judge_slug("embedded/smollm2-135m"), judge_slug("lexicon")
('embedded-smollm2-135m', 'lexicon')
>>> choose_judge(["lexicon", "openai/gpt-4o"], None), choose_judge(["lexicon"], None), choose_judge([], None)
('openai/gpt-4o', 'lexicon', None)
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from pvsst.analysis.consistency.judge_agreement import compare_judges
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.run_layout import JUDGMENTS as JUDGMENTS_DIR

LEXICON = "lexicon"
AGREEMENT_COLUMNS = ("first_judge", "second_judge", "n", "raw_agreement", "side_agreement", "kappa_linear",
                     "kappa_quadratic")


def judge_slug(name: str) -> str:
    """The file name stem of a judge's judgments."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)


def read_judgments(analysis_dir: str | Path) -> dict[str, tuple[pd.DataFrame, dict]]:
    """Judge name -> (judged-stance table, provenance) for every judge that judged the run (sorted by name).

    A provenance file without its table, or one that is not JSON, is an :class:`InputError` naming it.
    """
    folder = Path(analysis_dir) / JUDGMENTS_DIR
    found: dict[str, tuple[pd.DataFrame, dict]] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        provenance = read_json(path, "judge provenance")
        table_path = path.with_suffix(".parquet")
        if not table_path.is_file():
            raise InputError(str(table_path), "judgments", "missing beside its provenance file")
        found[str(provenance.get("judge", path.stem))] = (pd.read_parquet(table_path), provenance)
    return dict(sorted(found.items()))


def choose_judge(available: Sequence[str], wanted: str | None, *, source: str = "analysis.stance_judge") -> str | None:
    """The judge whose judgments the post measure uses.

    ``wanted`` (the spec's ``analysis.stance_judge``) when given: it must have judged the run, else an
    :class:`InputError` naming ``source``. Otherwise the first language-model judge by name, else the
    lexicon judge, else ``None`` (no judgments: the post measure is left empty).
    """
    available = sorted(available)
    if wanted is not None:
        if wanted not in available:
            raise InputError(source, wanted, "this judge has not judged the run (run `pvsst judge RUN --judge "
                             f"{wanted}`; judged by: {', '.join(available) or 'none'})")
        return wanted
    models = [name for name in available if name != LEXICON]
    return models[0] if models else (LEXICON if LEXICON in available else None)


def agreement_table(judgments: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per pair of judges (in name order): :data:`AGREEMENT_COLUMNS` over the posts both judged.

    Examples
    --------
    >>> a = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": ["x", "y", "z"], "judged_stance": [2, -1, 0]})
    >>> row = agreement_table({"a": a, "b": a.assign(judged_stance=[2, 1, 0])}).iloc[0]
    >>> row["first_judge"], row["second_judge"], int(row["n"]), round(float(row["raw_agreement"]), 4)
    ('a', 'b', 3, 0.6667)
    """
    rows = []
    for first, second in itertools.combinations(sorted(judgments), 2):
        try:
            result = compare_judges(judgments[first], judgments[second])
        except InputError:  # no post judged by both
            continue
        rows.append({"first_judge": first, "second_judge": second, **result.to_frame().iloc[0].to_dict()})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
