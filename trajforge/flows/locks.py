"""Exclusive file locks (``flock``), as the managed Prefect server and the warm build process use
them: a lock is held through an open file descriptor and released when it is closed or its
process exits."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def try_lock(path: Path, mode: int = 0o644) -> int | None:
    """Take the lock on ``path`` (created if missing) without waiting: the open descriptor that
    holds it, or ``None`` when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextmanager
def locked(path: Path, mode: int = 0o644) -> Iterator[None]:
    """Hold the lock on ``path`` (created if missing) for the block, waiting for it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def held_elsewhere(path: Path) -> bool:
    """Whether another process holds the lock on ``path`` (never, when it does not exist)."""
    if not path.exists():
        return False
    fd = try_lock(path)
    if fd is None:
        return True
    os.close(fd)
    return False
