"""The gate that bounds a process's episodes in flight, admitting waiters in rank order.

An ``asyncio.Semaphore`` admits waiters in arrival order. The episodes of a build's batches share
one gate (``simulation.worker_state``). When a later batch's episodes reached it first (two
batches generated at the same moment, the second's simulation started a moment earlier), the
earlier batch ran behind it; while the flow took results in submission order, it waited on the
earlier batch, submitted nothing, and the model server sat idle once that batch's tail drained
(27 s at zero in flight in a 1,000-conversation build; issue 21). The flow now commits batches as
they finish (``store.builds.execute_build``); ranked by blueprint index, an earlier batch's
episodes still go first, so a batch's tail is not held behind the next batch's episodes.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class OrderedGate:
    """At most ``limit`` holders at once; a freed place goes to the waiter of the lowest rank
    (then the earliest arrival). Binds to the running loop on first use, like asyncio's locks."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a gate needs at least one place")
        self.limit = limit
        self._free = limit
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()
        self.granted = 0  # places granted so far (a build reads how far its batches got: ``store.builds.Feed``)

    @asynccontextmanager
    async def place(self, rank: int = 0) -> AsyncIterator[None]:
        """Hold a place for the ``async with`` block; ``rank``: lower goes first."""
        await self._acquire(rank)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, rank: int) -> None:
        if self._free > 0:  # a free place means no live waiter: ``_release`` hands it to one first
            self._free -= 1
            self.granted += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (rank, next(self._arrivals), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # the place was handed over as the waiter was cancelled: pass it on
            raise

    def _release(self) -> None:
        while self._waiting:
            _, _, future = heapq.heappop(self._waiting)
            if not future.done():  # a cancelled waiter's future is done
                future.set_result(None)
                self.granted += 1
                return
        self._free += 1
