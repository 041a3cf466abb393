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
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.generators import generate_blueprints
from trajforge.schemas.arrow import (
    blueprint_to_row,
    rejection_to_row,
    trajectory_to_row,
    verdict_to_row,
)
from trajforge.schemas.blueprint import BlueprintRejection, TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.schemas.trajectory import EpisodeSpec, Trajectory, Verdict
from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, choose_fault, run_episode
import pyarrow as pa

from trajforge.schemas.runs import RunOutcome, RunRecord
from trajforge.store import TABLES, RunStore, refresh_catalog
from trajforge.store.runs import write_run_record
from trajforge.verifiers import verify


@dataclass
class ShardSummary:
    start: int
    stop: int
    blueprints: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    episodes: int = 0
    skipped_episodes: int = 0  # faulty episodes for blueprints that admit no fault
    seconds: float = 0.0
    passed: int = 0  # episodes that passed every check
    cost_usd: float = 0.0  # summed over the episodes that could be priced
    unpriced_episodes: int = 0  # episodes whose cost is unknown (None), never counted as 0


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


async def _simulate(bp: TaskBlueprint, domain: Domain, config: RunConfig, run_id: str,
                    slot: int, agent_kind: str) -> Trajectory | None:
    sim = config.simulation
    seed = episode_seed(bp.id, slot, agent_kind)
    rng = random.Random(seed)
    fault = None
    if agent_kind == "faulty":
        fault = choose_fault(bp, domain, rng, sim.fault_kinds)
        if fault is None:
            return None
    spec = EpisodeSpec(agent=f"scripted:{agent_kind}", user="scripted", seed=seed,
                       max_turns=sim.max_turns, fault=fault)
    agent = ScriptedAgent(bp, domain, rng, fault)
    user = ScriptedUser(bp, domain, random.Random(seed + 1))
    return await run_episode(bp.id, domain.environment(), agent, user,
                             EpisodeLimits(sim.max_turns, sim.max_steps_per_turn),
                             run_id=run_id, episode=spec)


async def _simulate_all(jobs: list[tuple[TaskBlueprint, int, str]], domain: Domain,
                        config: RunConfig, run_id: str) -> list[Trajectory | None]:
    gate = asyncio.Semaphore(config.simulation.concurrency)

    async def one(job: tuple[TaskBlueprint, int, str]) -> Trajectory | None:
        async with gate:
            return await _simulate(job[0], domain, config, run_id, job[1], job[2])

    return await asyncio.gather(*(one(j) for j in jobs))


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
    results = asyncio.run(_simulate_all(jobs, domain, config, config.run_id()))
    trajectories = [t for t in results if t is not None]
    return SimulatedBatch(trajectories, len(results) - len(trajectories))


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


def process_shard(config: RunConfig, start: int, stop: int,
                  domain: Domain | None = None) -> tuple[dict[str, list[dict[str, Any]]], ShardSummary]:
    """Indices [start, stop) through every stage; rows per table and a summary."""
    began = time.perf_counter()
    if domain is None:
        domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    generated = generate_batch(config, start, stop, domain)
    simulated = simulate_batch(config, generated.blueprints, domain)
    verdicts = verify_batch(config, simulated.trajectories, generated.blueprints, domain)
    rows = batch_rows(config, generated, simulated, verdicts)
    return rows, summarize_batch(generated, simulated, verdicts, time.perf_counter() - began)


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


_WORKER_DOMAIN: dict[str, Domain] = {}


def cached_domain(config: RunConfig) -> Domain:
    """One domain per process and config, built on first use (the template is the costly part;
    environments copy it, so threads may share it)."""
    key = f"{config.domain.name}:{config.domain.size}:{config.domain.seed}"
    if key not in _WORKER_DOMAIN:
        _WORKER_DOMAIN[key] = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    return _WORKER_DOMAIN[key]


def _worker_shard(config: RunConfig, start: int, stop: int) -> tuple[dict[str, pa.Table], ShardSummary]:
    rows, summary = process_shard(config, start, stop, cached_domain(config))
    return batch_tables(rows), summary


@dataclass
class BuildResult:
    run_id: str
    out: Path
    shards_done: int
    shards_skipped: int
    seconds: float
    summaries: list[ShardSummary]


Progress = Callable[[ShardSummary], None]


def run_build(config: RunConfig, progress: Progress | None = None) -> BuildResult:
    """Build (or finish building) the run this config describes."""
    began = time.perf_counter()
    out = config.store.out
    run_id = config.run_id()
    store = RunStore(out, run_id)
    store.prepare()
    store.write_run_info({"run_id": run_id, "name": config.name,
                         "config": config.model_dump_json(exclude={"store", "orchestration"}),
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
    return BuildResult(run_id=run_id, out=out, shards_done=len(summaries), shards_skipped=total_ranges,
                       seconds=time.perf_counter() - began, summaries=summaries)


def _run_ranges(config: RunConfig, ranges: list[tuple[int, int]], store: RunStore,
                summaries: list[ShardSummary], progress: Progress | None) -> None:

    def commit(rows: dict[str, list[dict[str, Any]]], summary: ShardSummary) -> None:
        store.write_shard(summary.start, summary.stop, rows)
        summaries.append(summary)
        if progress:
            progress(summary)

    workers = min(config.store.workers, len(ranges)) if ranges else 1
    if workers <= 1:
        domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
        for start, stop in ranges:
            commit(*process_shard(config, start, stop, domain))
    else:
        import multiprocessing

        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            # at most workers + 1 shards in flight, committed in order and then dropped, so the
            # writer holds a bounded number of shards whatever the run size
            queue = list(ranges)
            inflight = [pool.submit(_worker_shard, config, *queue.pop(0))
                        for _ in range(min(workers + 1, len(queue)))]
            while inflight:
                done = inflight.pop(0)
                if queue:
                    inflight.append(pool.submit(_worker_shard, config, *queue.pop(0)))
                commit(*done.result())
                del done
