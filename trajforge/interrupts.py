"""Ctrl-C is never lost.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives. When that is
inside a finalizer (``__del__``) or a weakref callback, the interpreter cannot propagate it: it
prints "Exception ignored in: ..." and drops it, and a build told to stop runs on (seen once in
a suite run: the interrupt landed in ``WeakValueDictionary``'s removal callback and the build of
20,000 blueprints never stopped). ``keep_interrupts`` installs an unraisable-exception hook that,
for a dropped ``KeyboardInterrupt`` only, raises it again in the main thread a moment later
(``_thread.interrupt_main`` from a helper thread, once the main thread has left the finalizer),
and reports it as Python would. An interrupt that was
handled is never repeated, so clean-up after Ctrl-C is not interrupted a second time.
"""

from __future__ import annotations

import _thread
import sys
import threading
import time
from typing import Any

REDELIVER_AFTER_S = 0.05  # long enough to be out of the finalizer that dropped it


def _redeliver() -> None:
    time.sleep(REDELIVER_AFTER_S)
    _thread.interrupt_main()


def _hook(previous: Any) -> Any:
    def hook(unraisable: Any) -> None:  # marked below, so keep_interrupts sees it is in place
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            # not from here: a pending interrupt would fire inside this hook, and be dropped again
            threading.Thread(target=_redeliver, name="trajforge-interrupt", daemon=True).start()
        previous(unraisable)

    hook.keeps_interrupts = True  # type: ignore[attr-defined]
    return hook


def keep_interrupts() -> None:
    """Install the hook unless the hook in place is already this one (the hook it replaces still
    reports). Whether it is in place is read from ``sys.unraisablehook`` itself, not remembered:
    whatever replaced or restored the hook since (a test harness, a library) is seen.

    ``_thread.interrupt_main`` raises in the main thread only while SIGINT has a Python handler
    (``signal.default_int_handler`` by default); where SIGINT is ignored, there is nothing to keep."""
    if not getattr(sys.unraisablehook, "keeps_interrupts", False):
        sys.unraisablehook = _hook(sys.unraisablehook)
