"""Session-wide fixtures.

``prefect_api``: one real Prefect server for the whole test session (Prefect's
``prefect_test_harness``: a subprocess API server on a temporary SQLite database), with analytics
off so nothing leaves the machine. Tests that run flows in-process use it through Prefect's
settings; tests that run ``trajforge`` in a subprocess pass its URL as ``PREFECT_API_URL``, so
no test pays for a server start of its own except the ones about that start.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


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
