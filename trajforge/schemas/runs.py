"""``RunRecord``: one invocation of a build (a flow run), as the catalog's ``runs`` view shows it.

A run (one config, ``run_id``) is built by one or more invocations: the first, a resume after a
crash, a scheduled extension. Each invocation writes its own record, so the catalog answers
"what did last night's run add and what did it cost" with one query.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

import pyarrow as pa
from pydantic import Field

from trajforge.schemas.base import Record


class RunOutcome(StrEnum):
    running = "running"  # started; a record still 'running' after the process died never ended
    completed = "completed"
    failed = "failed"


class RunRecord(Record):
    id: str = Field(description="the invocation: Prefect's flow run id, or a uuid without Prefect")
    run_id: str = Field(description="the run (config content hash) it built")
    name: str
    config: str = Field(description="the run's config as JSON")
    created_at: str | None = Field(default=None, description="when the run was first created")
    flow_name: str | None = None
    runner: str
    parameters: str = Field(description="the invocation's parameters as JSON")
    started_at: datetime
    ended_at: datetime | None = None
    outcome: RunOutcome
    error: str | None = None
    n_blueprints: int
    batches_planned: int = 0
    batches_computed: int = 0
    batches_cached: int = Field(default=0, description="batches Prefect's cache answered")
    batches_adopted: int = Field(default=0, description="batches already committed, not recomputed")
    blueprints_generated: int = 0
    blueprints_valid: int = 0
    blueprints_rejected: int = 0
    episodes: int = 0
    episodes_passed: int = 0
    episodes_skipped: int = 0
    cost_usd: float = Field(default=0.0, description="spend of the episodes computed, where priced")
    episodes_unpriced: int = Field(default=0, description="episodes whose cost is unknown")
    seconds: float = 0.0
    budget_stopped: bool = Field(default=False, description="the run's budget ran out: the "
                                 "invocation ended with what it had, batches left to a resume")


_TIMESTAMP = pa.timestamp("us", tz="UTC")

RUN_RECORD_SCHEMA = pa.schema([
    ("id", pa.string()), ("run_id", pa.string()), ("name", pa.string()), ("config", pa.string()),
    ("created_at", pa.string()), ("flow_name", pa.string()), ("runner", pa.string()),
    ("parameters", pa.string()), ("started_at", _TIMESTAMP), ("ended_at", _TIMESTAMP),
    ("outcome", pa.string()), ("error", pa.string()), ("n_blueprints", pa.int64()),
    ("batches_planned", pa.int64()), ("batches_computed", pa.int64()),
    ("batches_cached", pa.int64()), ("batches_adopted", pa.int64()),
    ("blueprints_generated", pa.int64()), ("blueprints_valid", pa.int64()),
    ("blueprints_rejected", pa.int64()), ("episodes", pa.int64()), ("episodes_passed", pa.int64()),
    ("episodes_skipped", pa.int64()), ("cost_usd", pa.float64()), ("episodes_unpriced", pa.int64()),
    ("seconds", pa.float64()), ("budget_stopped", pa.bool_()),
])


def run_record_to_row(record: RunRecord) -> dict[str, Any]:
    row = record.model_dump()
    row["outcome"] = record.outcome.value
    return row
