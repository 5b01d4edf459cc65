"""``pvsst judge RUN --judge NAME``: read every post of a finished run with a stance judge, on record.

The judge is ``lexicon`` (:class:`~pvsst.sim.judges.lexicon.LexiconJudge`, no model) or a model string
(:class:`~pvsst.sim.judges.llm_judge.LLMJudge`): its calls go through a gateway configured as the run's
spec configures its own (the ``execution`` section) and answered from the run's response cache
(``RUN/cache.sqlite``), so judging a run a second time makes no new call. Only parsed posts are judged
(a failed reply carries no post its agent wrote). Written into ``RUN/analysis/judgments/`` (the folder
``pvsst analyze`` keeps), each file atomically, with the judge's slug
(:func:`pvsst.analysis.consistency.judgments.judge_slug`):

==========================  ======================================================================
``<slug>.parquet``          the judged-stance table: trial_id, round, agent_id, judge, judged_label,
                            judged_stance (empty where the judge's call failed)
``<slug>.json``             provenance: judge, model, templates and their sha256, request seed,
                            temperature, posts, judged posts, calls, cache hits, failed calls
``<slug>.llm_calls.parquet`` one row per judge call (the columns of a trial's ``llm_calls.parquet``)
``<slug>.prompts.parquet``  the full text of every judge request (as a trial's ``prompts.parquet``)
==========================  ======================================================================
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from pvsst.core.run_folder import holds_run_folder
from pvsst.analysis.consistency.judgments import JUDGMENTS_DIR, agreement_table, judge_slug, read_judgments
from pvsst.analysis.store import load_run
from pvsst.core.atomic import atomic_file, write_text
from pvsst.core.errors import InputError
from pvsst.experiments.run.store import write_table
from pvsst.sim.judges.llm_judge import LEXICON, LLMJudge, make_judge
from pvsst.sim.judges.materials import load_judge_materials
from pvsst.sim.judges.stance_judge import judged_stances
from pvsst.sim.llm.cache import ResponseCache
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.prompt_table import prompt_table
from pvsst.sim.llm.types import CALL_RECORD_FIELDS, STATUS_OK
from pvsst.sim.topics import Topic, get_topic

CACHE_FILE = "cache.sqlite"


@dataclass(frozen=True)
class JudgeRunResult:
    """What :func:`judge_run` wrote and counted."""

    judge: str
    table_path: Path
    provenance: dict
    agreement: pd.DataFrame

    @property
    def failed_calls(self) -> int:
        return int(self.provenance["failed_calls"])


def run_topics(spec: dict | None) -> dict[str, Topic]:
    """Topic id -> topic as the run's frozen spec defines it (``factors.topics``).

    Examples
    --------
    >>> run_topics({"factors": {"topics": [{"id": "t", "question": "Cats?"}]}})["t"].question
    'Cats?'
    """
    topics = {}
    for entry in ((spec or {}).get("factors") or {}).get("topics") or []:
        if isinstance(entry, dict) and {"id", "question"} <= set(entry):
            topics[entry["id"]] = Topic(entry["id"], entry["question"], entry.get("support_angle", ""),
                                        entry.get("oppose_angle", ""))
    return topics


def gateway_config(spec: dict | None) -> GatewayConfig:
    """The gateway part of the run spec's ``execution`` section (defaults where it has none).

    Examples
    --------
    >>> gateway_config({"execution": {"max_concurrency": 1, "executor": "local"}}).max_concurrency
    1
    """
    execution = (spec or {}).get("execution") or {}
    return GatewayConfig.model_validate({k: v for k, v in execution.items() if k in GatewayConfig.model_fields})


@holds_run_folder
def judge_run(run_dir: str | Path, judge_name: str, *, materials: str | Path | None = None,
              seed: int = 0) -> JudgeRunResult:
    """Judge every parsed post of ``run_dir`` with ``judge_name`` and write the files of the module docstring.

    Bad input (no run, no completed trial, an unknown judge, bad judge templates) raises
    :class:`InputError` before any call; nothing is written then.
    """
    run_dir = Path(run_dir)
    data = load_run(run_dir)
    if data.trials.empty or data.posts.empty:
        raise InputError(str(run_dir), "trials", "no completed trial with posts to judge")
    spec = data.manifest.get("spec") or {}
    topics = run_topics(spec)
    template = load_judge_materials(materials) if judge_name != LEXICON else None
    gateway = None
    if judge_name != LEXICON:
        gateway = Gateway.from_config(gateway_config(spec), ResponseCache(run_dir / CACHE_FILE))
    try:
        judge = make_judge(judge_name, gateway, template, seed=seed)
        posts = data.posts[data.posts["parse_ok"].astype(bool)] if "parse_ok" in data.posts else data.posts
        trial_topics = dict(zip(data.trials["trial_id"], data.trials["topic_id"]))
        tables = []
        for trial_id, trial_posts in posts.groupby("trial_id", sort=True):
            topic_id = trial_topics.get(trial_id)
            topic = topics.get(topic_id) or get_topic(str(topic_id))
            tables.append(judged_stances(judge, trial_posts, topic))
    finally:
        if gateway is not None:
            gateway.close()
    judged = pd.concat(tables, ignore_index=True)
    folder = run_dir / "analysis" / JUDGMENTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    slug = judge_slug(judge_name)
    provenance = _provenance(judge, judged, template, seed, len(posts))
    if isinstance(judge, LLMJudge):
        calls = pd.DataFrame([r.to_dict() for r in judge.records], columns=list(CALL_RECORD_FIELDS))
        _write_parquet(calls, folder / f"{slug}.llm_calls.parquet")
        _write_parquet(prompt_table(judge.requests), folder / f"{slug}.prompts.parquet")
    table_path = folder / f"{slug}.parquet"
    _write_parquet(judged, table_path)
    write_text(folder / f"{slug}.json", json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    agreement = agreement_table({name: table for name, (table, _) in read_judgments(run_dir / "analysis").items()})
    return JudgeRunResult(judge_name, table_path, provenance, agreement)


def _provenance(judge, judged: pd.DataFrame, template, seed: int, n_posts: int) -> dict:
    from importlib.metadata import version

    record = {"judge": judge.name, "kind": "lexicon" if judge.name == LEXICON else "language_model",
              "model": None, "templates": None, "template_sha256": None, "request_seed": None,
              "temperature": None, "posts": int(n_posts), "judged": int(judged["judged_stance"].notna().sum()),
              "calls": 0, "cache_hits": 0, "failed_calls": 0, "failed_statuses": {},
              "pvsst_version": version("pvsst"), "judged_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if isinstance(judge, LLMJudge):
        statuses = pd.Series([r.status for r in judge.records], dtype=object)
        failed = statuses[statuses != STATUS_OK]
        record.update(model=judge.model, templates=template.source, template_sha256=template.hashes,
                      request_seed=int(seed), temperature=judge.temperature, calls=len(judge.records),
                      cache_hits=int(sum(r.cached for r in judge.records)), failed_calls=int(len(failed)),
                      failed_statuses={str(k): int(v) for k, v in failed.value_counts().items()})
    return record


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    with atomic_file(path) as tmp:
        write_table(frame, tmp)
