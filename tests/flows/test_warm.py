"""The warm build process (``trajforge.flows.warm``): a real one, in the session's state folder,
serving real ``trajforge build`` commands run as subprocesses. Each test reads the warm process's
log to tell whether a command was forked by it (served warm) or ran on its own (cold)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trajforge.flows.server import server_home
from trajforge.flows.warm import ensure_warm, stop_warm, warm_status

TRAJFORGE = [sys.executable, "-m", "trajforge.cli"]
START_S = 300


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    return {**env, **extra}


def _forked() -> list[int]:
    log = server_home() / "warm.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [int(line.split()[2]) for line in lines if " forked " in line]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def warm() -> Iterator[dict[str, object]]:
    stop_warm()
    try:
        ensure_warm(idle_s=600)
        deadline = time.monotonic() + START_S
        while (info := warm_status()) is None:
            assert time.monotonic() < deadline, (server_home() / "warm.log").read_text()
            time.sleep(0.2)
        yield info
    finally:
        stop_warm()


@pytest.mark.slow
def test_a_build_runs_in_a_child_of_the_warm_process(warm: dict[str, object], tmp_path: Path) -> None:
    served = len(_forked())
    out = tmp_path / "data"
    proc = subprocess.run([*TRAJFORGE, "build", "--n", "6", "--out", str(out), "--quiet"], env=_env(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert len(_forked()) == served + 1  # it was forked by the warm process
    assert "Built run_" in proc.stdout and str(out) in proc.stdout  # its output reached our pipe
    assert (out / "catalog.duckdb").is_file()
    # a relative --out is the caller's folder, not the warm process's
    rel = subprocess.run([*TRAJFORGE, "build", "--n", "4", "--out", "rel", "--quiet"], env=_env(),
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert rel.returncode == 0, rel.stderr
    assert (tmp_path / "rel" / "catalog.duckdb").is_file()
    assert warm_status() == warm  # the same warm process serves on


@pytest.mark.slow
def test_errors_and_exit_codes_come_through(warm: dict[str, object], tmp_path: Path) -> None:
    served = len(_forked())
    proc = subprocess.run([*TRAJFORGE, "build", "--n", "4", "--domain", "no_such_domain", "--out",
                           str(tmp_path / "x"), "--quiet"], env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "no_such_domain" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert len(_forked()) == served + 1


@pytest.mark.slow
def test_another_environment_builds_cold_and_the_warm_process_stays(warm: dict[str, object],
                                                                    tmp_path: Path) -> None:
    served = len(_forked())
    proc = subprocess.run([*TRAJFORGE, "build", "--n", "4", "--out", str(tmp_path / "d"), "--quiet"],
                          env=_env(PREFECT_LOGGING_LEVEL="WARNING"), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert len(_forked()) == served  # read at import by Prefect: not the warm process's to serve
    assert warm_status() == warm


@pytest.mark.slow
def test_ctrl_c_reaches_the_build_and_a_dead_caller_stops_it(warm: dict[str, object], tmp_path: Path) -> None:
    def start(name: str) -> tuple[subprocess.Popen[str], int]:
        served = len(_forked())
        proc = subprocess.Popen([*TRAJFORGE, "build", "--n", "20000", "--out", str(tmp_path / name), "--quiet"],
                                env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(_forked()) == served:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(2)  # into the flow
        return proc, _forked()[-1]

    proc, child = start("interrupted")
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130  # what a build in its own process exits with on Ctrl-C
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)

    proc, child = start("orphaned")
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the build went on after its caller died"
    assert warm_status() == warm
