"""Malformed specs (tests/fixtures/specs_malformed): exit 2, one stderr line naming the field, nothing written.

Each fixture's first line says which field the error must name (``# expect-field: ...``) and,
optionally, the second a phrase the problem must contain (``# expect-text: ...``).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pvsst.experiments.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specs_malformed"
CASES = sorted(FIXTURES.glob("*.yaml"))


def expectations(path: Path) -> tuple[str, str]:
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# expect-field: "), f"{path.name} lacks its expect-field header"
    field = lines[0].removeprefix("# expect-field: ")
    text = lines[1].removeprefix("# expect-text: ") if lines[1].startswith("# expect-text: ") else ""
    return field, text


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_there_are_at_least_thirty_malformed_specs():
    assert len(CASES) >= 30


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
@pytest.mark.parametrize("command", [["prereg", "freeze"], ["estimate"], ["prereg", "verify"], ["prereg", "show"],
                                     ["run", "--out", "RUN"]],
                         ids=["freeze", "estimate", "verify", "show", "run"])
def test_malformed_spec_exits_2_with_one_line_naming_the_field(fixture, command, tmp_path, capsys):
    spec = tmp_path / fixture.name
    shutil.copy(fixture, spec)
    before = snapshot(tmp_path)
    command = [str(tmp_path / "run") if part == "RUN" else part for part in command]
    code = main([*command, str(spec)])
    captured = capsys.readouterr()
    field, text = expectations(fixture)
    assert code == 2
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"pvsst: error: {spec}: {field}: "), lines[0]
    assert text in lines[0]
    assert captured.out == ""
    assert snapshot(tmp_path) == before  # no lock, no temp file, nothing else
    assert not (tmp_path / "run").exists()
