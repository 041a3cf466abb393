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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajforge.errors import ConfigError
from trajforge.schemas.config import RunConfig

FLOW_NAME = "trajforge-scheduled-build"
ENTRYPOINT = "trajforge.flows.build.scheduled_build"


def deployment_name(name: str) -> str:
    return f"{FLOW_NAME}/{name}"


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


def deployment_parameters(config: RunConfig, grow: int) -> dict[str, Any]:
    """The flow's parameters: the whole config (its output folder made absolute, as the worker
    runs elsewhere) and ``grow``."""
    store = config.store.model_copy(update={"out": Path(config.store.out).resolve()})
    return {"config": config.model_copy(update={"store": store}).model_dump(mode="json"),
            "grow": grow}


def _ensure_process_pool(pool: str) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(pool)
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=pool, type="process"))


def register(config: RunConfig, cron: str, name: str, pool: str, grow: int = 0) -> str:
    """Create (or update) the scheduled deployment; returns its id."""
    import httpx
    from prefect import deploy
    from prefect.deployments.runner import EntrypointType

    from trajforge.flows.build import scheduled_build

    url = api_url()
    try:
        _ensure_process_pool(pool)
        deployment = scheduled_build.to_deployment(
            name=name, cron=cron, parameters=deployment_parameters(config, grow),
            entrypoint_type=EntrypointType.MODULE_PATH, tags=["trajforge"],
            description=f"trajforge build of run {config.run_id()} into {Path(config.store.out).resolve()}")
        ids = deploy(deployment, work_pool_name=pool, build=False, push=False,
                     print_next_steps_message=False, ignore_warnings=True)
    except httpx.HTTPError as exc:
        raise ConfigError("PREFECT_API_URL", f"cannot reach the Prefect server at {url}: {exc}") from exc
    return str(ids[0])


def serve_deployment(config: RunConfig, cron: str, name: str, grow: int = 0) -> None:
    """Register the deployment and run its scheduled builds from this process (blocks)."""
    from prefect.deployments.runner import EntrypointType

    from trajforge.flows.build import scheduled_build

    api_url()
    scheduled_build.serve(name=name, cron=cron, parameters=deployment_parameters(config, grow),
                          tags=["trajforge"], entrypoint_type=EntrypointType.MODULE_PATH)
