"""Sized for a 2-core machine: the shipped GSS instrument (its ten questions,
the persona-card condition) asked of 2 census personas by the embedded SmolLM2-135M model with
``--elicitation logprobs``: exactly one model call per persona x question, and every distribution is
the normalised probability of the three option codes (sums to 1 within 1e-9). The comparison with
sampling on the same 50 personas is the same command with ``--n 50`` and both conditions."""
from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze

MODEL = "embedded/smollm2-135m"
N = 2


@pytest.mark.slow
@pytest.mark.embedded
def test_logprobs_one_call_per_persona_and_question_and_distributions_sum_to_one(tmp_path, capsys):
    spec = yaml.safe_load(open("experiments/surveys/gss2018_spending.yaml"))
    spec["conditions"] = ["persona_profile"]
    spec["analysis"].update(bootstrap_draws=50, min_group_n=1)
    path = tmp_path / "gss.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    freeze(path)  # a survey run needs a frozen instrument
    out = tmp_path / "run"
    assert main(["survey", "run", str(path), "--out", str(out), "--model", MODEL, "--n", str(N),
                 "--elicitation", "logprobs"]) == 0
    capsys.readouterr()
    unit = next(out.glob("units/embedded-smollm2-135m__*"))
    calls, responses = pd.read_parquet(unit / "llm_calls.parquet"), pd.read_parquet(unit / "responses.parquet")
    questions = [q["id"] for q in spec["questions"]]
    # exactly one call per persona x question: one provenance row each, one provider try each
    assert len(calls) == N * len(questions) == len(responses)
    assert sorted(calls.groupby(["agent_id", "phase"]).size().unique()) == [1]
    assert set(calls["phase"]) == set(questions)
    assert (calls["attempts"] == 1).all() and (calls["status"] == "ok").all() and (calls["model"] == MODEL).all()
    assert (responses["elicitation"] == "logprobs").all() and responses["parse_ok"].all()
    for text, answer in zip(responses["probabilities"], responses["answer"]):
        probabilities = json.loads(text)
        assert set(probabilities) == {"too_little", "about_right", "too_much"}
        assert abs(sum(probabilities.values()) - 1.0) <= 1e-9
        assert all(0.0 < p < 1.0 for p in probabilities.values())  # token probabilities, not a sampled answer
        assert answer == max(probabilities, key=probabilities.get)
    assert main(["survey", "score", str(out), "--draws", "50"]) == 0
    capsys.readouterr()
    table = pd.read_csv(out / "analysis" / "fidelity.csv")
    mine = table[(table["provider"] == MODEL) & (table["metric"] == "js_distance") & (table["group"] == "all")]
    assert len(mine) == len(questions) and (mine["elicitation"] == "logprobs").all()
    assert mine["value"].between(0, 1).all()
