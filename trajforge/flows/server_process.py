"""The managed Prefect server's own process (``python -m trajforge.flows.server_process``).

It serves Prefect's API app (the app Prefect's temporary server runs: UI off, analytics off) on
loopback, and stops itself once no build has touched its lease file for ``--idle-s`` seconds. It
decides to stop only while holding the server lock, the lock a build holds while it checks the
server and renews the lease, so a build never picks a server that is about to stop.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path
from typing import Any

from trajforge.flows.locks import try_lock

LOCK_FILE = "server.lock"
LEASE_FILE = "server.lease"
INFO_FILE = "server.json"
POLL_S = 1.0


def idle_for(home: Path) -> float:
    """Seconds since a build last renewed the lease (infinite without a lease)."""
    try:
        return time.time() - (home / LEASE_FILE).stat().st_mtime
    except FileNotFoundError:
        return float("inf")


def _watch(server: Any, home: Path, idle_s: float) -> None:
    while not server.should_exit:
        time.sleep(POLL_S)
        if idle_for(home) < idle_s:
            continue
        lock = try_lock(home / LOCK_FILE)
        if lock is None:  # a build is checking in: it renews the lease
            continue
        if idle_for(home) < idle_s:
            os.close(lock)
            continue
        # still holding the lock (released when this process exits): no build can pick this
        # server between the decision and the exit
        (home / INFO_FILE).unlink(missing_ok=True)
        server.should_exit = True
        return


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    args = parser.parse_args(argv)
    import uvicorn
    from prefect.server.api.server import create_app

    config = uvicorn.Config(create_app, factory=True, host="127.0.0.1", port=args.port, log_level="error")
    server = uvicorn.Server(config)
    threading.Thread(target=_watch, args=(server, args.home, args.idle_s), daemon=True).start()
    server.run()


if __name__ == "__main__":
    main()
