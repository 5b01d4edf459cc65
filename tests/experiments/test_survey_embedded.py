"""Sized for a 2-core machine: the shipped GSS instrument asked of census personas by the embedded
SmolLM2-135M model (6 personas x 2 questions, persona cards), scored beside the three controls. The full
200-persona run is the same command with ``--n 200`` on all questions. A second (scripted) model in the
same run is scored in the same table."""
from __future__ import annotations

import pandas as pd
import pytest
import yaml

from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze

MODEL = "embedded/smollm2-135m"


@pytest.mark.slow
@pytest.mark.embedded
def test_embedded_model_answers_and_is_scored_beside_controls(tmp_path, capsys):
    spec = yaml.safe_load(open("experiments/surveys/gss2018_spending.yaml"))
    spec["questions"] = spec["questions"][:2]
    spec["conditions"] = ["persona_profile"]
    spec["analysis"]["bootstrap_draws"] = 200
    spec["analysis"]["min_group_n"] = 3
    spec.pop("model")
    spec["models"] = [MODEL, "scripted/echo"]
    path = tmp_path / "gss_small.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    freeze(path)
    out = tmp_path / "run"
    assert main(["survey", "run", str(path), "--out", str(out), "--personas", "census", "--n", "6"]) == 0
    capsys.readouterr()
    responses = pd.read_parquet(next(out.glob("units/embedded-smollm2-135m__*/responses.parquet")))
    calls = pd.read_parquet(next(out.glob("units/embedded-smollm2-135m__*/llm_calls.parquet")))
    assert len(responses) == 12 and len(calls) == 12
    # Every call is recorded; the parse-failure flag agrees with the call status.
    assert (responses["parse_ok"] == (responses["status"] == "ok")).all()
    assert responses.loc[responses["parse_ok"], "answer"].isin(["too_little", "about_right", "too_much"]).all()
    assert (calls["model"] == MODEL).all() and calls["prompt_tokens"].gt(50).all()

    assert main(["survey", "score", str(out)]) == 0
    printed = capsys.readouterr().out
    assert MODEL in printed and "scripted/oracle" in printed
    table = pd.read_csv(out / "analysis" / "fidelity.csv")
    assert set(table["model"]) == {MODEL, "scripted/echo", "scripted/oracle", "scripted/marginal", "scripted/uniform"}
    assert not table.duplicated(["question", "model", "condition", "group", "metric"]).any()
    failure = table[(table["provider"] == MODEL) & (table["metric"] == "parse_failure_rate")]["value"]
    assert len(failure) == 2 and failure.between(0, 1).all()
    if responses["parse_ok"].any():
        kl = table[(table["provider"] == MODEL) & (table["metric"] == "kl_human_model") & (table["group"] == "all")]
        assert kl["value"].ge(0).all() and (kl["ci_low"] <= kl["ci_high"]).all()
