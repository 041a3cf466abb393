"""``execute_build`` commits each batch as it finishes: a batch that finishes before an earlier
one frees its place in the window at once (issue 21: with results taken in submission order, a
slow first batch held the window and the model server went idle); with a ``Feed`` it starts
batches beyond the window while the episode gate would run dry."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from trajforge.config import load_config
from trajforge.store import query
from trajforge.store.builds import (
    Feed,
    PendingBatch,
    Range,
    _InPool,
    compute_batch,
    execute_build,
    prepare_run,
    run_build,
)
from trajforge.store.runs import BatchSummary
from trajforge.store.shards import ShardRecord


def _config(out: Path):  # type: ignore[no-untyped-def]
    return load_config(None, {"store.out": str(out), "generation.n_blueprints": 12, "store.shard_size": 4})


def test_a_batch_that_finishes_first_is_committed_first_and_the_next_starts(tmp_path: Path) -> None:
    config, store = prepare_run(_config(tmp_path / "a"))
    invocation = uuid.uuid4().hex
    third_started = threading.Event()
    events: list[str] = []

    def compute(rng: Range, committed: ShardRecord | None) -> BatchSummary:
        if rng[0] == 0:  # the first batch is slow: it finishes only once the third has started
            assert third_started.wait(20), "the third batch never started while the first ran"
        summary = compute_batch(config, rng[0], rng[1], invocation, committed)
        events.append(f"done {rng[0]}")
        return summary

    with ThreadPoolExecutor(3) as pool:
        def submit(rng: Range, committed: ShardRecord | None, refresh: bool) -> PendingBatch:
            events.append(f"start {rng[0]}")
            if rng[0] == 8:
                third_started.set()
            return _InPool(pool.submit(compute, rng, None if refresh else committed))  # a thread's future here

        result = execute_build(config, store, submit, invocation=invocation, runner="threads", flow_name=None,
                               parameters={}, window=2, log=events.append)
    assert events.index("start 8") < events.index("done 0")
    committed = [e for e in events if e.startswith("batch ")]
    assert committed[0].startswith("batch 4-8") and len(committed) == 3
    assert result.shards_done == 3
    # the same rows as a build that commits in order
    other = _config(tmp_path / "b")
    run_build(other)
    sql = "SELECT trajectory_id, passed FROM outcomes ORDER BY trajectory_id"
    assert query(tmp_path / "a", sql)[1] == query(tmp_path / "b", sql)[1]
    assert len(query(tmp_path / "a", sql)[1]) == 24


def test_a_feed_submits_a_batch_more_whenever_the_gate_would_run_dry(tmp_path: Path) -> None:
    """With a ``Feed``, batches beyond the window start while the ones in flight hold fewer than
    ``keep_waiting`` places the gate has not granted, never more than ``most`` at once (issue 21:
    a batch holding its place until its longest episode ended let the gate run dry)."""
    config, store = prepare_run(load_config(None, {"store.out": str(tmp_path / "fed"),
                                                   "generation.n_blueprints": 40, "store.shard_size": 4}))
    invocation = uuid.uuid4().hex
    granted = [0]
    release = threading.Event()
    started: list[int] = []

    def compute(rng: Range, committed: ShardRecord | None) -> BatchSummary:
        assert release.wait(30), "never released"
        return compute_batch(config, rng[0], rng[1], invocation, committed)

    def started_after(count: int) -> list[int]:
        deadline = time.monotonic() + 10
        while len(started) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # a few more polls of the feed: nothing else may start
        return list(started)

    feed = Feed(granted=lambda: granted[0], places_per_blueprint=1, keep_waiting=6, most=5, poll_s=0.01)
    with ThreadPoolExecutor(5) as pool:
        def submit(rng: Range, committed: ShardRecord | None, refresh: bool) -> PendingBatch:
            started.append(rng[0])
            return _InPool(pool.submit(compute, rng, None if refresh else committed))

        outcome: list[Any] = []
        flow = threading.Thread(target=lambda: outcome.append(execute_build(
            config, store, submit, invocation=invocation, runner="threads", flow_name=None, parameters={},
            window=2, feed=feed)))
        flow.start()
        try:
            assert started_after(2) == [0, 4]  # the window; 8 places, none granted: fed enough
            granted[0] = 4  # 4 of 8 left to grant: one batch more, then 8 wait
            assert started_after(3) == [0, 4, 8]
            granted[0] = 12  # all granted: batches until 6 places wait, but only 5 in flight
            assert started_after(5) == [0, 4, 8, 12, 16]
            granted[0] = 40
            assert started_after(6) == [0, 4, 8, 12, 16]  # at most 5
        finally:
            release.set()
            flow.join(60)
    assert outcome and outcome[0].shards_done == 10
    assert started == list(range(0, 40, 4))
