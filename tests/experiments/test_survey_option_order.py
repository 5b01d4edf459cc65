"""`sampling.option_order`: options shown as asked, reversed or shuffled per persona x question.

A scripted respondent that always takes the first listed option makes the display order visible in
the answers, so these tests read the order back from what was answered."""
from __future__ import annotations

import pandas as pd
import pytest
from builders import GSS, small_instrument
from survey_helpers import write

from pvsst.analysis.store.reader import read_responses
from pvsst.experiments.cli import main
from pvsst.experiments.survey.spec import canonical_survey, load_survey, survey_sha256

pytestmark = pytest.mark.usefixtures("first_listed")


def run(tmp_path, capsys, order: str, name: str) -> pd.DataFrame:
    spec = small_instrument(model="scripted/first_listed", controls=[])
    spec["sampling"]["option_order"] = order
    out = tmp_path / name
    assert main(["survey", "run", str(write(tmp_path, spec, f"{name}.yaml")), "--out", str(out), "--n", "40",
                 "--seed", "5", "--workers", "1"]) == 0, capsys.readouterr().err
    return read_responses(out)


def test_as_asked_and_reversed_show_the_instrument_order(tmp_path, capsys):
    asked = run(tmp_path, capsys, "as_asked", "asked")
    assert len(asked) == 40 * 2 * 2 and asked["parse_ok"].all()  # personas x questions x conditions
    assert set(asked["answer"]) == {"too_little"}  # the GSS lists "too little" first
    assert set(asked["option_order"]) == {"too_little|about_right|too_much"}
    reversed_ = run(tmp_path, capsys, "reversed", "reversed")
    assert set(reversed_["answer"]) == {"too_much"}
    assert set(reversed_["option_order"]) == {"too_much|about_right|too_little"}


def test_shuffled_order_is_per_persona_and_question_and_the_same_in_every_condition(tmp_path, capsys):
    shuffled = run(tmp_path, capsys, "shuffled", "shuffled")
    # the recorded order is what was shown: the first-listed respondent answered its first code
    assert (shuffled["answer"] == shuffled["option_order"].str.split("|").str[0]).all()
    assert shuffled["option_order"].map(lambda o: sorted(o.split("|")) == ["about_right", "too_little",
                                                                           "too_much"]).all()
    orders = shuffled.groupby(["persona_id", "question"])["option_order"].nunique()
    assert (orders == 1).all()  # paired across the two conditions
    # 40 personas x 2 questions over 3! = 6 orders: every first option occurs (a fixed order would give one)
    firsts = shuffled[shuffled["condition"] == "direct"]["answer"].value_counts()
    assert set(firsts.index) == {"too_little", "about_right", "too_much"} and firsts.min() >= 10
    again = run(tmp_path, capsys, "shuffled", "again")  # same seed: same orders
    assert again["option_order"].tolist() == shuffled["option_order"].tolist()


def test_the_default_order_keeps_the_instrument_hash_of_earlier_versions():
    shipped = load_survey(GSS)
    # The shipped instrument has since gained the respondent mapping (personas.attributes, id_prefix)
    # and a derived data column; without them it is the instrument of before.
    spec = shipped.model_copy(update={"data": shipped.data.model_copy(update={"derive": {}}),
                                      "personas": shipped.personas.model_copy(update={"attributes": {},
                                                                                      "id_prefix": None})})
    assert "option_order" not in canonical_survey(spec)["sampling"]
    # sha256 of the shipped instrument as written into survey.json by pvsst before option_order existed
    # (commit d798b20, run of 2026-11-30); runs made then still resume and replay.
    assert survey_sha256(spec) == "5840aa786294255589698b74eecaa14b23cc5a30945cee5824783e15a33e9678"
    assert survey_sha256(shipped) != survey_sha256(spec)
    shuffled = spec.model_copy(update={"sampling": spec.sampling.model_copy(update={"option_order": "shuffled"})})
    assert canonical_survey(shuffled)["sampling"]["option_order"] == "shuffled"
    assert survey_sha256(shuffled) != survey_sha256(spec)


def test_an_unknown_option_order_exits_2(tmp_path, capsys):
    spec = small_instrument()
    spec["sampling"]["option_order"] = "alphabetical"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(tmp_path / "run"), "--n", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "sampling.option_order" in err and "\n" not in err, err
    assert not (tmp_path / "run").exists()
