"""The counterfactual first-round audit of a study run whose spec has an ``audit`` section.

Each audit unit (``RUN/audits/<unit_id>/``, one per model x topic) holds the first round played by
matched sets of agents that differ only in the varied attribute(s), and by the arity-matched null
(copies of each set's base persona that differ only in their request seeds). Two questions are audited
per unit, each member contributing one answer:

- ``post_stance``: the stance the member reported with its first-round post (the seven stance levels
  -3 .. 3, scored by level); members whose post reply was unusable are left out;
- ``net_vote``: the member's likes minus downvotes over its ballot (the same ``votes_per_voter``
  posts for every member of a set, so ``-k .. k``, scored by value); members whose ballot failed are
  left out.

Both go to :func:`pvsst.analysis.counterfactual.audit.counterfactual_audit` with the null beside them:
flip rate (share of sets whose answer is not the same for every member), mean absolute score difference,
share spread, each with a percentile bootstrap interval over sets; per group the paired signed-rank
test; the omnibus within-set permutation test on the centred scores (``omnibus_statistic = scores``:
a set's level depends on its initial stance and ballot, so a group's shift shows in the scores within
sets far more than in the pooled shares); and the arity-null test (``exceeds_null``). Every p is
adjusted by Benjamini-Hochberg across every unit (model x topic) x question (x group for the paired
test), the family named in ``bh_family``
(:func:`pvsst.analysis.counterfactual.families.adjusted_across_sources`), and ``mde`` is the shift of
one group's mean score (in score points) that gets a question flagged with 80% power in that family
(:mod:`pvsst.analysis.counterfactual.power`). The null's seed groups are also audited on their own, so
their share gaps are the band a disparity must leave.

Writes three tables to ``RUN/analysis/`` (the columns of :mod:`pvsst.analysis.survey.audit`, with
``unit_id, model, topic_id`` in front instead of model, condition and elicitation):

- ``study_audit.csv``: per unit x question: the measures, tests, ``flagged`` and ``exceeds_null``;
  ``note`` says why a unit has no audit;
- ``study_audit_shares.csv``: per unit x question x group x option: share and gap, with intervals
  (``audit_role`` = ``audit`` or ``arity_null``);
- ``study_audit_groups.csv``: per unit x question x group: score gap and paired p.

Intervals use the spec's ``analysis.bootstrap_draws`` and ``analysis.bootstrap_seed`` at level
``1 - audit.alpha``; the permutation tests draw ``audit.permutations`` permutations from the same seed.

Examples
--------
>>> agents = pd.DataFrame({"agent_id": ["a0", "a1"], "set_id": "s", "group": ["x", "y"], "audit_role": "audit"})
>>> posts = pd.DataFrame({"agent_id": ["a0", "a1"], "stance": [2, -1], "parse_ok": True})
>>> votes = pd.DataFrame({"voter_id": ["a0", "a0", "a1", "a1"], "value": [1, 1, -1, 0], "parse_ok": True})
>>> member_answers(agents, posts, votes)[["group", "question", "answer"]].values.tolist()
[['x', 'post_stance', '2'], ['y', 'post_stance', '-1'], ['x', 'net_vote', '2'], ['y', 'net_vote', '-1']]
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.counterfactual.audit import audit_tables
from pvsst.analysis.counterfactual.families import adjusted_across_sources
from pvsst.analysis.stats.paired import require_columns
from pvsst.analysis.store.reader import iter_unit_tables, read_manifest
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import AUDITS

STUDY_AUDIT_FILES = {"questions": "study_audit.csv", "shares": "study_audit_shares.csv",
                     "groups": "study_audit_groups.csv"}
UNIT_COLUMNS = ("unit_id", "model", "topic_id")
STANCE_LEVELS = [str(level) for level in range(-3, 4)]


def question_codes(votes_per_voter: int) -> dict[str, list[str]]:
    """The audited questions and their options in score order.

    >>> question_codes(2)
    {'post_stance': ['-3', '-2', '-1', '0', '1', '2', '3'], 'net_vote': ['-2', '-1', '0', '1', '2']}
    """
    return {"post_stance": STANCE_LEVELS,
            "net_vote": [str(v) for v in range(-votes_per_voter, votes_per_voter + 1)]}


@dataclass(frozen=True)
class StudyAudit:
    """The three audit tables of a study run (see the module docstring)."""

    questions: pd.DataFrame
    shares: pd.DataFrame
    groups: pd.DataFrame


def member_answers(agents: pd.DataFrame, posts: pd.DataFrame, votes: pd.DataFrame) -> pd.DataFrame:
    """``set_id, group, audit_role, question, answer`` of one unit: each member's reported first-round
    stance (usable post replies) and net vote (usable ballots)."""
    require_columns(agents, ("agent_id", "set_id", "group", "audit_role"), "audit agents")
    require_columns(posts, ("agent_id", "stance", "parse_ok"), "audit posts")
    require_columns(votes, ("voter_id", "value", "parse_ok"), "audit votes")
    usable = posts[posts["parse_ok"].astype(bool)]
    stance = pd.DataFrame({"agent_id": usable["agent_id"].to_numpy(), "question": "post_stance",
                           "answer": usable["stance"].astype(int).astype(str).to_numpy()})
    ballots = votes[votes["parse_ok"].astype(bool)].groupby("voter_id", sort=False)["value"].sum()
    net = pd.DataFrame({"agent_id": ballots.index.to_numpy(), "question": "net_vote",
                        "answer": ballots.astype(int).astype(str).to_numpy()})
    members = agents[["agent_id", "set_id", "group", "audit_role"]]
    out = pd.concat([stance, net], ignore_index=True).merge(members, on="agent_id", how="inner")
    return out[["set_id", "group", "audit_role", "question", "answer"]]


def score_study_audit(run_dir: str | Path, draws: int | None = None) -> StudyAudit | None:
    """The audit tables of a study run (None when its spec has no ``audit`` section or no unit finished)."""
    manifest = read_manifest(run_dir)
    spec = manifest.get("spec") or {}
    if spec.get("audit") is None or not complete_unit_dirs(run_dir, AUDITS, verify=False):
        return None
    audit, analysis, trial = spec["audit"], spec.get("analysis") or {}, spec.get("trial") or {}
    codes = question_codes(int(trial.get("votes_per_voter", 5)))
    options = {"draws": int(draws or analysis.get("bootstrap_draws", 2000)),
               "seed": int(analysis.get("bootstrap_seed", 0)),
               "permutations": int(audit.get("permutations", 2000)), "alpha": float(audit.get("alpha", 0.05)),
               "omnibus": "scores"}
    planned = manifest.get(AUDITS) or {}

    def sources():
        for unit_id, tables in iter_unit_tables(run_dir, AUDITS, ("agents", "posts", "votes")):
            entry = planned.get(unit_id, {})
            yield ((unit_id, entry.get("model", ""), entry.get("topic_id", "")),
                   member_answers(tables["agents"], tables["posts"], tables["votes"]))

    questions, shares, groups = audit_tables(sources(), codes, UNIT_COLUMNS, **options)
    if "omnibus_p" in questions:
        questions, groups = adjusted_across_sources(questions, groups, options["alpha"], sources="model x topic")
    return StudyAudit(questions, shares, groups)
