"""``simulation.gate.OrderedGate``: at most ``limit`` holders, freed places go to the lowest rank,
cancelled waiters give their place on (issue 21: an earlier batch's episodes go first whichever
batch reached the gate first)."""

from __future__ import annotations

import asyncio

import pytest

from trajforge.simulation.gate import OrderedGate


def test_places_go_to_the_lowest_rank_not_the_first_to_arrive() -> None:
    async def scenario() -> list[int]:
        gate = OrderedGate(2)
        order: list[int] = []
        held = 0
        most = 0

        async def job(rank: int, arrive: float) -> None:
            nonlocal held, most
            await asyncio.sleep(arrive)
            async with gate.place(rank):
                held += 1
                most = max(most, held)
                order.append(rank)
                await asyncio.sleep(0.01)
                held -= 1

        # the later batch (ranks 10..14) arrives first and takes both places; the earlier batch
        # (ranks 0..4) arrives next, and every place freed after that goes to it first
        await asyncio.gather(*(job(10 + i, 0.0) for i in range(5)), *(job(i, 0.001) for i in range(5)))
        assert most == 2
        assert gate.granted == 10  # what a build's feed reads (store.builds.Feed)
        return order

    order = asyncio.run(scenario())
    assert order[:2] == [10, 11]
    assert order[2:7] == [0, 1, 2, 3, 4]
    assert order[7:] == [12, 13, 14]


def test_a_cancelled_waiter_never_takes_a_place() -> None:
    async def scenario() -> int:
        gate = OrderedGate(1)
        entered: list[str] = []

        async def hold() -> None:
            async with gate.place(5):
                await asyncio.sleep(0.02)

        async def wait(name: str, rank: int) -> None:
            async with gate.place(rank):
                entered.append(name)

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        doomed = asyncio.create_task(wait("doomed", 0))
        later = asyncio.create_task(wait("later", 1))
        await asyncio.sleep(0.005)
        doomed.cancel()
        await asyncio.gather(holder, later)
        with pytest.raises(asyncio.CancelledError):
            await doomed
        assert entered == ["later"]
        return gate._free

    assert asyncio.run(scenario()) == 1  # every place back


def test_a_gate_needs_a_place() -> None:
    with pytest.raises(ValueError, match="at least one"):
        OrderedGate(0)
