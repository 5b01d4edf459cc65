"""``analysis`` is a house of rooms, one job each, and imports between rooms run one way (docs/development.md).

The rooms in order, lower first: a module may import from its own room and from rooms above it in
``ROOMS``, never from a room below. The graph counts every ``pvsst.analysis`` import, function-level ones
included, read from the source with ``ast``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pvsst.analysis

ROOT = Path(pvsst.analysis.__file__).parent
ROOMS = ("store", "stats", "text", "network", "counterfactual", "consistency", "study", "scenarios", "epidemic",
         "survey", "threads", "figures", "report")


def imported_modules(path: Path) -> set[str]:
    """The ``pvsst.analysis`` modules (dotted, below ``pvsst.analysis``) a source file imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pvsst.analysis."):
            names.add(node.module.removeprefix("pvsst.analysis."))
        elif isinstance(node, ast.Import):
            names |= {a.name.removeprefix("pvsst.analysis.") for a in node.names
                      if a.name.startswith("pvsst.analysis.")}
    return names


def test_every_module_lives_in_a_room():
    assert sorted(p.name for p in ROOT.glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()) == sorted(ROOMS)


def test_imports_between_rooms_run_one_way():
    rank = {room: i for i, room in enumerate(ROOMS)}
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        room = path.relative_to(ROOT).parts[0]
        for target in imported_modules(path):
            if rank[target.split(".")[0]] > rank[room]:
                upward.append(f"{path.relative_to(ROOT)} imports pvsst.analysis.{target}")
    assert not upward, upward
