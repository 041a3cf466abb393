"""Real filesystem faults for the fault tests: a small tmpfs (where this machine lets the tests
mount one: root, a kernel that allows it), filled or turned read-only while a build runs."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _run(*args: str) -> bool:
    return subprocess.run(list(args), capture_output=True).returncode == 0


def can_mount(probe: Path) -> bool:
    probe.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not _run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)):
        return False
    _run("umount", str(probe))
    return True


@contextmanager
def tmpfs(where: Path, size: str, inodes: int | None = None) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (f",nr_inodes={inodes}" if inodes else "")
    assert _run("mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)), f"cannot mount {where}"
    try:
        yield where
    finally:
        _run("umount", "-l", str(where))


def fill(folder: Path) -> Path:
    """Write zeros into ``folder/ballast`` until the filesystem is full; returns the file."""
    ballast = folder / "ballast"
    block = b"\0" * (64 << 10)
    with ballast.open("wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    # the last bytes, in smaller pieces
    with ballast.open("ab", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
    return ballast


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` (one table's folder) turned read-only by a read-only bind mount over itself."""
    assert _run("mount", "--bind", str(folder), str(folder))
    try:
        assert _run("mount", "-o", "remount,ro,bind", str(folder))
        yield
    finally:
        _run("umount", "-l", str(folder))
