"""Survey-test helpers: writing and freezing an instrument, a one-line error, a scripted survey run."""
from __future__ import annotations

from pathlib import Path

import yaml

from pvsst.experiments.cli import main
from pvsst.core.errors import InputError
from pvsst.experiments.spec.prereg import freeze, lock_path
from builders import small_instrument

CCES = "experiments/surveys/cces2016_racial_attitudes.yaml"


def write(tmp_path, spec: dict, name="survey.yaml", frozen=True):
    """Write an instrument and freeze it (as a preregistered run needs), when it is valid (freezing refuses
    an instrument that cannot run: the tests of such instruments run them with --deviation)."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    lock_path(path).unlink(missing_ok=True)
    if frozen:
        try:
            freeze(path)
        except InputError:
            pass  # an invalid instrument: the run under test must refuse it
    return path


def scripted_survey_run(directory: Path, *, model: str = "scripted/imitate", n: int = 16,
                        conditions=("direct", "persona_label"), questions: int = 3) -> Path:
    """``pvsst survey run`` of the GSS instrument (first ``questions`` questions) on respondent personas:
    ``model`` under ``conditions`` beside the oracle, marginal and uniform controls."""
    spec = small_instrument(model=model, conditions=conditions, questions=questions,
                            analysis={"bootstrap_draws": 60, "min_group_n": 2}, execution={"chunk_size": n})
    path = write(directory, spec)
    out = directory / "run"
    assert main(["survey", "run", str(path), "--out", str(out), "--n", str(n), "--personas", "respondents"]) == 0
    return out
