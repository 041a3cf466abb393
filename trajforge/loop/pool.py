"""The loop's active task pool: boundary detection from rollouts, retirement, a bounded buffer.

RL already rolls each task out G times per iteration; the group's rewards are all the pool
needs (no extra inference). Per task it keeps this iteration's group statistics and the
cumulative ones, and decides:

- **boundary**: the group's success rate is strictly between 0 and 1 (so its reward variance is
  nonzero: these tasks carry the group-relative gradient), and the reward variance exceeds
  ``boundary_min_variance``. Reported sorted by the group's reward variance, highest first.
- **saturated**: every rollout passed in ``saturated_after`` consecutive observed iterations;
  retired (it teaches nothing any more).
- **hopeless**: no rollout passed in ``hopeless_after`` consecutive observed iterations;
  retired (the policy is too far from it; its variants would be too).

An iteration counts for a task only when it got at least ``min_rollouts`` rollouts; fewer
are still added to the cumulative counts but decide nothing.

Capacity bounds the *active* tasks; retired and evicted ones leave the buffer (their rows stay
for the record). Seeds beyond the capacity wait in a queue, in the order given. ``add`` admits
variants into free slots first; when the pool is full it evicts, per variant, the active task
that is least informative now: among tasks observed at least once whose latest group was not
at the boundary, the lowest latest reward variance, then the oldest (smallest ``added_at``),
then the smallest id. A task at the boundary, or one not yet rolled out, is never evicted for
a variant that may or may not be; when nothing is evictable the variant is not admitted. After
the variants, free slots are refilled from the seed queue, so call ``add`` every iteration
(``add([], i)`` just refills).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import Field

from trajforge.schemas.base import Record
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.loop import LoopIteration, LoopTaskStat


class TaskStatus(StrEnum):
    queued = "queued"
    active = "active"
    saturated = "saturated"
    hopeless = "hopeless"
    evicted = "evicted"


class Origin(StrEnum):
    seed = "seed"
    resynthesized = "resynthesized"


class PoolConfig(Record):
    capacity: int = Field(default=64, ge=1, description="most active tasks at once")
    hopeless_after: int = Field(default=2, ge=1,
                                description="consecutive observed iterations with no success -> retired")
    saturated_after: int = Field(default=1, ge=1,
                                 description="consecutive observed iterations all passing -> retired")
    min_rollouts: int = Field(default=2, ge=1, description="rollouts an iteration needs to count")
    boundary_min_variance: float = Field(default=0.0, ge=0,
                                         description="boundary tasks need a larger reward variance")


@dataclass(frozen=True)
class RolloutOutcome:
    """One rollout's result: which task, its scalar reward, and whether it passed."""

    blueprint_id: str
    reward: float
    passed: bool


@dataclass(frozen=True)
class GroupStat:
    """Statistics of a set of rollouts of one task."""

    attempts: int = 0
    successes: int = 0
    reward_mean: float = 0.0
    reward_var: float = 0.0

    @property
    def success_rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0

    @property
    def at_boundary(self) -> bool:
        return 0 < self.successes < self.attempts


def group_stat(rewards: Sequence[float], passed: Sequence[bool]) -> GroupStat:
    """Population mean and variance (the group GRPO normalizes over)."""
    n = len(rewards)
    if n == 0:
        return GroupStat()
    mean = sum(rewards) / n
    return GroupStat(attempts=n, successes=sum(passed), reward_mean=mean,
                     reward_var=sum((r - mean) ** 2 for r in rewards) / n)


@dataclass(frozen=True)
class TaskStat:
    """One task's standing after an iteration: cumulative and latest-group statistics."""

    blueprint_id: str
    parent_id: str | None
    origin: Origin
    status: TaskStatus
    added_at: int | None
    retired_at: int | None
    total: GroupStat
    latest: GroupStat
    latest_iteration: int | None

    def record(self, run_id: str, iteration: int) -> LoopTaskStat:
        return LoopTaskStat(
            run_id=run_id, iteration=iteration, blueprint_id=self.blueprint_id,
            parent_id=self.parent_id, origin=self.origin.value, status=self.status.value,
            added_at=self.added_at, attempts=self.total.attempts, successes=self.total.successes,
            success_rate=self.total.success_rate, reward_mean=self.total.reward_mean,
            reward_var=self.total.reward_var, group_attempts=self.latest.attempts,
            group_successes=self.latest.successes, group_reward_var=self.latest.reward_var,
            group_iteration=self.latest_iteration)


@dataclass
class _Entry:
    blueprint: TaskBlueprint
    origin: Origin
    status: TaskStatus
    added_at: int | None = None
    retired_at: int | None = None
    attempts: int = 0
    successes: int = 0
    reward_sum: float = 0.0
    reward_sq: float = 0.0
    latest: GroupStat = field(default_factory=GroupStat)
    latest_iteration: int | None = None
    zero_streak: int = 0
    full_streak: int = 0

    def total(self) -> GroupStat:
        if not self.attempts:
            return GroupStat()
        mean = self.reward_sum / self.attempts
        return GroupStat(attempts=self.attempts, successes=self.successes, reward_mean=mean,
                         reward_var=max(0.0, self.reward_sq / self.attempts - mean * mean))

    def stat(self) -> TaskStat:
        return TaskStat(blueprint_id=self.blueprint.id,
                        parent_id=self.blueprint.provenance.parent_id, origin=self.origin,
                        status=self.status, added_at=self.added_at, retired_at=self.retired_at,
                        total=self.total(), latest=self.latest,
                        latest_iteration=self.latest_iteration)


@dataclass(frozen=True)
class PoolUpdate:
    """What one ``observe`` found: boundary tasks (highest group reward variance first), the
    ids retired this iteration, and the group statistics of every task observed."""

    iteration: int
    boundary: list[TaskBlueprint]
    saturated: list[str]
    hopeless: list[str]
    groups: dict[str, GroupStat]
    rollouts: int
    mean_reward: float | None
    successes: int = 0

    @property
    def success_rate(self) -> float | None:
        return self.successes / self.rollouts if self.rollouts else None


class TaskPool:
    """The active task pool of one loop run (see the module docstring for the rules)."""

    def __init__(self, blueprints: Sequence[TaskBlueprint], config: PoolConfig) -> None:
        self.config = config
        self._entries: dict[str, _Entry] = {}
        self._queue: list[str] = []
        for bp in blueprints:
            if bp.id in self._entries:
                continue  # the same task twice is one task
            self._entries[bp.id] = _Entry(bp, Origin.seed, TaskStatus.queued)
            self._queue.append(bp.id)
        self.refill(0)

    # --- views ---------------------------------------------------------------------------------

    def active(self) -> list[TaskBlueprint]:
        """The active tasks, in the order they entered the pool."""
        return [e.blueprint for e in self._entries.values() if e.status is TaskStatus.active]

    def __len__(self) -> int:
        return sum(e.status is TaskStatus.active for e in self._entries.values())

    def __contains__(self, blueprint_id: object) -> bool:
        """Whether the pool has ever held the task (any status)."""
        return blueprint_id in self._entries

    def status(self, blueprint_id: str) -> TaskStatus | None:
        entry = self._entries.get(blueprint_id)
        return entry.status if entry is not None else None

    def composition(self) -> dict[str, int]:
        """Counts of active tasks by origin (``seed``, ``resynthesized``), and of every task
        ever held by status (``active``, ``queued``, ``saturated``, ``hopeless``, ``evicted``)."""
        counts = {o.value: 0 for o in Origin} | {s.value: 0 for s in TaskStatus}
        for e in self._entries.values():
            counts[e.status.value] += 1
            if e.status is TaskStatus.active:
                counts[e.origin.value] += 1
        return counts

    def stats(self) -> list[TaskStat]:
        """One row per task ever held (queued seeds included), in the order they were held."""
        return [e.stat() for e in self._entries.values()]

    # --- updates -------------------------------------------------------------------------------

    def observe(self, iteration: int, outcomes: Sequence[RolloutOutcome]) -> PoolUpdate:
        """Fold one iteration's rollouts in; retire saturated and hopeless tasks.

        Outcomes of tasks the pool never held are a caller bug (``KeyError``); outcomes of
        retired tasks (rolled out before they retired) still count in their statistics."""
        by_task: dict[str, list[RolloutOutcome]] = {}
        for outcome in outcomes:
            if outcome.blueprint_id not in self._entries:
                raise KeyError(f"rollout of {outcome.blueprint_id}, which is not in the pool")
            by_task.setdefault(outcome.blueprint_id, []).append(outcome)
        cfg = self.config
        groups: dict[str, GroupStat] = {}
        boundary: list[tuple[float, str]] = []
        saturated: list[str] = []
        hopeless: list[str] = []
        for bp_id, group in by_task.items():
            entry = self._entries[bp_id]
            stat = group_stat([o.reward for o in group], [o.passed for o in group])
            groups[bp_id] = stat
            entry.attempts += stat.attempts
            entry.successes += stat.successes
            entry.reward_sum += sum(o.reward for o in group)
            entry.reward_sq += sum(o.reward * o.reward for o in group)
            if stat.attempts < cfg.min_rollouts:
                continue
            entry.latest, entry.latest_iteration = stat, iteration
            if entry.status is not TaskStatus.active:
                continue
            entry.zero_streak = entry.zero_streak + 1 if stat.successes == 0 else 0
            entry.full_streak = entry.full_streak + 1 if stat.successes == stat.attempts else 0
            if stat.at_boundary and stat.reward_var > cfg.boundary_min_variance:
                boundary.append((stat.reward_var, bp_id))
            if entry.full_streak >= cfg.saturated_after:
                self._retire(entry, TaskStatus.saturated, iteration)
                saturated.append(bp_id)
            elif entry.zero_streak >= cfg.hopeless_after:
                self._retire(entry, TaskStatus.hopeless, iteration)
                hopeless.append(bp_id)
        boundary.sort(key=lambda x: (-x[0], x[1]))
        rewards = [o.reward for o in outcomes]
        return PoolUpdate(iteration=iteration,
                          boundary=[self._entries[i].blueprint for _, i in boundary],
                          saturated=saturated, hopeless=hopeless, groups=groups,
                          rollouts=len(outcomes),
                          mean_reward=sum(rewards) / len(rewards) if rewards else None,
                          successes=sum(o.passed for o in outcomes))

    def add(self, variants: Sequence[TaskBlueprint], iteration: int) -> int:
        """Admit variants (free slots first, then by eviction), then refill from the seed
        queue. Returns how many variants were admitted; ids the pool has held are skipped."""
        return len(self.admit(variants, iteration))

    def admit(self, variants: Sequence[TaskBlueprint], iteration: int) -> list[TaskBlueprint]:
        """``add``, returning the variants admitted (the ones to store with the iteration)."""
        admitted: list[TaskBlueprint] = []
        for bp in variants:
            if bp.id in self._entries:
                continue
            if len(self) >= self.config.capacity:
                victim = self._eviction_candidate()
                if victim is None:
                    continue
                self._retire(victim, TaskStatus.evicted, iteration)
            self._entries[bp.id] = _Entry(bp, Origin.resynthesized, TaskStatus.active,
                                          added_at=iteration)
            admitted.append(bp)
        self.refill(iteration)
        return admitted

    def refill(self, iteration: int) -> int:
        """Move queued seeds into free slots, in their given order; returns how many."""
        moved = 0
        while self._queue and len(self) < self.config.capacity:
            entry = self._entries[self._queue.pop(0)]
            entry.status, entry.added_at = TaskStatus.active, iteration
            moved += 1
        return moved

    def _eviction_candidate(self) -> _Entry | None:
        candidates = [e for e in self._entries.values()
                      if e.status is TaskStatus.active and e.latest_iteration is not None
                      and not e.latest.at_boundary]
        if not candidates:
            return None
        return min(candidates, key=lambda e: (e.latest.reward_var, e.added_at or 0, e.blueprint.id))

    @staticmethod
    def _retire(entry: _Entry, status: TaskStatus, iteration: int) -> None:
        entry.status, entry.retired_at = status, iteration


def iteration_record(run_id: str, pool: TaskPool, update: PoolUpdate, *, variants_proposed: int,
                     variants_accepted: int, variants_admitted: int, trajectories_total: int,
                     wall_seconds: float, heldout_pass_at_1: float | None = None,
                     train_loss: float | None = None, train_bf16: bool | None = None,
                     rollout_bf16: bool | None = None) -> LoopIteration:
    """The ``LoopIteration`` row of ``update``'s iteration, with the pool as it stands now
    (after retirements and ``add``)."""
    comp = pool.composition()
    return LoopIteration(
        id=LoopIteration.make_id(run_id, update.iteration), run_id=run_id,
        iteration=update.iteration, pool_size=len(pool), pool_seed=comp[Origin.seed.value],
        pool_resynthesized=comp[Origin.resynthesized.value], composition=comp,
        rollout_tasks=len(update.groups), boundary_count=len(update.boundary),
        saturated_retired=len(update.saturated), hopeless_retired=len(update.hopeless),
        variants_proposed=variants_proposed, variants_accepted=variants_accepted,
        variants_admitted=variants_admitted, trajectories=update.rollouts,
        trajectories_total=trajectories_total, mean_reward=update.mean_reward,
        train_success_rate=update.success_rate, heldout_pass_at_1=heldout_pass_at_1,
        train_loss=train_loss, train_bf16=train_bf16, rollout_bf16=rollout_bf16, wall_seconds=wall_seconds)
