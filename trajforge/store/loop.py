"""The loop's tables in a run folder, and its tasks and rollouts in the normal tables.

- ``runs/<run_id>/loop/iterations/iteration-<i:05d>.parquet``: one ``LoopIteration`` row;
- ``runs/<run_id>/loop/tasks/iteration-<i:05d>.parquet``: the pool's ``LoopTaskStat`` rows
  after iteration ``i``.

Each file is written whole under a temporary name and renamed (``write_parquet_atomic``), so a
glob never sees a partial one, and writing an iteration again replaces it: a loop resumed at
iteration ``i`` ends with the same files as one that never stopped. The catalog's
``loop_iterations`` and ``loop_tasks`` views read all of them.

The tasks the loop adds (resynthesized variants are ``TaskBlueprint``s with ``parent_id``) and
the trajectories and verdicts of its rollouts go into the ordinary tables through the run
store: ``write_loop_shard`` commits iteration ``i`` as the shard ``[i, i+1)`` of the loop's
run, so the catalog's ``blueprints`` view shows every variant with its parent. A loop run
therefore needs its own run id (a build's shards are ranges of blueprint indices).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.errors import StoreError
from trajforge.schemas.arrow import blueprint_to_row
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.loop import (
    LOOP_ITERATION_SCHEMA,
    LOOP_TASK_SCHEMA,
    LoopIteration,
    LoopTaskStat,
    loop_iteration_from_row,
    loop_iteration_to_row,
    loop_task_from_row,
    loop_task_to_row,
)
from trajforge.store.shards import RUNS_DIR, RunStore, ShardRecord, to_table, write_table_file

LOOP_DIR = "loop"
LOOP_TABLES: dict[str, pa.Schema] = {"iterations": LOOP_ITERATION_SCHEMA, "tasks": LOOP_TASK_SCHEMA}
_FILE = re.compile(r"iteration-\d{5,}\.parquet")


def loop_relpath(run_id: str, table: str, iteration: int) -> str:
    if table not in LOOP_TABLES:
        raise StoreError(f"unknown loop table {table!r}; expected one of {sorted(LOOP_TABLES)}")
    if iteration < 0:
        raise StoreError(f"invalid loop iteration {iteration}")
    return f"{RUNS_DIR}/{run_id}/{LOOP_DIR}/{table}/iteration-{iteration:05d}.parquet"


def _write(out: Path, run_id: str, table: str, iteration: int, rows: list[dict[str, Any]]) -> Path:
    RunStore(out, run_id)  # validates the run id before it becomes a folder name
    path = Path(out) / loop_relpath(run_id, table, iteration)
    write_table_file(path, to_table(rows, LOOP_TABLES[table], f"loop {table} of iteration {iteration}"))
    return path


def write_loop_iteration(out: Path, record: LoopIteration) -> Path:
    """Write (or replace) the row of one loop iteration."""
    return _write(out, record.run_id, "iterations", record.iteration, [loop_iteration_to_row(record)])


def write_loop_tasks(out: Path, run_id: str, iteration: int, stats: Sequence[LoopTaskStat]) -> Path:
    """Write (or replace) the pool's per-task rows after ``iteration``."""
    wrong = [s.blueprint_id for s in stats if (s.run_id, s.iteration) != (run_id, iteration)]
    if wrong:
        raise StoreError(f"loop task rows of another run or iteration than {run_id}/{iteration}: "
                         f"{wrong[:3]}")
    return _write(out, run_id, "tasks", iteration, [loop_task_to_row(s) for s in stats])


def loop_files(out: Path, table: str, run_id: str | None = None) -> list[str]:
    """Relative paths of the loop files of ``table`` (of one run or all), sorted."""
    if table not in LOOP_TABLES:
        raise StoreError(f"unknown loop table {table!r}; expected one of {sorted(LOOP_TABLES)}")
    root = Path(out) / RUNS_DIR
    if not root.is_dir():
        return []
    pattern = f"{run_id if run_id is not None else '*'}/{LOOP_DIR}/{table}/*.parquet"
    return sorted(p.relative_to(out).as_posix() for p in root.glob(pattern)
                  if p.is_file() and _FILE.fullmatch(p.name))


def read_loop_iterations(out: Path, run_id: str | None = None) -> list[LoopIteration]:
    """The iteration rows (of one run or all), by run then iteration."""
    rows = [row for f in loop_files(out, "iterations", run_id)
            for row in pq.read_table(Path(out) / f, schema=LOOP_ITERATION_SCHEMA).to_pylist()]
    return sorted((loop_iteration_from_row(r) for r in rows), key=lambda r: (r.run_id, r.iteration))


def read_loop_tasks(out: Path, run_id: str | None = None) -> list[LoopTaskStat]:
    """The per-task rows (of one run or all), by run, iteration, then as written."""
    return [loop_task_from_row(row) for f in loop_files(out, "tasks", run_id)
            for row in pq.read_table(Path(out) / f, schema=LOOP_TASK_SCHEMA).to_pylist()]


def write_loop_shard(out: Path, run_id: str, iteration: int, *,
                     blueprints: Sequence[TaskBlueprint] = (),
                     rows: dict[str, list[dict[str, Any]]] | None = None) -> ShardRecord:
    """Commit iteration ``iteration``'s new blueprints (and any other rows of the normal
    tables, e.g. ``trajectories`` and ``verdicts`` of its rollouts) as the loop run's shard
    ``[iteration, iteration + 1)``. Committing an iteration again supersedes its shard."""
    if iteration < 0:
        raise StoreError(f"invalid loop iteration {iteration}")
    tables = dict(rows or {})
    tables["blueprints"] = [blueprint_to_row(bp, run_id) for bp in blueprints] + \
        list(tables.get("blueprints", []))
    store = RunStore(out, run_id)
    store.prepare()
    return store.write_shard(iteration, iteration + 1, tables)
