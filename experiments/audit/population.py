"""The personas of a counterfactual audit run: matched sets over the varied attributes, plus the null.

From the instrument's persona source (census or respondent-matched personas) ``audit.matched_sets``
personas are the base personas: all of them when the source gives exactly as many, else a sample
without replacement drawn with the persona seed (kept in source order). Each is copied once per level combination of
``audit.vary`` (:func:`pvsst.personas.matched_sets.counterfactual_personas`): every other attribute
is kept, and the copies share the base persona's request seed (``request_key`` = the base id), so only
the varied attributes differ. With ``audit.arity_null`` each base persona is also copied as many times as
there are groups, nothing changed but the request seed (``request_key`` = the copy's own id): the
arity-matched null (:func:`pvsst.personas.matched_sets.seed_groups`).

Columns added: ``set_id`` (the base persona id), ``group`` (the level combination, e.g.
``black/female``; ``seed0``, ``seed1``, ... in the null), ``audit_role`` (``audit`` or ``arity_null``),
``replicate`` (the null copy's number; -1 in the audit) and ``request_key`` (the id request seeds and
the shuffled option order derive from). Attributes derived from a varied one are derived again
(``party`` and ``posting_style`` from ``party_id``; ``posting_style`` from ``ideology`` and
``education``).

Examples
--------
>>> from pvsst.experiments.spec.audit_section import AuditSpec
>>> base = pd.DataFrame({"persona_id": ["p1", "p2", "p3"], "sex": ["male", "female", "male"], "age": [30, 40, 50]})
>>> audit = AuditSpec.model_validate({"vary": {"sex": ["female", "male"]}, "matched_sets": 2})
>>> frame = audit_population(audit, base, seed=0)
>>> sorted(frame["set_id"].unique())
['p2', 'p3']
>>> frame[["persona_id", "group", "audit_role", "request_key"]].values.tolist()[:2]
[['p2~female', 'female', 'audit', 'p2'], ['p2~male', 'male', 'audit', 'p2']]
>>> frame[frame["audit_role"] == "arity_null"][["persona_id", "sex", "request_key"]].values.tolist()[:2]
[['p2~seed0', 'female', 'p2~seed0'], ['p2~seed1', 'female', 'p2~seed1']]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.experiments.spec.audit_section import AuditSpec
from pvsst.personas.matched_sets import counterfactual_personas, seed_groups
from pvsst.personas.survey_attributes import posting_style_of
from pvsst.personas.vocabulary import COLLEGE_DEGREE_LEVELS, party_of

AUDIT_COLUMNS = ("set_id", "group", "audit_role", "replicate", "request_key")
AUDIT_ROLE, NULL_ROLE = "audit", "arity_null"


def _derive_again(frame: pd.DataFrame, varied: set[str]) -> None:
    if "party_id" in varied and "party" in frame:
        frame["party"] = [party_of(str(v)) for v in frame["party_id"]]
    if varied & {"party_id", "ideology", "education"} and {"posting_style", "party_id", "ideology"} <= set(frame):
        college = frame["education"].isin(COLLEGE_DEGREE_LEVELS) if "education" in frame else False
        frame["posting_style"] = posting_style_of(frame["party_id"].astype(object), frame["ideology"].astype(object),
                                                  college)


def audit_population(audit: AuditSpec, base: pd.DataFrame, seed: int = 0, source: str = "audit") -> pd.DataFrame:
    """The matched sets and the arity-matched null of ``audit.matched_sets`` base personas (a sample
    drawn with ``seed`` when ``base`` has more)."""
    if len(base) < audit.matched_sets:
        raise InputError(source, "matched_sets", f"{audit.matched_sets} matched sets need as many base personas; "
                         f"the persona source gives {len(base)}")
    for attribute in audit.vary:
        if attribute not in base.columns:
            raise InputError(source, f"vary.{attribute}", f"the personas have no column {attribute!r} "
                             "(respondent-matched personas: map it in personas.attributes)")
    if len(base) > audit.matched_sets:  # a seeded sample, not the first rows (a data file may be sorted)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
        base = base.iloc[np.sort(rng.choice(len(base), size=audit.matched_sets, replace=False))]
    base = base.reset_index(drop=True)
    plain = base.copy()
    for attribute in audit.vary:  # categorical columns would refuse a level not among their categories
        plain[attribute] = plain[attribute].astype(object)
    sets = counterfactual_personas(plain, audit.vary, source=source)
    _derive_again(sets, set(audit.vary))
    sets["audit_role"], sets["replicate"], sets["request_key"] = AUDIT_ROLE, -1, sets["set_id"].astype(str)
    parts = [sets]
    if audit.arity_null:
        null = seed_groups(base, audit.n_groups, source=source)
        null["audit_role"], null["request_key"] = NULL_ROLE, null["persona_id"].astype(str)
        parts.append(null)
    frame = pd.concat(parts, ignore_index=True)
    for attribute in audit.vary:
        frame[attribute] = frame[attribute].astype(str)
    frame["set_id"] = frame["set_id"].astype(str)
    return frame
