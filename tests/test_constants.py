"""Each shared constant and run-store name is written once in the source; every other place imports it.

The source is every package folder (tests and docs excluded); docstrings are prose and do not count.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pvsst.core import defaults, run_layout

ROOT = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = ("pvsst", "sim", "personas", "experiments", "analysis")

RUN_FILES = {name: value for name, value in vars(run_layout).items()
             if name.isupper() and isinstance(value, str) and ("." in value or value == run_layout.DONE)}
RUN_FOLDERS = {name: value for name, value in vars(run_layout).items()
               if name.isupper() and isinstance(value, str) and name not in RUN_FILES}
TABLE_FILES = sorted({run_layout.table_file(table) for table in (*run_layout.TRIAL_TABLES, *run_layout.UNIT_TABLES,
                                                                 *run_layout.AUDIT_TABLES)})


def _docstrings(tree: ast.Module) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, kinds) and ast.get_docstring(node, clean=False) is not None}


def _binding_name(node: ast.AST, parents: dict[int, ast.AST]) -> str:
    """The name a literal is bound to: assignment target, keyword, parameter, or dict key (else '')."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Assign):
        return " ".join(ast.unparse(target) for target in parent.targets)
    if isinstance(parent, ast.AnnAssign):
        return ast.unparse(parent.target)
    if isinstance(parent, ast.keyword):
        return str(parent.arg)
    if isinstance(parent, ast.Call) and isinstance(parents.get(id(parent)), (ast.AnnAssign, ast.Assign)):
        return _binding_name(parent, parents)
    if isinstance(parent, ast.keyword) or isinstance(parents.get(id(parent)), ast.keyword):
        return _binding_name(parent, parents)
    if isinstance(parent, ast.arguments):
        positional = parent.posonlyargs + parent.args
        for arg, default in zip(positional[len(positional) - len(parent.defaults):], parent.defaults):
            if default is node:
                return arg.arg
        for arg, default in zip(parent.kwonlyargs, parent.kw_defaults):
            if default is node:
                return arg.arg
    if isinstance(parent, ast.Dict):
        for key, value in zip(parent.keys, parent.values):
            if value is node and key is not None:
                return ast.unparse(key)
    return ""


def _literals() -> list[tuple[str, object, str, bool]]:
    """(place, value, binding name, is a path operand) of every non-docstring constant in the source."""
    found = []
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = _docstrings(tree)
            parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and id(node) not in docstrings and not isinstance(node.value, bool):
                    parent = parents.get(id(node))
                    path_operand = isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div)
                    place = f"{path.relative_to(ROOT)}:{node.lineno}"
                    found.append((place, node.value, _binding_name(node, parents), path_operand))
    return found


LITERALS = _literals()


def _places(value: object, name_part: str | None = None) -> list[str]:
    return [place for place, literal, name, _ in LITERALS
            if type(literal) is type(value) and literal == value
            and (name_part is None or name_part in name.lower())]


@pytest.mark.parametrize(("value", "name_part"), [
    (defaults.ANALYSIS_SEED, None),
    (defaults.BOOTSTRAP_DRAWS, "draws"),
    (defaults.SURVEY_BOOTSTRAP_DRAWS, "draws"),
    (defaults.FAILURE_THRESHOLD, "threshold"),
    (defaults.IDENTIFIER_PATTERN, None),
], ids=["analysis seed", "bootstrap draws", "survey bootstrap draws", "failure threshold", "identifier pattern"])
def test_each_default_is_written_once(value, name_part):
    places = _places(value, name_part)
    assert len(places) == 1 and places[0].startswith("pvsst/core/defaults.py"), places


@pytest.mark.parametrize("value", sorted(RUN_FILES.values()))
def test_each_run_store_file_name_is_written_once(value):
    assert _places(value) == [place for place in _places(value) if place.startswith("pvsst/core/run_layout.py")]
    assert len(_places(value)) == 1, _places(value)


@pytest.mark.parametrize("value", TABLE_FILES)
def test_table_file_names_come_from_table_file(value):
    assert _places(value) == [], "write run_layout.table_file(name), not the file name"


@pytest.mark.parametrize("value", sorted(RUN_FOLDERS.values()))
def test_run_store_folders_are_joined_by_name(value):
    joined = [place for place, literal, _, path_operand in LITERALS if literal == value and path_operand]
    assert joined == [], f"{value!r} joined to a path as a literal at {joined}; use pvsst.core.run_layout"


def test_the_scan_sees_bindings():
    """The name-bound scan finds a literal default where one is written (guards the scan itself)."""
    tree = ast.parse("def f(x, *, draws=7):\n    pass\nA = g(threshold=0.5)\n")
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    names = {node.value: _binding_name(node, parents) for node in ast.walk(tree) if isinstance(node, ast.Constant)}
    assert names == {7: "draws", 0.5: "threshold"}



ADVISORY_JSON = {"pvsst/core/run_folder.py", "pvsst/core/atomic.py"}
"""Modules that read a JSON record they tolerate losing (the lock's holder, an output folder's ledger of the
files pvsst wrote): a bad one reads as empty instead of stopping the command."""


def test_json_files_are_read_by_read_json():
    """No module parses a file's text with json.loads itself: pvsst.core.input_files.read_json does it."""
    own = set()
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and ast.unparse(node.func) == "json.loads" and node.args
                        and "read_text(" in ast.unparse(node.args[0])):
                    own.add(str(path.relative_to(ROOT)))
    assert own == ADVISORY_JSON
