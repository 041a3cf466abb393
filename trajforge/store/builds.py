"""Building a run: the one executor that computes a run's batches, commits them and records the
invocation, whoever computes the batches.

``execute_build`` plans every batch of ``[0, n)`` (the committed shards as they are, the gaps cut
at multiples of ``store.shard_size``, the same boundaries an uninterrupted build has), submits them
through a ``Submit`` function with a bounded window in flight (each batch committed as it
finishes, so one that finishes early makes room for the next at once), and, in this process, the single
writer of the manifest: persists each computed batch's spend, then checks its files against their
checksums and commits them, counts cache hits and adoptions, stops submitting once the budget is
spent, and writes the invocation's ``runs`` record when it starts and when it ends (``failed``
with the error if anything raised). Two callers provide the ``Submit``:

- the ``build-dataset`` Prefect flow (``flows/build.py``): one ``build-batch`` task per batch,
  cached by Prefect, on the configured task runner (``trajforge build``);
- ``run_build`` here: ``compute_batch`` in this process or over ``store.workers`` worker
  processes, without Prefect (the baseline the benchmarks compare the flow against, and a quick
  way for tests to make a dataset).

Because blueprint ``i`` and its scripted episodes depend only on the config and ``i``, any
batching, runner or resumption ends with exactly the rows of one uninterrupted build.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING, Any, Protocol

from trajforge.generators.batch import generate_batch
from trajforge.schemas.config import RunConfig
from trajforge.schemas.runs import RunOutcome, RunRecord
from trajforge.simulation.batch import simulate_batch
from trajforge.simulation.worker_state import (
    SimulationContext,
    invocation_budget,
    process_context,
    release_invocation,
)
from trajforge.store.catalog import refresh_catalog, refresh_catalog_checked
from trajforge.store.integrity import FileDamage
from trajforge.store.lock import SpaceReserve, build_lock
from trajforge.store.rows import batch_rows, batch_tables, summarize_batch
from trajforge.store.runs import BatchSummary, finish_record, record_batch_spend, start_record, write_run_record
from trajforge.store.shards import RunStore, ShardRecord
from trajforge.verifiers.batch import judge_batch

if TYPE_CHECKING:
    from trajforge.simulation.llm import Budget

Progress = Callable[[BatchSummary], None]
Log = Callable[[str], None]
Range = tuple[int, int]  # blueprint indices [start, stop)


class PendingBatch(Protocol):
    """A submitted batch: its summary when done, and whether a cache answered it."""

    def result(self) -> BatchSummary: ...

    def wait(self) -> None: ...

    def cached(self) -> bool: ...

    def when_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from any thread) once the batch is done, at once if it is."""


# (range, the shard the manifest holds for it, recompute even if cached) -> the pending batch
Submit = Callable[[Range, ShardRecord | None, bool], PendingBatch]


@dataclass(frozen=True)
class Feed:
    """How a build whose batches share this process's episode gate keeps it fed: besides the
    window, a batch more is submitted whenever the batches in flight hold fewer than
    ``keep_waiting`` episode places the gate has not granted yet (``granted``: how many it has,
    ``simulation.worker_state.places_granted``; each blueprint takes ``places_per_blueprint``),
    up to ``most`` batches in flight (the runner's threads).

    A window counted in batches alone lets the gate run dry: a batch holds its place until its
    longest episode ends, and once the batches after it have all been admitted nothing is left to
    take the freed places (in flight fell to a third of the gate for 10 s at 75-blueprint batches,
    a gate of 64 and one waiting batch more than filled it; issue 21). Counted in places not yet
    granted, the next batch is generated while a gate's worth of episodes still waits, whatever
    the batches' lengths. An estimate from above (cached batches and skipped faulty episodes take
    no places), so it errs towards the plain window."""

    granted: Callable[[], int]
    places_per_blueprint: int
    keep_waiting: int
    most: int
    poll_s: float = 0.2  # how often the flow looks again while no batch finishes


@dataclass
class BuildResult:
    """What one build invocation did."""

    run_id: str
    out: Path
    seconds: float
    summaries: list[BatchSummary]  # of the batches computed
    spent_usd: float = 0.0  # the run's model spend over every invocation
    budget_stopped: bool = False
    cached: int = 0
    adopted: int = 0
    invocation_id: str = ""
    runner: str = "direct"
    record: RunRecord | None = None
    startup_seconds: float = 0.0  # finding or starting the Prefect server (0: a configured one)
    server: str = ""  # "started" or "reused" (the managed or a temporary server); "": configured or none
    flow_seconds: float = 0.0  # inside the flow, when run as one
    diversity: Any = None  # the build's curation.DiversityResult, when diversity.select/dedup_threshold is set
    damaged: tuple[FileDamage, ...] = ()  # committed files (of any run) the catalog had to leave out
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def shards_done(self) -> int:
        """Batches computed."""
        return len(self.summaries)

    @property
    def shards_skipped(self) -> int:
        """Batches found done: from the cache, or adopted from the manifest."""
        return self.cached + self.adopted


def budget_for(config: RunConfig, invocation: str) -> Budget | None:
    """This process's budget of the invocation, brought up to what the run has spent (``None``
    without models)."""
    if not config.uses_models():
        return None
    return invocation_budget(config, invocation, RunStore(config.store.out, config.run_id()).spent_usd())


def process_batch(config: RunConfig, start: int, stop: int,
                  ctx: SimulationContext) -> tuple[dict[str, list[dict[str, Any]]], BatchSummary]:
    """Indices ``[start, stop)`` through every stage on ``ctx``: the rows per table (nothing is
    written) and the summary, whose ``stop`` is where a budget stop cut the batch."""
    began = time.perf_counter()
    generated = generate_batch(config, start, stop, ctx)
    simulated = simulate_batch(config, generated.blueprints, generated.stop, ctx)
    verdicts = simulated.verdicts
    judged = judge_batch(config, simulated.trajectories, verdicts, generated.blueprints, ctx)
    rows = batch_rows(config, generated, simulated, verdicts, judged)
    return rows, summarize_batch(generated, simulated, verdicts, time.perf_counter() - began, judged)


def settled_batch(store: RunStore, start: int, committed: ShardRecord | None,
                  budget: Budget | None) -> BatchSummary | None:
    """The summary of a batch that needs no computing, or ``None``: the manifest already holds
    it intact (adopted), or the budget is spent (nothing done, ``budget_stopped``)."""
    if committed is not None and store.intact(committed):
        return BatchSummary(start=committed.start, stop=committed.stop, shard=committed, adopted=True)
    if budget is not None and budget.exhausted():
        return BatchSummary(start=start, stop=start, budget_stopped=True)
    return None


def compute_batch(config: RunConfig, start: int, stop: int, invocation: str = "",
                  committed: ShardRecord | None = None, share: int = 1) -> BatchSummary:
    """One batch through every stage on this process's context (of ``share`` processes that
    split the concurrency), its files written (not committed), unless it is settled already
    (``settled_batch``)."""
    store = RunStore(config.store.out, config.run_id())
    budget = budget_for(config, invocation)
    settled = settled_batch(store, start, committed, budget)
    if settled is not None:
        return settled
    with process_context(config, invocation, budget, share) as ctx:
        rows, summary = process_batch(config, start, stop, ctx)
    if summary.stop > start:
        summary.shard = store.write_shard_files(start, summary.stop, batch_tables(rows))
    return summary


def prepare_run(config: RunConfig, grow: int = 0) -> tuple[RunConfig, RunStore]:
    """The run's folder made ready and its ``run.json`` written; ``grow`` > 0 extends the run by
    that many blueprints past what is committed (the config returned says how many in all)."""
    store = RunStore(config.store.out, config.run_id())
    store.prepare()
    if grow > 0:
        n = max(config.generation.n_blueprints, max((r.stop for r in store.completed()), default=0) + grow)
        config = config.model_copy(update={"generation": config.generation.model_copy(update={"n_blueprints": n})})
    store.write_run_info({"run_id": store.run_id, "name": config.name,
                          "config": config.model_dump_json(exclude={"store", "orchestration", "diversity"}),
                          "created_at": datetime.now(UTC).isoformat(timespec="seconds")})
    return config, store


def plan_batches(store: RunStore, n: int, shard_size: int) -> tuple[list[Range], dict[Range, ShardRecord]]:
    """Every batch of ``[0, n)``: the committed shards as they are, the gaps cut at multiples of
    ``shard_size``; and the committed shards by range."""
    committed = {(r.start, r.stop): r for r in store.completed() if r.stop <= n}
    return sorted([*committed, *store.pending_ranges(n, shard_size)]), committed


def execute_build(config: RunConfig, store: RunStore, submit: Submit, *, invocation: str, runner: str,
                  flow_name: str | None, parameters: dict[str, Any], window: int,
                  progress: Progress | None = None, log: Log | None = None,
                  warn: Log | None = None, recheck_computed: bool = True, feed: Feed | None = None) -> BuildResult:
    """Compute, commit and record every missing batch of the run (see the module note). A batch
    a cache answered has its files checked against their checksums before it is committed;
    with ``recheck_computed``, so has a computed one (the flow's batches may have been written on
    another machine; ``run_build``'s were written moments ago by this process or its forks).
    ``feed``: batches beyond ``window`` while the episode gate would otherwise run dry."""
    began = time.perf_counter()
    say = log or (lambda _: None)
    record = start_record(config, store, invocation, runner, flow_name, parameters)
    plan, committed = plan_batches(store, config.generation.n_blueprints, config.store.shard_size)
    computed: list[BatchSummary] = []
    cached = adopted = 0
    stopped = False  # a batch was cut short by the budget, or a batch was never started
    # this process's share of the invocation's budget: with batches in this process, the very
    # one they spend from; with others, kept up to date from the spend committed here
    budget = budget_for(config, invocation)
    # batches are committed as they finish, not in submission order, so a batch that finishes
    # early frees its place in the window at once (the next one starts while an earlier one is
    # still running); the manifest is read sorted by range, so the order of commits is not data
    inflight: dict[Range, PendingBatch] = {}
    finished: SimpleQueue[Range] = SimpleQueue()
    reserve = SpaceReserve(store.run_dir)
    places = 0  # episode places of the batches submitted so far (with a feed)

    def hungry() -> bool:
        return (feed is not None and len(inflight) < feed.most
                and places - feed.granted() < feed.keep_waiting)

    try:
        queue = deque(plan)
        while queue or inflight:
            while queue and (len(inflight) < window or hungry()):
                rng = queue.popleft()
                if rng not in committed and (stopped or (budget is not None and budget.exhausted())):
                    stopped = True  # the budget is spent: no new batch starts
                    continue
                inflight[rng] = submit(rng, committed.get(rng), False)
                inflight[rng].when_done(partial(finished.put, rng))
                places += (rng[1] - rng[0]) * (feed.places_per_blueprint if feed else 0)
            if not inflight:
                break
            if feed is None:
                rng = finished.get()
            else:
                try:
                    rng = finished.get(timeout=feed.poll_s)
                except Empty:
                    continue  # none finished: is the gate running dry?
            pending = inflight.pop(rng)
            summary, hit = pending.result(), pending.cached()
            shard = summary.shard
            if shard is not None and (hit or recheck_computed) and not store.intact(shard):  # gone or changed
                if rng in committed and store.intact(committed[rng]):
                    # the manifest holds other, intact files for it (written since): keep those
                    shard = committed[rng]
                    summary, hit = BatchSummary(start=rng[0], stop=rng[1], shard=shard, adopted=True), False
                else:
                    (warn or say)(f"batch {rng[0]}-{rng[1]}: cached files missing or changed; recomputing")
                    summary, hit = submit(rng, committed.get(rng), True).result(), False
                    shard = summary.shard
            if not (hit or summary.adopted):
                record_batch_spend(store, config, summary)  # spend first, then the shard
                computed.append(summary)
                stopped = stopped or summary.budget_stopped
                if budget is not None:
                    budget.at_least(store.spent_usd())
            if shard is not None and committed.get(rng) != shard:
                store.commit(shard)
            cached += hit
            adopted += summary.adopted
            say(f"batch {rng[0]}-{rng[1]}: " + ("cache hit" if hit else "adopted" if summary.adopted
                                               else f"computed, budget stop at {summary.stop}"
                                               if summary.budget_stopped else "computed"))
            if progress is not None:
                progress(summary if not (hit or summary.adopted) else BatchSummary(start=rng[0], stop=rng[1]))
        refresh_catalog(store.out)
    except BaseException as exc:
        for still in inflight.values():  # let batches still running finish before their loops close
            still.wait()
        failed = finish_record(record, computed, len(plan), cached, adopted, time.perf_counter() - began,
                               RunOutcome.failed, f"{type(exc).__name__}: {exc}")
        reserve.release()  # room for the record, on a disk that filled up
        try:  # and if it fails even so, the build's own error is the one to report
            write_run_record(store.out, failed)
            refresh_catalog(store.out)
        except Exception:  # noqa: BLE001
            pass
        raise
    finally:
        release_invocation(invocation)
        reserve.release()
    final = finish_record(record, computed, len(plan), cached, adopted, time.perf_counter() - began,
                          RunOutcome.completed, None, stopped)
    write_run_record(store.out, final)
    refreshed = refresh_catalog_checked(store.out)  # the finished record in the runs view
    if stopped and warn is not None:
        warn(f"the budget of ${config.simulation.gateway.max_cost_usd} is spent: the build stopped with what it has")
    return BuildResult(run_id=store.run_id, out=Path(store.out), seconds=time.perf_counter() - began,
                       summaries=computed, spent_usd=store.spent_usd() if config.uses_models() else 0.0,
                       budget_stopped=stopped, cached=cached, adopted=adopted, invocation_id=record.id,
                       runner=runner, record=final, damaged=refreshed.check.damaged)


class _Done:
    """A batch computed in this process, at submission."""

    def __init__(self, summary: BatchSummary) -> None:
        self._summary = summary

    def result(self) -> BatchSummary:
        return self._summary

    def wait(self) -> None:
        pass

    def cached(self) -> bool:
        return False

    def when_done(self, callback: Callable[[], None]) -> None:
        callback()


class _InPool:
    """A batch computing in a worker process."""

    def __init__(self, future: Future[BatchSummary]) -> None:
        self._future = future

    def result(self) -> BatchSummary:
        return self._future.result()

    def wait(self) -> None:
        self._future.exception()

    def cached(self) -> bool:
        return False

    def when_done(self, callback: Callable[[], None]) -> None:
        self._future.add_done_callback(lambda _: callback())


def run_build(config: RunConfig, progress: Progress | None = None) -> BuildResult:
    """Build (or finish building) the run this config describes without Prefect: the batches in
    this process, or over ``store.workers`` worker processes (at most ``workers + 1`` in flight,
    each committed as it finishes). ``trajforge build`` runs the ``build-dataset`` flow instead, and then the
    diversity stage when configured (``curation.run_diversity_stage``), which this leaves out."""
    with build_lock(config.store.out):
        return _run_build(config, progress)


def _run_build(config: RunConfig, progress: Progress | None) -> BuildResult:
    began = time.perf_counter()
    config, store = prepare_run(config)
    invocation = uuid.uuid4().hex
    workers = config.store.workers
    parameters = {"store": config.store.model_dump(mode="json")}
    if workers <= 1:
        def inline(rng: Range, committed: ShardRecord | None, refresh: bool) -> PendingBatch:
            return _Done(compute_batch(config, rng[0], rng[1], invocation, None if refresh else committed))

        result = execute_build(config, store, inline, invocation=invocation, runner="direct", flow_name=None,
                               parameters=parameters, window=1, progress=progress, recheck_computed=False)
    else:
        import multiprocessing

        mp = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ProcessPoolExecutor(workers, mp_context=mp) as pool:
            def pooled(rng: Range, committed: ShardRecord | None, refresh: bool) -> PendingBatch:
                return _InPool(pool.submit(compute_batch, config, rng[0], rng[1], invocation,
                                           None if refresh else committed, workers))

            result = execute_build(config, store, pooled, invocation=invocation, runner="direct",
                                   flow_name=None, parameters=parameters, window=workers + 1,
                                   progress=progress, recheck_computed=False)
    result.seconds = time.perf_counter() - began
    return result
