"""The audit section of a survey instrument: bad settings are refused with one line naming the file and
the field before anything is written; a valid section makes the personas matched sets plus the
arity-matched null, whose members share (audit) or do not share (null) their request seeds."""
from __future__ import annotations

import pandas as pd
import pytest
from audit_helpers import GSS_AUDIT, audit_spec
from builders import GSS
from cli_checks import refused
from survey_helpers import write

from pvsst.experiments.survey.personas import human_table, persona_table
from pvsst.experiments.survey.spec import load_survey, survey_sha256
from pvsst.experiments.survey.units import plan_units, unit_requests

BAD = [
    ({"vary": {"shoe_size": ["big", "small"]}}, "audit.vary.shoe_size", "not a persona attribute"),
    ({"vary": ["age"]}, "audit.vary.age", "not a persona attribute with a vocabulary"),
    ({"vary": ["party"]}, "audit.vary.party", "derived from party_id"),
    ({"vary": {"race_ethnicity": ["black", "martian"]}}, "audit.vary.race_ethnicity", "not in the persona vocabulary"),
    ({"vary": {"sex": ["female"]}}, "audit.vary.sex", "at least 2 distinct levels"),
    ({"vary": {}}, "audit.vary", "at least one persona attribute"),
    ({"matched_sets": 1}, "audit.matched_sets", "greater than or equal to 2"),
    ({"alpha": 0.0}, "audit.alpha", "greater than 0"),
    ({"alpha": 1.5}, "audit.alpha", "less than 1"),
    ({"fdr": "bonferroni"}, "audit.fdr", "benjamini_hochberg"),
    ({"matched_sets": 40}, "audit.matched_sets", "personas.n is 30"),
]


@pytest.mark.parametrize("change, field, problem", BAD, ids=[b[1] + ":" + b[2][:12] for b in BAD])
def test_bad_audit_settings_exit_2_naming_the_file_and_field(tmp_path, capsys, change, field, problem):
    spec = audit_spec(sets=30, model="scripted/uniform")
    spec["audit"].update(change)
    path = write(tmp_path, spec, frozen=False)
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(path), "--out", str(out), "--deviation", "test"])
    assert str(path) in err and field in err and problem in err, err
    assert not out.exists()


def test_a_persona_table_without_the_varied_column_is_refused():
    from pvsst.core.errors import InputError
    from pvsst.experiments.audit.population import audit_population

    audit = load_survey(GSS_AUDIT).audit
    base = pd.DataFrame({"persona_id": [f"p{i}" for i in range(60)], "sex": "male"})
    with pytest.raises(InputError, match="vary.race_ethnicity.*no column"):
        audit_population(audit, base)
    with pytest.raises(InputError, match="matched_sets.*gives 10"):
        audit_population(audit, base.head(10).assign(race_ethnicity="white"))


def test_instruments_without_an_audit_hash_as_before():
    # the lock of the shipped GSS instrument was frozen before audits existed
    import json

    from pvsst.experiments.spec.lock import lock_path

    lock = json.loads(lock_path(GSS).read_text())
    assert survey_sha256(load_survey(GSS)) == lock["spec_sha256"]
    assert load_survey(GSS_AUDIT).audit.n_groups == 4


def test_matched_sets_share_request_seeds_and_the_null_does_not(tmp_path):
    spec = write(tmp_path, audit_spec(sets=3, model="scripted/uniform", questions=2), frozen=False)
    survey = load_survey(spec)
    personas = persona_table(survey, human_table(survey))
    audit, null = personas[personas["audit_role"] == "audit"], personas[personas["audit_role"] == "arity_null"]
    assert len(audit) == len(null) == 12 and set(audit["group"]) == {"black/female", "black/male", "white/female",
                                                                      "white/male"}
    # every attribute but the varied ones is equal within a set
    others = [c for c in audit.columns if c not in ("persona_id", "group", "race_ethnicity", "sex", "request_key")
              and not c.startswith(("card_", "reference:", "group:"))]
    assert (audit.groupby("set_id")[others].nunique(dropna=False) == 1).all().all()
    assert audit["card_profile"].str.contains("Black woman").sum() == 3
    unit = next(u for u in plan_units(survey, personas["persona_id"].tolist()) if u.provider == "scripted/uniform")
    seeds = pd.DataFrame([{"persona_id": r.agent_id, "question": r.phase, "seed": r.seed}
                          for r, _ in unit_requests(survey, unit, personas)]).merge(personas, on="persona_id")
    per_set = seeds.groupby(["audit_role", "set_id", "question"])["seed"].nunique()
    assert (per_set["audit"] == 1).all() and (per_set["arity_null"] == 4).all()
