"""Study-audit helpers: play a spec's first-round audit in this process and read its answers."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.analysis.study.audit import member_answers
from pvsst.experiments.audit.job import audit_members, audit_units, unit_plan
from pvsst.experiments.spec.study import StudySpec
from pvsst.experiments.study.trial_pipeline import trial_config
from pvsst.sim.first_round_audit import AuditRound, run_first_round_audit
from pvsst.sim.llm.gateway import Gateway


def play_audit(spec: StudySpec) -> AuditRound:
    """The first audit unit of ``spec`` (its first model and topic), played with a fresh uncached gateway."""
    return run_first_round_audit(trial_config(spec, unit_plan(spec, audit_units(spec)[0])),
                                 audit_members(spec, Path(".")), Gateway())


def audit_answers(round_: AuditRound) -> pd.DataFrame:
    """The members' audited answers (``set_id, group, audit_role, question, answer``)."""
    return member_answers(round_.agents, round_.posts, round_.votes)
