"""Shards and manifest: atomic files, torn manifests, resume ranges. Real files, no mocks."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trajforge.errors import StoreError
from trajforge.schemas.arrow import trajectory_from_row, verdict_from_row
from trajforge.store import TABLES, RunStore, ShardRecord, load_rows, write_parquet_atomic
from trajforge.store.shards import file_sha256

RUN = "run_abc123"


def _store(tmp_path: Path, run_id: str = RUN) -> RunStore:
    store = RunStore(tmp_path / "out", run_id)
    store.prepare()
    return store


def test_write_parquet_atomic_leaves_valid_file_and_no_tmp(tmp_path: Path) -> None:
    table = pa.Table.from_pylist([{"x": i} for i in range(5)])
    path = tmp_path / "part.parquet"
    digest = write_parquet_atomic(path, table)
    assert [p.name for p in tmp_path.iterdir()] == ["part.parquet"]
    assert digest == file_sha256(path)
    metadata = pq.read_metadata(path)  # raises if the footer is missing
    assert metadata.num_rows == 5
    assert metadata.row_group(0).column(0).compression == "ZSTD"


def test_write_shard_writes_typed_file_for_every_table(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    record = store.write_shard(0, 3, make_rows(RUN, 0, 3))
    assert set(record.files) == set(TABLES)
    assert record.files["rejections"].rows == 0
    assert record.files["verdicts"].rows == 6
    assert record.files["trajectories"].path == \
        f"trajectories/run={RUN}/part-000000000-000000003.parquet"
    for name, shard_file in record.files.items():
        path = store.out / shard_file.path
        assert pq.read_schema(path).equals(TABLES[name], check_metadata=False)
        assert file_sha256(path) == shard_file.sha256
    assert not list(store.out.rglob("*.tmp"))
    assert store.completed() == [record]


def test_rows_round_trip_to_records(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    rows = make_rows(RUN, 0, 2)
    store.write_shard(0, 2, rows)
    loaded = load_rows(store.out, "trajectories")
    assert [trajectory_from_row(r) for r in loaded] == \
        [trajectory_from_row(r) for r in rows["trajectories"]]
    assert [verdict_from_row(r) for r in load_rows(store.out, "verdicts", RUN)] == \
        [verdict_from_row(r) for r in rows["verdicts"]]
    assert load_rows(store.out, "rejections") == []


def test_rows_that_do_not_fit_the_schema_raise_store_error(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(StoreError, match="verdicts"):
        store.write_shard(0, 1, {"verdicts": [{"id": "v", "reward": "not a float"}]})
    with pytest.raises(StoreError, match="unknown tables"):
        store.write_shard(0, 1, {"nope": []})
    assert store.completed() == []


def test_prepare_removes_leftover_tmp_files(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    store.write_shard(0, 2, make_rows(RUN, 0, 2))
    leftover = store.table_dir("trajectories") / "part-000000002-000000004.parquet.tmp"
    leftover.write_bytes(b"PAR1 half a file")
    run_tmp = store.run_dir / "run.json.tmp"
    run_tmp.write_text("{")
    store.prepare()
    assert not leftover.exists() and not run_tmp.exists()
    assert [(r.start, r.stop) for r in store.completed()] == [(0, 2)]


def test_prepare_unwritable_folder_raises_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create"):
        RunStore(blocker, RUN).prepare()


def test_invalid_run_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="invalid run id"):
        RunStore(tmp_path, "../escape")


def test_torn_manifest_line_is_ignored_then_truncated(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    first = store.write_shard(0, 2, make_rows(RUN, 0, 2))
    with store.manifest_path.open("ab") as f:  # a kill mid-append leaves no newline
        f.write(b'{"start": 2, "stop": 4, "fil')
    assert store.completed() == [first]
    # A line complete but for its newline is not committed either.
    second_json = first.to_json().replace('"start":0', '"start":9')
    store.manifest_path.write_text(first.to_json() + "\n" + second_json)
    assert store.completed() == [first]

    second = store.write_shard(2, 4, make_rows(RUN, 2, 4))
    lines = store.manifest_path.read_text().splitlines()
    assert [ShardRecord.from_json(line) for line in lines] == [first, second]
    assert store.manifest_path.read_text().endswith("\n")
    assert store.completed() == [first, second]


def test_corrupt_complete_line_raises_store_error(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    store.write_shard(0, 2, make_rows(RUN, 0, 2))
    with store.manifest_path.open("a") as f:
        f.write("garbage\n")
    with pytest.raises(StoreError, match="corrupt manifest line"):
        store.completed()


def test_missing_or_changed_files_are_not_completed(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    records = [store.write_shard(lo, hi, make_rows(RUN, lo, hi))
               for lo, hi in [(0, 2), (2, 4), (4, 6)]]
    (store.out / records[0].files["verdicts"].path).unlink()
    changed = store.out / records[1].files["blueprints"].path
    write_parquet_atomic(changed, pa.Table.from_pylist([], schema=TABLES["blueprints"]))
    assert [(r.start, r.stop) for r in store.completed()] == [(4, 6)]
    assert store.pending_ranges(6, 2) == [(0, 2), (2, 4)]
    # Recomputing a bad shard supersedes its old manifest line.
    store.write_shard(2, 4, make_rows(RUN, 2, 4))
    assert [(r.start, r.stop) for r in store.completed()] == [(2, 4), (4, 6)]
    assert len(load_rows(store.out, "blueprints")) == 4


def test_pending_ranges_fresh_run(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.pending_ranges(25, 10) == [(0, 10), (10, 20), (20, 25)]
    assert store.pending_ranges(0, 10) == []
    assert store.pending_ranges(10, 10) == [(0, 10)]


def test_pending_ranges_partial_run(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    store.write_shard(10, 20, make_rows(RUN, 10, 20))
    assert store.pending_ranges(25, 10) == [(0, 10), (20, 25)]
    # Gaps not on the grid are cut at multiples of shard_size.
    store.write_shard(0, 3, make_rows(RUN, 0, 3))
    assert store.pending_ranges(25, 4) == [(3, 4), (4, 8), (8, 10), (20, 24), (24, 25)]


def test_pending_ranges_extended_run(tmp_path: Path, make_rows) -> None:
    store = _store(tmp_path)
    for lo, hi in store.pending_ranges(25, 10):
        store.write_shard(lo, hi, make_rows(RUN, lo, hi))
    assert store.pending_ranges(25, 10) == []
    assert store.pending_ranges(42, 10) == [(25, 30), (30, 40), (40, 42)]
    # Shrinking n never asks for work past n.
    assert store.pending_ranges(15, 10) == []


def test_resumed_run_ends_with_the_same_rows(tmp_path: Path, make_rows) -> None:
    whole = RunStore(tmp_path / "a", RUN)
    whole.prepare()
    for lo, hi in whole.pending_ranges(7, 3):
        whole.write_shard(lo, hi, make_rows(RUN, lo, hi))

    resumed = RunStore(tmp_path / "b", RUN)
    resumed.prepare()
    lo, hi = resumed.pending_ranges(7, 3)[0]
    resumed.write_shard(lo, hi, make_rows(RUN, lo, hi))
    resumed = RunStore(tmp_path / "b", RUN)  # a new process
    resumed.prepare()
    for lo, hi in resumed.pending_ranges(7, 3):
        resumed.write_shard(lo, hi, make_rows(RUN, lo, hi))

    for table in TABLES:
        assert load_rows(whole.out, table) == load_rows(resumed.out, table)


def test_write_run_info_is_atomic_json(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.write_run_info({"name": "demo", "config": "{}", "created_at": "2025-01-01T00:00:00"})
    info = json.loads((store.run_dir / "run.json").read_text())
    assert info["run_id"] == RUN and info["name"] == "demo"
    assert not list(store.run_dir.glob("*.tmp"))
