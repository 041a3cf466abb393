"""Records of the boundary-resynthesis loop: one row per iteration, one per (iteration, task).

``LoopIteration`` is what the loop's per-iteration table and plot show (pool size and
composition, boundary count, retirements, variants proposed and accepted, trajectories
consumed, mean reward, held-out pass@1, training loss); ``LoopTaskStat`` is the pool's view of
one task after an iteration (cumulative attempts and successes, the latest group's statistics,
its status). The Arrow schemas sit next to the records, like ``schemas/runs.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from pydantic import Field

from trajforge.schemas.base import Record
from trajforge.schemas.ids import content_id


class LoopIteration(Record):
    id: str = Field(description="content id of (run_id, iteration)")
    run_id: str
    iteration: int = Field(ge=0)
    pool_size: int = Field(ge=0, description="active tasks after the iteration's updates")
    pool_seed: int = Field(ge=0, description="active tasks that are seeds")
    pool_resynthesized: int = Field(ge=0, description="active tasks that are variants")
    composition: dict[str, int] = Field(description="TaskPool.composition(): counts by origin and status")
    rollout_tasks: int = Field(default=0, ge=0, description="tasks rolled out this iteration")
    boundary_count: int = Field(ge=0)
    saturated_retired: int = Field(ge=0)
    hopeless_retired: int = Field(ge=0)
    variants_proposed: int = Field(ge=0)
    variants_accepted: int = Field(ge=0, description="variants that passed validation")
    variants_admitted: int = Field(default=0, ge=0, description="accepted variants the pool took in")
    trajectories: int = Field(ge=0, description="rollouts consumed this iteration")
    trajectories_total: int = Field(ge=0, description="rollouts consumed up to and including it")
    mean_reward: float | None = None
    train_success_rate: float | None = Field(default=None, description="share of rollouts passed")
    heldout_pass_at_1: float | None = None
    train_loss: float | None = None
    train_bf16: bool | None = Field(default=None, description="GRPO trained under bf16 autocast "
                                    "(grpo.bf16, auto: as measured); None in rows from before the field")
    rollout_bf16: bool | None = Field(default=None, description="the rollouts were sampled under bf16 "
                                      "autocast (rollout.bf16); None in rows from before the field")
    wall_seconds: float = Field(ge=0)

    @staticmethod
    def make_id(run_id: str, iteration: int) -> str:
        return content_id({"run_id": run_id, "iteration": iteration}, prefix="li_")


class LoopTaskStat(Record):
    run_id: str
    iteration: int = Field(ge=0, description="the iteration after which this row was taken")
    blueprint_id: str
    parent_id: str | None = None
    origin: str = Field(description="'seed' or 'resynthesized'")
    status: str = Field(description="queued, active, saturated, hopeless or evicted")
    added_at: int | None = Field(default=None, description="iteration it became active")
    attempts: int = Field(ge=0, description="rollouts so far")
    successes: int = Field(ge=0)
    success_rate: float
    reward_mean: float
    reward_var: float
    group_attempts: int = Field(default=0, ge=0, description="rollouts in its latest counted group")
    group_successes: int = Field(default=0, ge=0)
    group_reward_var: float = 0.0
    group_iteration: int | None = Field(default=None, description="iteration of that group")

    @property
    def group_success_rate(self) -> float:
        return self.group_successes / self.group_attempts if self.group_attempts else 0.0


LOOP_ITERATION_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=False),
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("iteration", pa.int32(), nullable=False),
    pa.field("pool_size", pa.int32(), nullable=False),
    pa.field("pool_seed", pa.int32(), nullable=False),
    pa.field("pool_resynthesized", pa.int32(), nullable=False),
    pa.field("composition", pa.string(), nullable=False),  # JSON object: name -> count
    pa.field("rollout_tasks", pa.int32(), nullable=False),
    pa.field("boundary_count", pa.int32(), nullable=False),
    pa.field("saturated_retired", pa.int32(), nullable=False),
    pa.field("hopeless_retired", pa.int32(), nullable=False),
    pa.field("variants_proposed", pa.int32(), nullable=False),
    pa.field("variants_accepted", pa.int32(), nullable=False),
    pa.field("variants_admitted", pa.int32(), nullable=False),
    pa.field("trajectories", pa.int64(), nullable=False),
    pa.field("trajectories_total", pa.int64(), nullable=False),
    pa.field("mean_reward", pa.float64()),
    pa.field("train_success_rate", pa.float64()),
    pa.field("heldout_pass_at_1", pa.float64()),
    pa.field("train_loss", pa.float64()),
    pa.field("wall_seconds", pa.float64(), nullable=False),
    pa.field("train_bf16", pa.bool_()),
    pa.field("rollout_bf16", pa.bool_()),
])

LOOP_TASK_SCHEMA = pa.schema([
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("iteration", pa.int32(), nullable=False),
    pa.field("blueprint_id", pa.string(), nullable=False),
    pa.field("parent_id", pa.string()),
    pa.field("origin", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),
    pa.field("added_at", pa.int32()),
    pa.field("attempts", pa.int64(), nullable=False),
    pa.field("successes", pa.int64(), nullable=False),
    pa.field("success_rate", pa.float64(), nullable=False),
    pa.field("reward_mean", pa.float64(), nullable=False),
    pa.field("reward_var", pa.float64(), nullable=False),
    pa.field("group_attempts", pa.int32(), nullable=False),
    pa.field("group_successes", pa.int32(), nullable=False),
    pa.field("group_reward_var", pa.float64(), nullable=False),
    pa.field("group_iteration", pa.int32()),
])


def loop_iteration_to_row(record: LoopIteration) -> dict[str, Any]:
    row = record.model_dump()
    row["composition"] = json.dumps(record.composition, sort_keys=True)
    return row


def loop_iteration_from_row(row: dict[str, Any]) -> LoopIteration:
    return LoopIteration.model_validate({**row, "composition": json.loads(row["composition"])})


def loop_task_to_row(record: LoopTaskStat) -> dict[str, Any]:
    return record.model_dump()


def loop_task_from_row(row: dict[str, Any]) -> LoopTaskStat:
    return LoopTaskStat.model_validate(row)
