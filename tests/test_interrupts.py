"""A KeyboardInterrupt the interpreter drops (raised inside a finalizer) is raised again."""

from __future__ import annotations

import gc
import signal
import sys
import time

import pytest

from trajforge.interrupts import keep_interrupts


class _Interrupted:
    def __del__(self) -> None:
        raise KeyboardInterrupt  # where Ctrl-C lands sometimes: Python prints "Exception ignored"


def test_a_dropped_interrupt_is_raised_again_in_the_main_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # as in the CLI: SIGINT with Python's handler (an earlier test in this worker may have changed it),
    # and whatever hook is in place now (a harness may have replaced one installed before)
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        keep_interrupts()
        hook = sys.unraisablehook
        keep_interrupts()  # idempotent: one hook
        assert sys.unraisablehook is hook
        with pytest.raises(KeyboardInterrupt):
            obj = _Interrupted()
            del obj
            gc.collect()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:  # the interrupt arrives at the next instruction
                pass
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_hook_replaced_since_is_installed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    keep_interrupts()
    sys.unraisablehook = sys.__unraisablehook__  # what a harness restoring its own state does
    keep_interrupts()
    assert getattr(sys.unraisablehook, "keeps_interrupts", False)
