"""The managed local Prefect server (``trajforge.flows.server``): one per user, found by the next
build, replaced when it died, stopped by itself when idle. Real server processes on loopback,
in a folder of the module's own (its database migrated once, then reused)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from trajforge.flows.server import ManagedServer, managed_server, server_status, stop_server
from trajforge.flows.server_process import INFO_FILE

TIMEOUT_S = 600


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("managed-server")
    yield folder
    stop_server(folder)


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # our own child: reap it, or it lingers as a zombie that still answers kill(0)
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_builds_at_once_start_one_server_and_the_next_reuses_it(home: Path) -> None:
    seen: list[ManagedServer] = []

    def one() -> None:
        with managed_server(home, idle_s=600, startup_timeout_s=TIMEOUT_S) as server:
            seen.append(server)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 2 and len({s.info for s in seen}) == 1
    assert sorted(s.started for s in seen) == [False, True]  # the second waited and reused it
    with managed_server(home, idle_s=600, startup_timeout_s=TIMEOUT_S) as again:
        assert not again.started and again.info == seen[0].info
        assert again.startup_seconds < 2.0  # a health check, not a start
    assert server_status(home) == seen[0].info


@pytest.mark.slow
def test_a_killed_server_is_replaced_and_an_idle_one_stops_itself(home: Path) -> None:
    with managed_server(home, idle_s=600, startup_timeout_s=TIMEOUT_S) as before:
        pass
    os.kill(before.info.pid, signal.SIGKILL)
    assert _gone(before.info.pid, 10)
    with managed_server(home, idle_s=3, startup_timeout_s=TIMEOUT_S) as after:
        assert after.started and after.info.pid != before.info.pid
        time.sleep(5)  # longer than idle_s: the lease this build renews keeps it up
        assert server_status(home) == after.info
    assert _gone(after.info.pid, 30), "the idle server did not stop itself"
    assert not (home / INFO_FILE).exists() and server_status(home) is None


def test_another_python_of_the_same_environment_reuses_it(home: Path) -> None:
    """``.venv/bin/python`` and ``.venv/bin/python3`` are one environment: no restart between them."""
    import subprocess
    import sys

    with managed_server(home, idle_s=600, startup_timeout_s=TIMEOUT_S) as first:
        pass
    other = Path(sys.executable).with_name("python3" if Path(sys.executable).name != "python3" else "python")
    if not other.exists():
        pytest.skip(f"no {other.name} next to {sys.executable}")
    code = ("import sys; from pathlib import Path; from trajforge.flows.server import managed_server\n"
            f"with managed_server(Path({str(home)!r}), 600, 600) as s: print(s.started, s.info.pid)")
    proc = subprocess.run([str(other), "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", str(first.info.pid)]


@pytest.mark.slow
def test_a_process_pool_build_uses_the_managed_server_and_no_other(home: Path, tmp_path: Path) -> None:
    """``--runner processes`` reports to the managed server only. Prefect's process pool forwards
    its workers' logs and events from a thread of its own; run outside the build's context, that
    thread found no API URL and started an ephemeral server (in ``~/.prefect``, with analytics on
    and its errors on the console). Its workers' INFO lines stay off the console too."""
    import subprocess
    import sys

    import psutil

    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(HOME=str(user_home), COLUMNS="200")
    console = tmp_path / "console.txt"
    with console.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "trajforge.cli", "build", "--out", str(tmp_path / "out"), "--n", "20",
             "--shard-size", "10", "--runner", "processes", "--workers", "2", "--quiet",
             "--set", f"orchestration.server_home={home}", "--set", "orchestration.warm_process=false"],
            cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
        servers: set[int] = set()
        build = psutil.Process(proc.pid)
        deadline = time.monotonic() + TIMEOUT_S
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                for child in build.children(recursive=True):
                    if "uvicorn" in " ".join(child.cmdline()):
                        servers.add(child.pid)
            except psutil.Error:
                pass
            time.sleep(0.1)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    output = console.read_text()
    assert proc.returncode == 0, output
    assert "2 shard(s) computed" in output
    assert servers == set(), "the build started a Prefect server of its own"
    assert not (user_home / ".prefect" / "prefect.db").exists()
    assert "Finished in state" not in output and "ERROR" not in output
