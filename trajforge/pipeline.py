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
from trajforge.schemas.trajectory import EpisodeSpec, Trajectory
from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, choose_fault, run_episode
import pyarrow as pa

from trajforge.store import TABLES, RunStore, refresh_catalog
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


def process_shard(config: RunConfig, start: int, stop: int,
                  domain: Domain | None = None) -> tuple[dict[str, list[dict[str, Any]]], ShardSummary]:
    """Indices [start, stop) through every stage; rows per table and a summary."""
    began = time.perf_counter()
    if domain is None:
        domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    run_id = config.run_id()
    summary = ShardSummary(start, stop)
    rows: dict[str, list[dict[str, Any]]] = {"blueprints": [], "rejections": [], "trajectories": [],
                                             "verdicts": []}
    blueprints: dict[str, TaskBlueprint] = {}
    for item in generate_blueprints(domain, config.generation, run_id, start, stop):
        if isinstance(item, BlueprintRejection):
            rows["rejections"].append(rejection_to_row(item))
            summary.rejections[item.reason] += 1
        else:
            blueprints[item.id] = item
            rows["blueprints"].append(blueprint_to_row(item, run_id))
    summary.blueprints = len(blueprints)
    jobs = [(bp, slot, kind) for bp in blueprints.values()
            for slot, kind in enumerate(config.simulation.agents)]
    trajectories = asyncio.run(_simulate_all(jobs, domain, config, run_id))
    for trajectory in trajectories:
        if trajectory is None:
            summary.skipped_episodes += 1
            continue
        summary.episodes += 1
        rows["trajectories"].append(trajectory_to_row(trajectory))
        verdicts = verify(trajectory, blueprints[trajectory.blueprint_id], domain,
                          config.verification.checks)
        rows["verdicts"].extend(verdict_to_row(v) for v in verdicts)
    summary.seconds = time.perf_counter() - began
    return rows, summary


_WORKER_DOMAIN: dict[str, Domain] = {}


def _worker_shard(config: RunConfig, start: int, stop: int) -> tuple[dict[str, list[dict[str, Any]]], ShardSummary]:
    # one domain per worker process, built on first use (the template is the costly part)
    key = f"{config.domain.name}:{config.domain.size}:{config.domain.seed}"
    if key not in _WORKER_DOMAIN:
        _WORKER_DOMAIN[key] = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    rows, summary = process_shard(config, start, stop, _WORKER_DOMAIN[key])
    return {name: pa.Table.from_pylist(rows.get(name, []), schema=schema)  # type: ignore[misc]
            for name, schema in TABLES.items()}, summary


@dataclass
class BuildResult:
    run_id: str
    out: Path
    shards_done: int
    shards_skipped: int
    seconds: float
    summaries: list[ShardSummary]
    diversity: Any = None  # curation.DiversityResult when diversity.select/dedup_threshold is set


Progress = Callable[[ShardSummary], None]


def run_build(config: RunConfig, progress: Progress | None = None) -> BuildResult:
    """Build (or finish building) the run this config describes."""
    began = time.perf_counter()
    out = config.store.out
    run_id = config.run_id()
    store = RunStore(out, run_id)
    store.prepare()
    store.write_run_info({"run_id": run_id, "name": config.name,
                         "config": config.model_dump_json(exclude={"store", "diversity"}),
                         "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    ranges = store.pending_ranges(config.generation.n_blueprints, config.store.shard_size)
    total_ranges = len(store.completed())
    summaries: list[ShardSummary] = []

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
    refresh_catalog(out)
    diversity = None
    if config.diversity.active:
        from trajforge.curation import run_diversity

        diversity = run_diversity(config, run_id)
    return BuildResult(run_id=run_id, out=out, shards_done=len(summaries), shards_skipped=total_ranges,
                       seconds=time.perf_counter() - began, summaries=summaries, diversity=diversity)
