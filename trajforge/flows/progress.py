"""The caller's progress callback for the build flow, set for the duration of one build.

Not a flow parameter: a flow's parameters and the flow itself travel with every task to the
workers of a Dask or Ray cluster, and a callback that holds a terminal cannot be pickled. This
module-level context variable is reached through ``current`` (pickled by reference), so the
flow stays picklable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_PROGRESS: ContextVar[Callable[[Any], None] | None] = ContextVar("trajforge_build_progress",
                                                                 default=None)


def current() -> Callable[[Any], None] | None:
    return _PROGRESS.get()


@contextmanager
def reporting_to(progress: Callable[[Any], None] | None) -> Iterator[None]:
    token = _PROGRESS.set(progress)
    try:
        yield
    finally:
        _PROGRESS.reset(token)
