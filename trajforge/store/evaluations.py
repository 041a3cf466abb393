"""The ``evaluations`` table: one row per evaluated episode of a trained policy.

Each evaluation writes one Parquet file, ``evaluations/<eval_id>.parquet`` (atomic, like every
shard), and the catalog's ``evaluations`` view reads all of them. Files are only ever written
whole under a temporary name, so a glob of ``*.parquet`` never sees a partial one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from trajforge.store.shards import to_table, write_table_file

EVALUATIONS_DIR = "evaluations"

EVALUATION_SCHEMA = pa.schema([
    pa.field("eval_id", pa.string(), nullable=False),
    pa.field("created_at", pa.string(), nullable=False),
    pa.field("policy", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),  # where the blueprints came from
    pa.field("blueprint_id", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("trial", pa.int32(), nullable=False),
    pa.field("trials", pa.int32(), nullable=False),
    pa.field("seed", pa.int64(), nullable=False),
    pa.field("trajectory_id", pa.string(), nullable=False),
    pa.field("passed", pa.bool_(), nullable=False),
    pa.field("reward", pa.float64(), nullable=False),
    pa.field("failed_checks", pa.list_(pa.string()), nullable=False),
    pa.field("termination", pa.string(), nullable=False),
    pa.field("agent_turns", pa.int32(), nullable=False),
    pa.field("tool_calls", pa.int32(), nullable=False),
    pa.field("valid_tool_calls", pa.int32(), nullable=False),
    pa.field("trajectory", pa.string(), nullable=False),  # the transcript, as JSON
])


def evaluation_files(out: Path) -> list[str]:
    """Relative paths of the evaluation files under ``out``."""
    folder = Path(out) / EVALUATIONS_DIR
    if not folder.is_dir():
        return []
    return sorted(p.relative_to(out).as_posix() for p in folder.glob("*.parquet") if p.is_file())


def write_evaluation(out: Path, eval_id: str, rows: Sequence[dict[str, Any]]) -> Path:
    path = Path(out) / EVALUATIONS_DIR / f"{eval_id}.parquet"
    write_table_file(path, to_table(rows, EVALUATION_SCHEMA, "table 'evaluations'"))
    return path
