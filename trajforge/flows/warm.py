"""The warm build process: ``trajforge build`` starts in about a second on a machine that has built.

Why: a build's first episode (or first model request) came 5-16 s after launch, and most of it
was imports: Prefect and the flows about 3 s, litellm about 5 s, pandas, pyarrow and DuckDB
about 1 s. A managed Prefect server (``server.py``) removes the server's start-up, not these.
So, after a build on the managed server, the command leaves behind one **warm process** per
user and Python environment that has imported all of it (``warm_process.py``) and waits on a
Unix socket in the managed server's folder (``warm-<env>.sock``, mode 0600; it serves only its
own user, checked with ``SO_PEERCRED``). The next ``trajforge build`` connects to it, and the warm
process forks a child that becomes that command: it takes the caller's standard input, output
and error (passed over the socket), working folder, environment, umask and arguments, runs the
same ``trajforge build`` code, Prefect flow and all, and sends back its exit status. The caller
forwards Ctrl-C and other signals to the child; if the caller dies, the child is stopped.

When it is not used (the build then runs in its own process, as before, and starts a fresh warm
process at its end):
- its code or environment would differ from a cold start's: the caller's fingerprint
  (``fingerprint``: the Python environment and version, the size and time of every trajforge
  source file, the site-packages folders' times, so an install or upgrade counts, and the
  environment variables read at import: ``PREFECT_*``, ``LITELLM_*``, ``PYTHON*``, the BLAS thread
  counts, locale, ``HOME``, ``TZ``) must equal the warm process's. Other code: the warm process
  exits, and the cold build starts a new one. Only other variables: it stays for the environment
  it was started in (the first one wins until it stops);
- the socket path would be too long for ``AF_UNIX`` (over 100 bytes);
- no warm process is running (none was started, or it stopped after
  ``orchestration.server_idle_s`` without a build, or ``trajforge server stop`` stopped it);
- ``orchestration.warm_process: false`` on the build that would start one.

Plug-in domains are never imported by the warm process (only trajforge's own modules), so
editing a plug-in needs no restart. Only ``trajforge build`` goes through it.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trajforge.flows.locks import held_elsewhere
from trajforge.flows.server import server_home

MAX_SOCKET_PATH = 100  # sockaddr_un holds 108 bytes with the terminating NUL; keep a margin
MAX_MESSAGE = 4 * 1024 * 1024
HANDSHAKE_TIMEOUT_S = 10.0
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_IMPORT_PREFIXES = ("PREFECT_", "LITELLM_", "PYTHON", "OMP_", "OPENBLAS_", "MKL_", "LC_")
_IMPORT_NAMES = ("HOME", "LANG", "TZ", "DO_NOT_TRACK")
# set by trajforge itself before litellm is imported (simulation/llm.py), whatever the caller has
_SET_BEFORE_IMPORT = ("LITELLM_LOCAL_MODEL_COST_MAP",)
# what the command line sets before anything is imported (a user's own value wins): Prefect's SDK
# analytics send onboarding events from an interactive terminal unless told not to
COMMAND_DEFAULTS = {"DO_NOT_TRACK": "1"}


def command_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with ``COMMAND_DEFAULTS`` where it has no value of its own."""
    return {**COMMAND_DEFAULTS, **environ}


def _env_key() -> str:
    return hashlib.sha256(sys.prefix.encode()).hexdigest()[:10]


def warm_paths(home: Path | None = None) -> tuple[Path, Path, Path]:
    """The socket, the info file and the lock file of this Python environment's warm process."""
    home = home or server_home()
    key = _env_key()
    return home / f"warm-{key}.sock", home / f"warm-{key}.json", home / f"warm-{key}.lock"


def import_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables a cold start would read while importing."""
    return {k: v for k, v in sorted(environ.items())
            if (k.startswith(_IMPORT_PREFIXES) or k in _IMPORT_NAMES) and k not in _SET_BEFORE_IMPORT}


def fingerprint(environ: Mapping[str, str] | None = None) -> str:
    """What a cold start's imports depend on (see the module note): ``<code>.<environment>``, a
    digest of the Python environment and the code, and one of the environment variables."""
    import site

    code = hashlib.sha256()
    code.update(f"{sys.prefix}\0{sys.version}\0".encode())
    root = Path(__file__).resolve().parents[1]  # the trajforge package
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                code.update(f"{os.path.relpath(os.path.join(folder, name), root)}\0"
                            f"{stat.st_mtime_ns}\0{stat.st_size}\0".encode())
    for packages in site.getsitepackages():
        try:
            code.update(f"{packages}\0{os.stat(packages).st_mtime_ns}\0".encode())
        except OSError:
            pass
    env = import_environment(os.environ if environ is None else environ)
    variables = hashlib.sha256(json.dumps(env, sort_keys=True).encode())
    return f"{code.hexdigest()[:32]}.{variables.hexdigest()[:32]}"


def same_code(a: str, b: str) -> bool:
    """Two fingerprints of the same code (their environment variables may differ)."""
    return a.partition(".")[0] == b.partition(".")[0]


# --- messages: a 4-byte length, then JSON ---------------------------------------------------------

def send_message(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    payload = struct.pack("!I", len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [payload], fds)
        sock.sendall(payload[sent:])
    else:
        sock.sendall(payload)


def receive_message(sock: socket.socket, max_fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    """One message and the file descriptors that came with it; ``EOFError`` if the peer closed."""
    fds: list[int] = []
    if max_fds:
        data, fds, _, _ = socket.recv_fds(sock, 65536, max_fds)
    else:
        data = sock.recv(65536)
    if not data:
        raise EOFError("the peer closed the connection")
    while len(data) < 4:
        more = sock.recv(65536)
        if not more:
            raise EOFError("the peer closed the connection")
        data += more
    (length,) = struct.unpack("!I", data[:4])
    if length > MAX_MESSAGE:
        raise ValueError(f"a message of {length} bytes")
    while len(data) < 4 + length:
        more = sock.recv(min(65536, 4 + length - len(data)))
        if not more:
            raise EOFError("the peer closed the connection")
        data += more
    message = json.loads(data[4:4 + length])
    if not isinstance(message, dict):
        raise ValueError("a message that is not an object")
    return message, fds


# --- the caller's side ------------------------------------------------------------------------------

def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def run_warm(argv: list[str]) -> int | None:
    """Run the command ``argv`` (``sys.argv``) in a child of the warm process; its exit status, or
    ``None`` when there is no usable warm process (then the caller runs the command itself)."""
    path, _, _ = warm_paths()
    if len(os.fsencode(path)) > MAX_SOCKET_PATH or not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HANDSHAKE_TIMEOUT_S)
        sock.connect(str(path))
        send_message(sock, {"fingerprint": fingerprint(), "argv": list(argv), "cwd": os.getcwd(),
                            "env": dict(os.environ), "umask": _umask()}, fds=[0, 1, 2])
        reply, _ = receive_message(sock)
    except (OSError, EOFError, ValueError):
        sock.close()
        return None
    if not isinstance(reply.get("pid"), int):
        sock.close()
        return None  # stale: the warm process steps aside
    pid = reply["pid"]

    def forward(signum: int, _frame: Any) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        sock.settimeout(None)
        while True:
            try:
                final, _ = receive_message(sock)
                break
            except InterruptedError:  # pragma: no cover - PEP 475 retries these
                continue
            except (OSError, EOFError, ValueError):
                final = {}
                break
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    if not isinstance(final.get("exit"), int):
        print(f"error: the build's process (pid {pid}, forked by the warm process) ended without an exit "
              "status; run `trajforge server stop` to build without it", file=sys.stderr)
        return 1
    return int(final["exit"])


# --- starting and stopping it -------------------------------------------------------------------------

def _read_info(info_path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads(info_path.read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def warm_status(home: Path | None = None) -> dict[str, Any] | None:
    """The running warm process's info (pid, started_at, fingerprint), or ``None``."""
    _, info_path, lock_path = warm_paths(home)
    info = _read_info(info_path)
    return info if info is not None and held_elsewhere(lock_path) else None


def ensure_warm(idle_s: float, home: Path | None = None) -> bool:
    """Start this environment's warm process in the background unless one with this process's
    fingerprint runs already (one with another is stopped first). Returns whether one started.
    It starts in its own session, so it outlives the command."""
    home = home or server_home()
    sock_path, info_path, lock_path = warm_paths(home)
    if len(os.fsencode(sock_path)) > MAX_SOCKET_PATH:
        return False
    info = warm_status(home)
    if info is not None:
        if same_code(str(info.get("fingerprint")), fingerprint()):
            return False  # of this code: it serves the environment it was started in
        stop_warm(home)
    home.mkdir(parents=True, exist_ok=True)
    env = command_environment(os.environ)  # what the commands it serves have (cli.main)
    mine = fingerprint(env)
    with open(home / "warm.log", "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "trajforge.flows.warm_process", "--socket", str(sock_path),
             "--info", str(info_path), "--lock", str(lock_path), "--idle-s", str(idle_s),
             "--fingerprint", mine],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True)
    return True


def stop_warm(home: Path | None = None, wait_s: float = 10.0) -> dict[str, Any] | None:
    """Stop this environment's warm process (its children, running builds, go on). Returns its
    info, or ``None`` if none ran."""
    _, _, lock_path = warm_paths(home)
    info = warm_status(home)
    if info is None:
        return None
    pid = int(info["pid"])
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return info
    deadline = time.monotonic() + wait_s
    while held_elsewhere(lock_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return info
