"""The build as plain functions: shards of blueprint indices through every stage.

``process_shard`` takes indices [start, stop) through generate -> validate -> simulate ->
verify and returns Arrow-ready rows; ``run_build`` plans the shards a run still lacks, runs them
(in this process or in worker processes), and has the single writer commit each shard to the
store before refreshing the catalog. A killed build re-run with the same config computes only
the missing shards, and because blueprint ``i`` and its episodes depend only on the config and
``i``, it ends with exactly the rows of an uninterrupted build. Prefect flows (flows/) wrap
these same functions.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.generators import generate_blueprints
from trajforge.generators.propose import propose_blueprints
from trajforge.schemas.arrow import (
    blueprint_to_row,
    proposal_to_row,
    rejection_to_row,
    trajectory_to_row,
    verdict_to_row,
)
from trajforge.schemas.blueprint import BlueprintRejection, ProposalRecord, TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.schemas.trajectory import EpisodeSpec, Trajectory, Verdict
from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, choose_fault, run_episode
from trajforge.simulation.llm import Budget, EpisodeLedger, Gateway
from trajforge.simulation.llm_agent import LLMAgent, episode_tag
from trajforge.simulation.llm_user import LLMUser
from trajforge.simulation.runner import AgentPolicy, UserPolicy
from trajforge.schemas.runs import RunOutcome, RunRecord
from trajforge.store import TABLES, RunStore, refresh_catalog
from trajforge.store.runs import write_run_record
from trajforge.verifiers import verify
from trajforge.verifiers.judge import judge_trajectory


@dataclass
class ShardSummary:
    start: int
    stop: int
    blueprints: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    episodes: int = 0
    skipped_episodes: int = 0  # faulty episodes for blueprints that admit no fault
    seconds: float = 0.0
    cost_usd: float = 0.0  # of the committed episodes, priced ones only
    unpriced_episodes: int = 0
    discarded_usd: float = 0.0  # episodes past a budget stop, not committed
    proposer_usd: float = 0.0  # LLM proposer and reviewers
    retries: int = 0
    terminations: Counter[str] = field(default_factory=Counter)
    budget_stopped: bool = False
    passed: int = 0  # episodes that passed every check


@dataclass
class GeneratedBatch:
    """Stage 1 of a batch: indices [start, stop) generated and validated."""

    start: int
    stop: int
    blueprints: list[TaskBlueprint]
    rejections: list[BlueprintRejection]


@dataclass
class SimulatedBatch:
    """Stage 2: the episodes of a batch's blueprints (``skipped``: faulty episodes of
    blueprints that admit no fault)."""

    trajectories: list[Trajectory]
    skipped: int


def episode_seed(blueprint_id: str, slot: int, agent: str) -> int:
    digest = hashlib.sha256(f"{blueprint_id}:{slot}:{agent}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # fits Arrow int64


class SimulationContext:
    """What one process needs to simulate: the domain, one long-lived event loop, and (when a
    role is model-backed) the gateway and the run's budget. Built once per process, because
    litellm's cached async clients are bound to the loop that made them."""

    def __init__(self, config: RunConfig, domain: Domain, budget: Budget | None = None,
                 share: int = 1) -> None:
        self.domain = domain
        self.loop = asyncio.new_event_loop()
        sim = config.simulation
        # a build's concurrency is split across its simulation processes
        self.concurrency = max(1, -(-sim.concurrency // share))
        self.budget = budget or Budget(sim.gateway.max_cost_usd)
        self.gateway: Gateway | None = None
        if config.uses_models():
            self.gateway = Gateway(sim.gateway, self.budget, random.Random(config.domain.seed),
                                   concurrency=self.concurrency)

    def close(self) -> None:
        """Shut the loop down as ``asyncio.run`` would: close the clients, cancel what is left."""
        loop = self.loop
        try:
            if self.gateway is not None:
                loop.run_until_complete(self.gateway.aclose())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


@dataclass
class EpisodeOutcome:
    trajectory: Trajectory | None  # None: skipped (no fault applies) or not started (budget)
    started: bool = True


async def _simulate(bp: TaskBlueprint, ctx: SimulationContext, config: RunConfig, run_id: str,
                    slot: int, agent_kind: str) -> EpisodeOutcome:
    sim = config.simulation
    domain = ctx.domain
    # The k-th oracle and the k-th faulty episode of a blueprint are twins: same seed, so the
    # same user wording and agent phrasing up to the injected fault. Their first divergent
    # message is then the fault itself, which is what a preference pair needs (store/exports).
    twin = sim.agents[:slot].count(agent_kind)
    seed = episode_seed(bp.id, twin, "episode")
    rng = random.Random(seed)
    fault = None
    if agent_kind == "faulty":
        fault = choose_fault(bp, domain, random.Random(episode_seed(bp.id, slot, agent_kind)),
                             sim.fault_kinds)
        if fault is None:
            return EpisodeOutcome(None)
    if ctx.budget.exhausted():
        return EpisodeOutcome(None, started=False)
    env = domain.environment()
    ledger = None
    headers = episode_tag(bp.id, seed)
    if ctx.gateway is not None:
        ledger = EpisodeLedger.starting_now(sim.gateway.episode_timeout_s)
    agent: AgentPolicy
    if agent_kind == "llm":
        assert ctx.gateway is not None and ledger is not None and sim.agent_model is not None
        agent = LLMAgent(ctx.gateway, sim.agent_model, domain, ledger, headers)
    else:
        agent = ScriptedAgent(bp, domain, rng, fault)
    user: UserPolicy
    if sim.user_model is not None:
        assert ctx.gateway is not None and ledger is not None
        expected = bp.ground_truth.final_state_hash
        user = LLMUser(ctx.gateway, sim.user_model, bp, domain, ledger, sim.user_simulator,
                       goal_met=lambda: env.state_hash() == expected, headers=headers)
    else:
        user = ScriptedUser(bp, domain, random.Random(seed + 1))
    spec = EpisodeSpec(agent=getattr(agent, "name", agent_kind), user=getattr(user, "name", "scripted"),
                       seed=seed, max_turns=sim.max_turns, fault=fault)
    trajectory = await run_episode(bp.id, env, agent, user,
                                   EpisodeLimits(sim.max_turns, sim.max_steps_per_turn),
                                   run_id=run_id, episode=spec, ledger=ledger)
    return EpisodeOutcome(trajectory)


async def _simulate_all(jobs: list[tuple[TaskBlueprint, int, str]], ctx: SimulationContext,
                        config: RunConfig, run_id: str) -> list[EpisodeOutcome]:
    gate = asyncio.Semaphore(ctx.concurrency)

    async def one(job: tuple[TaskBlueprint, int, str]) -> EpisodeOutcome:
        async with gate:
            return await _simulate(job[0], ctx, config, run_id, job[1], job[2])

    return await asyncio.gather(*(one(j) for j in jobs))


def process_shard(config: RunConfig, start: int, stop: int, domain: Domain | None = None,
                  ctx: SimulationContext | None = None) -> tuple[dict[str, list[dict[str, Any]]], ShardSummary]:
    """Indices [start, stop) through every stage; rows per table and a summary.

    When the budget runs out mid-shard, no new episode starts; the rows returned cover the
    longest prefix ``[start, k)`` of blueprints whose episodes all finished (``summary.stop``
    is ``k``), so the manifest's ranges stay exact and a resumed run finishes the rest."""
    began = time.perf_counter()
    own_ctx = ctx is None
    if ctx is None:
        if domain is None:
            domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
        ctx = SimulationContext(config, domain)
    domain = ctx.domain
    try:
        return _process_shard(config, start, stop, ctx, began)
    finally:
        if own_ctx:
            ctx.close()


def _process_shard(config: RunConfig, start: int, stop: int, ctx: SimulationContext,
                   began: float) -> tuple[dict[str, list[dict[str, Any]]], ShardSummary]:
    domain = ctx.domain
    run_id = config.run_id()
    summary = ShardSummary(start, stop)
    proposals: list[ProposalRecord] = []
    if config.generation.proposer is not None:
        assert ctx.gateway is not None
        items, proposals, cost = ctx.loop.run_until_complete(propose_blueprints(
            ctx.gateway, config.generation, domain, run_id, start, stop,
            config.simulation.gateway.episode_timeout_s, ctx.concurrency))
        if cost is None:
            summary.unpriced_episodes += 1
        else:
            summary.proposer_usd += cost
    else:
        items = list(generate_blueprints(domain, config.generation, run_id, start, stop))
    blueprints = {item.id: item for item in items if isinstance(item, TaskBlueprint)}
    jobs = [(bp, slot, kind) for bp in blueprints.values()
            for slot, kind in enumerate(config.simulation.agents)]
    outcomes = ctx.loop.run_until_complete(_simulate_all(jobs, ctx, config, run_id))
    # the prefix of blueprint indices whose episodes all ran
    unstarted = {job[0].provenance.index for job, o in zip(jobs, outcomes) if not o.started}
    if unstarted:
        summary.stop = stop = min(unstarted)
        summary.budget_stopped = True
    rows: dict[str, list[dict[str, Any]]] = {"blueprints": [], "rejections": [], "trajectories": [],
                                             "verdicts": [], "proposals": []}
    rows["proposals"] = [proposal_to_row(p) for p in proposals if p.index < stop]
    summary.cost_usd += summary.proposer_usd
    for item in items:
        index = item.provenance.index if isinstance(item, TaskBlueprint) else item.index
        if index >= stop:
            continue
        if isinstance(item, BlueprintRejection):
            rows["rejections"].append(rejection_to_row(item))
            summary.rejections[item.reason] += 1
        else:
            rows["blueprints"].append(blueprint_to_row(item, run_id))
            summary.blueprints += 1
    judged: list[tuple[Trajectory, list[Verdict]]] = []
    for job, outcome in zip(jobs, outcomes):
        trajectory = outcome.trajectory
        if job[0].provenance.index >= stop:
            if trajectory is not None:
                summary.discarded_usd += trajectory.cost_usd or 0.0
            continue
        if trajectory is None:
            summary.skipped_episodes += 1
            continue
        summary.episodes += 1
        if trajectory.cost_usd is None:
            summary.unpriced_episodes += 1
        else:
            summary.cost_usd += trajectory.cost_usd
        summary.retries += trajectory.retries
        summary.terminations[trajectory.termination.value] += 1
        rows["trajectories"].append(trajectory_to_row(trajectory))
        verdicts = verify(trajectory, blueprints[trajectory.blueprint_id], domain,
                          config.verification.checks)
        rows["verdicts"].extend(verdict_to_row(v) for v in verdicts)
        summary.passed += bool(verdicts and verdicts[0].trajectory_passed)
        judged.append((trajectory, verdicts))
    if config.verification.judge is not None and judged:
        assert ctx.gateway is not None
        verdicts_by_judge, cost = ctx.loop.run_until_complete(_judge_all(judged, blueprints, ctx, config))
        rows["verdicts"].extend(verdict_to_row(v) for v in verdicts_by_judge)
        if cost is None:
            summary.unpriced_episodes += 1
        else:
            summary.cost_usd += cost
    summary.seconds = time.perf_counter() - began
    return rows, summary


# --- the same stages one by one, for the Prefect flow's tasks (flows/build.py) -----------------
# The flow runs scripted builds; model-backed ones (a budget that may stop a batch part-way, the
# proposer, the judge) run through ``run_build`` (see ``flows.build.build``).

_THREAD = threading.local()


def thread_context(config: RunConfig, domain: Domain) -> SimulationContext:
    """This thread's simulation context (an event loop is per thread), built on first use."""
    contexts: dict[str, SimulationContext] = _THREAD.__dict__.setdefault("contexts", {})
    key = f"{config.domain.name}:{config.domain.size}:{config.domain.seed}:{config.simulation.concurrency}"
    if key not in contexts:
        contexts[key] = SimulationContext(config, domain)
    return contexts[key]


def generate_batch(config: RunConfig, start: int, stop: int, domain: Domain) -> GeneratedBatch:
    """Generate and validate blueprints [start, stop): the valid ones and the rejections."""
    blueprints: list[TaskBlueprint] = []
    rejections: list[BlueprintRejection] = []
    for item in generate_blueprints(domain, config.generation, config.run_id(), start, stop):
        if isinstance(item, BlueprintRejection):
            rejections.append(item)
        else:
            blueprints.append(item)
    return GeneratedBatch(start, stop, blueprints, rejections)


def simulate_batch(config: RunConfig, blueprints: list[TaskBlueprint], domain: Domain) -> SimulatedBatch:
    """One episode per blueprint per configured agent, in blueprint then agent order."""
    jobs = [(bp, slot, kind) for bp in blueprints
            for slot, kind in enumerate(config.simulation.agents)]
    ctx = thread_context(config, domain)
    outcomes = ctx.loop.run_until_complete(_simulate_all(jobs, ctx, config, config.run_id()))
    trajectories = [o.trajectory for o in outcomes if o.trajectory is not None]
    return SimulatedBatch(trajectories, len(outcomes) - len(trajectories))


def verify_batch(config: RunConfig, trajectories: list[Trajectory], blueprints: list[TaskBlueprint],
                 domain: Domain) -> list[Verdict]:
    """The configured checks on every trajectory, in trajectory order."""
    by_id = {bp.id: bp for bp in blueprints}
    verdicts: list[Verdict] = []
    for trajectory in trajectories:
        verdicts.extend(verify(trajectory, by_id[trajectory.blueprint_id], domain,
                               config.verification.checks))
    return verdicts


def batch_rows(config: RunConfig, generated: GeneratedBatch, simulated: SimulatedBatch,
               verdicts: list[Verdict]) -> dict[str, list[dict[str, Any]]]:
    """The batch's Arrow-ready rows per table."""
    run_id = config.run_id()
    return {"blueprints": [blueprint_to_row(bp, run_id) for bp in generated.blueprints],
            "rejections": [rejection_to_row(r) for r in generated.rejections],
            "trajectories": [trajectory_to_row(t) for t in simulated.trajectories],
            "verdicts": [verdict_to_row(v) for v in verdicts]}


def batch_tables(rows: dict[str, list[dict[str, Any]]]) -> dict[str, pa.Table]:
    """Rows as typed Arrow tables (cheap to pickle between processes)."""
    return {name: pa.Table.from_pylist(rows.get(name, []), schema=schema)  # type: ignore[misc]
            for name, schema in TABLES.items()}


def summarize_batch(generated: GeneratedBatch, simulated: SimulatedBatch,
                    verdicts: list[Verdict], seconds: float) -> ShardSummary:
    """Per-stage counts of one batch."""
    summary = ShardSummary(generated.start, generated.stop, blueprints=len(generated.blueprints),
                           episodes=len(simulated.trajectories), skipped_episodes=simulated.skipped,
                           seconds=seconds)
    summary.rejections.update(r.reason for r in generated.rejections)
    summary.passed = len({v.trajectory_id for v in verdicts if v.trajectory_passed})
    for trajectory in simulated.trajectories:
        if trajectory.cost_usd is None:
            summary.unpriced_episodes += 1
        else:
            summary.cost_usd += trajectory.cost_usd
    return summary


def start_record(config: RunConfig, store: RunStore, invocation_id: str, runner: str,
                 flow_name: str | None, parameters: dict[str, Any]) -> RunRecord:
    """The record of an invocation that is starting (outcome ``running``); written at once, so
    a process killed before the end leaves a trace."""
    import json

    info = json.loads((store.run_dir / "run.json").read_text(encoding="utf-8"))
    record = RunRecord(
        id=invocation_id, run_id=store.run_id, name=config.name, config=info["config"],
        created_at=info.get("created_at"), flow_name=flow_name, runner=runner,
        parameters=json.dumps(parameters, sort_keys=True, default=str),
        started_at=datetime.now(timezone.utc), outcome=RunOutcome.running,
        n_blueprints=config.generation.n_blueprints)
    write_run_record(store.out, record)
    return record


def finish_record(record: RunRecord, computed: list[ShardSummary], planned: int, cached: int,
                  adopted: int, seconds: float, outcome: RunOutcome, error: str | None) -> RunRecord:
    """The invocation's record at its end: what it computed (not what it found done) and what
    that cost."""
    rejected = sum(sum(s.rejections.values()) for s in computed)
    valid = sum(s.blueprints for s in computed)
    return record.model_copy(update={
        "ended_at": datetime.now(timezone.utc), "outcome": outcome, "error": error,
        "batches_planned": planned, "batches_computed": len(computed),
        "batches_cached": cached, "batches_adopted": adopted,
        "blueprints_generated": valid + rejected, "blueprints_valid": valid,
        "blueprints_rejected": rejected, "episodes": sum(s.episodes for s in computed),
        "episodes_passed": sum(s.passed for s in computed),
        "episodes_skipped": sum(s.skipped_episodes for s in computed),
        "cost_usd": sum(s.cost_usd for s in computed),
        "episodes_unpriced": sum(s.unpriced_episodes for s in computed), "seconds": seconds})


async def _judge_all(judged: list[tuple[Trajectory, list[Verdict]]], blueprints: dict[str, TaskBlueprint],
                     ctx: SimulationContext, config: RunConfig) -> tuple[list[Verdict], float | None]:
    assert ctx.gateway is not None and config.verification.judge is not None
    gate = asyncio.Semaphore(ctx.concurrency)
    ledgers: list[EpisodeLedger] = []

    async def one(trajectory: Trajectory, base: list[Verdict]) -> list[Verdict]:
        async with gate:
            ledger = EpisodeLedger.starting_now(config.simulation.gateway.episode_timeout_s)
            ledgers.append(ledger)
            return await judge_trajectory(ctx.gateway, config.verification.judge, trajectory,  # type: ignore[arg-type]
                                          blueprints[trajectory.blueprint_id], ctx.domain, base, ledger)

    results = await asyncio.gather(*(one(t, v) for t, v in judged))
    costs = [ledger.cost_usd() for ledger in ledgers]
    cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    return [v for r in results for v in r], cost


_WORKER: dict[str, SimulationContext] = {}
_WORKER_SPEND: Any = None  # the build's shared spend counter, set by the pool initializer
_WORKER_DOMAIN: dict[str, Domain] = {}


def cached_domain(config: RunConfig) -> Domain:
    """One domain per process and config, built on first use (the template is the costly part;
    environments copy it, so threads may share it)."""
    key = f"{config.domain.name}:{config.domain.size}:{config.domain.seed}"
    if key not in _WORKER_DOMAIN:
        _WORKER_DOMAIN[key] = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    return _WORKER_DOMAIN[key]


def _worker_init(spend: Any) -> None:
    global _WORKER_SPEND
    _WORKER_SPEND = spend


def _worker_shard(config: RunConfig, start: int, stop: int, share: int) -> tuple[dict[str, Any], ShardSummary]:
    # one context per worker process, built on first use: its event loop lives as long as the
    # process, and its budget is the build's shared spend counter
    key = config.model_dump_json()
    if key not in _WORKER:
        budget = Budget(config.simulation.gateway.max_cost_usd, shared=_WORKER_SPEND)
        _WORKER[key] = SimulationContext(config, cached_domain(config), budget, share=share)
    rows, summary = process_shard(config, start, stop, ctx=_WORKER[key])
    return batch_tables(rows), summary


@dataclass
class BuildResult:
    run_id: str
    out: Path
    shards_done: int
    shards_skipped: int
    seconds: float
    summaries: list[ShardSummary]
    spent_usd: float = 0.0  # the run's model spend over every invocation
    budget_stopped: bool = False
    diversity: Any = None  # curation.DiversityResult when diversity.select/dedup_threshold is set


Progress = Callable[[ShardSummary], None]


def run_build(config: RunConfig, progress: Progress | None = None) -> BuildResult:
    """Build (or finish building) the run this config describes, in this process or in worker
    processes (the direct path; ``flows.build`` runs scripted builds as a Prefect flow).

    With a budget (``simulation.gateway.max_cost_usd``), what earlier invocations of the same run
    spent counts: the spend is persisted beside the manifest, and once it reaches the cap no new
    episode starts and the build ends cleanly with what it has (``BuildResult.budget_stopped``).
    Each invocation is recorded in the catalog's ``runs`` view.
    """
    began = time.perf_counter()
    out = config.store.out
    run_id = config.run_id()
    store = RunStore(out, run_id)
    store.prepare()
    store.write_run_info({"run_id": run_id, "name": config.name,
                         "config": config.model_dump_json(exclude={"store", "orchestration", "diversity"}),
                         "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    ranges = store.pending_ranges(config.generation.n_blueprints, config.store.shard_size)
    total_ranges = len(store.completed())
    summaries: list[ShardSummary] = []
    record = start_record(config, store, uuid.uuid4().hex, "direct", None,
                          {"store": config.store.model_dump(mode="json")})
    try:
        _run_ranges(config, ranges, store, summaries, progress)
        refresh_catalog(out)
    except BaseException as exc:
        write_run_record(out, finish_record(record, summaries, len(ranges) + total_ranges, 0,
                                            total_ranges, time.perf_counter() - began,
                                            RunOutcome.failed, f"{type(exc).__name__}: {exc}"))
        raise
    write_run_record(out, finish_record(record, summaries, len(ranges) + total_ranges, 0,
                                        total_ranges, time.perf_counter() - began,
                                        RunOutcome.completed, None))
    refresh_catalog(out)  # the finished record in the runs view
    return BuildResult(run_id=run_id, out=out, shards_done=len(summaries), shards_skipped=total_ranges,
                       seconds=time.perf_counter() - began, summaries=summaries,
                       spent_usd=store.spent_usd() if config.uses_models() else 0.0,
                       budget_stopped=any(s.budget_stopped for s in summaries),
                       diversity=run_diversity_stage(config))


def run_diversity_stage(config: RunConfig) -> Any:
    """Scoring and selection over the run's committed trajectories, when configured."""
    if not config.diversity.active:
        return None
    from trajforge.curation import run_diversity

    return run_diversity(config, config.run_id())


def _run_ranges(config: RunConfig, ranges: list[tuple[int, int]], store: RunStore,
                summaries: list[ShardSummary], progress: Progress | None) -> None:
    cap = config.simulation.gateway.max_cost_usd

    def commit(rows: dict[str, Any], summary: ShardSummary) -> None:
        if config.uses_models():
            # spend first: a kill between the two lines over-counts, never under-counts
            store.record_spend(summary.start, summary.stop, summary.cost_usd,
                               summary.discarded_usd, summary.unpriced_episodes)
        if summary.stop > summary.start:
            store.write_shard(summary.start, summary.stop, rows)
        summaries.append(summary)
        if progress:
            progress(summary)

    workers = min(config.store.workers, len(ranges)) if ranges else 1
    if workers <= 1:
        ctx = SimulationContext(config, cached_domain(config), Budget(cap, store.spent_usd()))
        try:
            for start, stop in ranges:
                if ctx.budget.exhausted():
                    break
                commit(*process_shard(config, start, stop, ctx=ctx))
        finally:
            ctx.close()
    else:
        import multiprocessing

        mp = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        spend = mp.Value("d", store.spent_usd())
        budget = Budget(cap, shared=spend)
        with ProcessPoolExecutor(workers, mp_context=mp, initializer=_worker_init,
                                 initargs=(spend,)) as pool:
            # at most workers + 1 shards in flight, committed in order and then dropped, so the
            # writer holds a bounded number of shards whatever the run size
            queue = list(ranges)
            inflight = [pool.submit(_worker_shard, config, *queue.pop(0), workers)
                        for _ in range(min(workers + 1, len(queue)))]
            while inflight:
                done = inflight.pop(0)
                if queue and not budget.exhausted():
                    inflight.append(pool.submit(_worker_shard, config, *queue.pop(0), workers))
                commit(*done.result())
                del done
