"""Scheduled builds: a deployment of ``trajforge-scheduled-build`` on a Prefect server.

Schedules need a real server (Prefect's scheduler service does not run in ephemeral mode), so
``PREFECT_API_URL`` must point at one (``prefect server start`` prints it). ``register`` creates
the deployment in a *process* work pool (made if missing) with the flow's module path as its
entry point, so any worker with trajforge installed runs it: ``prefect worker start --pool
trajforge``. ``serve_deployment`` instead registers it and runs its scheduled builds from the
calling process (``flow.serve``), with no work pool or worker.

Every scheduled run builds the same config into the same folder: finished batches are cache
hits, so a run adds only what is missing; with ``grow`` each run also extends the run by that
many new blueprints, whose content-addressed ids never collide with the ones already there.

With a train config, the deployment runs ``trajforge-build-train-eval`` instead (flows/stages.py):
the same build, then the ``sft`` export, SFT on it and the evaluation of the trained model on the
held-out blueprints, its rows in the catalog's ``evaluations`` view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajforge.errors import ConfigError
from trajforge.schemas.config import RunConfig

FLOW_NAME = "trajforge-scheduled-build"
ENTRYPOINT = "trajforge.flows.build.scheduled_build"
TRAIN_FLOW_NAME = "trajforge-build-train-eval"


def deployment_name(name: str, train: bool = False) -> str:
    return f"{TRAIN_FLOW_NAME if train else FLOW_NAME}/{name}"


def check_schedule(cron: str) -> None:
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron)
    except ValueError as exc:
        raise ConfigError("--cron", f"'{cron}' is not a valid cron schedule") from exc


def api_url() -> str:
    """The configured Prefect server; a deployment without one would never run."""
    from prefect.settings import get_current_settings

    url = get_current_settings().api.url
    if not url:
        raise ConfigError("PREFECT_API_URL", "no Prefect server configured: start one with "
                          "`prefect server start` and set PREFECT_API_URL=http://127.0.0.1:4200/api")
    return url


def deployment_parameters(config: RunConfig, grow: int,
                          train: dict[str, Any] | None = None) -> dict[str, Any]:
    """The flow's parameters: the whole config (its output folder made absolute, as the worker
    runs elsewhere) and ``grow``; with ``train`` (a train config), also that config, its output
    folder made absolute too."""
    store = config.store.model_copy(update={"out": Path(config.store.out).resolve()})
    parameters: dict[str, Any] = {
        "config": config.model_copy(update={"store": store}).model_dump(mode="json"), "grow": grow}
    if train is not None:
        parameters["train"] = {**train, "output_dir": str(Path(train["output_dir"]).resolve())}
    return parameters


def _flow(train: dict[str, Any] | None) -> Any:
    if train is None:
        from trajforge.flows.build import scheduled_build

        return scheduled_build
    from trajforge.flows.stages import build_train_eval

    return build_train_eval


def _ensure_process_pool(pool: str) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(pool)
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=pool, type="process"))


def register(config: RunConfig, cron: str, name: str, pool: str, grow: int = 0,
             train: dict[str, Any] | None = None) -> str:
    """Create (or update) the scheduled deployment (of the build, or with ``train`` of build ->
    train -> evaluate); returns its id."""
    import httpx
    from prefect import deploy
    from prefect.deployments.runner import EntrypointType

    url = api_url()
    try:
        _ensure_process_pool(pool)
        deployment = _flow(train).to_deployment(
            name=name, cron=cron, parameters=deployment_parameters(config, grow, train),
            entrypoint_type=EntrypointType.MODULE_PATH, tags=["trajforge"],
            description=f"trajforge build of run {config.run_id()} into {Path(config.store.out).resolve()}")
        ids = deploy(deployment, work_pool_name=pool, build=False, push=False,
                     print_next_steps_message=False, ignore_warnings=True)
    except httpx.HTTPError as exc:
        raise ConfigError("PREFECT_API_URL", f"cannot reach the Prefect server at {url}: {exc}") from exc
    if not isinstance(ids, list):  # called from sync code, prefect's deploy runs to completion
        raise TypeError(f"prefect's deploy returned {type(ids).__name__}, not the deployment ids")
    return str(ids[0])


def serve_deployment(config: RunConfig, cron: str, name: str, grow: int = 0,
                     train: dict[str, Any] | None = None) -> None:
    """Register the deployment and run its scheduled builds from this process (blocks)."""
    from prefect.deployments.runner import EntrypointType

    api_url()
    _flow(train).serve(name=name, cron=cron, parameters=deployment_parameters(config, grow, train),
                       tags=["trajforge"], entrypoint_type=EntrypointType.MODULE_PATH)
