"""Per-invocation run records: written at start, replaced at the end, one row each in ``runs``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from trajforge.schemas.runs import RunOutcome, RunRecord
from trajforge.store import RunStore, query, refresh_catalog
from trajforge.store.runs import run_record_files, write_run_record

RUN = "run_0123456789abcdef"


def _record(invocation: str, started: datetime, **extra) -> RunRecord:
    return RunRecord(id=invocation, run_id=RUN, name="nightly", config=json.dumps({"seed": 0}),
                     runner="threads", parameters="{}", started_at=started,
                     outcome=RunOutcome.running, n_blueprints=10, **extra)


def test_each_invocation_is_one_row_and_the_end_replaces_the_start(tmp_path: Path) -> None:
    out = tmp_path / "out"
    t0 = datetime(2026, 11, 29, 3, 0, tzinfo=timezone.utc)
    first = _record("flow-1", t0)
    write_run_record(out, first)
    write_run_record(out, first.model_copy(update={
        "outcome": RunOutcome.completed, "ended_at": t0 + timedelta(minutes=5),
        "batches_computed": 2, "episodes": 40, "episodes_passed": 20, "cost_usd": 1.25}))
    killed = _record("flow-2", t0 + timedelta(days=1))  # started, never ended
    write_run_record(out, killed)
    assert len(run_record_files(out)) == 2
    refresh_catalog(out)
    rows = query(out, "SELECT id, outcome, episodes, cost_usd, ended_at - started_at "
                      "FROM runs ORDER BY started_at")[1]
    assert rows == [("flow-1", "completed", 40, 1.25, timedelta(minutes=5)),
                    ("flow-2", "running", 0, 0.0, None)]
    # "what did last night's run add and what did it cost" is one query
    (added, cost), = query(out, "SELECT sum(episodes), sum(cost_usd) FROM runs "
                                "WHERE started_at >= TIMESTAMPTZ '2026-11-29 00:00:00+00'")[1]
    assert (added, cost) == (40, 1.25)


def test_run_info_keeps_its_first_creation_time(tmp_path: Path) -> None:
    store = RunStore(tmp_path, RUN)
    store.write_run_info({"name": "a", "config": "{}", "created_at": "2026-01-01T00:00:00+00:00"})
    store.write_run_info({"name": "a", "config": "{}", "created_at": "2026-06-01T00:00:00+00:00"})
    info = json.loads((store.run_dir / "run.json").read_text())
    assert info["created_at"] == "2026-01-01T00:00:00+00:00"


def test_a_run_with_only_run_json_still_shows(tmp_path: Path) -> None:
    store = RunStore(tmp_path, RUN)
    store.write_run_info({"name": "legacy", "config": "{}", "created_at": "2026-01-01T00:00:00"})
    refresh_catalog(tmp_path)
    assert query(tmp_path, "SELECT run_id, name, outcome FROM runs")[1] == [(RUN, "legacy", None)]
