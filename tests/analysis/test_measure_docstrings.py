"""Every public function of the measure modules documents itself the numpy way, so the rule cannot decay.

A measure (a function computing a number from data) has Parameters, Returns, Notes (the formula),
References (the source paper or book) and Examples (a doctest, which ``test_docstring_examples.py``
runs). The few public helpers of these modules that shape or check data rather than measure are
listed in ``HELPERS``: they need Parameters, Returns and Examples. A new public function is a measure
until it is listed there.
"""
from __future__ import annotations

import importlib
import inspect
import re

import pytest

MEASURE_MODULES = (
    "pvsst.analysis.consistency.judge_agreement", "pvsst.analysis.consistency.trials",
    "pvsst.analysis.counterfactual.measures", "pvsst.analysis.counterfactual.null",
    "pvsst.analysis.counterfactual.permutation", "pvsst.analysis.counterfactual.power",
    "pvsst.analysis.network.dynamics", "pvsst.analysis.network.homophily",
    "pvsst.analysis.stats.block_tests", "pvsst.analysis.stats.contrast_table", "pvsst.analysis.stats.paired",
    "pvsst.analysis.stats.preregistered_checks", "pvsst.analysis.study.outcomes",
    "pvsst.analysis.survey.cells.poststratification", "pvsst.analysis.survey.fidelity",
    "pvsst.analysis.survey.simbench", "pvsst.analysis.survey.stated_enacted", "pvsst.analysis.text.diversity",
    "pvsst.analysis.text.lexical")
HELPERS = frozenset({
    "stats.block_tests.randomization_method", "survey.stated_enacted.persona_distributions",
    "stats.contrast_table.stratum_type_name", "counterfactual.measures.one_hot",
    "counterfactual.permutation.group_counts", "counterfactual.permutation.permuted_within_sets",
    "survey.fidelity.bootstrap_tables", "survey.fidelity.bounded_interval", "survey.fidelity.design_resample",
    "survey.fidelity.no_variance", "survey.fidelity.resample_index", "network.homophily.edge_label_arrays",
    "network.homophily.like_graph", "network.dynamics.follow_graph_at", "study.outcomes.empty_consistency",
    "study.outcomes.honest_agent_ids", "study.outcomes.push_sign", "study.outcomes.stance_paths",
    "stats.paired.numeric_values", "stats.paired.require_arms", "stats.paired.require_columns",
    "stats.paired.warn_excluded", "survey.cells.poststratification.cell_distributions",
    "survey.cells.poststratification.domain_counts", "survey.cells.poststratification.effective_answers",
    "text.diversity.tokenize", "counterfactual.power.degrees_of_freedom", "counterfactual.null.aligned_sets"})
MEASURE_SECTIONS = ("Parameters", "Returns", "Notes", "References", "Examples")
HELPER_SECTIONS = ("Parameters", "Returns", "Examples")
SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.MULTILINE)


def public_functions() -> list[tuple[str, object]]:
    found = []
    for name in MEASURE_MODULES:
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == name and not attribute.startswith("_"):
                found.append((f"{name.removeprefix('pvsst.analysis.')}.{attribute}", value))
    return found


def sections(docstring: str) -> dict[str, str]:
    """Section title -> its text, for the numpy sections of a (cleaned) docstring."""
    parts = SECTION.split(docstring)
    return {title: body.strip() for title, body in zip(parts[1::2], parts[2::2])}


@pytest.mark.parametrize("name, function", public_functions(), ids=lambda v: v if isinstance(v, str) else "")
def test_public_function_of_a_measure_module_has_its_numpy_sections(name, function):
    found = sections(inspect.getdoc(function) or "")
    required = HELPER_SECTIONS if name in HELPERS else MEASURE_SECTIONS
    if not inspect.signature(function).parameters:
        required = tuple(title for title in required if title != "Parameters")
    missing = [title for title in required if not found.get(title)]
    assert not missing, f"{name}: missing or empty {missing} (a helper that measures nothing goes in HELPERS)"
    assert ">>> " in found["Examples"], f"{name}: Examples hold no doctest"
    if "References" in required:
        assert re.search(r"^\.\. \[\d+\] ", found["References"], re.MULTILINE), f"{name}: References cite nothing"


def test_the_helper_list_names_only_existing_public_functions():
    names = {name for name, _ in public_functions()}
    assert HELPERS <= names, sorted(HELPERS - names)
    assert len(names) - len(HELPERS) >= 60  # the measures, so a module dropped from the list shows
