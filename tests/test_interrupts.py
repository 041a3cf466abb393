"""A KeyboardInterrupt the interpreter drops (raised inside a finalizer) is raised again."""

from __future__ import annotations

import gc
import time

import pytest

from trajforge.interrupts import keep_interrupts


class _Interrupted:
    def __del__(self) -> None:
        raise KeyboardInterrupt  # where Ctrl-C lands sometimes: Python prints "Exception ignored"


def test_a_dropped_interrupt_is_raised_again_in_the_main_thread() -> None:
    keep_interrupts()
    keep_interrupts()  # idempotent: one hook
    with pytest.raises(KeyboardInterrupt):
        obj = _Interrupted()
        del obj
        gc.collect()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the interrupt arrives at the next instruction
            pass
