"""The DuckDB catalog over real shards: views, counts, empty tables, moved folders, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from trajforge.schemas.runs import RUN_RECORD_SCHEMA
from trajforge.errors import StoreError
from trajforge.store import CATALOG_FILE, TABLES, RunStore, connect, query, refresh_catalog

RUN_A = "run_aaaa"
RUN_B = "run_bbbb"
TRAJECTORY_COLUMNS = [field.name for field in TABLES["trajectories"]]


def _build(out: Path, make_rows, run_id: str, n: int, shard_size: int = 2) -> RunStore:
    store = RunStore(out, run_id)
    store.prepare()
    for lo, hi in store.pending_ranges(n, shard_size):
        store.write_shard(lo, hi, make_rows(run_id, lo, hi, rejections=run_id == RUN_B))
    store.write_run_info({"name": run_id, "config": json.dumps({"n": n}),
                          "created_at": "2025-01-01T00:00:00"})
    return store


def _count(out: Path, view: str) -> int:
    return query(out, f"SELECT count(*) FROM {view}")[1][0][0]


def test_views_count_rows_of_all_runs(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 5)
    _build(out, make_rows, RUN_B, 3)
    assert refresh_catalog(out) == out.resolve() / CATALOG_FILE
    assert not (out / (CATALOG_FILE + ".tmp")).exists()
    assert _count(out, "blueprints") == 8
    assert _count(out, "trajectories") == 8
    assert _count(out, "verdicts") == 16
    assert _count(out, "rejections") == 3
    assert _count(out, "outcomes") == 8
    assert _count(out, "runs") == 2
    columns, rows = query(out, "SELECT run_id, count(*) FROM outcomes GROUP BY 1 ORDER BY 1")
    assert columns == ["run_id", "count_star()"]
    assert rows == [(RUN_A, 5), (RUN_B, 3)]
    columns, _ = query(out, "SELECT * FROM trajectories LIMIT 0")
    assert columns == TRAJECTORY_COLUMNS  # no hive ``run`` column added
    _, rows = query(out, "SELECT name FROM runs ORDER BY run_id")
    assert rows == [(RUN_A,), (RUN_B,)]


def test_join_blueprint_to_verdicts(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 4)
    refresh_catalog(out)
    _, rows = query(out, """
        SELECT b.gen_index, o.passed, t.messages[2].tool_calls[1].name
        FROM blueprints b JOIN outcomes o ON o.blueprint_id = b.id
        JOIN trajectories t ON t.id = o.trajectory_id ORDER BY b.gen_index""")
    assert rows == [(0, True, "cancel_order"), (1, False, "cancel_order"),
                    (2, True, "cancel_order"), (3, False, "cancel_order")]


def test_zero_row_table_has_a_typed_view(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 2)  # RUN_A writes no rejections
    refresh_catalog(out)
    assert _count(out, "rejections") == 0
    with connect(out) as con:
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'rejections'").fetchall())
    assert list(types) == [field.name for field in TABLES["rejections"]]
    assert types["index"] == "BIGINT" and types["reason"] == "VARCHAR"


def test_empty_output_folder_gives_typed_empty_views(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refresh_catalog(out)
    for name in TABLES:
        columns, rows = query(out, f"SELECT * FROM {name}")
        assert columns == [field.name for field in TABLES[name]] and rows == []
    assert query(out, "SELECT * FROM runs") == ([f.name for f in RUN_RECORD_SCHEMA], [])
    assert query(out, "SELECT * FROM outcomes") == (
        ["trajectory_id", "blueprint_id", "run_id", "passed", "reward"], [])


def test_catalog_survives_moving_the_folder(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 3)
    refresh_catalog(out)
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(out, moved)
    assert _count(moved, "trajectories") == 3
    assert _count(moved, "runs") == 1


def test_leftovers_do_not_break_the_views(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    store = _build(out, make_rows, RUN_A, 4)
    # A kill mid-write: a footerless temp file, an uncommitted shard file, a torn manifest line.
    (store.table_dir("verdicts") / "part-000000004-000000006.parquet.tmp").write_bytes(b"PAR1")
    (store.table_dir("verdicts") / "part-000000006-000000008.parquet").write_bytes(b"PAR1")
    with store.manifest_path.open("ab") as f:
        f.write(b'{"start":6,"stop"')
    refresh_catalog(out)
    assert _count(out, "verdicts") == 8
    store.prepare()
    assert not list(out.rglob("*.tmp"))
    refresh_catalog(out)
    assert _count(out, "verdicts") == 8


def test_refresh_picks_up_new_shards_and_keeps_other_tables(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 2)
    refresh_catalog(out)
    with connect(out, read_only=False) as con:
        con.execute("CREATE TABLE annotations AS SELECT 1 AS x")
    _build(out, make_rows, RUN_A, 6)  # the same run, extended
    # A stale temp catalog from a crashed refresh is ignored.
    (out / (CATALOG_FILE + ".tmp")).write_bytes(b"not a database")
    refresh_catalog(out)
    assert _count(out, "trajectories") == 6
    assert query(out, "SELECT x FROM annotations") == (["x"], [(1,)])


def test_catalog_is_readable_by_a_plain_duckdb_client(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 2)
    refresh_catalog(out)
    con = duckdb.connect(str(out / CATALOG_FILE), read_only=True)
    try:
        con.execute(f"SET file_search_path='{out.resolve()}'")
        assert con.execute("SELECT count(*) FROM verdicts").fetchone() == (4,)
    finally:
        con.close()


def test_sql_error_becomes_store_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refresh_catalog(out)
    with pytest.raises(StoreError) as info:
        query(out, "SELECT * FROM no_such_view")
    assert "no_such_view" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(StoreError):
        query(out, "SELEC 1")


def test_missing_catalog_raises_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no catalog at .*trajforge build"):
        connect(tmp_path)
    with pytest.raises(StoreError, match="no catalog"):
        query(tmp_path, "SELECT 1")


def test_unreadable_catalog_is_rebuilt(tmp_path: Path, make_rows) -> None:
    out = tmp_path / "out"
    _build(out, make_rows, RUN_A, 2)
    (out / CATALOG_FILE).write_bytes(b"garbage from a crash")
    refresh_catalog(out)
    assert _count(out, "trajectories") == 2
