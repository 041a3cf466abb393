"""The DuckDB catalog: views over the committed Parquet shards of every run.

Why views over explicit file lists rather than globs: only manifest-listed shards are committed,
and a glob would also pick up files of a shard whose manifest line never landed. Paths are
relative and resolved through ``file_search_path``, so the output folder can be moved.

Only the process that ends a build refreshes the catalog (a DuckDB file has one writer, and a
writer locks out readers in other processes). It works on a copy and renames it into place, so a
crash mid-refresh leaves the previous catalog, or none; either way ``refresh_catalog`` rebuilds.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.errors import StoreError
from trajforge.schemas.arrow import DIVERSITY_TABLES, VERDICT_SCHEMA
from trajforge.schemas.runs import RUN_RECORD_SCHEMA
from trajforge.store.derived import derived_files
from trajforge.store.evaluations import EVALUATION_SCHEMA, evaluation_files
from trajforge.store.loop import LOOP_TABLES, loop_files
from trajforge.store.runs import run_record_files
from trajforge.store.shards import (
    RUN_INFO_FILE,
    RUNS_DIR,
    TABLES,
    completed_files,
    fsync_dir,
    write_parquet_atomic,
)
from trajforge.store.verifications import verification_files

CATALOG_FILE = "catalog.duckdb"
EMPTY_DIR = "_empty"
_TMP_SUFFIX = ".tmp"

OUTCOMES_SQL = (
    "SELECT DISTINCT trajectory_id, blueprint_id, run_id, trajectory_passed AS passed, reward "
    "FROM verdicts"
)
def _sql_str(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _sql_list(items: list[str]) -> str:
    return "[" + ", ".join(_sql_str(i) for i in items) + "]"


def _set_search_path(con: duckdb.DuckDBPyConnection, out: Path) -> None:
    con.execute(f"SET file_search_path={_sql_str(str(Path(out).resolve()))}")


def _empty_file(out: Path, table: str, schema: pa.Schema | None = None) -> str:
    """A zero-row file with ``table``'s schema, so a table no run has written still has a view
    with the right columns. Returns its relative path."""
    relpath = f"{EMPTY_DIR}/{table}.parquet"
    path = out / relpath
    if schema is None:
        schema = TABLES[table] if table in TABLES else DIVERSITY_TABLES[table]
    if not path.exists() or _schema_of(path) != schema:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(path, pa.Table.from_pylist([], schema=schema))
    return relpath


def _schema_of(path: Path) -> pa.Schema | None:
    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowException):
        return None


def _table_view_sql(out: Path, table: str) -> str:
    files = completed_files(out, table) or [_empty_file(out, table)]
    # hive_partitioning=false: the ``run=<id>`` folders would otherwise add a ``run`` column.
    return (f"SELECT * FROM read_parquet({_sql_list(files)}, union_by_name=true, "
            "hive_partitioning=false)")


def _runs_view_sql(out: Path) -> str:
    """One row per invocation (``store/runs.py``); a run that has only a ``run.json`` (built
    before invocations were recorded) shows as one row with the invocation columns NULL."""
    records = run_record_files(out)
    with_records = {Path(r).parts[1] for r in records}
    root = out / RUNS_DIR
    legacy = sorted(p.relative_to(out).as_posix() for p in root.glob(f"*/{RUN_INFO_FILE}")
                    if p.is_file() and p.parent.name not in with_records) if root.is_dir() else []
    files = records or [_empty_file(out, "runs", RUN_RECORD_SCHEMA)]
    sql = f"SELECT * FROM read_parquet({_sql_list(files)}, union_by_name=true)"
    if legacy:
        columns = "{'run_id': 'VARCHAR', 'name': 'VARCHAR', 'config': 'VARCHAR', 'created_at': 'VARCHAR'}"
        sql += (f" UNION ALL BY NAME SELECT * FROM read_json({_sql_list(legacy)}, "
                f"columns={columns})")
    return sql


def _view_statements(out: Path) -> list[str]:
    statements = [f"CREATE OR REPLACE VIEW {name} AS {_table_view_sql(out, name)}"
                  for name in TABLES]
    for name in DIVERSITY_TABLES:  # embeddings, scores, selection (see store/derived.py)
        files = derived_files(out, name) or [_empty_file(out, name)]
        statements.append(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet("
                          f"{_sql_list(files)}, union_by_name=true, hive_partitioning=false)")
    statements.append(f"CREATE OR REPLACE VIEW outcomes AS {OUTCOMES_SQL}")
    statements.append(f"CREATE OR REPLACE VIEW runs AS {_runs_view_sql(out)}")
    evaluations = evaluation_files(out) or [_empty_file(out, "evaluations", EVALUATION_SCHEMA)]
    statements.append("CREATE OR REPLACE VIEW evaluations AS SELECT * FROM read_parquet("
                      f"{_sql_list(evaluations)}, union_by_name=true, hive_partitioning=false)")
    verifications = verification_files(out) or [_empty_file(out, "verifications", VERDICT_SCHEMA)]
    statements.append("CREATE OR REPLACE VIEW verifications AS SELECT * FROM read_parquet("
                      f"{_sql_list(verifications)}, union_by_name=true, hive_partitioning=false)")
    for table, schema in LOOP_TABLES.items():  # the loop's per-iteration and per-task rows
        files = loop_files(out, table) or [_empty_file(out, f"loop_{table}", schema)]
        statements.append(f"CREATE OR REPLACE VIEW loop_{table} AS SELECT * FROM read_parquet("
                          f"{_sql_list(files)}, union_by_name=true, hive_partitioning=false)")
    return statements


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _start_copy(final: Path, tmp: Path) -> None:
    """Begin from a copy of the current catalog so small tables other stages keep there
    survive a refresh; a copy that DuckDB cannot open is dropped and the build starts empty."""
    for leftover in (tmp, Path(f"{tmp}.wal")):
        _remove(leftover)
    if not final.exists():
        return
    shutil.copyfile(final, tmp)
    wal = Path(f"{final}.wal")
    if wal.exists():
        shutil.copyfile(wal, Path(f"{tmp}.wal"))
    try:
        duckdb.connect(str(tmp)).close()
    except duckdb.Error:
        _remove(tmp)
        _remove(Path(f"{tmp}.wal"))


def refresh_catalog(out: Path) -> Path:
    """(Re)create the views ``blueprints``, ``rejections``, ``trajectories``, ``verdicts``,
    ``outcomes``, ``runs`` (one row per build invocation), ``evaluations``, ``verifications``
    (the verdict sets of ``trajforge verify``, store/verifications.py), the diversity
    stage's ``embeddings``, ``scores``, ``selection``, and the loop's ``loop_iterations``,
    ``loop_tasks`` in ``out/catalog.duckdb`` over the committed shards of all runs.
    Returns the catalog's path."""
    out = Path(out).resolve()
    final = out / CATALOG_FILE
    tmp = out / (CATALOG_FILE + _TMP_SUFFIX)
    try:
        out.mkdir(parents=True, exist_ok=True)
        _start_copy(final, tmp)
        statements = _view_statements(out)
        con = duckdb.connect(str(tmp))
        try:
            _set_search_path(con, out)
            for statement in statements:
                con.execute(statement)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        # The rebuilt file holds everything; a stale WAL of the old one must not replay onto it.
        _remove(Path(f"{final}.wal"))
        os.replace(tmp, final)
        fsync_dir(out)
    except duckdb.Error as exc:
        raise StoreError(f"cannot build catalog {final}: {_first_line(exc)}") from exc
    except OSError as exc:
        raise StoreError(f"cannot write catalog {final}: {exc.strerror or exc}") from exc
    return final


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def connect(out: Path, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """A connection to ``out``'s catalog with relative shard paths resolved against ``out``."""
    path = Path(out) / CATALOG_FILE
    if not path.is_file():
        raise StoreError(f"no catalog at {path}: run `trajforge build` first")
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise StoreError(f"cannot open catalog {path}: {_first_line(exc)}") from exc
    try:
        _set_search_path(con, Path(out))
        con.execute("SET enable_progress_bar = false")  # no bar in CLI output on long queries
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot open catalog {path}: {_first_line(exc)}") from exc
    return con


def query(out: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Run one SQL statement read-only against the catalog: ``(columns, rows)``."""
    con = connect(out, read_only=True)
    try:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        rows = cursor.fetchall() if cursor.description else []
    except duckdb.Error as exc:
        raise StoreError(_first_line(exc)) from exc
    finally:
        con.close()
    return columns, rows
