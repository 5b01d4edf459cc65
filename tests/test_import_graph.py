"""The import graph of every pvsst module is acyclic, and imports sit at the top of their module.

The graph is built from the source with :mod:`ast`, under the installed names (pyproject's
``package-dir``): an edge for every import of a pvsst module, at module level (class bodies included)
and inside functions, and for every implementation a command module names for
:func:`~pvsst.experiments.cli.lazy.lazy_module` (imported when the command runs). Imports under
``if TYPE_CHECKING:`` run only for type checkers and are left out. An import inside a function is allowed
only where the import is truly optional (an extra not every install has, a library that takes a second
to import and is needed by one path), with a ``# lazy: <why>`` comment on its line or the line above;
there are fewer than :data:`MOST_FUNCTION_LEVEL_IMPORTS` of them.
"""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
MOST_FUNCTION_LEVEL_IMPORTS = 20
LAZY_CALL = "lazy_module"  # pvsst.experiments.cli.lazy.lazy_module("pvsst.<module>")


def source_modules() -> dict[str, Path]:
    """Every pvsst module by installed name -> its file."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    modules = {}
    for name, folder in mapping.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [name, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES = source_modules()


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _walk(node: ast.AST, in_function: bool = False):
    """(node, inside a function?) for every node below ``node``, skipping ``if TYPE_CHECKING:`` bodies."""
    for child in ast.iter_child_nodes(node):
        if _is_type_checking(child):
            for other in child.orelse:
                yield other, in_function
                yield from _walk(other, in_function)
            continue
        inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield child, inside
        yield from _walk(child, inside)


def _resolve(name: str) -> str | None:
    """The pvsst module an imported name belongs to (``pvsst.a.b.C`` -> ``pvsst.a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path) -> list[tuple[str, int, bool, str]]:
    """(imported name, line, inside a function?, kind) of every import of ``module``; kind is ``import``
    or ``lazy`` (a named implementation)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node, in_function in _walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, in_function, "import") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found += [(f"{base}.{alias.name}", node.lineno, in_function, "import") for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == LAZY_CALL
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno, in_function, "lazy"))
    return found


def import_graph() -> tuple[nx.DiGraph, list[tuple[str, int, str]]]:
    """The graph of pvsst modules and the function-level imports (module, line, imported name)."""
    graph, function_level = nx.DiGraph(), []
    graph.add_nodes_from(MODULES)
    for module, path in MODULES.items():
        for name, line, in_function, kind in imports_of(module, path):
            if in_function and kind == "import" and (module, line) not in {(m, n) for m, n, _ in function_level}:
                function_level.append((module, line, name))  # one per import statement
            target = _resolve(name)
            if target is not None and target != module:
                graph.add_edge(module, target)
    return graph, function_level


GRAPH, FUNCTION_LEVEL = import_graph()


def test_the_graph_was_built_from_every_package():
    roots = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    assert {"core", "sim", "personas", "experiments", "analysis"} <= roots
    assert GRAPH.has_edge("pvsst.experiments.study.runner", "pvsst.experiments.run.kernel")
    assert GRAPH.has_edge("pvsst.experiments.cli.run", "pvsst.experiments.study.runner")  # a named implementation


def test_no_import_cycle_among_pvsst_modules():
    cycles = [sorted(component) for component in nx.strongly_connected_components(GRAPH) if len(component) > 1]
    assert cycles == []


def test_few_function_level_imports_each_with_its_reason():
    assert len(FUNCTION_LEVEL) < MOST_FUNCTION_LEVEL_IMPORTS, "\n".join(f"{m}:{line} {name}"
                                                                      for m, line, name in FUNCTION_LEVEL)
    unexplained = []
    for module, line, name in FUNCTION_LEVEL:
        lines = MODULES[module].read_text(encoding="utf-8").splitlines()
        if "# lazy:" not in lines[line - 1] and "# lazy:" not in lines[line - 2]:
            unexplained.append(f"{module}:{line} {name}")
    assert unexplained == []


def test_a_planted_cycle_and_a_planted_function_level_import_are_seen(tmp_path):
    graph = nx.DiGraph([("a", "b"), ("b", "a")])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [["a", "b"]]
    path = tmp_path / "m.py"
    path.write_text("import os\nif TYPE_CHECKING:\n    import sys\ndef f():\n    import json  # lazy: reason\n"
                    "x = lazy_module('pvsst.core.errors')\n")
    assert imports_of("pvsst.m", path) == [("os", 1, False, "import"), ("json", 5, True, "import"),
                                           ("pvsst.core.errors", 6, False, "lazy")]
