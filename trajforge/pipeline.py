"""The build as plain functions: batches of blueprint indices through every stage.

The stages, one function each, are what the Prefect flow's tasks call (flows/build.py):
``generate_batch`` (the programmatic generator or the LLM proposer, then validation) ->
``simulate_batch`` (scripted or model-backed agent and user) -> ``verify_batch`` (the checks) ->
``judge_batch`` (the optional checklist judge) -> ``batch_rows``. ``process_shard`` chains them
for one batch, and ``run_build`` runs them over a run's missing batches without Prefect (what
benchmarks compare the flow against, and what test fixtures use to make a dataset quickly);
``trajforge build`` always runs the flow.

Model-backed stages run on a ``SimulationContext``: one event loop per thread (litellm's async
clients are bound to the loop that made them), the litellm gateway, and the build invocation's
``Budget``. The budget is shared by every thread of a process, starts from what the run spent
before (its spend file), and takes in what other processes committed since; once it is spent no
new episode starts, and the batch keeps the longest prefix of blueprints whose episodes all
finished (``SimulatedBatch.stop``), so the manifest's ranges stay exact and a resumed run
finishes the rest. Because blueprint ``i`` and its scripted episodes depend only on the config
and ``i``, any batching, runner or resumption ends with exactly the rows of one uninterrupted
build. The LLM modules are imported only by runs that use a model.
"""

from __future__ import annotations

import asyncio
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
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.generators import generate_blueprints
from trajforge.schemas.arrow import (
    blueprint_to_row,
    proposal_to_row,
    rejection_to_row,
    trajectory_to_row,
    verdict_to_row,
)
from trajforge.schemas.blueprint import BlueprintRejection, ProposalRecord, TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.schemas.ids import hash_seed
from trajforge.schemas.runs import RunOutcome, RunRecord
from trajforge.schemas.trajectory import EpisodeSpec, Trajectory, Verdict
from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, choose_fault, run_episode
from trajforge.simulation.runner import AgentPolicy, UserPolicy
from trajforge.store import TABLES, RunStore, refresh_catalog
from trajforge.store.runs import write_run_record
from trajforge.store.shards import ShardRecord
from trajforge.verifiers import verify

if TYPE_CHECKING:
    from trajforge.simulation.llm import Budget, Gateway


@dataclass
class ShardSummary:
    start: int
    stop: int
    blueprints: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    episodes: int = 0
    skipped_episodes: int = 0  # faulty episodes for blueprints that admit no fault
    seconds: float = 0.0
    cost_usd: float = 0.0  # of the committed episodes (priced ones), the proposer and the judge
    unpriced_episodes: int = 0
    discarded_usd: float = 0.0  # episodes past a budget stop, not committed
    proposer_usd: float = 0.0  # LLM proposer and reviewers
    retries: int = 0
    terminations: Counter[str] = field(default_factory=Counter)
    budget_stopped: bool = False
    passed: int = 0  # episodes that passed every check


@dataclass
class GeneratedBatch:
    """Stage 1 of a batch: indices [start, stop) generated (or proposed) and validated."""

    start: int
    stop: int
    blueprints: list[TaskBlueprint]
    rejections: list[BlueprintRejection]
    proposals: list[ProposalRecord] = field(default_factory=list)  # the proposer's rounds
    cost_usd: float | None = 0.0  # the proposer's; None: a model could not be priced


@dataclass
class SimulatedBatch:
    """Stage 2: the episodes of a batch's blueprints (``skipped``: faulty episodes of
    blueprints that admit no fault). ``stop`` < the batch's stop when the budget ran out: only
    blueprints below it are complete, and the episodes of the rest are dropped (their cost is
    ``discarded_usd``)."""

    trajectories: list[Trajectory]
    skipped: int
    stop: int
    discarded_usd: float = 0.0
    budget_stopped: bool = False


@dataclass
class JudgedBatch:
    """Stage 4: the checklist judge's verdicts and what they cost (``None``: unpriced)."""

    verdicts: list[Verdict] = field(default_factory=list)
    cost_usd: float | None = 0.0


def episode_seed(blueprint_id: str, slot: int, agent: str) -> int:
    return hash_seed(blueprint_id, slot, agent)


class SimulationContext:
    """What one thread needs to run the stages: the domain, one long-lived event loop, and
    (when a role is model-backed) the gateway and the invocation's budget. Built once per
    thread, because litellm's cached async clients are bound to the loop that made them."""

    def __init__(self, config: RunConfig, domain: Domain, budget: Budget | None = None,
                 share: int = 1) -> None:
        self.domain = domain
        self.loop = asyncio.new_event_loop()
        sim = config.simulation
        # a build's concurrency is split across the threads or processes that simulate
        self.concurrency = max(1, -(-sim.concurrency // share))
        self.budget: Budget | None = None
        self.gateway: Gateway | None = None
        self.closed = False
        if config.uses_models():
            from trajforge.simulation import llm

            self.budget = budget or llm.Budget(sim.gateway.max_cost_usd)
            self.gateway = llm.Gateway(sim.gateway, self.budget, random.Random(config.domain.seed),
                                       concurrency=self.concurrency)

    def exhausted(self) -> bool:
        return self.budget is not None and self.budget.exhausted()

    def close(self) -> None:
        """Shut the loop down as ``asyncio.run`` would: close the clients, cancel what is left."""
        if self.closed:
            return
        self.closed = True
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


# --- per-process state: the invocation's budget, and one context per thread ---------------------

_LOCK = threading.Lock()
_BUDGETS: dict[str, Budget] = {}  # invocation -> its budget in this process
_CONTEXTS: dict[tuple[str, int, str], SimulationContext] = {}  # (invocation, thread, config)
_DOMAINS: dict[str, Domain] = {}


def cached_domain(config: RunConfig) -> Domain:
    """One domain per process and config, built on first use (the template is the costly part;
    environments copy it, so threads may share it)."""
    key = f"{config.domain.name}:{config.domain.size}:{config.domain.seed}"
    if key not in _DOMAINS:
        _DOMAINS[key] = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    return _DOMAINS[key]


def invocation_budget(config: RunConfig, invocation: str) -> Budget | None:
    """The budget of build invocation ``invocation`` in this process (``None`` for a run
    without models): it starts from what the run has spent (its spend file, over every earlier
    invocation) and, on every later call, takes in what other processes have committed since."""
    if not config.uses_models():
        return None
    from trajforge.simulation import llm

    spent = RunStore(config.store.out, config.run_id()).spent_usd()
    with _LOCK:
        budget = _BUDGETS.get(invocation)
        if budget is None:
            budget = _BUDGETS[invocation] = llm.Budget(config.simulation.gateway.max_cost_usd, spent)
        else:
            budget.at_least(spent)
    return budget


def thread_context(config: RunConfig, domain: Domain, invocation: str = "") -> SimulationContext:
    """This thread's simulation context for the invocation, built on first use. Contexts of
    scripted runs hold only a loop and are kept for the thread's life; a model-backed one
    belongs to its invocation, and is closed by ``release_invocation`` (or, on a long-lived
    worker, when the same thread next works for another invocation)."""
    models = config.uses_models()
    thread = threading.get_ident()
    owner = invocation if models else ""
    # what the context depends on: the domain, the concurrency share and (with models) the rest
    what = (config.model_dump_json(exclude={"store", "orchestration", "diversity"}) if models
            else config.domain.model_dump_json())
    key = (owner, thread, f"{what}:{config.simulation.concurrency}:{config.store.workers}")
    budget = invocation_budget(config, invocation)
    with _LOCK:
        ctx = _CONTEXTS.get(key)
        # this thread is here, so its contexts of other invocations are idle: close them
        stale = [k for k in _CONTEXTS if k[1] == thread and k[0] and k[0] != owner]
        stale_contexts = [_CONTEXTS.pop(k) for k in stale]
        if ctx is None:
            ctx = _CONTEXTS[key] = SimulationContext(config, domain, budget, config.store.workers)
    for old in stale_contexts:
        old.close()
    return ctx


def _forget_after_fork() -> None:
    """A forked worker starts with no contexts or budgets: the parent's event loops (and their
    selectors' file descriptors) are not the child's to use."""
    global _LOCK
    _LOCK = threading.Lock()
    _CONTEXTS.clear()
    _BUDGETS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def release_invocation(invocation: str) -> None:
    """Close this process's contexts of a finished invocation and forget its budget (call it
    once none of its batches runs any more)."""
    with _LOCK:
        contexts = [_CONTEXTS.pop(k) for k in [k for k in _CONTEXTS if k[0] == invocation]]
        _BUDGETS.pop(invocation, None)
    for ctx in contexts:
        ctx.close()


# --- the stages ------------------------------------------------------------------------------------

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
    if ctx.exhausted():
        return EpisodeOutcome(None, started=False)
    env = domain.environment()
    ledger = None
    agent: AgentPolicy
    user: UserPolicy
    if ctx.gateway is not None:
        from trajforge.simulation.llm import EpisodeLedger
        from trajforge.simulation.llm_agent import episode_tag

        ledger = EpisodeLedger.starting_now(sim.gateway.episode_timeout_s)
        headers = episode_tag(bp.id, seed)
    if agent_kind == "llm":
        from trajforge.simulation.llm_agent import LLMAgent

        assert ctx.gateway is not None and ledger is not None and sim.agent_model is not None
        agent = LLMAgent(ctx.gateway, sim.agent_model, domain, ledger, headers)
    else:
        agent = ScriptedAgent(bp, domain, rng, fault)
    if sim.user_model is not None:
        from trajforge.simulation.llm_user import LLMUser

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


def generate_batch(config: RunConfig, start: int, stop: int, domain: Domain,
                   ctx: SimulationContext | None = None) -> GeneratedBatch:
    """Generate (or, with ``generation.proposer``, propose through ``ctx``'s gateway) and
    validate blueprints [start, stop): the valid ones, the rejections, the proposer's rounds."""
    run_id = config.run_id()
    proposals: list[ProposalRecord] = []
    cost: float | None = 0.0
    if config.generation.proposer is not None:
        from trajforge.generators.propose import propose_blueprints

        if ctx is None or ctx.gateway is None:
            raise ValueError("the LLM proposer needs a simulation context with a gateway")
        items, proposals, cost = ctx.loop.run_until_complete(propose_blueprints(
            ctx.gateway, config.generation, domain, run_id, start, stop,
            config.simulation.gateway.episode_timeout_s, ctx.concurrency))
    else:
        items = list(generate_blueprints(domain, config.generation, run_id, start, stop))
    return GeneratedBatch(start, stop, [i for i in items if isinstance(i, TaskBlueprint)],
                          [i for i in items if isinstance(i, BlueprintRejection)], proposals, cost)


def simulate_batch(config: RunConfig, generated: GeneratedBatch,
                   ctx: SimulationContext) -> SimulatedBatch:
    """One episode per blueprint per configured agent, in blueprint then agent order. When the
    budget stops new episodes, only the blueprints below the first one with an unstarted
    episode are kept."""
    jobs = [(bp, slot, kind) for bp in generated.blueprints
            for slot, kind in enumerate(config.simulation.agents)]
    outcomes = ctx.loop.run_until_complete(_simulate_all(jobs, ctx, config, config.run_id()))
    unstarted = {job[0].provenance.index for job, o in zip(jobs, outcomes) if not o.started}
    stop = min(unstarted) if unstarted else generated.stop
    kept: list[Trajectory] = []
    skipped = 0
    discarded = 0.0
    for job, outcome in zip(jobs, outcomes):
        if job[0].provenance.index >= stop:
            if outcome.trajectory is not None:
                discarded += outcome.trajectory.cost_usd or 0.0
        elif outcome.trajectory is None:
            skipped += 1
        else:
            kept.append(outcome.trajectory)
    return SimulatedBatch(kept, skipped, stop, discarded, budget_stopped=bool(unstarted))


def verify_batch(config: RunConfig, trajectories: list[Trajectory], blueprints: list[TaskBlueprint],
                 domain: Domain) -> list[Verdict]:
    """The configured checks on every trajectory, in trajectory order."""
    by_id = {bp.id: bp for bp in blueprints}
    verdicts: list[Verdict] = []
    for trajectory in trajectories:
        verdicts.extend(verify(trajectory, by_id[trajectory.blueprint_id], domain,
                               config.verification.checks))
    return verdicts


def judge_batch(config: RunConfig, trajectories: list[Trajectory], verdicts: list[Verdict],
                blueprints: list[TaskBlueprint], ctx: SimulationContext | None) -> JudgedBatch:
    """The checklist judge's verdicts on every trajectory (none without
    ``verification.judge``); ``verdicts`` are the checks' verdicts, which it never changes."""
    if config.verification.judge is None or not trajectories:
        return JudgedBatch()
    if ctx is None or ctx.gateway is None:
        raise ValueError("the judge needs a simulation context with a gateway")
    by_trajectory: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_trajectory.setdefault(verdict.trajectory_id, []).append(verdict)
    by_id = {bp.id: bp for bp in blueprints}
    judged, cost = ctx.loop.run_until_complete(_judge_all(
        [(t, by_trajectory.get(t.id, [])) for t in trajectories], by_id, ctx, config))
    return JudgedBatch(judged, cost)


async def _judge_all(judged: list[tuple[Trajectory, list[Verdict]]], blueprints: dict[str, TaskBlueprint],
                     ctx: SimulationContext, config: RunConfig) -> tuple[list[Verdict], float | None]:
    from trajforge.simulation.llm import EpisodeLedger, ledgers_cost
    from trajforge.verifiers.judge import judge_trajectory

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
    return [v for r in results for v in r], ledgers_cost(ledgers)


def batch_rows(config: RunConfig, generated: GeneratedBatch, simulated: SimulatedBatch,
               verdicts: list[Verdict], judged: JudgedBatch | None = None) -> dict[str, list[dict[str, Any]]]:
    """The batch's Arrow-ready rows per table: its blueprints, rejections and proposals below
    ``simulated.stop``, every kept trajectory and all their verdicts."""
    run_id = config.run_id()
    stop = simulated.stop
    return {"blueprints": [blueprint_to_row(bp, run_id) for bp in generated.blueprints
                           if bp.provenance.index < stop],
            "rejections": [rejection_to_row(r) for r in generated.rejections if r.index < stop],
            "proposals": [proposal_to_row(p) for p in generated.proposals if p.index < stop],
            "trajectories": [trajectory_to_row(t) for t in simulated.trajectories],
            "verdicts": [verdict_to_row(v) for v in [*verdicts, *(judged.verdicts if judged else [])]]}


def batch_tables(rows: dict[str, list[dict[str, Any]]]) -> dict[str, pa.Table]:
    """Rows as typed Arrow tables (cheap to pickle between processes)."""
    return {name: pa.Table.from_pylist(rows.get(name, []), schema=schema)  # type: ignore[misc]
            for name, schema in TABLES.items()}


def summarize_batch(generated: GeneratedBatch, simulated: SimulatedBatch, verdicts: list[Verdict],
                    seconds: float, judged: JudgedBatch | None = None) -> ShardSummary:
    """Per-stage counts of one batch, and what its model calls cost."""
    stop = simulated.stop
    summary = ShardSummary(generated.start, stop, seconds=seconds,
                           blueprints=sum(bp.provenance.index < stop for bp in generated.blueprints),
                           episodes=len(simulated.trajectories), skipped_episodes=simulated.skipped,
                           discarded_usd=simulated.discarded_usd,
                           budget_stopped=simulated.budget_stopped)
    summary.rejections.update(r.reason for r in generated.rejections if r.index < stop)
    summary.passed = len({v.trajectory_id for v in verdicts if v.trajectory_passed})
    for cost in (generated.cost_usd, judged.cost_usd if judged else 0.0):
        if cost is None:
            summary.unpriced_episodes += 1
        else:
            summary.cost_usd += cost
    summary.proposer_usd = generated.cost_usd or 0.0
    for trajectory in simulated.trajectories:
        if trajectory.cost_usd is None:
            summary.unpriced_episodes += 1
        else:
            summary.cost_usd += trajectory.cost_usd
        summary.retries += trajectory.retries
        summary.terminations[trajectory.termination.value] += 1
    return summary


def process_shard(config: RunConfig, start: int, stop: int, domain: Domain | None = None,
                  ctx: SimulationContext | None = None) -> tuple[dict[str, list[dict[str, Any]]], ShardSummary]:
    """Indices [start, stop) through every stage: rows per table and a summary (whose
    ``stop`` is where a budget stop cut the batch)."""
    began = time.perf_counter()
    own = ctx is None
    if ctx is None:
        ctx = SimulationContext(config, domain or cached_domain(config))
    try:
        generated = generate_batch(config, start, stop, ctx.domain, ctx)
        simulated = simulate_batch(config, generated, ctx)
        verdicts = verify_batch(config, simulated.trajectories, generated.blueprints, ctx.domain)
        judged = judge_batch(config, simulated.trajectories, verdicts, generated.blueprints, ctx)
        rows = batch_rows(config, generated, simulated, verdicts, judged)
        return rows, summarize_batch(generated, simulated, verdicts, time.perf_counter() - began, judged)
    finally:
        if own:
            ctx.close()


def record_batch_spend(store: RunStore, config: RunConfig, summary: ShardSummary) -> None:
    """Persist what a computed batch's model calls cost, before its shard is committed (a kill
    between the two over-counts the spend, never under-counts it)."""
    if config.uses_models():
        store.record_spend(summary.start, summary.stop, summary.cost_usd, summary.discarded_usd,
                           summary.unpriced_episodes)


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
                  adopted: int, seconds: float, outcome: RunOutcome, error: str | None,
                  budget_stopped: bool = False) -> RunRecord:
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
        "episodes_unpriced": sum(s.unpriced_episodes for s in computed), "seconds": seconds,
        "budget_stopped": budget_stopped or any(s.budget_stopped for s in computed)})


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


def direct_batch(config: RunConfig, start: int, stop: int,
                 invocation: str) -> tuple[ShardRecord | None, ShardSummary]:
    """One batch through every stage on this thread's context, its files written (not
    committed); no files when a budget stop left it empty."""
    ctx = thread_context(config, cached_domain(config), invocation)
    rows, summary = process_shard(config, start, stop, ctx=ctx)
    if summary.stop <= start:
        return None, summary
    store = RunStore(config.store.out, config.run_id())
    return store.write_shard_files(start, summary.stop, batch_tables(rows)), summary


def run_build(config: RunConfig, progress: Progress | None = None) -> BuildResult:
    """Build (or finish building) the run this config describes by calling the stage functions
    directly, without Prefect: in this process, or over ``store.workers`` worker processes.
    ``trajforge build`` runs the ``build-dataset`` flow instead (flows/build.py); this is its
    baseline in benchmarks/ and a quick way for tests to make a dataset.

    The budget, the spend file and the ``runs`` record work as in the flow: spend is persisted
    before each shard is committed, a budget stop ends the build cleanly with what it has
    (``BuildResult.budget_stopped``), and each invocation is one row of the ``runs`` view."""
    began = time.perf_counter()
    out = config.store.out
    run_id = config.run_id()
    store = RunStore(out, run_id)
    store.prepare()
    store.write_run_info({"run_id": run_id, "name": config.name,
                         "config": config.model_dump_json(exclude={"store", "orchestration", "diversity"}),
                         "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    ranges = store.pending_ranges(config.generation.n_blueprints, config.store.shard_size)
    done_before = len(store.completed())
    summaries: list[ShardSummary] = []
    invocation = uuid.uuid4().hex
    record = start_record(config, store, invocation, "direct", None,
                          {"store": config.store.model_dump(mode="json")})
    stopped = False
    try:
        stopped = _run_ranges(config, ranges, store, invocation, summaries, progress)
        refresh_catalog(out)
    except BaseException as exc:
        write_run_record(out, finish_record(record, summaries, len(ranges) + done_before, 0,
                                            done_before, time.perf_counter() - began,
                                            RunOutcome.failed, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        release_invocation(invocation)
    write_run_record(out, finish_record(record, summaries, len(ranges) + done_before, 0,
                                        done_before, time.perf_counter() - began,
                                        RunOutcome.completed, None, stopped))
    refresh_catalog(out)  # the finished record in the runs view
    return BuildResult(run_id=run_id, out=out, shards_done=len(summaries), shards_skipped=done_before,
                       seconds=time.perf_counter() - began, summaries=summaries,
                       spent_usd=store.spent_usd() if config.uses_models() else 0.0,
                       budget_stopped=stopped, diversity=run_diversity_stage(config))


def run_diversity_stage(config: RunConfig) -> Any:
    """Scoring and selection over the run's committed trajectories, when configured."""
    if not config.diversity.active:
        return None
    from trajforge.curation import run_diversity

    return run_diversity(config, config.run_id())


def _run_ranges(config: RunConfig, ranges: list[tuple[int, int]], store: RunStore, invocation: str,
                summaries: list[ShardSummary], progress: Progress | None) -> bool:
    """Compute and commit ``ranges`` in order; True when the budget stopped the build."""
    budget = invocation_budget(config, invocation)
    stopped = False

    def commit(shard: ShardRecord | None, summary: ShardSummary) -> None:
        nonlocal stopped
        record_batch_spend(store, config, summary)
        if shard is not None:
            store.commit(shard)
        summaries.append(summary)
        stopped = stopped or summary.budget_stopped
        if budget is not None:
            budget.at_least(store.spent_usd())
        if progress:
            progress(summary)

    def more() -> bool:
        return not stopped and not (budget is not None and budget.exhausted())

    queue = list(ranges)
    workers = min(config.store.workers, len(ranges)) if ranges else 1
    if workers <= 1:
        while queue and more():
            commit(*direct_batch(config, *queue.pop(0), invocation))
        return stopped or bool(queue)
    import multiprocessing

    mp = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    with ProcessPoolExecutor(workers, mp_context=mp) as pool:
        # at most workers + 1 batches in flight, committed in order and then dropped, so the
        # writer holds a bounded number of results whatever the run size
        inflight = [pool.submit(direct_batch, config, *queue.pop(0), invocation)
                    for _ in range(min(workers + 1, len(queue)))]
        while inflight:
            done = inflight.pop(0)
            if queue and more():
                inflight.append(pool.submit(direct_batch, config, *queue.pop(0), invocation))
            commit(*done.result())
            del done
    return stopped or bool(queue)
