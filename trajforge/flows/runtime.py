"""A Prefect API for one build: the user's server when one is configured, else the managed one.

With ``PREFECT_API_URL`` set (a ``prefect server start``, Prefect Cloud, or a test harness) the
build reports to it. Without one, it uses the managed local server (``flows/server.py``: started
by the first build, reused by the next, stopped after ``orchestration.server_idle_s`` without a
build). With ``orchestration.server: temporary`` it runs the same local server Prefect's ephemeral mode starts
(``SubprocessASGIServer``), but with its home and SQLite database under ``<out>/.prefect`` rather
than ``~/.prefect``, a start-up timeout meant for slow machines (the first start migrates the
database: 10-15 s on 2 busy cores, more on a cold container), analytics off (the server would
otherwise report usage over the network), and its own log level at CRITICAL; it is stopped when
the build ends, so no server outlives the command. Task results that serve as the build's cache
always live in ``<out>/.prefect/results``, next to the data they describe.

``quiet_console`` keeps Prefect's INFO lines ("Beginning flow run ...", "Finished in state
Completed()") off the terminal while the logs still reach the Prefect API.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trajforge.flows.server import free_port

if TYPE_CHECKING:
    from trajforge.schemas.config import OrchestrationConfig

PREFECT_DIR = ".prefect"
RESULTS_DIR = "results"
STARTUP_TIMEOUT_S = 600
# what a first start of the temporary server writes under <out>/.prefect (its SQLite database,
# migrated): 4.7 MB measured. With less free, its start-up fails and Prefect waits out the whole
# timeout before saying so, so the build refuses at once instead.
SERVER_DB_BYTES = 8 << 20
# Environment for processes a build starts itself (Dask workers): their console stays quiet too.
QUIET_ENV = {"PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "WARNING"}


@dataclass(frozen=True)
class PrefectRuntime:
    api_url: str
    home: Path | None  # None when the build used a server configured outside it
    started_server: bool
    startup_seconds: float  # time to start the temporary server (0 when none was started)


def prefect_home(out: Path) -> Path:
    return Path(out).resolve() / PREFECT_DIR


def results_dir(out: Path) -> Path:
    return prefect_home(out) / RESULTS_DIR


def room_needed(out: Path, orchestration: OrchestrationConfig, least: int) -> int:
    """Free bytes a build into ``out`` needs to start: ``least``, or enough for the temporary
    server's first database when it will start one there (the managed server's database is not
    under ``out``)."""
    from prefect.settings import get_current_settings

    if get_current_settings().api.url or orchestration.server == "managed" \
            or (prefect_home(out) / "prefect.db").exists():
        return least
    return max(least, SERVER_DB_BYTES)


def _drain_workers() -> None:
    """Flush logs and events still queued for the server before it stops (as Prefect's own
    test harness does), so shutting it down loses nothing and prints nothing."""
    import inspect

    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.utilities.asyncutils import run_coro_as_sync

    async def drain() -> None:
        try:
            result = APILogWorker.instance().drain()
            if inspect.isawaitable(result):
                await result
        except RuntimeError:
            pass
        events = EventsWorker.drain_all()
        if inspect.isawaitable(events):
            await events

    run_coro_as_sync(drain())


@contextmanager
def quiet_console(enabled: bool = True) -> Iterator[None]:
    """Raise Prefect's console handlers to WARNING for the duration (API logging unchanged)."""
    if not enabled:
        yield
        return
    from prefect.logging.handlers import PrefectConsoleHandler

    handlers = [h for h in logging.getLogger().handlers if isinstance(h, PrefectConsoleHandler)]
    levels = [h.level for h in handlers]
    for handler in handlers:
        handler.setLevel(max(handler.level, logging.WARNING))  # never louder than the caller set it
    try:
        yield
    finally:
        for handler, level in zip(handlers, levels, strict=True):
            handler.setLevel(level)


def set_quiet_console() -> None:
    """For worker processes (a process pool initializer): the same as ``quiet_console``. A fresh
    worker has not configured Prefect's logging yet (that happens when its first task enters a
    Prefect context, which would then add console handlers at INFO), so it is configured here
    first."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.logging.handlers import PrefectConsoleHandler

    ensure_logging_setup()

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler):
            handler.setLevel(logging.WARNING)


def check_reachable(api_url: str) -> None:
    """A configured server that does not answer is the user's setting to fix: one line, exit 2,
    before anything is written."""
    import httpx

    from trajforge.errors import ConfigError

    try:
        response = httpx.get(f"{api_url.rstrip('/')}/health", timeout=30)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise ConfigError("PREFECT_API_URL", f"the Prefect server at {api_url} does not answer "
                          f"({type(exc).__name__}); start it or unset PREFECT_API_URL to let the "
                          "build start its own") from None


def check_configured_server() -> None:
    """``check_reachable`` for the configured server, if one is configured."""
    from prefect.settings import get_current_settings

    configured = get_current_settings().api.url
    if configured:
        check_reachable(configured)


@contextmanager
def prefect_runtime(out: Path, orchestration: OrchestrationConfig, quiet: bool = False,
                    startup_timeout_s: int = STARTUP_TIMEOUT_S) -> Iterator[PrefectRuntime]:
    """Make a Prefect API available for a build writing to ``out``: the configured server, the
    managed one (``flows/server.py``) or, with ``orchestration.server: temporary``, one for this
    command."""
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_HOME,
        PREFECT_LOGGING_SERVER_LEVEL,
        PREFECT_SERVER_ANALYTICS_ENABLED,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        get_current_settings,
        temporary_settings,
    )

    configured = get_current_settings().api.url
    if configured:
        check_reachable(configured)
        with quiet_console(quiet):
            try:
                yield PrefectRuntime(api_url=configured, home=None, started_server=False,
                                     startup_seconds=0.0)
            finally:
                # events left queued are flushed at exit, with a console warning after the command
                _drain_workers()
        return

    if orchestration.server == "managed":
        from trajforge.flows.server import managed_server, server_home

        home = server_home(orchestration.server_home)
        with managed_server(home, orchestration.server_idle_s, startup_timeout_s) as managed, \
                temporary_settings(updates={PREFECT_API_URL: managed.info.api_url}), quiet_console(quiet):
            try:
                yield PrefectRuntime(api_url=managed.info.api_url, home=home, started_server=managed.started,
                                     startup_seconds=managed.startup_seconds)
            finally:
                _drain_workers()
        return

    from prefect.server.api.server import SubprocessASGIServer

    home = prefect_home(out)
    home.mkdir(parents=True, exist_ok=True)
    with temporary_settings(updates={
        PREFECT_HOME: home,
        PREFECT_SERVER_ANALYTICS_ENABLED: False,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS: startup_timeout_s,
        PREFECT_LOGGING_SERVER_LEVEL: "CRITICAL",
    }):
        server = SubprocessASGIServer(port=free_port())
        began = time.perf_counter()
        with quiet_console(quiet):
            server.start(timeout=startup_timeout_s)
        startup = time.perf_counter() - began
        try:
            with temporary_settings(updates={PREFECT_API_URL: server.api_url}), quiet_console(quiet):
                try:
                    yield PrefectRuntime(api_url=server.api_url, home=home, started_server=True,
                                         startup_seconds=startup)
                finally:
                    _drain_workers()
        finally:
            with quiet_console(quiet):
                server.stop()
