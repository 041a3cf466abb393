"""The ``build-dataset`` flow: batches of blueprints through every stage as Prefect tasks.

One ``build-batch`` task per batch ``[start, stop)`` (``store.shard_size`` blueprints) runs the
stage tasks in turn on the worker that got it: ``generate-validate`` (the generator, or the LLM
proposer) -> ``simulate`` (which checks each episode as it ends: ``simulation/batch.py``) ->
``judge`` (only with ``verification.judge``) -> ``write``; the data stays in that worker's memory
and its Parquet files are written there.
Scripted and model-backed builds take this same path: model-backed stages run on the worker
thread's ``SimulationContext`` (its event loop and litellm gateway) and spend from the build
invocation's budget (``simulation/worker_state.py``). When the budget runs out, no new episode
or batch starts; a batch cut short returns the prefix of blueprints that finished (and is not
cached, as it is not the batch its key names), the flow records its spend in the run's spend
file before committing it, and the invocation ends ``completed`` with what it has.
The batch task returns the batch's ``BatchSummary`` (its shard's file list and counts, never
its rows), which Prefect persists under
``<out>/.prefect/results`` with a cache key made of the run's content id (the config hash), the
batch range and a digest of the stage code; never Prefect's run id. So a re-run after a crash,
or with ``n_blueprints`` raised, takes every finished batch from the cache (counted as a cache
hit) and computes only the rest. Committing, spend and the invocation's record are the one
executor's (``store/builds.py``, which the direct, Prefect-free ``run_build`` uses too): the
flow's own process is the single writer of the manifest.

Stage tasks retry transient errors only (``flows/retry.py``); everything else fails the batch,
the flow, and the invocation's record says ``failed`` with the error.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import uuid
from collections.abc import Callable
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.utilities.annotations import quote

import trajforge
from trajforge.config import run_config
from trajforge.errors import TrajforgeError
from trajforge.flows import progress as build_progress
from trajforge.flows.logs import command_log, log_failure, note_log, root_error
from trajforge.flows.retry import retry_transient
from trajforge.flows.runners import batches_ahead, check_runner, episode_feed, make_task_runner, threads_ahead
from trajforge.flows.runtime import check_configured_server, prefect_runtime, results_dir, room_needed
from trajforge.generators.batch import GeneratedBatch, generate_batch
from trajforge.schemas.config import RunConfig
from trajforge.simulation.batch import SimulatedBatch, simulate_batch
from trajforge.simulation.worker_state import SimulationContext, concurrency_share, process_context
from trajforge.sources import domain_sources, module_closure, source_digest
from trajforge.store import RunStore
from trajforge.store.builds import (
    BuildResult,
    PendingBatch,
    budget_for,
    execute_build,
    prepare_run,
    settled_batch,
)
from trajforge.store.lock import MIN_FREE_BYTES, build_lock, check_room
from trajforge.store.rows import batch_rows, batch_tables, summarize_batch
from trajforge.store.runs import BatchSummary
from trajforge.store.shards import ShardRecord
from trajforge.verifiers.batch import JudgedBatch, judge_batch

Progress = Callable[[BatchSummary], None]

# where a batch's computation starts: the modules it imports, transitively, are its code
_BATCH_ENTRY = "trajforge.store.builds"


def code_version(domains: tuple[str, ...]) -> str:
    """Digest of trajforge's version and of the code a batch's rows depend on: the modules the
    batch computation imports (derived from the import statements, so moving code keeps them
    covered) and the source of each configured domain's package."""
    code = source_digest(module_closure(_BATCH_ENTRY) + tuple(p for d in domains for p in domain_sources(d)))
    return hashlib.sha256(f"{trajforge.__version__}\0{code}".encode()).hexdigest()[:16]


# --- stage tasks: one stage function each, run inside the batch task on its worker -----------

def _context(config: RunConfig, invocation: str) -> contextlib.AbstractContextManager[SimulationContext]:
    """This process's simulation context of the invocation (its batches share its loop and gate)."""
    return process_context(config, invocation, budget_for(config, invocation),
                           concurrency_share(config.orchestration.runner, config.store.workers))


@task(name="generate-validate", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def generate_validate(config: RunConfig, start: int, stop: int, invocation: str = "") -> GeneratedBatch:
    if not config.generation.proposer:
        return generate_batch(config, start, stop, None)
    with _context(config, invocation) as ctx:
        return generate_batch(config, start, stop, ctx)


@task(name="simulate", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def simulate(config: RunConfig, generated: Any, invocation: str = "") -> SimulatedBatch:
    with _context(config, invocation) as ctx:
        return simulate_batch(config, generated.blueprints, generated.stop, ctx)


@task(name="judge", cache_policy=NO_CACHE, persist_result=False,
      retry_condition_fn=retry_transient)
def judge(config: RunConfig, trajectories: Any, verdicts: Any, blueprints: Any,
          invocation: str = "") -> JudgedBatch:
    with _context(config, invocation) as ctx:
        return judge_batch(config, trajectories, verdicts, blueprints, ctx)


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
                committed: ShardRecord | None = None, invocation: str = "") -> BatchSummary:
    """One batch through every stage, on whichever worker runs it; its files are written there.
    A batch the manifest already holds, intact, is adopted rather than recomputed. Model-backed
    stages run on this thread's context of build invocation ``invocation`` (its budget)."""
    settled = settled_batch(RunStore(config.store.out, run_id), start, committed, budget_for(config, invocation))
    if settled is not None:
        if settled.budget_stopped:
            _not_cached()
        return settled
    retries = config.orchestration.retries
    began = time.perf_counter()
    generated = generate_validate.with_options(retries=retries)(config, start, stop, invocation)
    simulated = simulate.with_options(retries=retries)(config, quote(generated), invocation)
    verdicts = simulated.verdicts  # each episode checked as it ended
    judged = None
    if config.verification.judge is not None:
        judged = judge.with_options(retries=retries)(config, quote(simulated.trajectories),
                                                     quote(verdicts), quote(generated.blueprints),
                                                     invocation)
    shard = None
    if simulated.stop > start:
        tables = batch_tables(batch_rows(config, generated, simulated, verdicts, judged))
        shard = write.with_options(retries=retries)(config, run_id, start, simulated.stop, quote(tables))
    if simulated.budget_stopped:
        _not_cached()
    return summarize_batch(generated, simulated, verdicts, time.perf_counter() - began, judged, shard)


# --- the flow ----------------------------------------------------------------------------------

class _TaskBatch:
    """A submitted ``build-batch`` task run."""

    def __init__(self, future: Any) -> None:
        self._future = future

    def result(self) -> BatchSummary:
        summary: BatchSummary = self._future.result()
        return summary

    def wait(self) -> None:
        self._future.wait()

    def cached(self) -> bool:
        return bool(self._future.state.name == "Cached")

    def when_done(self, callback: Callable[[], None]) -> None:
        self._future.add_done_callback(lambda _: callback())


@flow(name="build-dataset", persist_result=False, log_prints=False)
def build_dataset(config: dict[str, Any], grow: int = 0) -> BuildResult:
    """Build (or finish, or extend) the run ``config`` describes. ``grow`` > 0 extends the run
    by that many blueprints past what is committed (a scheduled build adds new data)."""
    began = time.perf_counter()
    cfg, store = prepare_run(run_config(config), grow)
    context = FlowRunContext.get()
    flow_run = context.flow_run if context else None
    invocation = str(flow_run.id) if flow_run else uuid.uuid4().hex
    logger = get_run_logger()
    version = code_version(cfg.domain.all_names)
    batch = build_batch.with_options(result_storage=results_dir(cfg.store.out))

    def submit(rng: tuple[int, int], committed: ShardRecord | None, refresh: bool) -> PendingBatch:
        task_ = batch.with_options(refresh_cache=True) if refresh else batch
        return _TaskBatch(task_.submit(config=cfg, run_id=store.run_id, start=rng[0], stop=rng[1],
                                       code_version=version, committed=committed, invocation=invocation))

    result = execute_build(
        cfg, store, submit, invocation=invocation, runner=cfg.orchestration.runner, flow_name="build-dataset",
        parameters={"grow": grow, "store": cfg.store.model_dump(mode="json"),
                    "orchestration": cfg.orchestration.model_dump(mode="json")},
        # a bounded window: the flow holds a few results at a time, whatever the run size (and
        # every batch the runner keeps waiting at the gate: batches_ahead)
        window=max(2, 2 * cfg.store.workers, cfg.store.workers + batches_ahead(cfg)),
        feed=episode_feed(cfg, invocation), progress=build_progress.current(),
        log=logger.info, warn=logger.warning)
    result.seconds = result.flow_seconds = time.perf_counter() - began
    return result


@flow(name="trajforge-scheduled-build", persist_result=False)
def scheduled_build(config: dict[str, Any], grow: int = 0) -> dict[str, Any]:
    """A deployment's entry point: the build with the task runner its config names (a flow's
    task runner is fixed when it starts, so the choice is made here, at run time)."""
    cfg = run_config(config)
    runner = make_task_runner(cfg.orchestration, cfg.store.workers, ahead=threads_ahead(cfg))
    with build_lock(cfg.store.out):
        result = build_dataset.with_options(task_runner=runner)(config=config, grow=grow)
    return {"run_id": result.run_id, "computed": result.shards_done, "cached": result.cached,
            "adopted": result.adopted, "episodes": sum(s.episodes for s in result.summaries),
            "spent_usd": result.spent_usd, "budget_stopped": result.budget_stopped}


def build(config: RunConfig, progress: Progress | None = None, quiet: bool = False,
          grow: int = 0, wait: bool = False, verbose: bool = False) -> BuildResult:
    """``trajforge build``, scripted or model-backed: the flow on the configured task runner,
    against the configured Prefect server or a temporary one (``flows/runtime.py``).

    Holds the output folder's build lock throughout (another build there: ``FolderBusy``, or
    with ``wait`` a wait for it), refuses a folder with no room to start in, and keeps Prefect's
    log in ``<out>/logs`` (on the console too with ``verbose``). A failure re-raises the error
    that caused it (``flows/logs.root_error``) with a note naming the log."""
    began = time.perf_counter()
    check_runner(config.orchestration)
    check_configured_server()  # before the lock: nothing is written for a server that is not there
    out = config.store.out
    with build_lock(out, wait=wait):
        check_room(out, room_needed(out, config.orchestration, MIN_FREE_BYTES))
        with command_log(out, "build", verbose=verbose) as log:
            try:
                with build_progress.reporting_to(progress), \
                        prefect_runtime(out, config.orchestration, quiet=quiet) as runtime:
                    runner = make_task_runner(config.orchestration, config.store.workers, quiet=quiet,
                                              ahead=threads_ahead(config))
                    result = build_dataset.with_options(task_runner=runner)(
                        config=config.model_dump(mode="json"), grow=grow)
                result.startup_seconds = runtime.startup_seconds
                result.server = "started" if runtime.started_server else "reused" if runtime.home else ""
                from trajforge.curation import run_diversity_stage  # numpy and the embedders: only when used

                result.diversity = run_diversity_stage(config)
            except Exception as exc:
                log_failure(exc)
                root = root_error(exc)
                note_log(root, log)
                if root is exc or not isinstance(root, TrajforgeError):
                    raise
                raise root from exc
    result.seconds = time.perf_counter() - began
    result.extra["api_url"] = runtime.api_url
    if log is not None:
        result.extra["log"] = str(log)
    return result
