"""The DuckDB catalog: views over the committed Parquet shards of every run.

Why views over explicit file lists rather than globs: only manifest-listed shards are committed,
and a glob would also pick up files of a shard whose manifest line never landed.

Paths: the views name each file relative to the dataset folder and resolve it, when a query
runs, against the folder of the catalog file itself (``trajforge_root()``: the parent of the
connection's default ``temp_directory``, which DuckDB derives from the database path), so
``duckdb.connect("elsewhere/data/catalog.duckdb")`` works from any working directory, and the
folder can be moved or copied. A catalog ATTACHed to another database has no such default; there
``SET file_search_path`` to the dataset folder first.

Damage (store/integrity.py): a committed file that is missing or fails its checksum is left out
of the views, and listed in the catalog's ``damaged_files`` table; ``connect`` checks again each
time (hashing only files that changed since they were verified, per ``file_stamps``) and raises
``DamagedData`` unless damaged reads are allowed, so no read quietly returns fewer rows.

Only the process that ends a build refreshes the catalog (a DuckDB file has one writer, and a
writer locks out readers in other processes). It works on a copy and renames it into place, so a
crash mid-refresh leaves the previous catalog, or none; either way ``refresh_catalog`` rebuilds.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.errors import StoreError
from trajforge.schemas.arrow import DIVERSITY_TABLES, VERDICT_SCHEMA
from trajforge.schemas.runs import RUN_RECORD_SCHEMA
from trajforge.store.derived import derived_files
from trajforge.store.evaluations import EVALUATION_SCHEMA, evaluation_files
from trajforge.store.integrity import DatasetCheck, Stamp, check_dataset, require_intact
from trajforge.store.loop import LOOP_TABLES, loop_files
from trajforge.store.runs import run_record_files
from trajforge.store.shards import (
    RUN_INFO_FILE,
    RUNS_DIR,
    TABLES,
    fsync_dir,
    os_reason,
    stale_temporary,
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


# The dataset folder, when a query runs: the catalog's own folder (DuckDB's default temp_directory
# is "<database path>.tmp"), else file_search_path (a catalog ATTACHed to another database).
_OWN_TEMP = r"'\.duckdb(\.[0-9a-f]+-[0-9a-f]+\.tmp)?\.tmp$'"  # "<catalog>[.<pid>-<hex>.tmp].tmp"
ROOT_MACRO = ("CREATE OR REPLACE MACRO trajforge_root() AS CASE "
              f"WHEN regexp_matches(current_setting('temp_directory'), {_OWN_TEMP}) "
              "THEN parse_dirpath(current_setting('temp_directory')) "
              "ELSE coalesce(nullif(current_setting('file_search_path'), ''), '.') END")


def _files_sql(relpaths: list[str]) -> str:
    """A list of files relative to the dataset folder, resolved when the view is read."""
    return f"list_transform({_sql_list(relpaths)}, lambda p: trajforge_root() || '/' || p)"


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


def _table_view_sql(out: Path, table: str, check: DatasetCheck) -> str:
    files = check.intact[table] or [_empty_file(out, table)]
    # hive_partitioning=false: the ``run=<id>`` folders would otherwise add a ``run`` column.
    return (f"SELECT * FROM read_parquet({_files_sql(files)}, union_by_name=true, "
            "hive_partitioning=false)")


def _shard_view_statements(out: Path, check: DatasetCheck, temp: bool = False) -> list[str]:
    """The views over the shard tables (and ``outcomes``, which reads ``verdicts``)."""
    kind = "TEMP VIEW" if temp else "VIEW"
    statements = [f"CREATE OR REPLACE {kind} {name} AS {_table_view_sql(out, name, check)}"
                  for name in TABLES]
    statements.append(f"CREATE OR REPLACE {kind} outcomes AS {OUTCOMES_SQL}")
    return statements


def _runs_view_sql(out: Path) -> str:
    """One row per invocation (``store/runs.py``); a run that has only a ``run.json`` (built
    before invocations were recorded) shows as one row with the invocation columns NULL."""
    records = run_record_files(out)
    with_records = {Path(r).parts[1] for r in records}
    root = out / RUNS_DIR
    legacy = sorted(p.relative_to(out).as_posix() for p in root.glob(f"*/{RUN_INFO_FILE}")
                    if p.is_file() and p.parent.name not in with_records) if root.is_dir() else []
    files = records or [_empty_file(out, "runs", RUN_RECORD_SCHEMA)]
    sql = f"SELECT * FROM read_parquet({_files_sql(files)}, union_by_name=true)"
    if legacy:
        columns = "{'run_id': 'VARCHAR', 'name': 'VARCHAR', 'config': 'VARCHAR', 'created_at': 'VARCHAR'}"
        sql += (f" UNION ALL BY NAME SELECT * FROM read_json({_files_sql(legacy)}, "
                f"columns={columns})")
    return sql


def _view_statements(out: Path, check: DatasetCheck) -> list[str]:
    statements = [ROOT_MACRO, *_shard_view_statements(out, check)]
    for name in DIVERSITY_TABLES:  # embeddings, scores, selection (see store/derived.py)
        files = derived_files(out, name) or [_empty_file(out, name)]
        statements.append(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet("
                          f"{_files_sql(files)}, union_by_name=true, hive_partitioning=false)")
    statements.append(f"CREATE OR REPLACE VIEW runs AS {_runs_view_sql(out)}")
    evaluations = evaluation_files(out) or [_empty_file(out, "evaluations", EVALUATION_SCHEMA)]
    statements.append("CREATE OR REPLACE VIEW evaluations AS SELECT * FROM read_parquet("
                      f"{_files_sql(evaluations)}, union_by_name=true, hive_partitioning=false)")
    verifications = verification_files(out) or [_empty_file(out, "verifications", VERDICT_SCHEMA)]
    statements.append("CREATE OR REPLACE VIEW verifications AS SELECT * FROM read_parquet("
                      f"{_files_sql(verifications)}, union_by_name=true, hive_partitioning=false)")
    for table, schema in LOOP_TABLES.items():  # the loop's per-iteration and per-task rows
        files = loop_files(out, table) or [_empty_file(out, f"loop_{table}", schema)]
        statements.append(f"CREATE OR REPLACE VIEW loop_{table} AS SELECT * FROM read_parquet("
                          f"{_files_sql(files)}, union_by_name=true, hive_partitioning=false)")
    return statements


_STAMPS_DDL = ("CREATE OR REPLACE TABLE file_stamps (path VARCHAR PRIMARY KEY, sha256 VARCHAR, "
               "size BIGINT, mtime_ns BIGINT, ctime_ns BIGINT, inode BIGINT)")
_DAMAGE_DDL = ("CREATE OR REPLACE TABLE damaged_files (run_id VARCHAR, start BIGINT, stop BIGINT, "
               "table_name VARCHAR, path VARCHAR, problem VARCHAR)")


def _write_integrity(con: duckdb.DuckDBPyConnection, check: DatasetCheck) -> None:
    """What the refresh verified (so reads need not hash it again) and what it left out."""
    stamps = [(p, s.sha256, s.size, s.mtime_ns, s.ctime_ns, s.inode) for p, s in check.stamps.items()]
    damaged = [(d.run_id, d.start, d.stop, d.table, d.path, d.problem) for d in check.damaged]
    for ddl, table, rows in ((_STAMPS_DDL, "file_stamps", stamps), (_DAMAGE_DDL, "damaged_files", damaged)):
        con.execute(ddl)
        if rows:
            con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)", rows)


def _read_integrity(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, Stamp], frozenset[str]] | None:
    """The stamps and the damaged paths a catalog recorded (``None`` for a catalog from before
    they were kept, or one that cannot be read)."""
    try:
        stamps = {row[0]: Stamp(sha256=row[1], size=row[2], mtime_ns=row[3], ctime_ns=row[4], inode=row[5])
                  for row in con.execute("SELECT * FROM file_stamps").fetchall()}
        damaged = frozenset(r[0] for r in con.execute("SELECT path FROM damaged_files").fetchall())
    except duckdb.Error:
        return None
    return stamps, damaged


def _stamps_of(path: Path) -> dict[str, Stamp]:
    """The stamps a catalog file recorded, or none."""
    if not path.is_file():
        return {}
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return {}
    try:
        recorded = _read_integrity(con)
    finally:
        con.close()
    return recorded[0] if recorded else {}


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


def _remove_stale_copies(out: Path) -> None:
    """Half-built catalog copies (and their WALs) of refreshes killed part-way."""
    for leftover in out.glob(f"{CATALOG_FILE}.*{_TMP_SUFFIX}*"):
        name = leftover.name.removesuffix(".wal")
        # (a folder of that name is DuckDB's own spill space, "<catalog>.tmp": not ours)
        if leftover.is_file() and name.endswith(_TMP_SUFFIX) and stale_temporary(leftover.with_name(name)):
            _remove(leftover)


@dataclass(frozen=True)
class CatalogRefresh:
    """A refreshed catalog and what the refresh found."""

    path: Path
    check: DatasetCheck


def refresh_catalog(out: Path) -> Path:
    """(Re)create the views ``blueprints``, ``rejections``, ``trajectories``, ``verdicts``,
    ``outcomes``, ``runs`` (one row per build invocation), ``evaluations``, ``verifications``
    (the verdict sets of ``trajforge verify``, store/verifications.py), the diversity
    stage's ``embeddings``, ``scores``, ``selection``, and the loop's ``loop_iterations``,
    ``loop_tasks`` in ``out/catalog.duckdb`` over the committed shards of all runs; damaged
    files are left out and listed in ``damaged_files``. Returns the catalog's path."""
    return refresh_catalog_checked(out).path


def refresh_catalog_checked(out: Path, fresh: bool = False) -> CatalogRefresh:
    """``refresh_catalog``, returning what its integrity check found. ``fresh``: recreate the
    catalog from the manifests alone, not from a copy of the current one (``trajforge catalog
    rebuild``: the current one may be what is broken)."""
    out = Path(out).resolve()
    final = out / CATALOG_FILE
    # unique per process: two refreshes never write one temporary
    tmp = out / f"{CATALOG_FILE}.{os.getpid()}-{secrets.token_hex(4)}{_TMP_SUFFIX}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        _remove_stale_copies(out)
        check = check_dataset(out, {} if fresh else _stamps_of(final))
        if not fresh:
            _start_copy(final, tmp)
        statements = _view_statements(out, check)
        try:
            con = duckdb.connect(str(tmp))
            try:
                for statement in statements:
                    con.execute(statement)
                _write_integrity(con, check)
                con.execute("CHECKPOINT")
            finally:
                con.close()
            # The rebuilt file holds everything; a stale WAL of the old one must not replay onto it.
            _remove(Path(f"{final}.wal"))
            os.replace(tmp, final)
        finally:
            _remove(tmp)
            _remove(Path(f"{tmp}.wal"))
        fsync_dir(out)
    except duckdb.Error as exc:
        raise StoreError(f"cannot build catalog {final}: {_first_line(exc)}") from exc
    except OSError as exc:
        raise StoreError(f"cannot write catalog {final}: {os_reason(exc)}") from exc
    return CatalogRefresh(path=final, check=check)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def connect(out: Path, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """A connection to ``out``'s catalog. Its committed files are checked first (only the ones
    changed since they were last verified are hashed): damaged ones are left out of this
    connection's views, and unless damaged reads are allowed (``integrity.reading_damaged``) it
    raises ``DamagedData`` naming them."""
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
        _exclude_damage(con, Path(out))
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot open catalog {path}: {_first_line(exc)}") from exc
    except BaseException:
        con.close()
        raise
    return con


def _exclude_damage(con: duckdb.DuckDBPyConnection, out: Path) -> None:
    """Check the committed files; where the damage differs from what the catalog left out
    when it was refreshed, this connection gets views over exactly the intact files."""
    recorded = _read_integrity(con)
    stamps, left_out = recorded if recorded is not None else ({}, None)
    check = check_dataset(out, stamps)
    if left_out is None or check.damaged_paths() != left_out:
        # a catalog from before the integrity tables has no root macro either
        con.execute(ROOT_MACRO.replace("MACRO", "TEMP MACRO", 1))
        for statement in _shard_view_statements(out, check, temp=True):
            con.execute(statement)
    require_intact(out, check)


def catalog_check(out: Path) -> DatasetCheck:
    """The dataset's committed files checked, reusing the catalog's stamps when it has them."""
    return check_dataset(Path(out), _stamps_of(Path(out) / CATALOG_FILE))


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
