"""``prepare_torch``'s allocator setting: glibc's malloc keeps freed memory for reuse, and the
setting can be switched back (what ``benchmarks/freeze_speed.py --allocator`` alternates)."""

from __future__ import annotations

import platform

import pytest

from trajforge.simulation.local_model import keep_freed_memory, prepare_torch


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_keep_freed_memory_applies_and_switches_back() -> None:
    assert keep_freed_memory(False) is True
    assert keep_freed_memory(True) is True
    prepare_torch(None)  # the same setting, threads left alone


def test_keep_freed_memory_off_glibc_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    def no_libc(*args: object, **kwargs: object) -> None:
        raise OSError("no libc here")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert keep_freed_memory(True) is False



_PROBE = """
import ctypes, ctypes.util, os, sys
from trajforge.simulation.local_model import prepare_torch
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
prepare_torch(None, keep_memory=sys.argv[1] == "keep")
size = 256 * 2**20
before = resident()
block = libc.malloc(size)
ctypes.memset(block, 1, size)
libc.free(block)
print(resident() - before)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_without_keep_memory_a_freed_block_goes_back_and_with_it_stays() -> None:
    # each in a fresh process: a process whose heap already grew would serve the block from it
    import subprocess
    import sys

    def resident_after_free(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
        return int(done.stdout.strip())

    size = 256 * 2**20
    assert resident_after_free("default") < size // 4  # what trajforge loop does: malloc left as it is
    assert resident_after_free("keep") > size // 2  # training: freed memory kept for reuse
