"""``pvsst judge RUN --judge NAME``: read every post of a finished run with a stance judge, as a run-kernel job.

The judge is ``lexicon`` (:class:`~pvsst.sim.judges.lexicon.LexiconJudge`, no model) or a model string
(:class:`~pvsst.sim.judges.llm_judge.LLMJudge`): its calls go through a gateway configured as the run's
spec configures its own (the ``execution`` section) and answered from the run's response cache
(``RUN/cache.sqlite``). Only parsed posts are judged (a failed reply carries no post its agent wrote).

The job's units are the run's trials, one payload each, run by :class:`JudgeWorker` through the run
kernel (:func:`~pvsst.experiments.run.kernel.run_units`): each judged trial is written to
``RUN/judgments/<slug>/<trial_id>/`` (its judged-stance table, its calls and its prompts, ``DONE``
last) and recorded in the manifest under ``judgments/<slug>``, so a stopped judging resumes and a
second judging of a finished run makes no call. A trial with a failed judge call is ``degraded``
(any failed call counts: the judgment of that post is missing); the command then exits 1 and a rerun
asks those trials again (the successful calls come from the cache). Judging again with other
templates or another request seed starts that judge's units afresh.

When every trial is judged, the judge's files are written into ``RUN/analysis/judgments/`` (the folder
``pvsst analyze`` keeps), each atomically, named by the judge's slug
(:func:`pvsst.analysis.consistency.judgments.judge_slug`):

==============================  ======================================================================
``<slug>.parquet``              the judged-stance table: trial_id, round, agent_id, judge, judged_label,
                                judged_stance (empty where the judge's call failed)
``<slug>.json``                 provenance: judge, model, templates and their sha256, request seed,
                                temperature, posts, judged posts, calls, cache hits, failed calls
``<slug>.llm_calls.parquet``    one row per judge call (the columns of a trial's ``llm_calls.parquet``)
``<slug>.prompts.parquet``      the full text of every judge request (as a trial's ``prompts.parquet``)
==============================  ======================================================================
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import pandas as pd

from pvsst.analysis.consistency.judgments import agreement_table, judge_slug, read_judgments
from pvsst.analysis.store.reader import load_run
from pvsst.core.atomic import atomic_file, write_text
from pvsst.core.errors import InputError
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_folder import holds_run_folder
from pvsst.core.run_layout import ANALYSIS, CACHE, JUDGMENTS, MANIFEST, table_file
from pvsst.experiments.run.kernel import RunJob, UnitResult, lost_units, run_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.run_guard import gateway_words
from pvsst.experiments.run.store import write_table
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings, worker_gateway
from pvsst.sim.judges.llm_judge import JUDGE_TEMPERATURE, LEXICON, LLMJudge, make_judge
from pvsst.sim.judges.materials import JudgeMaterials, load_judge_materials
from pvsst.sim.judges.stance_judge import judged_stances
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.prompt_table import prompt_table
from pvsst.sim.llm.providers.registry import ensure_runnable
from pvsst.sim.llm.types import CALL_RECORD_FIELDS, STATUS_OK
from pvsst.sim.topics import Topic, get_topic

JUDGED_TABLES = ("judgments", "llm_calls", "prompts")
"""The tables of a judged trial's folder."""
ANY_FAILED_CALL = 0.0
"""The judge job's failure threshold: a trial with any failed judge call is degraded (asked again on a rerun)."""


@dataclass(frozen=True)
class JudgeRunResult:
    """What :func:`judge_run` wrote and counted (``summary``: this session's kernel tallies)."""

    judge: str
    table_path: Path | None
    provenance: dict
    agreement: pd.DataFrame
    summary: RunSummary

    @property
    def failed_calls(self) -> int:
        return int(self.provenance.get("failed_calls", 0))


@dataclass(frozen=True)
class JudgeTask:
    """Everything a worker needs to judge one trial's posts (plain data, picklable)."""

    trial_id: str
    posts: pd.DataFrame
    topic: Topic
    judge: str
    gateway: GatewaySettings
    materials: JudgeMaterials | None = None
    seed: int = 0


class JudgeWorker:
    """The judge job's worker (:class:`~pvsst.experiments.run.kernel.UnitWorker`): one trial's posts read by
    the judge (:func:`~pvsst.sim.judges.stance_judge.judged_stances`)."""

    def run(self, task: JudgeTask) -> list[UnitResult]:
        gateway = worker_gateway(task.gateway) if task.judge != LEXICON else None
        judge = make_judge(task.judge, gateway, task.materials, seed=task.seed)
        judged = judged_stances(judge, task.posts, task.topic)
        records = judge.records if isinstance(judge, LLMJudge) else []
        calls = pd.DataFrame([r.to_dict() for r in records], columns=list(CALL_RECORD_FIELDS))
        requests = judge.requests if isinstance(judge, LLMJudge) else []
        failed = sum(r.status != STATUS_OK for r in records)
        return [UnitResult(task.trial_id, "done", calls=len(records), cache_hits=sum(r.cached for r in records),
                           failed_calls=failed, tables={"judgments": judged, "llm_calls": calls,
                                                        "prompts": prompt_table(requests)})]

    def lost(self, task: JudgeTask, error: BaseException) -> list[UnitResult]:
        return lost_units([task.trial_id], error)


class JudgeSummary(RunSummary):
    """The judge job's summary: it counts judged trials."""

    unit = "judged trials"


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
def judge_run(run_dir: str | Path, judge_name: str, *, materials: str | Path | None = None, seed: int = 0,
              gateway: dict | None = None, progress: bool = False) -> JudgeRunResult:
    """Judge every parsed post of ``run_dir`` with ``judge_name`` (see the module docstring).

    ``gateway`` overrides fields of the run spec's gateway configuration (field -> value, the
    command's gateway options), recorded in this session's ``runs`` entry. Bad input (no run, no
    completed trial, an unknown judge, bad judge templates, a gateway value out of bounds) raises
    :class:`InputError` before any call; nothing is written then.
    """
    run_dir = Path(run_dir)
    data = load_run(run_dir)
    if data.trials.empty or data.posts.empty:
        raise InputError(str(run_dir), "trials", "no completed trial with posts to judge")
    template = load_judge_materials(materials) if judge_name != LEXICON else None
    if judge_name != LEXICON:
        ensure_runnable(judge_name)
    slug = judge_slug(judge_name)
    config = gateway_config(data.manifest.get("spec")).with_options("command line", **(gateway or {}))
    job = judge_job(run_dir, data, judge_name, template, seed, config, gateway or {}, progress=progress)
    summary = run_units(job)
    units = complete_unit_dirs(run_dir, job.section)
    if len(units) < len(job.unit_ids):  # failed trials: the judge's files are written once all are judged
        return JudgeRunResult(judge_name, None, {}, pd.DataFrame(), summary)
    tables = {name: pd.concat([pd.read_parquet(unit / table_file(name)) for unit in units], ignore_index=True)
              for name in JUDGED_TABLES}
    folder = run_dir / ANALYSIS / JUDGMENTS
    folder.mkdir(parents=True, exist_ok=True)
    provenance = _provenance(judge_name, tables, template, seed, int(sum(len(t) for t in job_posts(data))))
    if judge_name != LEXICON:
        _write_parquet(tables["llm_calls"], folder / f"{slug}.llm_calls.parquet")
        _write_parquet(tables["prompts"].drop_duplicates("prompt_sha256", ignore_index=True),
                       folder / f"{slug}.prompts.parquet")
    table_path = folder / f"{slug}.parquet"
    _write_parquet(tables["judgments"], table_path)
    write_text(folder / f"{slug}.json", json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    agreement = agreement_table({name: table for name, (table, _) in read_judgments(run_dir / ANALYSIS).items()})
    return JudgeRunResult(judge_name, table_path, provenance, agreement, summary)


def job_posts(data) -> list[pd.DataFrame]:
    """The parsed posts of each trial of a loaded run, in trial order (the judge job's payloads)."""
    posts = data.posts[data.posts["parse_ok"].astype(bool)] if "parse_ok" in data.posts else data.posts
    return [trial_posts for _, trial_posts in posts.groupby("trial_id", sort=True)]


def judge_job(run_dir: Path, data, judge_name: str, template: JudgeMaterials | None, seed: int,
              config: GatewayConfig, overrides: dict, *, progress: bool) -> RunJob:
    """The kernel's job: one unit per trial with parsed posts, recorded under ``judgments/<slug>``."""
    spec = data.manifest.get("spec") or {}
    topics, trial_topics = run_topics(spec), dict(zip(data.trials["trial_id"], data.trials["topic_id"]))
    section = f"{JUDGMENTS}/{judge_slug(judge_name)}"
    manifest = RunManifest.load(run_dir)
    if manifest is None:
        raise InputError(run_dir, MANIFEST, "pvsst judge reads a finished run: no manifest here")
    settings = {"judge": judge_name, "template_sha256": template.hashes if template else None, "request_seed": seed}
    if (manifest.get("judges") or {}).get(section) not in (None, settings):  # other templates or seed: afresh
        shutil.rmtree(run_dir / section, ignore_errors=True)
        manifest.forget(section)
    manifest.record(judges={**(manifest.get("judges") or {}), section: settings})
    groups = {str(posts["trial_id"].iloc[0]): posts for posts in job_posts(data)}
    manifest.declare(section, {trial_id: {"posts": len(posts)} for trial_id, posts in groups.items()})
    gateway = GatewaySettings(cache_path=str((run_dir / CACHE).resolve()), config=config)

    def payloads(pending, summary, each, settings_of_workers):
        for trial_id in pending:
            topic_id = trial_topics.get(trial_id)
            yield JudgeTask(trial_id, groups[trial_id], topics.get(topic_id) or get_topic(str(topic_id)), judge_name,
                            settings_of_workers, template, seed)

    return RunJob(run_dir=run_dir, manifest=manifest, section=section, what=f"judge {judge_name}",
                  label=f"judge {judge_name}", unit_ids=list(groups), worker=JudgeWorker(),
                  prepare=lambda job: payloads, gateway=gateway, summary=JudgeSummary(total=len(groups)),
                  command=["judge", run_dir, "--judge", judge_name, "--seed", seed, *gateway_words(overrides),
                           *(["--materials", template.source] if template and template.source != "pvsst" else [])],
                  threshold=ANY_FAILED_CALL, out_option=False, session={"job": section, "gateway": overrides},
                  progress=progress,
                  manifest_prefix=f"{JUDGMENTS}_{judge_slug(judge_name)}_", retry_degraded=True)


def _provenance(judge_name: str, tables: dict[str, pd.DataFrame], template, seed: int, n_posts: int) -> dict:
    judged, calls = tables["judgments"], tables["llm_calls"]
    record = {"judge": judge_name, "kind": "lexicon" if judge_name == LEXICON else "language_model",
              "model": None, "templates": None, "template_sha256": None, "request_seed": None,
              "temperature": None, "posts": int(n_posts), "judged": int(judged["judged_stance"].notna().sum()),
              "calls": 0, "cache_hits": 0, "failed_calls": 0, "failed_statuses": {},
              "pvsst_version": version("pvsst"), "judged_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if judge_name != LEXICON:
        failed = calls["status"][calls["status"] != STATUS_OK]
        record.update(model=judge_name, templates=template.source, template_sha256=template.hashes,
                      request_seed=int(seed), temperature=JUDGE_TEMPERATURE,
                      calls=len(calls), cache_hits=int(calls["cached"].astype(bool).sum()),
                      failed_calls=int(len(failed)),
                      failed_statuses={str(k): int(v) for k, v in failed.value_counts().items()})
    return record


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    with atomic_file(path) as tmp:
        write_table(frame, tmp)
