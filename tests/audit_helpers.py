"""Audit-test builders: a small counterfactual audit instrument from the shipped GSS audit, run and scored
through the command line."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from survey_helpers import write

from pvsst.experiments.cli import main

GSS_AUDIT = "experiments/surveys/gss2018_audit.yaml"


def audit_spec(*, model: str = "scripted/planted_answer_shift", sets: int = 300, questions: int = 1,
               vary: dict | None = None, arity_null: bool = True, controls: tuple = (), **audit) -> dict:
    """The GSS audit instrument cut down: ``questions`` questions, ``model`` (or ``models``) under the
    profile card, ``sets`` census base personas, 499 permutations and 100 bootstrap draws."""
    spec = yaml.safe_load(open(GSS_AUDIT))
    spec["questions"] = spec["questions"][:questions]
    if isinstance(model, str):
        spec["model"] = model
    else:
        spec.pop("model", None)
        spec["models"] = list(model)
    spec["controls"] = list(controls)
    spec["personas"]["n"] = sets
    spec["analysis"]["bootstrap_draws"] = 100
    spec["execution"]["chunk_size"] = 1000
    spec["audit"].update(matched_sets=sets, arity_null=arity_null, permutations=499, **audit)
    if vary is not None:
        spec["audit"]["vary"] = vary
    return spec


def run_and_score(directory: Path, spec: dict, name: str = "audit") -> Path:
    """Freeze, ``pvsst survey run --workers 1`` and ``pvsst survey score``; the run directory."""
    path = write(directory, spec, name=f"{name}.yaml")
    run = directory / f"{name}-run"
    assert main(["survey", "run", str(path), "--out", str(run), "--workers", "1"]) == 0
    assert main(["survey", "score", str(run)]) == 0
    return run


def read_analysis(run: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(run / "analysis" / name)
