"""One build at a time per output folder: an exclusive lock, and a check for room to write.

Two builds into one folder would both compute every batch and both append to the manifest. The
lock is an ``flock`` on ``<out>/.build.lock``: the kernel drops it when its holder exits, however
it exits (kill -9 included), so a stale lock never blocks anyone. The holder writes its pid,
host and start time into the file, so a refused build can say who holds it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from trajforge.errors import FolderBusy, StoreError
from trajforge.store.shards import TMP_SUFFIX, os_reason

LOCK_FILE = ".build.lock"
# below this a build cannot write its records and a first shard: fail at once rather than half-way
MIN_FREE_BYTES = 2 << 20
MIN_FREE_INODES = 64
# held back while a build runs, and given up when it fails, so that even on a disk that filled up
# the invocation's ``failed`` record can still be written
RESERVE_BYTES = 1 << 20


def holder(out: Path) -> str:
    """Who holds (or last held) the folder's lock, in words."""
    try:
        info = json.loads((Path(out) / LOCK_FILE).read_text(encoding="utf-8"))
        return f"pid {info['pid']} on {info['host']} (started {info['started_at']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def build_lock(out: Path, wait: bool = False) -> Iterator[None]:
    """Hold ``out``'s build lock for the duration. Another live holder: ``FolderBusy`` at once,
    or, with ``wait``, block until it is released."""
    out = Path(out)
    path = out / LOCK_FILE
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(f"cannot create the build lock {path}: {os_reason(exc)}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise FolderBusy(f"{out} is being built by {holder(out)}: wait for it to end, or pass "
                             "--wait to start when it does") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        except OSError as exc:
            raise StoreError(f"cannot write the build lock {path}: {os_reason(exc)}") from exc
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def check_room(out: Path, min_bytes: int = MIN_FREE_BYTES, min_inodes: int = MIN_FREE_INODES) -> None:
    """A ``StoreError`` when the folder's filesystem has almost no space or inodes left."""
    out = Path(out)
    try:
        free = shutil.disk_usage(out).free
        vfs = os.statvfs(out)
    except OSError as exc:
        raise StoreError(f"cannot inspect {out}: {os_reason(exc)}") from exc
    if free < min_bytes:
        raise StoreError(f"cannot write {out}: {os.strerror(errno.ENOSPC)} (ENOSPC): {free >> 10} KiB "
                         f"free, a build needs at least {min_bytes >> 10} KiB")
    if vfs.f_files and vfs.f_favail < min_inodes:
        raise StoreError(f"cannot write {out}: out of inodes ({vfs.f_favail} free, a build needs at "
                         f"least {min_inodes})")


class SpaceReserve:
    """A file of ``size`` bytes in ``folder``, written at the start of a build and removed when
    it ends; ``release`` gives its space back for the last writes of a failed build."""

    def __init__(self, folder: Path, size: int = RESERVE_BYTES) -> None:
        self.path: Path | None = Path(folder) / f"space-reserve.{os.getpid()}-{secrets.token_hex(4)}{TMP_SUFFIX}"
        try:
            with self.path.open("wb") as f:
                f.write(b"\0" * size)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            self.release()  # no room for the reserve: the build will meet the full disk soon enough

    def release(self) -> None:
        if self.path is not None:
            try:
                self.path.unlink()
            except OSError:
                pass
            self.path = None
