"""The documentation site builds offline with no warning in strict mode, and its generated tables are
checked against the code they describe.

``mkdocs build --strict`` turns every warning into a failure: a broken link or anchor, a page left out
of the navigation, an API identifier that does not resolve, a docstring griffe cannot parse, and a
spec or instrument field whose meaning ``docs/hooks/field_descriptions.yaml`` does not give (or a
meaning for a field that is gone).
"""
from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "hooks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_site_builds_strictly_offline(tmp_path):
    site = tmp_path / "site"
    # the hook's tree of links to the package folders goes to tmp_path too: nothing is written in the checkout
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PVSST_API_SRC": str(tmp_path / "api-src")}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert "WARNING" not in log, log[-4000:]
    # Generated content is on the pages: the field tables, the command reference, the API reference.
    specs = (site / "specs" / "index.html").read_text(encoding="utf-8")
    assert "request_timeout_s" in specs and "parse_failure_threshold" in specs
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "pvsst prereg freeze" in cli and "--replay-only" in cli
    api = (site / "api" / "analysis" / "index.html").read_text(encoding="utf-8")
    assert 'id="pvsst.analysis.stats.paired.paired_block_contrast"' in api
    # Offline: no page loads anything from another host (Material's web fonts are off).
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and 'src="http' not in text, page


def test_every_field_needs_a_meaning_and_every_meaning_a_field(caplog):
    from pvsst.experiments.spec.study import StudySpec

    tables = _load("reference_tables")
    descriptions = yaml.safe_load((HOOKS / "field_descriptions.yaml").read_text(encoding="utf-8"))["study"]
    with caplog.at_level(logging.WARNING):
        text = tables.schema_reference(StudySpec, descriptions, "specs.md")
    assert caplog.records == []
    assert "| `max_concurrency` | integer (>= 1, <= 100000) | `4` |" in text

    planted = {key: value for key, value in descriptions.items() if key != "execution.max_concurrency"}
    planted["execution.no_such_field"] = "a meaning for a field that does not exist"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        tables.schema_reference(StudySpec, planted, "specs.md")
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2, messages
    assert "execution.max_concurrency of StudySpec has no meaning" in messages[0]
    assert "describes execution.no_such_field" in messages[1]


def test_command_reference_lists_every_command():
    from pvsst.experiments.cli import _command

    text = _load("reference_tables").cli_reference("pvsst.experiments.cli")
    root = _command()
    ctx = type(root).context_class(root, info_name="pvsst")
    for name in root.list_commands(ctx):
        assert f"`pvsst {name}`" in text


def test_docstring_conventions_sphinx_roles_and_singular_example():
    roles = _load("docstring_conventions")
    assert roles.rewrite_roles("see :class:`~pvsst.analysis.stats.plan.AnalysisPlan` and :func:`x.y()`") == (
        'see <autoref identifier="pvsst.analysis.stats.plan.AnalysisPlan" optional><code>AnalysisPlan</code></autoref>'
        ' and <autoref identifier="x.y" optional><code>x.y</code></autoref>')
    assert roles.normalize("Example\n-------\n>>> 1\n1") == "Examples\n--------\n>>> 1\n1"


def test_run_store_page_names_every_file_and_column_a_trial_writes(tmp_path):
    """Every table, column and metrics.json key of a real (scripted) trial is on the run-store page, and
    so are the survey response columns and the analysis files, so the page cannot fall behind the code."""
    import json

    import pyarrow.parquet as pq

    from pvsst.analysis.study.run_analysis import ANALYSIS_FILES
    from pvsst.experiments.cli import main
    from pvsst.experiments.survey.units import RESPONSE_COLUMNS

    assert main(["simulate", "--topic", "ai_labels", "--model", "scripted/imitate", "--agents", "4", "--rounds", "2",
                 "--condition", "single_source", "--follow-dynamics", "--out", str(tmp_path)]) == 0
    (trial,) = (tmp_path / "trials").iterdir()
    page = (ROOT / "docs" / "run-store.md").read_text(encoding="utf-8")
    names = {path.name for path in trial.iterdir()}
    assert {"agents.parquet", "posts.parquet", "votes.parquet", "llm_calls.parquet", "DONE"} <= names
    missing = [name for name in names if f"`{name}`" not in page and name != "DONE"]
    for table in trial.glob("*.parquet"):
        missing += [f"{table.name}:{c}" for c in pq.read_schema(table).names if f"`{c}`" not in page]
    metrics = json.loads((trial / "metrics.json").read_text(encoding="utf-8"))
    missing += [f"metrics.json:{key}" for key in metrics if f"`{key}`" not in page]
    missing += [f"responses:{c}" for c in RESPONSE_COLUMNS if f"`{c}`" not in page]
    missing += [f"analysis:{f}" for f in ANALYSIS_FILES if f"`{f}`" not in page]
    assert missing == []
