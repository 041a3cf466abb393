"""``execute_build`` commits each batch as it finishes: a batch that finishes before an earlier
one frees its place in the window at once (issue 21: with results taken in submission order, a
slow first batch held the window and the model server went idle)."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trajforge.config import load_config
from trajforge.store import query
from trajforge.store.builds import (
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
