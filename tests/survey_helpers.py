"""A small survey run on scripted providers (no language model), for report and figure tests."""
from __future__ import annotations

from pathlib import Path

import yaml

from pvsst.experiments.cli import main
from pvsst.experiments.spec.prereg import freeze

GSS = "experiments/surveys/gss2018_spending.yaml"


def scripted_survey_run(directory: Path, *, model: str = "scripted/imitate", n: int = 16,
                        conditions=("direct", "persona_label"), questions: int = 3) -> Path:
    """``pvsst survey run`` of the GSS instrument (first ``questions`` questions) on respondent personas:
    ``model`` under ``conditions`` beside the oracle, marginal and uniform controls."""
    spec = yaml.safe_load(open(GSS))
    spec["questions"] = spec["questions"][:questions]
    spec["conditions"] = list(conditions)
    spec["model"] = model
    spec["analysis"].update(bootstrap_draws=60, min_group_n=2)
    spec["execution"]["chunk_size"] = n
    path = directory / "survey.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    freeze(path)  # a survey run needs a frozen instrument
    out = directory / "run"
    assert main(["survey", "run", str(path), "--out", str(out), "--n", str(n), "--personas", "respondents"]) == 0
    return out
