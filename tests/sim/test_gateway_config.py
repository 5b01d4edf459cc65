"""Every gateway setting is defined once, in :class:`~pvsst.sim.llm.config.GatewayConfig`, and reaches the
gateway a run builds: each field of the model, changed in a study spec's ``execution`` section, in a
survey instrument's, and through every command-line option that overrides it, is what the built
gateway works with (its concurrency limit, pacer, timeout, server, endpoint pool, structured-output
setting), while the unchanged document builds a gateway without it.

The fields are iterated from the pydantic model, so a field added to it fails here until the test
knows another valid value for it and where the gateway keeps it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from pvsst.core.defaults import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S
from pvsst.core.gateway_options import GATEWAY_OPTIONS, option_of
from pvsst.experiments.cli import main
from pvsst.experiments.spec.execution import Execution
from pvsst.experiments.spec.study import load_spec
from pvsst.experiments.survey.spec import load_survey
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway

ROOT = Path(__file__).resolve().parents[2]
MODEL = "scripted/echo"


def _endpoints(gateway: Gateway) -> Any:
    return None if gateway.pool is None else [endpoint.model_dump() for endpoint in gateway.pool.endpoints]


def _pacing(gateway: Gateway) -> Any:
    return None if gateway._pacer is None else round(gateway._pacer.rate_per_s * 60)


# field -> (another valid value, what the built gateway works with, in the field's terms)
ALTERNATIVES: dict[str, tuple[Any, Callable[[Gateway], Any]]] = {
    "max_concurrency": (2, lambda gateway: gateway.max_concurrency),
    "requests_per_minute": (1_000_000, _pacing),
    "request_timeout_s": (100.0, lambda gateway: gateway._sender.timeout_s),
    "api_base": ("http://127.0.0.1:9/v1", lambda gateway: gateway._sender.api_base),
    "endpoints": ([{"api_base": "http://127.0.0.1:9/v1", "weight": 2.0, "max_concurrency": None},
                   {"api_base": "http://127.0.0.1:10/v1", "weight": 1.0, "max_concurrency": 3}], _endpoints),
    "structured_output": ("json_object", lambda gateway: gateway.modes.setting(MODEL)),
}
# field -> the options that override it outside `run` and `survey run`: (command words before the options, option)
CLI_OPTIONS: dict[str, list[tuple[list[str], str]]] = {
    "max_concurrency": [(["simulate", "--model", MODEL, "--topic", "ai_labels", "--agents", "2", "--rounds", "1"],
                         option_of("max_concurrency").flag)],
    "request_timeout_s": [(["llm", "complete", "--model", MODEL, "--prompt", "hi"],
                           option_of("request_timeout_s").flag)],
    "api_base": [(["llm", "complete", "--model", MODEL, "--prompt", "hi"], option_of("api_base").flag)],
}
FIELDS = list(GatewayConfig.model_fields)


@pytest.fixture
def built(monkeypatch) -> list[Gateway]:
    """Every gateway built in this process from now on (the runs below use one worker, in-process)."""
    import pvsst.experiments.run.worker_gateway as worker_gateway

    gateways: list[Gateway] = []
    real_init = Gateway.__init__

    def recording_init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        gateways.append(self)

    monkeypatch.setattr(Gateway, "__init__", recording_init)
    monkeypatch.setattr(worker_gateway, "_GATEWAYS", {})  # a worker's gateway is built anew for each run
    return gateways


def test_every_field_has_an_alternative_and_the_defaults_are_written_once():
    assert sorted(ALTERNATIVES) == sorted(FIELDS), "add the new field to ALTERNATIVES (and CLI_OPTIONS if it has one)"
    assert set(CLI_OPTIONS) <= set(FIELDS)
    default = GatewayConfig()
    for name, (value, _) in ALTERNATIVES.items():
        assert GatewayConfig.model_validate({name: value}).model_dump()[name] != default.model_dump().get(name)
    # The execution section of both documents is this model with the executor's settings added.
    assert set(FIELDS) < set(Execution.model_fields)
    assert load_survey(ROOT / "experiments/surveys/gss2018_spending.yaml").execution.__class__ is Execution
    assert (default.max_concurrency, default.request_timeout_s) == (DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S) == (4,
                                                                                                                    240.0)
    gateway = Gateway()
    assert (gateway.max_concurrency, gateway.config.request_timeout_s) == (4, 240.0)
    gateway.close()
    assert Execution().max_concurrency == 4 and Execution().request_timeout_s == 240.0


@pytest.mark.parametrize("bad", [{"max_concurrency": 0}, {"request_timeout_s": 0}, {"requests_per_minute": 0},
                                 {"structured_output": "xml"}])
def test_bounds_are_the_models_wherever_the_setting_comes_from(bad, tmp_path, capsys):
    name, value = next(iter(bad.items()))
    with pytest.raises(ValueError, match=name if name != "structured_output" else "unknown structured-output"):
        GatewayConfig.model_validate(bad)
    from pvsst.core.errors import InputError

    with pytest.raises(InputError, match=name):
        GatewayConfig().with_options(**bad)


def _study(tmp_path: Path, change: dict[str, Any]) -> Path:
    spec = yaml.safe_load((ROOT / "experiments/specs/scripted_smoke.yaml").read_text())
    spec["factors"].update(models=[MODEL], topics=spec["factors"]["topics"][:1], seeds=[101])
    spec["push_direction"] = {"by_seed": {101: "support"}}
    spec["trial"] = {"n_agents": 2, "n_rounds": 1}
    spec["analysis"].update(bootstrap_draws=20, randomization={"method": "auto", "draws": 19})
    spec["execution"] = {**spec["execution"], "workers": 1, "max_concurrency": DEFAULT_MAX_CONCURRENCY, **change}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    load_spec(path)  # a valid spec
    return path


def _instrument(tmp_path: Path, change: dict[str, Any]) -> Path:
    spec = yaml.safe_load((ROOT / "experiments/surveys/gss2018_spending.yaml").read_text())
    spec["questions"] = spec["questions"][:1]
    spec.update(model=MODEL, conditions=["direct"], controls=["uniform"], seed=7)
    spec["personas"].update(n=2)
    spec["execution"] = {**spec["execution"], "workers": 1, "max_concurrency": DEFAULT_MAX_CONCURRENCY, **change}
    path = tmp_path / "survey.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    load_survey(path)
    return path


def _run(kind: str, tmp_path: Path, change: dict[str, Any]) -> list[str]:
    folder = tmp_path / ("changed" if change else "base")
    folder.mkdir()
    if kind == "study":
        return ["run", str(_study(folder, change)), "--out", str(folder / "run"), "--deviation", "test"]
    return ["survey", "run", str(_instrument(folder, change)), "--out", str(folder / "run"), "--deviation", "test"]


@pytest.mark.parametrize("kind", ["study", "survey"])
@pytest.mark.parametrize("name", FIELDS)
def test_each_field_of_a_document_reaches_the_gateway(kind, name, tmp_path, built, capsys):
    value, observe = ALTERNATIVES[name]
    assert main(_run(kind, tmp_path, {})) == 0, capsys.readouterr().err
    assert built, "the run built no gateway"
    before = observe(built[-1])
    built.clear()
    assert main(_run(kind, tmp_path, {name: value})) == 0, capsys.readouterr().err
    assert built, "the run built no gateway"
    assert observe(built[-1]) == value != before


@pytest.mark.parametrize("name,words,option", [(name, words, option) for name, options in CLI_OPTIONS.items()
                                                for words, option in options])
def test_each_option_overrides_its_field(name, words, option, tmp_path, built, capsys):
    value, observe = ALTERNATIVES[name]
    out = ["--out", str(tmp_path / "trial")] if words[0] == "simulate" else ["--cache", str(tmp_path / "c.sqlite")]
    assert main([*words, *out]) == 0, capsys.readouterr().err
    before = observe(built[-1])
    built.clear()
    out = ["--out", str(tmp_path / "again")] if words[0] == "simulate" else ["--cache", str(tmp_path / "c2.sqlite")]
    assert main([*words, *out, option, str(value)]) == 0, capsys.readouterr().err
    assert observe(built[-1]) == value != before


def test_each_document_refuses_a_setting_only_the_other_uses(tmp_path, capsys):
    study = _study(tmp_path, {})
    text = study.read_text().replace("execution:\n", "execution:\n  chunk_size: 3\n", 1)
    study.write_text(text)
    assert main(["run", str(study), "--out", str(tmp_path / "s"), "--deviation", "test"]) == 2
    err = capsys.readouterr().err.strip()
    assert "execution.chunk_size" in err and "only used by survey instruments" in err and "\n" not in err
    instrument = _instrument(tmp_path, {})
    data = yaml.safe_load(instrument.read_text())
    data["execution"]["executor"] = "ray"
    instrument.write_text(yaml.safe_dump(data))
    assert main(["survey", "run", str(instrument), "--out", str(tmp_path / "v"), "--deviation", "test"]) == 2
    err = capsys.readouterr().err.strip()
    assert "execution.executor" in err and "local executor" in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "v" / "units").exists()


# field -> the run commands' option that overrides it (endpoints come only from the document)
RUN_OPTIONS = {option.field: option.flag for option in GATEWAY_OPTIONS}


def test_the_gateway_options_are_the_models_fields_and_every_run_command_takes_them(capsys):
    assert set(RUN_OPTIONS) == set(FIELDS) - {"endpoints"}
    assert list(RUN_OPTIONS.values()) == ["--max-concurrency", "--requests-per-minute", "--request-timeout",
                                          "--api-base", "--structured-output"]
    for command in (["run"], ["survey", "run"], ["simulate"], ["judge"]):
        assert main([*command, "--help"]) == 0
        text = capsys.readouterr().out
        assert all(flag in text for flag in RUN_OPTIONS.values()), command


@pytest.mark.parametrize("kind", ["study", "survey"])
@pytest.mark.parametrize("name", list(RUN_OPTIONS))
def test_each_run_option_overrides_the_documents_field_and_is_a_recorded_deviation(kind, name, tmp_path, built,
                                                                                   capsys):
    import json

    value, observe = ALTERNATIVES[name]
    assert main(_run(kind, tmp_path, {})) == 0, capsys.readouterr().err
    before = observe(built[-1])
    built.clear()
    folder = tmp_path / "base"
    args = (["run", str(folder / "study.yaml")] if kind == "study" else ["survey", "run", str(folder / "survey.yaml")])
    out = tmp_path / "overridden"
    assert main([*args, "--out", str(out), "--deviation", "test", RUN_OPTIONS[name], str(value)]) == 0, \
        capsys.readouterr().err
    assert observe(built[-1]) == value != before
    deviation = json.loads((out / "manifest.json").read_text())["deviations"][-1]
    assert deviation["text"] == "command-line overrides" and deviation["overrides"] == {name: value}
    assert any(change.startswith(f"execution.{name}:") for change in deviation["changed_fields"]), deviation


@pytest.mark.parametrize("kind", ["study", "survey"])
def test_an_option_out_of_the_models_bounds_is_one_line_and_nothing_is_written(kind, tmp_path, capsys):
    folder = tmp_path / "base"
    folder.mkdir()
    doc = _study(folder, {}) if kind == "study" else _instrument(folder, {})
    args = ["run", str(doc)] if kind == "study" else ["survey", "run", str(doc)]
    assert main([*args, "--out", str(tmp_path / "run"), "--deviation", "t", "--max-concurrency", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "max_concurrency" in err and "\n" not in err and not (tmp_path / "run").exists()
