"""Per-invocation run records as Parquet: ``runs/<run_id>/invocations/<started>-<id>.parquet``.

Each invocation writes its record when it starts (outcome ``running``) and replaces it, atomically,
when it ends; a process killed in between leaves ``running`` behind, which is the truth: that
invocation never finished. The catalog's ``runs`` view reads every record.
"""

from __future__ import annotations

import re
from pathlib import Path

from trajforge.schemas.runs import RUN_RECORD_SCHEMA, RunRecord, run_record_to_row
from trajforge.store.shards import RUNS_DIR, RunStore, to_table, write_table_file

INVOCATIONS_DIR = "invocations"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def run_record_relpath(record: RunRecord) -> str:
    stamp = record.started_at.strftime("%Y%m%dT%H%M%S%fZ")
    return f"{RUNS_DIR}/{record.run_id}/{INVOCATIONS_DIR}/{stamp}-{_SAFE.sub('_', record.id)}.parquet"


def write_run_record(out: Path, record: RunRecord) -> Path:
    """Write (or replace) the record of one invocation. Returns its path."""
    RunStore(out, record.run_id)  # validates the run id before it becomes a folder name
    path = Path(out) / run_record_relpath(record)
    write_table_file(path, to_table([run_record_to_row(record)], RUN_RECORD_SCHEMA, "a run record"))
    return path


def run_record_files(out: Path) -> list[str]:
    """Relative paths of every run record under ``out``, sorted."""
    root = Path(out) / RUNS_DIR
    if not root.is_dir():
        return []
    return sorted(p.relative_to(out).as_posix()
                  for p in root.glob(f"*/{INVOCATIONS_DIR}/*.parquet") if p.is_file())
