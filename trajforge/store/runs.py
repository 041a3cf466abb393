"""Per-invocation run records as Parquet: ``runs/<run_id>/invocations/<started>-<id>.parquet``,
and the per-batch summaries they are made of.

Each invocation writes its record when it starts (outcome ``running``) and replaces it, atomically,
when it ends; a process killed in between leaves ``running`` behind, which is the truth: that
invocation never finished. The catalog's ``runs`` view reads every record.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.schemas.config import RunConfig
from trajforge.schemas.runs import RUN_RECORD_SCHEMA, RunOutcome, RunRecord, run_record_to_row
from trajforge.store.shards import RUNS_DIR, RunStore, ShardRecord, to_table, write_table_file

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


class BatchSummary(BaseModel):
    """What one batch of a build did, and the one record of it: the executor commits its shard
    and adds its counts to the invocation's record, and the Prefect batch task returns it as it
    is, so Prefect persists it as the batch's cached result (small by design: the rows are in
    the Parquet files). ``stop`` is where the shard ends: below the planned stop when the
    budget ran out part-way, equal to ``start`` (and no shard) when no blueprint of it finished.
    ``adopted``: the shard was already committed and intact, so nothing was computed."""

    model_config = ConfigDict(extra="forbid")

    start: int
    stop: int
    shard: ShardRecord | None = None
    adopted: bool = False
    blueprints: int = 0
    rejections: dict[str, int] = Field(default_factory=dict)
    episodes: int = 0
    skipped_episodes: int = 0  # faulty episodes for blueprints that admit no fault
    passed: int = 0  # episodes that passed every check
    cost_usd: float = 0.0  # of the committed episodes (priced ones), the proposer and the judge
    unpriced_episodes: int = 0
    discarded_usd: float = 0.0  # episodes past a budget stop, not committed
    proposer_usd: float = 0.0  # LLM proposer and reviewers
    retries: int = 0
    terminations: dict[str, int] = Field(default_factory=dict)
    budget_stopped: bool = False
    seconds: float = 0.0


def record_batch_spend(store: RunStore, config: RunConfig, summary: BatchSummary) -> None:
    """Persist what a computed batch's model calls cost, before its shard is committed (a kill
    between the two over-counts the spend, never under-counts it)."""
    if config.uses_models():
        store.record_spend(summary.start, summary.stop, summary.cost_usd, summary.discarded_usd,
                           summary.unpriced_episodes)


def start_record(config: RunConfig, store: RunStore, invocation_id: str, runner: str,
                 flow_name: str | None, parameters: dict[str, Any]) -> RunRecord:
    """The record of an invocation that is starting (outcome ``running``); written at once, so
    a process killed before the end leaves a trace."""
    info = json.loads((store.run_dir / "run.json").read_text(encoding="utf-8"))
    record = RunRecord(
        id=invocation_id, run_id=store.run_id, name=config.name, config=info["config"],
        created_at=info.get("created_at"), flow_name=flow_name, runner=runner,
        parameters=json.dumps(parameters, sort_keys=True, default=str),
        started_at=datetime.now(UTC), outcome=RunOutcome.running,
        n_blueprints=config.generation.n_blueprints)
    write_run_record(store.out, record)
    return record


def finish_record(record: RunRecord, computed: list[BatchSummary], planned: int, cached: int,
                  adopted: int, seconds: float, outcome: RunOutcome, error: str | None,
                  budget_stopped: bool = False) -> RunRecord:
    """The invocation's record at its end: what it computed (not what it found done) and what
    that cost."""
    rejected = sum(sum(s.rejections.values()) for s in computed)
    valid = sum(s.blueprints for s in computed)
    return record.model_copy(update={
        "ended_at": datetime.now(UTC), "outcome": outcome, "error": error,
        "batches_planned": planned, "batches_computed": len(computed),
        "batches_cached": cached, "batches_adopted": adopted,
        "blueprints_generated": valid + rejected, "blueprints_valid": valid,
        "blueprints_rejected": rejected, "episodes": sum(s.episodes for s in computed),
        "episodes_passed": sum(s.passed for s in computed),
        "episodes_skipped": sum(s.skipped_episodes for s in computed),
        "cost_usd": sum(s.cost_usd for s in computed),
        "episodes_unpriced": sum(s.unpriced_episodes for s in computed), "seconds": seconds,
        "budget_stopped": budget_stopped or any(s.budget_stopped for s in computed)})
