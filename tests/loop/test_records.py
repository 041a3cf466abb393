"""Loop records end to end: pool rows and iteration rows in the run folder, the catalog's
``loop_iterations`` / ``loop_tasks`` views, variants in the ``blueprints`` view, the plot."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from trajforge.environments.retail import RetailDomain
from trajforge.errors import StoreError
from trajforge.generators import generate_blueprints
from trajforge.generators.resynthesize import resynthesize
from trajforge.loop.plot import plot_loop
from trajforge.loop.pool import PoolConfig, RolloutOutcome, TaskPool, iteration_record
from trajforge.schemas import TaskBlueprint
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.loop import (
    LOOP_ITERATION_SCHEMA,
    LOOP_TASK_SCHEMA,
    LoopIteration,
    loop_iteration_from_row,
    loop_iteration_to_row,
)
from trajforge.store.catalog import query, refresh_catalog
from trajforge.store.shards import completed_files
from trajforge.store.loop import (
    loop_files,
    read_loop_iterations,
    read_loop_tasks,
    write_loop_iteration,
    write_loop_shard,
    write_loop_tasks,
)

RUN = "loop_test"


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture(scope="module")
def seeds(domain: RetailDomain) -> list[TaskBlueprint]:
    items = generate_blueprints(domain, GenerationConfig(), "run_loop_seeds", 0, 10)
    return [b for b in items if isinstance(b, TaskBlueprint)][:6]


def _simulate(out: Path, domain: RetailDomain, seeds: list[TaskBlueprint], iterations: int
              ) -> list[LoopIteration]:
    """A loop with random rewards standing in for the policy: everything else is real (pool,
    resynthesis, validation, stores)."""
    rng = random.Random(0)
    skill = {bp.id: rng.random() for bp in seeds}
    pool = TaskPool(seeds, PoolConfig(capacity=8, hopeless_after=2))
    write_loop_shard(out, RUN, 0, blueprints=seeds)
    total = 0
    records = []
    for i in range(iterations):
        outcomes = []
        for bp in pool.active():
            p = skill.setdefault(bp.id, skill.get(bp.provenance.parent_id or "", 0.5))
            for _ in range(4):
                passed = rng.random() < p
                outcomes.append(RolloutOutcome(bp.id, 1.0 if passed else rng.random() * 0.5, passed))
        update = pool.observe(i, outcomes)
        proposed = accepted = 0
        variants: list[TaskBlueprint] = []
        for parent in update.boundary[:2]:
            result = resynthesize(parent, domain, n=2, seed=i)
            proposed += result.proposed
            accepted += len(result.accepted)
            variants += result.accepted
        taken = pool.admit(variants, i + 1)
        admitted = len(taken)
        write_loop_shard(out, RUN, i + 1, blueprints=taken)
        total += len(outcomes)
        record = iteration_record(RUN, pool, update, variants_proposed=proposed,
                                  variants_accepted=accepted, variants_admitted=admitted,
                                  trajectories_total=total, wall_seconds=0.5,
                                  heldout_pass_at_1=None if i == 1 else 0.1 * i)
        assert record.trajectories == len(outcomes) and record.pool_size == len(pool.active())
        assert record.train_success_rate == sum(o.passed for o in outcomes) / len(outcomes)
        write_loop_iteration(out, record)
        write_loop_tasks(out, RUN, i, [s.record(RUN, i) for s in pool.stats()])
        records.append(record)
    return records


def test_loop_rows_reach_the_catalog(tmp_path: Path, domain: RetailDomain,
                                     seeds: list[TaskBlueprint]) -> None:
    out = tmp_path / "out"
    records = _simulate(out, domain, seeds, 3)
    assert read_loop_iterations(out) == records
    refresh_catalog(out)
    cols, rows = query(out, "SELECT iteration, pool_size, boundary_count, variants_accepted, "
                            "trajectories_total, heldout_pass_at_1 FROM loop_iterations "
                            "ORDER BY iteration")
    assert rows == [(r.iteration, r.pool_size, r.boundary_count, r.variants_accepted,
                     r.trajectories_total, r.heldout_pass_at_1) for r in records]
    assert sum(r.boundary_count for r in records) > 0 and sum(r.variants_accepted for r in records) > 0
    # composition is JSON text the catalog can take apart
    _, comp = query(out, "SELECT CAST(json_extract(composition, '$.seed') AS INTEGER) "
                         "FROM loop_iterations ORDER BY iteration")
    assert [c for (c,) in comp] == [r.pool_seed for r in records]
    # per-task rows: one per task held, per iteration; variants carry their parents
    _, tasks = query(out, "SELECT iteration, count(*), count(parent_id) FROM loop_tasks "
                          "GROUP BY iteration ORDER BY iteration")
    stored = read_loop_tasks(out, RUN)
    assert [t[1] for t in tasks] == [sum(s.iteration == i for s in stored) for i in range(3)]
    assert tasks[-1][2] > 0
    # the variants the pool took in are ordinary blueprints, joined to their parents
    _, joined = query(out, "SELECT v.id, v.generator, p.id FROM blueprints v "
                           "JOIN blueprints p ON p.id = v.parent_id ORDER BY v.id")
    admitted = {s.blueprint_id for s in stored if s.origin == "resynthesized"}
    assert {j[0] for j in joined} == admitted and {j[1] for j in joined} == {"resynthesis"}
    _, cross = query(out, "SELECT count(*) FROM loop_tasks t JOIN blueprints b "
                          "ON b.id = t.blueprint_id WHERE t.iteration = 2")
    assert cross == [(len([s for s in stored if s.iteration == 2]),)]


def test_writing_an_iteration_again_replaces_it(tmp_path: Path, domain: RetailDomain,
                                                seeds: list[TaskBlueprint]) -> None:
    out = tmp_path / "out"
    records = _simulate(out, domain, seeds, 2)
    shards = {f: [r["id"] for r in pq.read_table(out / f).to_pylist()]
              for f in completed_files(out, "blueprints", RUN)}
    assert len(shards) == 3 and sum(map(len, shards.values())) > len(seeds)
    again = records[1].model_copy(update={"train_loss": 1.25})
    write_loop_iteration(out, again)
    write_loop_shard(out, RUN, 1, blueprints=seeds[:1])
    assert read_loop_iterations(out, RUN) == [records[0], again]
    assert len(loop_files(out, "iterations")) == 2
    refresh_catalog(out)
    shard_1 = f"blueprints/run={RUN}/part-000000001-000000002.parquet"
    expected = [i for f, ids in shards.items() if f != shard_1 for i in ids] + [seeds[0].id]
    _, rows = query(out, "SELECT id FROM blueprints WHERE run_id = 'loop_test'")
    assert sorted(r[0] for r in rows) == sorted(expected)  # shard 1 replaced, the others kept
    with pytest.raises(StoreError, match="another run or iteration"):
        write_loop_tasks(out, RUN, 5, read_loop_tasks(out, RUN)[:1])
    with pytest.raises(StoreError, match="invalid run id"):
        write_loop_iteration(out, records[0].model_copy(update={"run_id": "../x"}))


def test_empty_folder_gives_typed_loop_views(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refresh_catalog(out)
    assert query(out, "SELECT * FROM loop_iterations") == ([f.name for f in LOOP_ITERATION_SCHEMA], [])
    assert query(out, "SELECT * FROM loop_tasks") == ([f.name for f in LOOP_TASK_SCHEMA], [])


def test_iteration_rows_round_trip() -> None:
    record = LoopIteration(id=LoopIteration.make_id("r", 0), run_id="r", iteration=0, pool_size=3,
                           pool_seed=2, pool_resynthesized=1, composition={"seed": 2, "active": 3},
                           boundary_count=1, saturated_retired=0, hopeless_retired=0,
                           variants_proposed=5, variants_accepted=2, trajectories=12,
                           trajectories_total=12, wall_seconds=1.0)
    assert loop_iteration_from_row(loop_iteration_to_row(record)) == record
    assert record.id != LoopIteration.make_id("r", 1)


def test_plot_writes_a_png(tmp_path: Path, domain: RetailDomain, seeds: list[TaskBlueprint]) -> None:
    records = _simulate(tmp_path / "out", domain, seeds, 3)
    path = plot_loop(records, tmp_path / "plots" / "loop.png")
    assert path is not None
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1100, 715)
    with pytest.raises(ValueError, match="several runs"):
        plot_loop(records + [records[0].model_copy(update={"run_id": "other"})], tmp_path / "x.png")
