"""The ``build-dataset`` flow: batches of blueprints through every stage as Prefect tasks.

One ``build-batch`` task per batch ``[start, stop)`` (``store.shard_size`` blueprints) runs the
stage tasks in turn on the worker that got it: ``generate-validate`` (the generator, or the LLM
proposer) -> ``simulate`` -> ``verify`` -> ``judge`` (only with ``verification.judge``) ->
``write``; the data stays in that worker's memory and its Parquet files are written there.
Scripted and model-backed builds take this same path: model-backed stages run on the worker
thread's ``SimulationContext`` (its event loop and litellm gateway) and spend from the build
invocation's budget (``pipeline.invocation_budget``). When the budget runs out, no new episode
or batch starts; a batch cut short returns the prefix of blueprints that finished (and is not
cached, as it is not the batch its key names), the flow records its spend in the run's spend
file before committing it, and the invocation ends ``completed`` with what it has.
The batch task returns only the shard's file list and counts, which Prefect persists under
``<out>/.prefect/results`` with a cache key made of the run's content id (the config hash), the
batch range and a digest of the stage code; never Prefect's run id. So a re-run after a crash,
or with ``n_blueprints`` raised, takes every finished batch from the cache (counted as a cache
hit) and computes only the rest. The flow's own process is the single writer of the manifest:
it checks each batch's files against their checksums and commits them, then refreshes the
catalog and records the invocation in the ``runs`` view.

Stage tasks retry transient errors only (``flows/retry.py``); everything else fails the batch,
the flow, and the invocation's record says ``failed`` with the error.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.utilities.annotations import quote
from pydantic import BaseModel

import trajforge
from trajforge.flows import progress as build_progress
from trajforge.flows.retry import retry_transient
from trajforge.flows.runners import check_runner, make_task_runner
from trajforge.flows.runtime import prefect_runtime, results_dir
from trajforge.pipeline import (
    BuildResult,
    GeneratedBatch,
    JudgedBatch,
    ShardSummary,
    SimulatedBatch,
    batch_rows,
    batch_tables,
    cached_domain,
    finish_record,
    generate_batch,
    invocation_budget,
    judge_batch,
    record_batch_spend,
    release_invocation,
    simulate_batch,
    start_record,
    summarize_batch,
    thread_context,
    verify_batch,
)
from trajforge.schemas.config import RunConfig
from trajforge.schemas.runs import RunOutcome, RunRecord
from trajforge.schemas.trajectory import Trajectory, Verdict
from trajforge.store import RunStore, refresh_catalog
from trajforge.store.runs import write_run_record
from trajforge.store.shards import ShardFile, ShardRecord

Progress = Callable[[ShardSummary], None]

# The code a batch's rows depend on: editing it invalidates cached batches.
_STAGE_SOURCES = ("environments", "generators", "simulation", "verifiers", "schemas",
                  "pipeline.py", "store/shards.py")


def code_version() -> str:
    """Digest of trajforge's version and the stage code's source."""
    root = Path(trajforge.__file__).parent
    digest = hashlib.sha256(trajforge.__version__.encode())
    for name in _STAGE_SOURCES:
        target = root / name
        for path in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class BatchResult(BaseModel):
    """What a batch task returns and Prefect persists: the shard's files and its counts (small
    by design: the rows themselves are in the Parquet files). ``stop`` is where the shard ends:
    below the batch's planned stop when the budget ran out part-way (then nothing is cached),
    equal to ``start`` (and no files) when no blueprint of it finished."""

    start: int
    stop: int
    files: dict[str, dict[str, Any]]
    adopted: bool = False  # the shard was already committed; nothing was computed
    blueprints: int = 0
    rejections: dict[str, int] = {}
    episodes: int = 0
    skipped_episodes: int = 0
    passed: int = 0
    cost_usd: float = 0.0
    unpriced_episodes: int = 0
    discarded_usd: float = 0.0
    proposer_usd: float = 0.0
    retries: int = 0
    terminations: dict[str, int] = {}
    budget_stopped: bool = False
    seconds: float = 0.0

    @classmethod
    def of(cls, record: ShardRecord | None, summary: ShardSummary | None) -> BatchResult:
        files = {name: {"path": f.path, "rows": f.rows, "sha256": f.sha256}
                 for name, f in record.files.items()} if record is not None else {}
        if summary is None:
            assert record is not None
            return cls(start=record.start, stop=record.stop, files=files, adopted=True)
        return cls(start=summary.start, stop=summary.stop, files=files,
                   blueprints=summary.blueprints, rejections=dict(summary.rejections),
                   episodes=summary.episodes, skipped_episodes=summary.skipped_episodes,
                   passed=summary.passed, cost_usd=summary.cost_usd,
                   unpriced_episodes=summary.unpriced_episodes, discarded_usd=summary.discarded_usd,
                   proposer_usd=summary.proposer_usd, retries=summary.retries,
                   terminations=dict(summary.terminations), budget_stopped=summary.budget_stopped,
                   seconds=summary.seconds)

    def record(self) -> ShardRecord | None:
        if not self.files:
            return None
        return ShardRecord(start=self.start, stop=self.stop,
                           files={name: ShardFile(path=str(f["path"]), rows=int(f["rows"]),
                                                  sha256=str(f["sha256"]))
                                  for name, f in self.files.items()})

    def summary(self) -> ShardSummary:
        summary = ShardSummary(self.start, self.stop, blueprints=self.blueprints,
                               episodes=self.episodes, skipped_episodes=self.skipped_episodes,
                               seconds=self.seconds, passed=self.passed, cost_usd=self.cost_usd,
                               unpriced_episodes=self.unpriced_episodes,
                               discarded_usd=self.discarded_usd, proposer_usd=self.proposer_usd,
                               retries=self.retries, budget_stopped=self.budget_stopped)
        summary.rejections.update(self.rejections)
        summary.terminations.update(self.terminations)
        return summary


# --- stage tasks: one stage function each, run inside the batch task on its worker -----------

@task(name="generate-validate", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def generate_validate(config: RunConfig, start: int, stop: int, invocation: str = "") -> GeneratedBatch:
    domain = cached_domain(config)
    ctx = thread_context(config, domain, invocation) if config.generation.proposer else None
    return generate_batch(config, start, stop, domain, ctx)


@task(name="simulate", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def simulate(config: RunConfig, generated: Any, invocation: str = "") -> SimulatedBatch:
    return simulate_batch(config, generated, thread_context(config, cached_domain(config), invocation))


@task(name="verify", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def verify(config: RunConfig, trajectories: list[Trajectory], blueprints: Any) -> list[Verdict]:
    return verify_batch(config, trajectories, blueprints, cached_domain(config))


@task(name="judge", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def judge(config: RunConfig, trajectories: Any, verdicts: Any, blueprints: Any,
          invocation: str = "") -> JudgedBatch:
    return judge_batch(config, trajectories, verdicts, blueprints,
                       thread_context(config, cached_domain(config), invocation))


@task(name="write", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def write(config: RunConfig, run_id: str, start: int, stop: int, tables: Any) -> ShardRecord:
    return RunStore(config.store.out, run_id).write_shard_files(start, stop, tables)


def batch_cache_key(context: Any, parameters: dict[str, Any]) -> str:
    """Content, not run: the config hash (``run_id``), the range and the stage code."""
    return (f"trajforge-batch-{parameters['run_id']}-{parameters['start']:09d}-"
            f"{parameters['stop']:09d}-{parameters['code_version']}")


def _not_cached() -> None:
    """Keep this task run's result out of the cache (a batch the budget cut short is not the
    batch its key names)."""
    from prefect.transactions import get_transaction

    transaction = get_transaction()
    if transaction is not None:
        transaction.write_on_commit = False


@task(name="build-batch", cache_key_fn=batch_cache_key, persist_result=True,
      result_serializer="json", task_run_name="batch-{start}-{stop}")
def build_batch(config: RunConfig, run_id: str, start: int, stop: int, code_version: str,
                committed: ShardRecord | None = None, invocation: str = "") -> BatchResult:
    """One batch through every stage, on whichever worker runs it; its files are written there.
    A batch the manifest already holds, intact, is adopted rather than recomputed. Model-backed
    stages run on this thread's context of build invocation ``invocation`` (its budget)."""
    if committed is not None and RunStore(config.store.out, run_id).intact(committed):
        return BatchResult.of(committed, None)
    retries = config.orchestration.retries
    began = time.perf_counter()
    budget = invocation_budget(config, invocation)
    if budget is not None and budget.exhausted():
        _not_cached()
        return BatchResult(start=start, stop=start, files={}, budget_stopped=True)
    generated = generate_validate.with_options(retries=retries)(config, start, stop, invocation)
    simulated = simulate.with_options(retries=retries)(config, quote(generated), invocation)
    verdicts = verify.with_options(retries=retries)(config, quote(simulated.trajectories),
                                                    quote(generated.blueprints))
    judged = None
    if config.verification.judge is not None:
        judged = judge.with_options(retries=retries)(config, quote(simulated.trajectories),
                                                     quote(verdicts), quote(generated.blueprints),
                                                     invocation)
    record = None
    if simulated.stop > start:
        tables = batch_tables(batch_rows(config, generated, simulated, verdicts, judged))
        record = write.with_options(retries=retries)(config, run_id, start, simulated.stop,
                                                     quote(tables))
    if simulated.budget_stopped:
        _not_cached()
    return BatchResult.of(record, summarize_batch(generated, simulated, verdicts,
                                                  time.perf_counter() - began, judged))


# --- the flow ----------------------------------------------------------------------------------

@dataclass
class FlowBuildResult(BuildResult):
    """``BuildResult`` plus what the flow adds: cache hits, the invocation, Prefect's cost."""

    cached: int = 0
    adopted: int = 0
    invocation_id: str = ""
    runner: str = "threads"
    startup_seconds: float = 0.0
    flow_seconds: float = 0.0
    cost_usd: float = 0.0
    record: RunRecord | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _plan(store: RunStore, n: int, shard_size: int) -> tuple[list[tuple[int, int]], dict[tuple[int, int], ShardRecord]]:
    """Every batch of ``[0, n)``: the committed shards as they are, the gaps cut at multiples of
    ``shard_size`` (the same boundaries an uninterrupted build has)."""
    committed = {(r.start, r.stop): r for r in store.completed() if r.stop <= n}
    plan = sorted([*committed, *store.pending_ranges(n, shard_size)])
    return plan, committed


@flow(name="build-dataset", persist_result=False, log_prints=False)
def build_dataset(config: dict[str, Any], grow: int = 0) -> FlowBuildResult:
    """Build (or finish, or extend) the run ``config`` describes. ``grow`` > 0 extends the run
    by that many blueprints past what is committed (a scheduled build adds new data)."""
    began = time.perf_counter()
    progress = build_progress.current()
    cfg = RunConfig.model_validate(config)
    out, run_id = cfg.store.out, cfg.run_id()
    store = RunStore(out, run_id)
    store.prepare()
    n = cfg.generation.n_blueprints
    if grow > 0:
        n = max(n, max((r.stop for r in store.completed()), default=0) + grow)
        cfg = cfg.model_copy(update={"generation": cfg.generation.model_copy(update={"n_blueprints": n})})
    store.write_run_info({"run_id": run_id, "name": cfg.name,
                          "config": cfg.model_dump_json(exclude={"store", "orchestration", "diversity"}),
                          "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    context = FlowRunContext.get()
    flow_run = context.flow_run if context else None
    record = start_record(
        cfg, store, str(flow_run.id) if flow_run else uuid.uuid4().hex, cfg.orchestration.runner,
        "build-dataset", {"grow": grow, "store": cfg.store.model_dump(mode="json"),
                          "orchestration": cfg.orchestration.model_dump(mode="json")})
    logger = get_run_logger()
    plan, committed = _plan(store, n, cfg.store.shard_size)
    version = code_version()
    batch = build_batch.with_options(result_storage=results_dir(out))
    computed: list[ShardSummary] = []
    cached = adopted = 0
    invocation = record.id
    # this process's share of the invocation's budget: with the thread runner, the very one the
    # batches spend from; with others, kept up to date from the spend the flow commits
    budget = invocation_budget(cfg, invocation)
    stopped = False  # a batch was cut short by the budget, or a batch was never started
    window: deque[tuple[tuple[int, int], Any]] = deque()

    def submit(rng: tuple[int, int], refresh: bool = False) -> Any:
        task_ = batch.with_options(refresh_cache=True) if refresh else batch
        return task_.submit(config=cfg, run_id=run_id, start=rng[0], stop=rng[1],
                            code_version=version, committed=committed.get(rng),
                            invocation=invocation)

    try:
        queue = deque(plan)
        # a bounded window: the flow holds a few results at a time, whatever the run size
        window_size = max(2, 2 * cfg.store.workers)
        while queue or window:
            while queue and len(window) < window_size:
                rng = queue.popleft()
                if rng not in committed and (stopped or (budget is not None and budget.exhausted())):
                    stopped = True  # the budget is spent: no new batch starts
                    continue
                window.append((rng, submit(rng)))
            if not window:
                break
            rng, future = window.popleft()
            result: BatchResult = future.result()
            hit = future.state.name == "Cached"
            shard = result.record()
            if shard is not None and not store.intact(shard):  # cached files gone or changed
                if rng in committed and store.intact(committed[rng]):
                    # the manifest holds other, intact files for it (written since): keep those
                    result, hit, shard = BatchResult.of(committed[rng], None), False, committed[rng]
                else:
                    logger.warning("batch %s-%s: cached files missing or changed; recomputing", *rng)
                    result, hit, shard = _recompute(submit, rng)
            if not (hit or result.adopted):
                summary = result.summary()
                record_batch_spend(store, cfg, summary)  # spend first, then the shard
                computed.append(summary)
                stopped = stopped or summary.budget_stopped
                if budget is not None:
                    budget.at_least(store.spent_usd())
            if shard is not None and committed.get(rng) != shard:
                store.commit(shard)
            if hit:
                cached += 1
            elif result.adopted:
                adopted += 1
            logger.info("batch %s-%s: %s", *rng,
                        "cache hit" if hit else "adopted" if result.adopted
                        else f"computed, budget stop at {result.stop}" if result.budget_stopped
                        else "computed")
            if progress is not None:
                progress(result.summary() if not (hit or result.adopted) else ShardSummary(*rng))
        refresh_catalog(out)
    except BaseException as exc:
        for _, pending in window:  # let batches still running finish before their loops close
            pending.wait()
        failed = finish_record(record, computed, len(plan), cached, adopted,
                               time.perf_counter() - began, RunOutcome.failed,
                               f"{type(exc).__name__}: {exc}")
        write_run_record(out, failed)
        try:
            refresh_catalog(out)
        except Exception:  # noqa: BLE001 - the build's own error is the one to report
            pass
        raise
    finally:
        release_invocation(invocation)
    final = finish_record(record, computed, len(plan), cached, adopted,
                          time.perf_counter() - began, RunOutcome.completed, None, stopped)
    write_run_record(out, final)  # same file the refreshed view already lists
    if stopped:
        logger.warning("the budget of $%s is spent: the build stopped with what it has",
                       cfg.simulation.gateway.max_cost_usd)
    return FlowBuildResult(run_id=run_id, out=Path(out), shards_done=len(computed),
                           shards_skipped=cached + adopted, seconds=time.perf_counter() - began,
                           summaries=computed, cached=cached, adopted=adopted,
                           spent_usd=store.spent_usd() if cfg.uses_models() else 0.0,
                           budget_stopped=stopped,
                           invocation_id=record.id, runner=cfg.orchestration.runner,
                           flow_seconds=time.perf_counter() - began, cost_usd=final.cost_usd,
                           record=final)


def _recompute(submit: Callable[..., Any], rng: tuple[int, int]) -> tuple[BatchResult, bool, ShardRecord | None]:
    result: BatchResult = submit(rng, refresh=True).result()
    return result, False, result.record()


@flow(name="trajforge-scheduled-build", persist_result=False)
def scheduled_build(config: dict[str, Any], grow: int = 0) -> dict[str, Any]:
    """A deployment's entry point: the build with the task runner its config names (a flow's
    task runner is fixed when it starts, so the choice is made here, at run time)."""
    cfg = RunConfig.model_validate(config)
    runner = make_task_runner(cfg.orchestration, cfg.store.workers)
    result = build_dataset.with_options(task_runner=runner)(config=config, grow=grow)
    return {"run_id": result.run_id, "computed": result.shards_done, "cached": result.cached,
            "adopted": result.adopted, "episodes": sum(s.episodes for s in result.summaries),
            "spent_usd": result.spent_usd, "budget_stopped": result.budget_stopped}


def build(config: RunConfig, progress: Progress | None = None, quiet: bool = False,
          grow: int = 0) -> FlowBuildResult:
    """``trajforge build``, scripted or model-backed: the flow on the configured task runner,
    against the configured Prefect server or a temporary one (``flows/runtime.py``)."""
    began = time.perf_counter()
    check_runner(config.orchestration)
    with build_progress.reporting_to(progress), \
            prefect_runtime(config.store.out, quiet=quiet) as runtime:
        runner = make_task_runner(config.orchestration, config.store.workers, quiet=quiet)
        result = build_dataset.with_options(task_runner=runner)(
            config=config.model_dump(mode="json"), grow=grow)
    result.startup_seconds = runtime.startup_seconds
    from trajforge.pipeline import run_diversity_stage

    result.diversity = run_diversity_stage(config)
    result.seconds = time.perf_counter() - began
    result.extra["api_url"] = runtime.api_url
    return result
