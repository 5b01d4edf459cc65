"""What a study will cost before it runs: trials, model calls, tokens, dollars and wall time.

Calls follow the phases of a round exactly: in every round each honest agent posts once and votes once
(one vote call covers its whole ballot; no vote calls when ``votes_per_voter`` is 0) and each adversary
posts once, so a trial makes ``n_rounds * (2 * n_agents + n_adversaries)`` calls, with 0, 1 or
``n_distributed_sources`` adversaries by arm. PV-SST: 144 (control, likes), 150 (single source) and
168 (distributed sources) per trial, 606 per block, 38,784 for 64 blocks. Retries of failed replies
are not counted: each is one more call, at most ``max_attempts - 1`` per call.

Tokens: prompt tokens per call come from the prompt templates (:func:`prompt_tokens_per_call`, full
memory and feed: an upper-middle estimate); completion tokens are the caps ``max_tokens`` (posts) and
``vote_max_tokens`` (votes), an upper bound. Cost: litellm's offline price table; local providers
(embedded, scripted, Ollama) cost 0; a model without a price is "unknown" and adds 0 to the total.

Examples
--------
>>> from pvsst.sim.trial.settings import TrialSettings
>>> [calls_per_trial(arm, TrialSettings()) for arm in ("control", "likes", "single_source", "distributed_sources")]
[144, 144, 150, 168]
"""
from __future__ import annotations

from dataclasses import dataclass

from pvsst.experiments.spec.execution import Execution
from pvsst.experiments.spec.study import StudySpec
from pvsst.sim.conditions import get_condition
from pvsst.sim.llm.providers.registry import import_litellm
from pvsst.sim.prompts import estimate_prompt_tokens
from pvsst.sim.trial.settings import TrialSettings

LOCAL_PROVIDERS = ("embedded", "scripted", "ollama", "ollama_chat", "lm_studio", "llamafile")
"""Model prefixes served on the user's own hardware: no per-token price."""

EMBEDDED_SECONDS_PER_CALL = 1.5
"""SmolLM2-135M on 2 CPU cores, one post call (measured on the embedded model); vote calls are shorter."""

SCRIPTED_SECONDS_PER_CALL = 0.004
"""Upper bound for a scripted call: litellm's own CPU cost per call on these machines (issue 2)."""

SERVED_CALL_LATENCY_S = 1.32
"""Latency of one call to a served open-weight model: PV-SST's 256 published trials made 38,784 calls
in 12,765 s of ``elapsed_seconds`` (pvsst_v1_core_results.csv) at 4 parallel requests: 3.04 calls/s,
so 4 / 3.04 = 1.32 s per call. Runs at concurrency c are assumed to reach c / 1.32 calls/s."""


def calls_per_trial(condition: str, trial: TrialSettings) -> int:
    """Model calls in one trial of ``condition`` (posts + votes + adversary posts; retries excluded).

    Examples
    --------
    >>> calls_per_trial("distributed_sources", TrialSettings(n_agents=6, n_rounds=3))
    48
    """
    return trial.n_rounds * sum(calls_per_round(condition, trial).values())


def calls_per_round(condition: str, trial: TrialSettings) -> dict[str, int]:
    """Calls of one round by phase: ``post`` (honest), ``vote`` (honest), ``adversary_post``."""
    n_adversaries = get_condition(condition, trial.n_distributed_sources).n_adversaries
    return {"post": trial.n_agents, "vote": trial.n_agents if trial.votes_per_voter > 0 else 0,
            "adversary_post": n_adversaries}


def prompt_tokens_per_call(phase: str, trial: TrialSettings) -> int:
    """Estimated prompt tokens of one call of ``phase`` (``post``, ``vote`` or ``adversary_post``).

    Rendered from pvsst's own materials (``pvsst.sim.prompts.estimate_prompt_tokens``, 4 characters
    per token, full memory and feed). An adversary sees no feed, so its post prompt is a post prompt
    with an empty feed.

    Examples
    --------
    >>> prompt_tokens_per_call("vote", TrialSettings()) < prompt_tokens_per_call("post", TrialSettings())
    True
    """
    feed_size = 0 if phase == "adversary_post" else trial.feed_size
    return estimate_prompt_tokens("vote" if phase == "vote" else "post", feed_size=feed_size,
                                  votes_per_voter=trial.votes_per_voter, post_char_limit=trial.post_char_limit,
                                  memory_rounds=trial.memory_rounds)


def completion_tokens_per_call(phase: str, trial: TrialSettings) -> int:
    """Completion-token cap of one call: ``vote_max_tokens`` for votes, ``max_tokens`` for posts.

    Examples
    --------
    >>> settings = TrialSettings()
    >>> completion_tokens_per_call("vote", settings), completion_tokens_per_call("adversary_post", settings)
    (70, 120)
    """
    return trial.vote_max_tokens if phase == "vote" else trial.max_tokens


@dataclass(frozen=True)
class ModelPrice:
    """USD per prompt / completion token; ``source`` is ``local``, ``litellm`` or ``unknown``."""

    prompt_usd: float
    completion_usd: float
    source: str

    @property
    def known(self) -> bool:
        return self.source != "unknown"


def model_price(model: str) -> ModelPrice:
    """The per-token price of ``model`` from litellm's offline price table (0 for local providers).

    Examples
    --------
    >>> model_price("embedded/smollm2-135m")
    ModelPrice(prompt_usd=0.0, completion_usd=0.0, source='local')
    """
    prefix, _, name = model.partition("/")
    if prefix in LOCAL_PROVIDERS:
        return ModelPrice(0.0, 0.0, "local")
    table = import_litellm().model_cost
    for key in (model, name):
        entry = table.get(key)
        if entry and entry.get("input_cost_per_token") is not None:
            return ModelPrice(float(entry["input_cost_per_token"]), float(entry.get("output_cost_per_token") or 0.0),
                              "litellm")
    return ModelPrice(0.0, 0.0, "unknown")


def served_parallelism(execution: Execution) -> tuple[int, str]:
    """Requests in flight at once against served models, and how that number comes about.

    Each worker's gateway keeps up to ``max_concurrency`` requests in flight; with ``endpoints`` that
    all set ``max_concurrency`` the servers together take at most the sum of those, so the run
    reaches the smaller of the two. Each server is assumed to answer like PV-SST's (constant
    latency per call at that load), so N such servers give N times the throughput of one.

    Examples
    --------
    >>> from pvsst.experiments.spec.execution import Execution
    >>> served_parallelism(Execution(max_concurrency=4))[0]
    4
    >>> many = Execution(workers=4, max_concurrency=8, endpoints=[{"api_base": f"http://h{i}:8000/v1",
    ...                  "max_concurrency": 4} for i in range(3)])
    >>> served_parallelism(many)
    (12, '3 endpoints taking 12 requests at once (gateway: 4 workers x 8)')
    """
    gateway = execution.workers * execution.max_concurrency
    servers = execution.total_concurrency()
    where = f"{execution.workers} workers x {execution.max_concurrency}"
    if not execution.endpoints:
        return gateway, f"{gateway} parallel requests ({where})"
    n = len(execution.endpoints)
    if servers is None or servers >= gateway:
        return gateway, f"{n} endpoints, {gateway} parallel requests ({where})"
    return servers, f"{n} endpoints taking {servers} requests at once (gateway: {where})"


def default_seconds_per_call(model: str, max_concurrency: int | Execution) -> tuple[float, str]:
    """Assumed seconds per call for ``model`` when no throughput is given, and where it comes from;
    ``max_concurrency`` is the parallel requests, or the spec's execution section to derive them from.

    Examples
    --------
    >>> default_seconds_per_call("embedded/smollm2-135m", 4)[0], default_seconds_per_call("ollama/x", 4)[0]
    (1.5, 0.33)
    """
    prefix = model.partition("/")[0]
    if prefix == "embedded":
        return EMBEDDED_SECONDS_PER_CALL, "embedded: 1.5 s/call measured on 2 cores"
    if prefix == "scripted":
        return SCRIPTED_SECONDS_PER_CALL, "scripted: <= 4 ms/call"
    if isinstance(max_concurrency, Execution):
        parallel, how = served_parallelism(max_concurrency)
    else:
        parallel, how = max_concurrency, f"{max_concurrency} parallel requests"
    return SERVED_CALL_LATENCY_S / parallel, f"served: {SERVED_CALL_LATENCY_S} s per call (PV-SST) over {how}"


@dataclass(frozen=True)
class CellEstimate:
    """The trials of one (model, condition) cell of the design."""

    model_name: str
    condition: str
    trials: int
    calls_per_trial: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    wall_s: float


@dataclass(frozen=True)
class Estimate:
    """Totals of a study and the per-cell rows they add up from.

    ``cost_usd`` sums the priced models (unpriced ones add 0; ``unpriced_models`` names them). A spec with
    an ``audit`` section adds one cell per model whose ``condition`` is :data:`AUDIT_ROW` (no trials; the
    calls of its audit units).
    ``by_condition`` / ``by_model`` aggregate the cells; their ``cost_usd`` is ``None`` when any model
    in them has no price.
    """

    trials: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    wall_s: float
    cells: tuple[CellEstimate, ...]
    unpriced_models: tuple[str, ...]
    throughput_note: str

    @property
    def by_condition(self) -> dict[str, CellEstimate]:
        return _aggregate(self.cells, "condition")

    @property
    def by_model(self) -> dict[str, CellEstimate]:
        return _aggregate(self.cells, "model_name")


def estimate(spec: StudySpec, *, calls_per_second: float | None = None) -> Estimate:
    """Trials, calls, tokens, cost and wall time of ``spec`` without calling any model.

    ``calls_per_second`` is the whole run's throughput; when omitted each model gets a documented
    default (:func:`default_seconds_per_call`).

    Examples
    --------
    >>> from pvsst.experiments.spec.study import load_spec
    >>> est = estimate(load_spec("experiments/specs/pvsst_confirmatory.yaml"))
    >>> est.trials, est.calls
    (256, 38784)
    """
    if calls_per_second is not None and not calls_per_second > 0:
        raise ValueError("calls_per_second must be positive")
    trial = spec.trial
    per_block_trials = len(spec.factors.topics) * len(spec.factors.seeds)
    cells, unpriced, notes = [], [], []
    for model in spec.factors.models:
        price = model_price(model)
        if not price.known:
            unpriced.append(model)
        if calls_per_second is None:
            seconds, note = default_seconds_per_call(model, spec.execution)
            notes.append(note)
        else:
            seconds = 1.0 / calls_per_second
        for condition in spec.factors.conditions:
            per_round = calls_per_round(condition, trial)
            prompt = sum(n * prompt_tokens_per_call(phase, trial) for phase, n in per_round.items())
            completion = sum(n * completion_tokens_per_call(phase, trial) for phase, n in per_round.items())
            n_trials = per_block_trials
            calls = n_trials * calls_per_trial(condition, trial)
            prompt_tokens = n_trials * trial.n_rounds * prompt
            completion_tokens = n_trials * trial.n_rounds * completion
            cost = ((prompt_tokens * price.prompt_usd + completion_tokens * price.completion_usd) if price.known
                    else None)
            cells.append(CellEstimate(model, condition, n_trials, calls_per_trial(condition, trial), calls,
                                      prompt_tokens, completion_tokens, cost, calls * seconds))
        if spec.audit is not None:
            cells.append(_audit_cell(spec, model, price, seconds))
    note = f"{calls_per_second:g} calls/s (given)" if calls_per_second is not None else "; ".join(dict.fromkeys(notes))
    return Estimate(
        trials=sum(c.trials for c in cells), calls=sum(c.calls for c in cells),
        prompt_tokens=sum(c.prompt_tokens for c in cells), completion_tokens=sum(c.completion_tokens for c in cells),
        cost_usd=sum(c.cost_usd or 0.0 for c in cells), wall_s=sum(c.wall_s for c in cells), cells=tuple(cells),
        unpriced_models=tuple(unpriced), throughput_note=note,
    )


AUDIT_ROW = "first-round audit"
"""The ``condition`` of the estimate row of a spec's first-round audit (no trial: its units play one round)."""


def audit_member_count(spec: StudySpec) -> int:
    """Members of the first-round audit: matched sets x groups, twice with the arity-matched null.

    >>> from pvsst.experiments.spec.audit_section import AuditSpec
    >>> from pvsst.experiments.spec.study import load_spec
    >>> spec = load_spec("experiments/specs/quickstart.yaml").model_copy(
    ...     update={"audit": AuditSpec.model_validate({"vary": {"sex": ["female", "male"]}, "matched_sets": 50})})
    >>> audit_member_count(spec)
    200
    """
    audit = spec.audit
    return audit.matched_sets * audit.n_groups * (2 if audit.arity_null else 1)


def _audit_cell(spec: StudySpec, model: str, price: ModelPrice, seconds: float) -> CellEstimate:
    """One model's audit units (one per topic): every member posts once and votes once."""
    trial, played = spec.trial, len(spec.factors.topics) * audit_member_count(spec)  # units x members
    calls = 2 * played
    prompt_tokens = played * sum(prompt_tokens_per_call(p, trial) for p in ("post", "vote"))
    completion_tokens = played * sum(completion_tokens_per_call(p, trial) for p in ("post", "vote"))
    cost = (prompt_tokens * price.prompt_usd + completion_tokens * price.completion_usd) if price.known else None
    return CellEstimate(model, AUDIT_ROW, 0, 0, calls, prompt_tokens, completion_tokens, cost, calls * seconds)


def _aggregate(cells: tuple[CellEstimate, ...], key: str) -> dict[str, CellEstimate]:
    groups: dict[str, list[CellEstimate]] = {}
    for cell in cells:
        groups.setdefault(getattr(cell, key), []).append(cell)
    result = {}
    for name, group in groups.items():
        costs = [cell.cost_usd for cell in group]
        per_trial = {cell.calls_per_trial for cell in group}
        result[name] = CellEstimate(
            model_name=name if key == "model_name" else "*", condition=name if key == "condition" else "*",
            trials=sum(c.trials for c in group), calls_per_trial=per_trial.pop() if len(per_trial) == 1 else 0,
            calls=sum(c.calls for c in group), prompt_tokens=sum(c.prompt_tokens for c in group),
            completion_tokens=sum(c.completion_tokens for c in group),
            cost_usd=None if any(c is None for c in costs) else sum(costs), wall_s=sum(c.wall_s for c in group),
        )
    return result
