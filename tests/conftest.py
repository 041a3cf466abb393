"""Session-wide fixtures.

``prefect_api``: one real Prefect server for the whole test session (Prefect's
``prefect_test_harness``: a subprocess API server on a temporary SQLite database), with analytics
off so nothing leaves the machine. Tests that run flows in-process use it through Prefect's
settings; tests that run ``trajforge`` in a subprocess pass its URL as ``PREFECT_API_URL``, so
no test pays for a server start of its own except the ones about that start.

``managed_server_home``: builds that run with no server configured use the managed local server
(``trajforge.flows.server``); for the session its folder is a temporary one (``XDG_STATE_HOME``,
inherited by subprocesses), and whatever server (and warm build process, ``flows/warm.py``) the tests started there is
stopped at the end,
so none outlives the suite and nothing is written to the user's own state folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def managed_server_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from trajforge.flows.server import server_home, stop_server
    from trajforge.flows.warm import stop_warm

    state = tmp_path_factory.mktemp("xdg-state")
    before = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)
    try:
        yield
    finally:
        stop_warm()
        stop_server(server_home())
        if before is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = before


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_HOME,
        PREFECT_LOGGING_SERVER_LEVEL,
        PREFECT_SERVER_ANALYTICS_ENABLED,
        temporary_settings,
    )
    from prefect.testing.utilities import prefect_test_harness

    home = tmp_path_factory.mktemp("prefect-home")
    with temporary_settings(updates={PREFECT_HOME: home, PREFECT_SERVER_ANALYTICS_ENABLED: False,
                                     PREFECT_LOGGING_SERVER_LEVEL: "CRITICAL"}):
        with prefect_test_harness(server_startup_timeout=300):
            yield str(PREFECT_API_URL.value())
