"""The loop's task pool on synthetic rollout outcomes: boundary, retirement, capacity, stats."""

from __future__ import annotations

import statistics

import pytest
from pydantic import ValidationError

from trajforge.environments.retail import RetailDomain
from trajforge.generators import generate_blueprints
from trajforge.loop.pool import PoolConfig, RolloutOutcome, TaskPool, TaskStatus
from trajforge.schemas import TaskBlueprint
from trajforge.schemas.blueprint import Provenance
from trajforge.schemas.config import GenerationConfig


@pytest.fixture(scope="module")
def seeds() -> list[TaskBlueprint]:
    items = generate_blueprints(RetailDomain(300, 0), GenerationConfig(), "run_pool", 0, 12)
    out = [b for b in items if isinstance(b, TaskBlueprint)][:8]
    assert len(out) == 8
    return out


def _variant(parent: TaskBlueprint, k: int) -> TaskBlueprint:
    """A stand-in variant: the pool only reads ids and provenance."""
    return parent.model_copy(update={
        "id": f"{parent.id}_v{k}",
        "provenance": Provenance(generator="resynthesis", version="1", seed=k, index=k,
                                 parent_id=parent.id)})


def _outcomes(bp: TaskBlueprint, rewards: list[float], passes: list[bool] | None = None
              ) -> list[RolloutOutcome]:
    passes = passes if passes is not None else [r >= 1.0 for r in rewards]
    return [RolloutOutcome(bp.id, r, p) for r, p in zip(rewards, passes, strict=True)]


def test_boundary_saturated_and_hopeless_tasks_are_told_apart(seeds: list[TaskBlueprint]) -> None:
    a, b, c, d = seeds[:4]
    pool = TaskPool([a, b, c, d], PoolConfig(capacity=8, hopeless_after=2))
    update = pool.observe(0, _outcomes(a, [1, 1, 1, 1]) + _outcomes(b, [0, 0.2, 0, 0])
                          + _outcomes(c, [1, 1, 0, 0]) + _outcomes(d, [1, 0.5, 0, 0]))
    # boundary: success strictly between 0 and 1, highest reward variance first
    assert [x.id for x in update.boundary] == [c.id, d.id]
    assert update.groups[c.id].reward_var == pytest.approx(0.25)
    assert update.groups[d.id].reward_var == pytest.approx(statistics.pvariance([1, 0.5, 0, 0]))
    assert update.saturated == [a.id] and update.hopeless == []
    assert update.rollouts == 16
    assert update.mean_reward == pytest.approx((4 + 0.2 + 2 + 1.5) / 16)
    assert [x.id for x in pool.active()] == [b.id, c.id, d.id]
    # b fails again: hopeless after two observed iterations with no success
    update = pool.observe(1, _outcomes(b, [0, 0, 0.1, 0]) + _outcomes(c, [0, 0, 0, 1]))
    assert update.hopeless == [b.id] and update.saturated == []
    assert [x.id for x in update.boundary] == [c.id]
    assert [x.id for x in pool.active()] == [c.id, d.id]
    status = {s.blueprint_id: s.status for s in pool.stats()}
    assert status == {a.id: TaskStatus.saturated, b.id: TaskStatus.hopeless,
                      c.id: TaskStatus.active, d.id: TaskStatus.active}


def test_statistics_are_per_group_and_cumulative(seeds: list[TaskBlueprint]) -> None:
    task = seeds[0]
    pool = TaskPool([task], PoolConfig(capacity=2, hopeless_after=5))
    first, second = [1.0, 0.0, 0.5, 0.0], [0.25, 1.0, 0.0]
    pool.observe(0, _outcomes(task, first))
    pool.observe(1, _outcomes(task, second))
    stat = pool.stats()[0]
    both = first + second
    assert stat.total.attempts == 7 and stat.total.successes == 2
    assert stat.total.success_rate == pytest.approx(2 / 7)
    assert stat.total.reward_mean == pytest.approx(statistics.fmean(both))
    assert stat.total.reward_var == pytest.approx(statistics.pvariance(both))
    assert stat.latest.attempts == 3 and stat.latest_iteration == 1
    assert stat.latest.reward_var == pytest.approx(statistics.pvariance(second))
    row = stat.record("run_l", 1)
    assert (row.run_id, row.iteration, row.blueprint_id, row.origin, row.status) == \
        ("run_l", 1, task.id, "seed", "active")
    assert row.group_success_rate == pytest.approx(1 / 3)


def test_streaks_need_consecutive_counted_iterations(seeds: list[TaskBlueprint]) -> None:
    a, b = seeds[:2]
    pool = TaskPool([a, b], PoolConfig(capacity=4, hopeless_after=2, saturated_after=2,
                                       min_rollouts=2))
    pool.observe(0, _outcomes(a, [0, 0]) + _outcomes(b, [1, 1]))
    up = pool.observe(1, _outcomes(a, [1, 0]) + _outcomes(b, [1]))  # b: too few to count
    assert up.hopeless == [] and up.saturated == [] and [x.id for x in up.boundary] == [a.id]
    up = pool.observe(2, _outcomes(a, [0, 0]) + _outcomes(b, [1, 1]))
    assert up.saturated == [b.id] and up.hopeless == []  # a's streak restarted at iteration 1
    up = pool.observe(3, _outcomes(a, [0, 0, 0]))
    assert up.hopeless == [a.id] and len(pool) == 0
    assert pool.stats()[1].total.attempts == 5  # the uncounted rollout is still in the totals


def test_boundary_needs_more_than_the_minimum_variance(seeds: list[TaskBlueprint]) -> None:
    a = seeds[0]
    pool = TaskPool([a], PoolConfig(capacity=1, boundary_min_variance=0.2))
    assert pool.observe(0, _outcomes(a, [1, 0.9, 0.8], [True, False, False])).boundary == []
    assert [x.id for x in pool.observe(1, _outcomes(a, [1, 0, 0])).boundary] == [a.id]


def test_seeds_beyond_capacity_wait_and_fill_freed_slots(seeds: list[TaskBlueprint]) -> None:
    pool = TaskPool(seeds[:5], PoolConfig(capacity=3))
    assert [x.id for x in pool.active()] == [s.id for s in seeds[:3]]
    assert pool.composition() == {"seed": 3, "resynthesized": 0, "queued": 2, "active": 3,
                                  "saturated": 0, "hopeless": 0, "evicted": 0}
    pool.observe(0, _outcomes(seeds[0], [1, 1]))  # saturated: a slot frees
    assert len(pool) == 2
    assert pool.add([], 1) == 0
    assert [x.id for x in pool.active()] == [s.id for s in seeds[1:4]]
    assert pool.composition()["queued"] == 1


def test_variants_take_free_slots_then_evict_the_least_informative(seeds: list[TaskBlueprint]) -> None:
    a, b, c, d = seeds[:4]
    pool = TaskPool([a, b, c, d], PoolConfig(capacity=4, hopeless_after=3))
    # a, b at the boundary; c never passes (var 0.0); d never passes (var > 0); nothing retires
    pool.observe(0, _outcomes(a, [1, 0]) + _outcomes(b, [1, 0, 0]) + _outcomes(c, [0, 0])
                 + _outcomes(d, [0.5, 0]))
    v = [_variant(a, k) for k in range(4)]
    assert pool.add(v[:1], 1) == 1  # full: evicts c (lowest variance, not at the boundary)
    assert {s.blueprint_id: s.status for s in pool.stats()}[c.id] is TaskStatus.evicted
    assert pool.add(v[1:3], 2) == 1  # d goes; then only boundary or unobserved tasks are left
    assert [x.id for x in pool.active()] == [a.id, b.id, v[0].id, v[1].id]
    assert pool.add([v[0], a], 2) == 0  # ids the pool has held are skipped
    assert pool.status(v[2].id) is None and pool.status(c.id) is TaskStatus.evicted
    assert pool.composition() == {"seed": 2, "resynthesized": 2, "queued": 0, "active": 4,
                                  "saturated": 0, "hopeless": 0, "evicted": 2}
    rows = {s.blueprint_id: s for s in pool.stats()}
    assert rows[v[0].id].parent_id == a.id and rows[v[0].id].added_at == 1
    assert len(pool) == pool.config.capacity


def test_ties_in_eviction_go_to_the_oldest_task(seeds: list[TaskBlueprint]) -> None:
    a, b = seeds[:2]
    pool = TaskPool([a], PoolConfig(capacity=2, hopeless_after=9))
    pool.add([b], 3)
    pool.observe(4, _outcomes(a, [0, 0]) + _outcomes(b, [0, 0]))
    assert pool.add([_variant(b, 0)], 5) == 1
    assert [x.id for x in pool.active()] == [b.id, _variant(b, 0).id]


def test_rollouts_of_unknown_tasks_are_refused(seeds: list[TaskBlueprint]) -> None:
    pool = TaskPool(seeds[:1], PoolConfig(capacity=1))
    with pytest.raises(KeyError, match="not in the pool"):
        pool.observe(0, [RolloutOutcome("bp_nope", 1.0, True)])


def test_pool_config_is_strict() -> None:
    with pytest.raises(ValidationError):
        PoolConfig(capacity=0)
    with pytest.raises(ValidationError):
        PoolConfig.model_validate({"capacity": 4, "hopless_after": 2})
