"""`pvsst estimate`: trials, calls, tokens, cost and time, checked against the protocol and real runs."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from builders import small_study_data
from reference_paths import PUBLISHED_RESULTS

from pvsst.experiments.cli import main
from pvsst.experiments.spec.design import expand
from pvsst.experiments.spec.estimate import (
    SERVED_CALL_LATENCY_S,
    calls_per_trial,
    estimate,
    model_price,
    prompt_tokens_per_call,
)
from pvsst.experiments.spec.study import StudySpec, load_spec
from pvsst.sim.trial.settings import TrialSettings

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
PUBLISHED = PUBLISHED_RESULTS


def estimate_data(**sections) -> dict:
    """One model, one topic and one seed in the four arms (each arm makes a different number of calls)."""
    factors = {"seeds": [101], "conditions": ["control", "likes", "single_source", "distributed_sources"],
               **sections.pop("factors", {})}
    return small_study_data(factors=factors, **sections)


def test_calls_per_trial_follow_the_protocol():
    # n_rounds * (n_agents posts + n_agents votes + adversary posts), adversaries 0 / 1 / 4
    trial = TrialSettings()
    assert {arm: calls_per_trial(arm, trial) for arm in ("control", "likes", "single_source", "distributed_sources")} \
        == {"control": 6 * 24, "likes": 6 * 24, "single_source": 6 * 25, "distributed_sources": 6 * 28}
    assert calls_per_trial("distributed_sources", TrialSettings(n_distributed_sources=7, n_rounds=2)) == 2 * (24 + 7)
    assert calls_per_trial("likes", TrialSettings(votes_per_voter=0)) == 6 * 12  # no ballots, no vote calls


def test_pvsst_confirmatory_estimate():
    result = estimate(load_spec(SPECS / "pvsst_confirmatory.yaml"))
    assert (result.trials, result.calls) == (256, 38_784)
    assert {name: row.calls for name, row in result.by_condition.items()} == {
        "control": 64 * 144, "likes": 64 * 144, "single_source": 64 * 150, "distributed_sources": 64 * 168}
    assert sum(row.calls for row in result.by_model.values()) == 38_784
    # completion tokens at the caps: posts 120 (honest and adversary), votes 70
    per_block = sum(6 * (12 * 120 + 12 * 70 + n_adv * 120) for n_adv in (0, 0, 1, 4))
    assert result.completion_tokens == 64 * per_block == 3_732_480
    trial = TrialSettings()
    per_block_prompt = sum(6 * (12 * prompt_tokens_per_call("post", trial) + 12 * prompt_tokens_per_call("vote", trial)
                                + n_adv * prompt_tokens_per_call("adversary_post", trial)) for n_adv in (0, 0, 1, 4))
    assert result.prompt_tokens == 64 * per_block_prompt
    assert result.cost_usd == 0.0 and result.unpriced_models == ()  # Ollama is local


def test_cli_prints_trials_and_calls(capsys):
    assert main(["estimate", str(SPECS / "pvsst_confirmatory.yaml")]) == 0
    out = capsys.readouterr().out
    assert "256 trials" in out and "38,784 model calls" in out
    assert "retries" in out and "not included" in out


def test_served_latency_comes_from_the_published_run():
    with PUBLISHED.open() as handle:
        elapsed = sum(float(row["elapsed_seconds"]) for row in csv.DictReader(handle))
    calls_per_second = 38_784 / elapsed  # at PV-SST's 4 parallel requests
    assert SERVED_CALL_LATENCY_S == pytest.approx(4 / calls_per_second, abs=0.005)
    result = estimate(load_spec(SPECS / "pvsst_confirmatory.yaml"))
    assert result.wall_s == pytest.approx(elapsed, rel=0.01)


def test_quickstart_is_about_four_minutes_on_the_embedded_model():
    result = estimate(load_spec(SPECS / "quickstart.yaml"))
    assert (result.trials, result.calls) == (4, 4 * 3 * (2 * 6))
    assert 180 <= result.wall_s <= 300
    assert estimate(load_spec(SPECS / "quickstart.yaml"), calls_per_second=2.0).wall_s == 72.0


def test_scripted_smoke_size():
    result = estimate(load_spec(SPECS / "scripted_smoke.yaml"))
    assert (result.trials, result.calls) == (32, 8 * (144 + 144 + 150 + 168))


@pytest.mark.parametrize("trial", [{"n_agents": 5, "n_rounds": 3, "n_distributed_sources": 3},
                                   {"n_agents": 4, "n_rounds": 2, "votes_per_voter": 0}])
def test_estimated_calls_equal_the_calls_of_an_actual_scripted_run(trial):
    from pvsst.experiments.study.trial_pipeline import trial_config
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.trial.run import run_trial

    spec = StudySpec.model_validate(estimate_data(trial=trial))
    made = 0
    for plan in expand(spec).trials:
        result = run_trial(trial_config(spec, plan), Gateway())
        assert len(result.llm_calls) == calls_per_trial(plan.condition, spec.trial)
        made += len(result.llm_calls)
    assert made == estimate(spec).calls


def test_cost_uses_litellm_prices_and_says_unknown_without_one(tmp_path, capsys):
    import litellm  # the registry imported it with the offline cost map

    data = estimate_data(factors={"models": ["openai/gpt-4o-mini", "hosted_vllm/my-finetune"]},
                         budget={"max_usd": 0.01})
    result = estimate(StudySpec.model_validate(data))
    price = litellm.model_cost["gpt-4o-mini"]
    priced = result.by_model["openai/gpt-4o-mini"]
    expected = (priced.prompt_tokens * price["input_cost_per_token"]
                + priced.completion_tokens * price["output_cost_per_token"])
    assert priced.cost_usd == pytest.approx(expected) and expected > 0
    assert result.by_model["hosted_vllm/my-finetune"].cost_usd is None
    assert result.unpriced_models == ("hosted_vllm/my-finetune",)
    assert result.cost_usd == pytest.approx(expected)
    assert model_price("hosted_vllm/my-finetune").source == "unknown"

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["estimate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "unknown" in out and "hosted_vllm/my-finetune" in out
    assert "exceeds budget.max_usd" in out


def test_endpoints_raise_served_throughput_up_to_what_the_servers_take(tmp_path):
    """Three servers taking 4 requests each, fed by 2 workers x 8: 12 in flight, so the
    PV-SST study's wall time is a third of the one-server estimate at 4 parallel requests."""
    import yaml

    from pvsst.experiments.spec.study import StudySpec

    data = yaml.safe_load((SPECS / "pvsst_confirmatory.yaml").read_text())
    one = estimate(StudySpec.model_validate(data))
    data["execution"].pop("api_base")
    data["execution"].update(workers=2, max_concurrency=8, endpoints=[
        {"api_base": f"http://10.0.0.{i}:11434", "max_concurrency": 4} for i in range(3)])
    many = estimate(StudySpec.model_validate(data))
    assert many.calls == one.calls == 38_784
    assert many.wall_s == pytest.approx(one.wall_s / 3)
    assert "3 endpoints taking 12 requests at once" in many.throughput_note
    # servers without a limit of their own: the gateway's 16 slots are the limit
    for entry in data["execution"]["endpoints"]:
        entry.pop("max_concurrency")
    assert estimate(StudySpec.model_validate(data)).wall_s == pytest.approx(one.wall_s / 4)


def test_a_first_round_audit_adds_its_calls_and_no_trial(tmp_path):
    """Each audit unit (one per model x topic) makes a post and a vote call per member; the real run of the
    same spec makes exactly the estimated number of audit calls."""
    from builders import audit_study_data

    from pvsst.experiments.spec.estimate import AUDIT_ROW

    data = audit_study_data(model="scripted/imitate", sets=5)
    spec = StudySpec.model_validate(data)
    plain = StudySpec.model_validate({k: v for k, v in data.items() if k != "audit"})
    est, base = estimate(spec), estimate(plain)
    assert est.trials == base.trials == 2
    assert est.calls - base.calls == est.by_condition[AUDIT_ROW].calls == 2 * (5 * 4 * 2)
    path = tmp_path / "audited.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["prereg", "freeze", str(path)]) == 0
    assert main(["run", str(path), "--out", str(tmp_path / "run"), "--workers", "1"]) == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert sum(u["calls"] for u in manifest["audits"].values()) == est.by_condition[AUDIT_ROW].calls
