"""The test suite mirrors the packages, so a reader finds a module's tests by its name.

- Every test file lies in ``tests/<package>/`` for a package pvsst installs (``tests/sim/`` for
  ``pvsst.sim``, ...) or in ``tests/benchmarks/``; only the tests of the whole distribution lie directly
  in ``tests/``. A package folder holds test files and ``conftest.py`` only: shared builders and helpers
  are modules directly in ``tests/``, importable by name.
- Test file names are unique across folders (pytest imports them by their base name).
- No test imports another test module: what two test files share belongs in a helper module.
- No docstring or comment under ``tests/`` cites an issue or its acceptance items: a test says what it
  checks and why; which issue asked for it belongs in the commit message.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
WHOLE_DISTRIBUTION = frozenset({
    "test_ci_entry.py", "test_constants.py", "test_docs_site.py", "test_docstring_examples.py", "test_import_graph.py",
    "test_installed_names.py", "test_layout.py",
    "test_no_outside_documents.py", "test_own_wording.py", "test_reference_copy.py"})
OTHER_TEST_FOLDERS = frozenset({"benchmarks"})  # measured ratios of several packages, run by `make bench`
ISSUE_CITATION = re.compile(r"\bissues?\s*#?\d|\bacceptance\s+(?:item\s+)?\d|\bacceptance\s*\(|#\d+\b",
                            re.IGNORECASE)


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def files_of_tests() -> list[Path]:
    return [p for p in python_files() if p.name.startswith("test_")]


def installed_packages() -> set[str]:
    """The top-level packages of the distribution (``pvsst.sim`` -> ``sim``), from pyproject's list."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    return {name.split(".")[1] for name in listed if name.count(".") == 1}


def cites_an_issue(text: str) -> bool:
    return ISSUE_CITATION.search(text) is not None


def test_every_test_file_lies_in_the_folder_of_an_installed_package():
    folders = installed_packages() | OTHER_TEST_FOLDERS
    misplaced = []
    for path in python_files():
        relative = path.relative_to(TESTS)
        if len(relative.parts) == 1:
            if path.name.startswith("test_") and path.name not in WHOLE_DISTRIBUTION:
                misplaced.append(f"{relative}: a test of one package belongs in tests/<package>/")
        elif relative.parts[0] not in folders or len(relative.parts) > 2:
            misplaced.append(f"{relative}: tests/ has one folder per package ({', '.join(sorted(folders))})")
        elif not (path.name.startswith("test_") or path.name == "conftest.py"):
            misplaced.append(f"{relative}: a helper module belongs directly in tests/")
    assert misplaced == []
    assert {"sim", "personas", "experiments", "analysis"} <= installed_packages()  # the list was read


def test_test_file_names_are_unique():
    counts = Counter(path.name for path in files_of_tests())
    assert [name for name, n in counts.items() if n > 1] == []


def test_no_test_imports_another_test_module():
    test_modules = {path.stem for path in files_of_tests()}
    offenders = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            offenders += [f"{path.relative_to(TESTS)}:{node.lineno} imports {name}"
                          for name in names if name.split(".")[0] in test_modules]
    assert offenders == []


def test_no_docstring_or_comment_cites_an_issue():
    offenders = []
    for path in python_files():
        source = path.read_text()
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                docstring = ast.get_docstring(node, clean=False)
                if docstring and cites_an_issue(docstring):
                    offenders.append(f"{path.relative_to(TESTS)}: docstring of {getattr(node, 'name', 'the module')}")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and cites_an_issue(token.string[1:]):
                offenders.append(f"{path.relative_to(TESTS)}:{token.start[0]}: {token.string.strip()}")
    assert offenders == []


def test_the_citation_check_sees_the_usual_forms():
    for history in ("Issue 11, acceptance 7: no file ...", "(issue 3, item 4)", "Acceptance 3 of issue 7",
                    "# Acceptance (issue 12): ...", "acceptance item 2", "see #12", "issues 4 and 5"):
        assert cites_an_issue(history), history
    for plain in ("a reply the provider stopped at max_tokens", "the issuer's key", "acceptance of a lock",
                  "Issues with the spec exit 2", "12 trials in 3 blocks", "colour #ff0000"):
        assert not cites_an_issue(plain), plain
