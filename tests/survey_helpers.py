"""Survey-test helpers: writing and freezing an instrument, a one-line error, a scripted survey run."""
from __future__ import annotations

from pathlib import Path

import yaml
from builders import small_instrument

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze
from pvsst.experiments.spec.lock import lock_path

CCES = "experiments/surveys/cces2016_racial_attitudes.yaml"


# The census flu design's case level (4 levels) and household vignette (3 levels), for tests that plant a
# household-dependent decision; CASE_LEVEL_NAMES maps the case levels to the bank's case-count names.
HOUSEHOLD_SCENARIO_FACTORS = [
    {"id": "case_level", "levels": [{"id": "none", "text": "No current cases nearby."},
                                    {"id": "under_10", "text": "Fewer than 10 current cases nearby."},
                                    {"id": "from_10_to_100", "text": "Between 10 and 100 current cases nearby."},
                                    {"id": "over_100", "text": "More than 100 current cases nearby."}]},
    {"id": "household", "levels": [
        {"id": "none", "text": ""},
        {"id": "member_reported", "text": "Someone in your household got tested and reported them."},
        {"id": "member_did_not_report", "text": "Someone in your household did not get tested or report them."}]},
]
CASE_LEVEL_NAMES = {"none": "0", "under_10": "<10", "from_10_to_100": "10-100", "over_100": ">100"}


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


CELL_ATTRIBUTES = ["sex", "race_ethnicity", "education", "party"]


def cell_spec(model: str = "scripted/prompt_logprobs", n: int = 2000, questions: int = 2, **changes) -> dict:
    """The CCES racial-attitudes instrument answered cell by cell: census personas (``n``, seed 3, US),
    cells of sex x race / ethnicity x education x party (the CCES grouping axes read from them),
    ``model`` under ``persona_profile_logprobs``, no controls, the state as the survey's geography."""
    spec = yaml.safe_load(open(CCES))
    spec["questions"] = spec["questions"][:questions]
    spec.update(model=model, conditions=["persona_profile_logprobs"], controls=[],
                personas={"source": "census", "n": n, "seed": 3, "geography": "US"},
                cells={"attributes": list(CELL_ATTRIBUTES), "card_style": "cell_v1"})
    spec["data"]["geography"] = "state"
    spec["analysis"]["bootstrap_draws"] = 50
    spec["execution"]["chunk_size"] = 1000
    spec.update(changes)
    return spec
