"""The managed local Prefect server: started by the first build, reused by the next ones.

Why: a temporary server per command spent 5-25 s of every build starting up (most of a small
build's time), while a server that outlives the command answers the next build at once. So a
build without a configured ``PREFECT_API_URL`` uses one local server per user, kept under
``server_home()`` (``$XDG_STATE_HOME/trajforge/prefect``, default
``~/.local/state/trajforge/prefect``; ``orchestration.server_home`` moves it): its SQLite database,
``server.json`` (pid, port, Prefect version, Python environment), ``server.log`` and a lease file.

- A build takes ``server.lock``, reuses the recorded server when its process is alive, it
  answers ``/health`` and was started by the same Prefect in the same Python environment, and
  otherwise starts a new one (``server_process``) in its own session, so it outlives the command.
- While a build runs it renews the lease; the server stops itself after
  ``orchestration.server_idle_s`` (default 900) without a build, so none is left behind for long.
  ``trajforge server stop`` stops it at once.
- One server per user, never one per build: two builds at once share it (the lock makes the
  second wait for the first's start-up rather than start another).

``orchestration.server: temporary`` keeps the old behaviour: a server for one command, under
``<out>/.prefect``, stopped when the command ends. Task results (the build's cache) live under
``<out>/.prefect/results`` either way.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from trajforge.errors import StoreError
from trajforge.flows.locks import locked
from trajforge.flows.server_process import INFO_FILE, LEASE_FILE, LOCK_FILE

LOG_FILE = "server.log"
HEALTH_TIMEOUT_S = 2.0


def server_home(configured: str | None = None) -> Path:
    """Where the managed server lives: ``configured``, else the user's state folder."""
    if configured:
        return Path(configured).expanduser().resolve()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "trajforge" / "prefect"


@dataclass(frozen=True)
class ServerInfo:
    pid: int
    port: int
    prefect: str
    python: str  # the environment it runs in (sys.prefix)
    started_at: float

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"


@dataclass(frozen=True)
class ManagedServer:
    info: ServerInfo
    started: bool  # this build started it (else it reused one)
    startup_seconds: float  # time to find or start it


def _read_info(home: Path) -> ServerInfo | None:
    try:
        return ServerInfo(**json.loads((home / INFO_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _healthy(info: ServerInfo, timeout: float = HEALTH_TIMEOUT_S) -> bool:
    # plain http.client: an httpx client builds a TLS context per instance (~50 ms), for loopback http
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", info.port, timeout=timeout)
    try:
        connection.request("GET", "/api/health")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _prefect_version() -> str:
    from importlib.metadata import version

    return version("prefect")


def _usable(info: ServerInfo | None) -> bool:
    # the environment, not the interpreter's path: .venv/bin/python and .venv/bin/python3 are one
    return (info is not None and info.prefect == _prefect_version() and info.python == sys.prefix
            and _alive(info.pid) and _ours(info.pid) and _healthy(info))


def free_port() -> int:
    """A loopback port free now (the server binds it a moment later)."""
    import socket

    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ours(pid: int) -> bool:
    """The process is a managed server (a recorded pid may since belong to another program)."""
    try:
        return b"trajforge.flows.server_process" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return _alive(pid)  # no /proc: trust the record


def _stop(info: ServerInfo, wait_s: float = 10.0) -> None:
    if not _alive(info.pid) or not _ours(info.pid):
        return
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while _alive(info.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(info.pid):
        os.kill(info.pid, signal.SIGKILL)


def _start(home: Path, idle_s: float, timeout_s: float) -> ServerInfo:
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
           "PREFECT_LOGGING_SERVER_LEVEL": "CRITICAL", "PREFECT_UI_ENABLED": "0",
           "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    env.pop("PREFECT_API_URL", None)
    with open(home / LOG_FILE, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "trajforge.flows.server_process", "--home", str(home), "--port", str(port),
             "--idle-s", str(idle_s)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True)
    info = ServerInfo(pid=process.pid, port=port, prefect=_prefect_version(), python=sys.prefix,
                      started_at=time.time())
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StoreError(f"the managed Prefect server exited with code {process.returncode} while "
                             f"starting; see {home / LOG_FILE}")
        if _healthy(info, timeout=1.0):
            tmp = home / f"{INFO_FILE}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(info.__dict__))
            tmp.replace(home / INFO_FILE)
            return info
        time.sleep(0.05)
    _stop(info)
    raise StoreError(f"the managed Prefect server did not answer within {timeout_s:.0f} s; see {home / LOG_FILE}")


def _renew(home: Path) -> None:
    (home / LEASE_FILE).touch()


@contextmanager
def managed_server(home: Path, idle_s: float, startup_timeout_s: float) -> Iterator[ManagedServer]:
    """The managed server, found or started, with its lease renewed until the block ends."""
    began = time.perf_counter()
    home.mkdir(parents=True, exist_ok=True)
    with locked(home / LOCK_FILE):
        _renew(home)  # before the check: a server deciding to stop waits for this lock
        info = _read_info(home)
        started = not _usable(info)
        if started:
            if info is not None:
                _stop(info)  # another Prefect or Python, or not answering
            info = _start(home, idle_s, startup_timeout_s)
        _renew(home)
    assert info is not None
    done = threading.Event()

    def renew_until_done() -> None:
        while not done.wait(max(0.2, idle_s / 4)):
            _renew(home)

    renewer = threading.Thread(target=renew_until_done, name="trajforge-server-lease", daemon=True)
    renewer.start()
    try:
        yield ManagedServer(info, started, time.perf_counter() - began)
    finally:
        done.set()
        renewer.join()
        _renew(home)  # the idle time counts from the end of this build


def server_status(home: Path) -> ServerInfo | None:
    """The managed server under ``home`` if it is up and answering."""
    info = _read_info(home)
    return info if info is not None and _alive(info.pid) and _healthy(info) else None


def stop_server(home: Path) -> ServerInfo | None:
    """Stop the managed server under ``home`` (waiting for no build: one still running fails)."""
    if not home.is_dir():
        return None
    with locked(home / LOCK_FILE):
        info = _read_info(home)
        if info is None:
            return None
        _stop(info)
        (home / INFO_FILE).unlink(missing_ok=True)
        return info
