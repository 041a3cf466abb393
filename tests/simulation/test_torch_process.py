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
