"""Matrix products on shared CPUs: one BLAS thread per call, parallelism from Python threads.

OpenBLAS's own worker threads spin-wait for each other, so when the cores are also busy with
other processes a two-thread call can take far longer than a one-thread call: on this project's
2-core machine at load average 6, ``Xᵀ X`` of 65,536 x 384 float32 took 0.19 s on one BLAS
thread and 15 s on two. The hot loops of this package therefore run BLAS on one thread and
split rows over a small pool of Python threads (numpy releases the GIL inside BLAS), which uses
both cores on a quiet machine and degrades gracefully on a busy one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from typing import TypeVar

from threadpoolctl import ThreadpoolController

T = TypeVar("T")
U = TypeVar("U")


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@cache
def _controller() -> ThreadpoolController:
    """Found once: looking the loaded BLAS libraries up costs ~0.3 ms, a limit on a known
    controller ~0.01 ms (the selection sets one per round)."""
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS calls inside run on the calling thread only."""
    with _controller().limit(limits=1, user_api="blas"):
        yield


def row_blocks(n: int, block: int) -> list[tuple[int, int]]:
    return [(lo, min(n, lo + block)) for lo in range(0, n, max(1, block))]


def map_blocks(fn: Callable[[int, int], T], n: int, block: int, threads: int | None = None
               ) -> list[T]:
    """``fn(lo, hi)`` for consecutive row blocks of ``[0, n)``, on ``threads`` Python threads
    (default: the usable CPUs) with one BLAS thread each; results in block order. ``fn`` must
    only write to its own rows."""
    blocks = row_blocks(n, block)
    threads = min(len(blocks), threads or usable_cpus())
    with one_blas_thread():
        if threads <= 1:
            return [fn(lo, hi) for lo, hi in blocks]
        with ThreadPoolExecutor(threads) as pool:
            return list(pool.map(lambda b: fn(*b), blocks))


def map_ordered(fn: Callable[[T], U], items: Iterable[T], threads: int | None = None) -> Iterator[U]:
    """``fn(item)`` for each item, ``threads`` at a time (default: the usable CPUs) with one BLAS
    thread each, yielded in item order; at most ``threads`` results are held at once, so a
    caller can reduce large blocks (similarity matrices) as they come."""
    items = list(items)
    threads = min(len(items), threads or usable_cpus())
    with one_blas_thread():
        if threads <= 1:
            for item in items:
                yield fn(item)
            return
        with ThreadPoolExecutor(threads) as pool:
            for start in range(0, len(items), threads):
                yield from pool.map(fn, items[start:start + threads])
