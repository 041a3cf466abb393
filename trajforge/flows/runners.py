"""The Prefect task runner a build's batches run on.

- ``threads`` (default): a thread pool in the build's process; right for I/O-bound (LLM) work.
  Its batches play their episodes on the process's one episode loop, through one gate of
  ``simulation.concurrency`` (``simulation/worker_state.py``). A model-backed build starts with
  ``batches_ahead`` batches more than ``workers`` (one, or more when a batch holds fewer
  episodes than the gate), so batches are generated and waiting at the gate while the others
  finish: the next batch's episodes take the slots the last episodes of the previous one free,
  and the model server sees no gap at batch boundaries (measured with one batch ahead at
  15-blueprint batches and a gate of 16: no conversation started for 4.7 s while one batch was
  verified and written, ``benchmarks/llm_throughput.py``). From then on the flow adds a batch
  whenever those in flight hold fewer places the gate has not granted than the gate has
  (``episode_feed``): a batch keeps its thread until its longest episode ends, so the pool has
  ``threads_ahead`` threads more than ``workers``.
- ``processes``: a process pool on this machine; CPU-bound scripted builds scale with cores.
- ``dask``: an existing cluster at ``address`` (``tcp://host:8786``), or a local cluster of
  ``workers`` worker processes (one thread each) started and stopped with the build.
- ``ray``: an existing cluster at ``address`` (``ray://host:10001``), or a local Ray instance.

Every worker writes its own batch's Parquet files (so the output folder must be shared storage
when workers run on other machines, and the Prefect API must be reachable from them: a real
``prefect server``, not the build's temporary one); the build's own process commits them to the
manifest. Which runner ran a batch never changes its rows.
"""

from __future__ import annotations

import contextvars
import functools
import math
from typing import Any

from trajforge.errors import ConfigError
from trajforge.flows.runtime import QUIET_ENV, set_quiet_console
from trajforge.schemas.config import OrchestrationConfig, RunConfig
from trajforge.store.builds import Feed

EXTRAS = {"dask": ("prefect_dask", "distributed"), "ray": ("prefect_ray", "ray")}


def check_runner(orchestration: OrchestrationConfig) -> None:
    """Fail early, with the install command, when the runner's optional packages are missing."""
    import importlib.util

    for module in EXTRAS.get(orchestration.runner, ()):
        if importlib.util.find_spec(module) is None:
            raise ConfigError("orchestration.runner",
                              f"the {orchestration.runner} runner needs the '{orchestration.runner}' "
                              f"extra: pip install 'trajforge[{orchestration.runner}]'")


@functools.cache
def _process_pool_runner() -> type:
    """Prefect's process pool, with its message-forwarding thread (the one that sends the
    workers' logs and events to the API) run in the context the runner was entered in.

    A new thread starts with an empty ``contextvars`` context, so Prefect's own forwarder reads
    the process-global settings, which lack the build's ``PREFECT_API_URL`` (it is set with
    ``temporary_settings``, a context variable), and starts an ephemeral server of its own: a
    second Prefect server per build, with its database in ``~/.prefect``, analytics on and its
    errors on the console (measured: one extra ``uvicorn`` child of a ``--runner processes``
    build)."""
    from prefect.task_runners import ProcessPoolTaskRunner

    class ContextProcessPoolTaskRunner(ProcessPoolTaskRunner):
        _entered_context: contextvars.Context | None = None

        def __enter__(self) -> Any:
            self._entered_context = contextvars.copy_context()
            return super().__enter__()

        def _forward_subprocess_messages(self) -> None:
            forward = super()._forward_subprocess_messages
            if self._entered_context is None:
                forward()
            else:
                self._entered_context.run(forward)

    return ContextProcessPoolTaskRunner


def batches_ahead(config: RunConfig) -> int:
    """Batches a model-backed build keeps generated and waiting at the episode gate beyond its
    ``workers`` running ones from the start: enough that their episodes alone fill the gate
    (``simulation.concurrency``), at least one; none for a scripted build."""
    if not config.uses_models():
        return 0
    return max(1, math.ceil(config.simulation.concurrency / config.store.shard_size))


STRAGGLING = 4  # batches ahead the threads runner has room for, as a multiple of ``batches_ahead``


def threads_ahead(config: RunConfig) -> int:
    """Threads the threads runner has beyond ``workers``: room for the batches waiting at the gate
    (``batches_ahead``) and for the ones the build's ``store.builds.Feed`` adds while earlier
    batches still finish their longest episodes."""
    return STRAGGLING * batches_ahead(config)


def episode_feed(config: RunConfig, invocation: str) -> Feed | None:
    """How a model-backed build on the threads runner keeps its process's episode gate fed
    (``store.builds.Feed``): a gate's worth of places waiting, up to the runner's threads. Other
    runners have a gate per worker process, which the flow cannot see: their window alone."""
    if config.orchestration.runner != "threads" or not config.uses_models():
        return None
    from trajforge.simulation.worker_state import places_granted

    return Feed(granted=functools.partial(places_granted, invocation),
                places_per_blueprint=len(config.simulation.agents),
                keep_waiting=config.simulation.concurrency,
                most=config.store.workers + threads_ahead(config))


def make_task_runner(orchestration: OrchestrationConfig, workers: int, quiet: bool = False,
                     ahead: int = 0) -> Any:
    """The task runner ``orchestration.runner`` names, for ``workers`` batches at once (and,
    on the threads runner, ``ahead`` batches more: ``threads_ahead``, see the module note)."""
    check_runner(orchestration)
    runner = orchestration.runner
    if runner == "threads":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=workers + ahead)
    if runner == "processes":
        return _process_pool_runner()(max_workers=workers,
                                      initializer=set_quiet_console if quiet else None)
    if runner == "dask":
        from prefect_dask import DaskTaskRunner

        if orchestration.address:
            return DaskTaskRunner(address=orchestration.address)
        return DaskTaskRunner(cluster_class="distributed.LocalCluster", cluster_kwargs={
            "n_workers": workers, "threads_per_worker": 1, "processes": True,
            "dashboard_address": None, "env": dict(QUIET_ENV) if quiet else {}})
    if runner == "ray":
        from prefect_ray import RayTaskRunner

        if orchestration.address:
            return RayTaskRunner(address=orchestration.address)
        return RayTaskRunner(init_kwargs={
            "num_cpus": workers, "include_dashboard": False, "log_to_driver": not quiet,
            "runtime_env": {"env_vars": dict(QUIET_ENV)} if quiet else {}})
    raise ConfigError("orchestration.runner", f"unknown runner {runner!r}")
