"""The warm process itself (``python -m trajforge.flows.warm_process``; see ``warm.py``).

It imports what a build needs, checks that no thread was started by it (forking a process with
threads can copy a held lock), holds its lock file for life, and serves its socket from its one
thread: per connection it checks the peer's user and fingerprint, forks, and the child becomes
the caller's command. It reaps its children, and exits once it has had no connection and no
child for ``--idle-s`` seconds, on SIGTERM, or when a caller with another fingerprint comes
of other code (then a cold build starts a fresh one).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from trajforge.flows.locks import try_lock
from trajforge.flows.warm import HANDSHAKE_TIMEOUT_S, fingerprint, receive_message, same_code, send_message

# what a build imports on its way to the first episode: trajforge's own modules and the
# libraries below them, never a plug-in domain (those are found and imported per command); any
# of them an install lacks is left out
WARM_MODULES = (
    "trajforge.cli", "trajforge.config", "trajforge.reporting", "trajforge.flows.build",
    "trajforge.flows.runtime", "trajforge.flows.logs", "trajforge.store.builds", "trajforge.store.catalog",
    "trajforge.store.integrity", "trajforge.curation", "trajforge.simulation.llm",
    "trajforge.simulation.llm_agent", "trajforge.simulation.llm_user", "trajforge.simulation.openai_http",
    "trajforge.environments.registry",
    "prefect.task_runners", "prefect.transactions", "pyarrow.parquet", "pandas", "duckdb", "httpx",
    "rich.progress",
)
OPTIONAL_MODULES = ("litellm", "aiohttp")  # the [llm] extra, when installed
POLL_S = 1.0


def warm_imports() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as simulation/llm.py does
    for name in (*WARM_MODULES, *OPTIONAL_MODULES):
        try:
            importlib.import_module(name)
        except ImportError:  # not in this install (pandas, litellm: extras): the child imports what it needs
            pass
    from trajforge.environments.dialogue.model import load_models
    from trajforge.flows.build import _BATCH_ENTRY
    from trajforge.sources import module_closure

    module_closure(_BATCH_ENTRY)  # cached for the process: the children's code_version is cheap
    load_models()  # the recogniser's weights, read once here rather than in every build


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[2])


def _child(conn: socket.socket, listener: socket.socket, lock: int, request: dict[str, Any],
           fds: list[int]) -> None:
    """Become the caller's command; never returns."""
    code = 1
    try:
        listener.close()
        os.close(lock)  # the lock is the warm process's, not its builds'
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=stream.isatty())  # type: ignore[union-attr]
        send_message(conn, {"pid": os.getpid()})

        def watch() -> None:  # the caller died (it never sends anything else): stop
            try:
                if not conn.recv(1):
                    os.kill(os.getpid(), signal.SIGTERM)
            except OSError:
                os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, name="trajforge-warm-caller", daemon=True).start()
        from trajforge import cli

        cli.fresh_consoles()
        try:
            cli.main(use_warm=False)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        except KeyboardInterrupt:
            code = 130
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - whatever happens, the caller gets a status
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        try:
            send_message(conn, {"exit": code})
        except OSError:
            pass
        os._exit(code)


def serve(sock_path: Path, info_path: Path, lock_path: Path, idle_s: float, expected: str) -> int:
    deadline = time.monotonic() + 15.0
    while (lock := try_lock(lock_path, 0o600)) is None:  # another one may still be stopping
        if time.monotonic() > deadline:
            return 0  # another one runs: it serves
        time.sleep(0.1)
    warm_imports()
    mine = fingerprint()
    if mine != expected or threading.active_count() != 1:
        print(f"not serving: fingerprint {'changed' if mine != expected else 'ok'}, "
              f"{threading.active_count()} threads after the imports", file=sys.stderr)
        return 3
    stopping = [False]

    def stop(_signum: int, _frame: Any) -> None:
        stopping[0] = True

    signal.signal(signal.SIGTERM, stop)
    sock_path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(sock_path))
    finally:
        os.umask(old)
    listener.listen(16)
    ino = os.stat(sock_path).st_ino
    tmp = info_path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "started_at": time.time(), "fingerprint": mine}))
    tmp.replace(info_path)
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} serving {sock_path} (pid {os.getpid()})", flush=True)
    children: set[int] = set()
    last = time.monotonic()
    try:
        while not stopping[0]:
            for pid in list(children):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    children.discard(pid)
                    last = time.monotonic()
            if not children and time.monotonic() - last > idle_s:
                break
            try:
                ready, _, _ = select.select([listener], [], [], POLL_S)
            except InterruptedError:  # pragma: no cover - PEP 475 retries these
                continue
            if not ready:
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            fds: list[int] = []
            try:
                conn.settimeout(HANDSHAKE_TIMEOUT_S)
                if _peer_uid(conn) != os.getuid():
                    continue
                request, fds = receive_message(conn, max_fds=3)
                theirs = str(request.get("fingerprint"))
                if theirs != mine or len(fds) != 3:
                    send_message(conn, {"stale": True})
                    # other code: a cold build starts one that matches; other variables: stay
                    stopping[0] = not same_code(theirs, mine)
                    continue
                conn.settimeout(None)
                pid = os.fork()
                if pid == 0:
                    _child(conn, listener, lock, request, fds)
                children.add(pid)
                print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} forked {pid} for {' '.join(request['argv'][1:2])}",
                      flush=True)
            except (OSError, EOFError, ValueError) as exc:
                print(f"a connection failed: {exc}", file=sys.stderr)
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                conn.close()
    finally:
        try:
            if os.stat(sock_path).st_ino == ino:
                sock_path.unlink()
        except OSError:
            pass
        info_path.unlink(missing_ok=True)
        listener.close()
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--info", type=Path, required=True)
    parser.add_argument("--lock", type=Path, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    parser.add_argument("--fingerprint", required=True)
    args = parser.parse_args(argv)
    sys.exit(serve(args.socket, args.info, args.lock, args.idle_s, args.fingerprint))


if __name__ == "__main__":
    main()
