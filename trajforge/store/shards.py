"""Parquet shards and the per-run manifest: crash-safe writes and exact resume.

Why this shape (DESIGN.md section 6): a Parquet file killed mid-write has no footer and breaks
every glob query over its folder, so each file is written to ``<name>.tmp``, fsynced, renamed
and its directory fsynced. The manifest (``runs/<run_id>/manifest.jsonl``) is the commit
point: a shard counts only once its line, newline included, is on disk and its files still
hash to what the line says. Everything else (leftover temporaries, files of a shard whose
manifest line never landed) is ignored and recomputed.

One process appends to a run's manifest at a time; readers may run alongside it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.errors import StoreError
from trajforge.schemas.arrow import (
    BLUEPRINT_SCHEMA,
    PROPOSAL_SCHEMA,
    REJECTION_SCHEMA,
    TRAJECTORY_SCHEMA,
    VERDICT_SCHEMA,
)

TABLES: dict[str, pa.Schema] = {
    "blueprints": BLUEPRINT_SCHEMA,
    "rejections": REJECTION_SCHEMA,
    "trajectories": TRAJECTORY_SCHEMA,
    "verdicts": VERDICT_SCHEMA,
    "proposals": PROPOSAL_SCHEMA,  # LLM proposer rounds (empty for programmatic generation)
}
# shards committed before a table existed stay valid: these are the ones every shard has
REQUIRED_TABLES = frozenset({"blueprints", "rejections", "trajectories", "verdicts"})

RUNS_DIR = "runs"
MANIFEST_FILE = "manifest.jsonl"
SPEND_FILE = "spend.jsonl"
RUN_INFO_FILE = "run.json"
TMP_SUFFIX = ".tmp"

# Run ids become folder names and DuckDB glob patterns: no separators, quotes or glob chars.
_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_HASH_CHUNK = 1 << 20
_TMP_OWNER = re.compile(r"\.(\d+)-[0-9a-f]+" + re.escape(TMP_SUFFIX) + "$")


# --- low-level durable writes -----------------------------------------------------------------

def fsync_dir(folder: Path) -> None:
    """Make a rename or a new entry in ``folder`` survive a power loss."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _tmp_path(path: Path) -> Path:
    """``part.parquet`` -> ``part.parquet.<pid>-<random>.tmp``: same folder (so rename is
    atomic), a ``*.parquet`` glob never matches it, and no two processes (or two writes in one)
    share a name, so one never replaces or removes another's half-written file."""
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}{TMP_SUFFIX}")


def tmp_owner(path: Path) -> int | None:
    """The pid that wrote a temporary (``None`` for an old-style ``<name>.tmp``)."""
    match = _TMP_OWNER.search(path.name)
    return int(match.group(1)) if match else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has nothing in flight while it prepares
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def stale_temporary(path: Path) -> bool:
    """A temporary whose writer is gone (or unknown): safe to remove."""
    owner = tmp_owner(path)
    return owner is None or not _alive(owner)


def _discard(tmp: Path) -> None:
    try:
        tmp.unlink()
    except OSError:
        pass


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in chunks so big shards do not load whole."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_parquet_atomic(path: Path, table: pa.Table) -> str:
    """Write ``table`` as zstd Parquet at ``path`` so that no reader ever sees a partial file.

    Returns the sha256 hex of the final file, which the manifest records.
    """
    tmp = _tmp_path(path)
    try:
        with tmp.open("wb") as f:
            pq.write_table(table, f, compression="zstd")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)  # a full disk keeps nothing half-written (and gets its space back)
        raise
    fsync_dir(path.parent)
    return file_sha256(path)


def to_table(rows: pa.Table | Iterable[dict[str, Any]], schema: pa.Schema, what: str) -> pa.Table:
    """Rows (dicts) or a ready Arrow table as a table of exactly ``schema``; a ``StoreError``
    naming ``what`` when they do not fit it."""
    try:
        return (rows.cast(schema) if isinstance(rows, pa.Table)
                else pa.Table.from_pylist(list(rows), schema=schema))
    except (pa.ArrowException, TypeError, ValueError, KeyError) as exc:
        raise StoreError(f"rows for {what} do not fit its schema: {exc}") from exc


def write_table_file(path: Path, table: pa.Table) -> str:
    """``write_parquet_atomic`` into a folder made as needed; a ``StoreError`` naming the path
    when it cannot be written. Returns the file's sha256 hex."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_parquet_atomic(path, table)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {os_reason(exc)}") from exc


def os_reason(exc: OSError) -> str:
    """An OS error's cause in words, with its code: "No space left on device (ENOSPC)"."""
    name = errno.errorcode.get(exc.errno or 0)
    reason = exc.strerror or str(exc)
    return f"{reason} ({name})" if name else reason


def write_text_file(path: Path, text: str) -> None:
    """A small text file written atomically into a folder made as needed; a ``StoreError``
    naming the path when it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_text_atomic(path, text)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {os_reason(exc)}") from exc


def _write_text_atomic(path: Path, text: str) -> None:
    """tmp + fsync + rename + dir fsync, for small JSON files."""
    tmp = _tmp_path(path)
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    fsync_dir(path.parent)


# --- manifest records -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ShardFile:
    """One table's file of a shard. ``path`` is POSIX and relative to the output folder, so the
    folder can be moved without rewriting manifests."""

    path: str
    rows: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ShardRecord:
    """A committed shard: source indices ``[start, stop)`` and one file per table."""

    start: int
    stop: int
    files: dict[str, ShardFile]

    def to_json(self) -> str:
        body = {
            "start": self.start,
            "stop": self.stop,
            "files": {name: {"path": f.path, "rows": f.rows, "sha256": f.sha256}
                      for name, f in sorted(self.files.items())},
        }
        return json.dumps(body, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> ShardRecord:
        body = json.loads(line)
        files = {name: ShardFile(path=str(f["path"]), rows=int(f["rows"]), sha256=str(f["sha256"]))
                 for name, f in body["files"].items()}
        return cls(start=int(body["start"]), stop=int(body["stop"]), files=files)


def _read_manifest_lines(manifest: Path) -> list[str]:
    """The committed lines of a manifest. A last line without its newline was torn by a kill
    mid-append and is not committed, so it is left out (never an error)."""
    try:
        data = manifest.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot read manifest {manifest}: {exc.strerror or exc}") from exc
    end = data.rfind(b"\n")
    committed = data[: end + 1] if end >= 0 else b""
    return [line for line in committed.decode("utf-8", errors="replace").splitlines() if line]


def _parse_manifest(manifest: Path) -> Iterator[ShardRecord]:
    for number, line in enumerate(_read_manifest_lines(manifest), start=1):
        try:
            yield ShardRecord.from_json(line)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # A complete line is written in one go with its newline, so a bad one is corruption.
            raise StoreError(f"{manifest}:{number}: corrupt manifest line ({exc})") from exc


def _latest_non_overlapping(records: Iterable[ShardRecord]) -> list[ShardRecord]:
    """Later records supersede earlier ones they overlap (a shard recomputed after its files
    went bad), so no index is ever counted twice. Sorted by ``start``."""
    kept: list[ShardRecord] = []
    for record in records:
        kept = [r for r in kept if r.stop <= record.start or r.start >= record.stop]
        kept.append(record)
    return sorted(kept, key=lambda r: r.start)


def _chunks(start: int, stop: int, size: int) -> Iterator[tuple[int, int]]:
    """Split ``[start, stop)`` at multiples of ``size`` so a resumed run recreates exactly the
    shard boundaries a fresh run would have had."""
    lo = start
    while lo < stop:
        hi = min(stop, (lo // size + 1) * size)
        yield lo, hi
        lo = hi


# --- the run store ----------------------------------------------------------------------------

class RunStore:
    """The files one run writes under an output folder ``out``:

    - ``<table>/run=<run_id>/part-<start:09d>-<stop:09d>.parquet`` for each table in ``TABLES``
    - ``runs/<run_id>/manifest.jsonl`` (committed shards) and ``runs/<run_id>/run.json``
    """

    def __init__(self, out: Path, run_id: str) -> None:
        if not _RUN_ID.fullmatch(run_id):
            raise StoreError(f"invalid run id {run_id!r}: use letters, digits, '_', '.', '-'")
        self.out = Path(out)
        self.run_id = run_id

    # paths

    def table_dir(self, table: str) -> Path:
        return self.out / table / f"run={self.run_id}"

    @property
    def run_dir(self) -> Path:
        return self.out / RUNS_DIR / self.run_id

    @property
    def manifest_path(self) -> Path:
        return self.run_dir / MANIFEST_FILE

    def _folders(self) -> list[Path]:
        return [self.table_dir(name) for name in TABLES] + [self.run_dir]

    def shard_relpath(self, table: str, start: int, stop: int) -> str:
        return f"{table}/run={self.run_id}/part-{start:09d}-{stop:09d}.parquet"

    # lifecycle

    def prepare(self) -> None:
        """Create this run's folders and drop temporaries a killed process left behind (a
        ``.tmp`` is never committed, and removing it keeps the folders clean)."""
        for folder in self._folders():
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create {folder}: {exc.strerror or exc}") from exc
            if not os.access(folder, os.W_OK | os.X_OK):
                raise StoreError(f"cannot write to {folder}: permission denied")
            # the run folder's too: its invocation records (runs/<id>/invocations) are written there
            pattern = folder.rglob if folder == self.run_dir else folder.glob
            for leftover in pattern(f"*{TMP_SUFFIX}"):
                if not stale_temporary(leftover):
                    continue  # a live process is writing it (a worker of this build, or a reader)
                try:
                    leftover.unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise StoreError(f"cannot remove {leftover}: {exc.strerror or exc}") from exc

    def committed(self) -> list[ShardRecord]:
        """The shards the manifest commits, intact or not: later lines supersede earlier ones
        they overlap. Sorted by ``start``. (The catalog reads these and names the damaged.)"""
        return _latest_non_overlapping(_parse_manifest(self.manifest_path))

    def completed(self) -> list[ShardRecord]:
        """Committed shards whose files are all present and unchanged, sorted by ``start``.

        A shard whose file is missing or no longer matches its checksum is not completed, so
        ``pending_ranges`` recomputes it."""
        valid = (r for r in _parse_manifest(self.manifest_path) if self._intact(r))
        return _latest_non_overlapping(valid)

    def _intact(self, record: ShardRecord) -> bool:
        if not REQUIRED_TABLES <= set(record.files) <= set(TABLES):
            return False
        for shard_file in record.files.values():
            path = self.out / shard_file.path
            try:
                if file_sha256(path) != shard_file.sha256:
                    return False
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        return True

    def write_shard(self, start: int, stop: int,
                    rows: dict[str, list[dict[str, Any]]] | dict[str, pa.Table]) -> ShardRecord:
        """Write one file per table (zero rows still gives a typed file), then commit the shard
        by appending its manifest line. Raises ``StoreError`` for an unknown table or rows that
        do not fit the table's schema."""
        record = self.write_shard_files(start, stop, rows)
        self.commit(record)
        return record

    def commit(self, record: ShardRecord) -> None:
        """Commit a shard whose files are written: append its manifest line. Only one process
        commits to a run at a time (the one that planned the build); workers that wrote the
        files hand their ``ShardRecord`` back to it."""
        self._append_manifest(record.to_json())

    def intact(self, record: ShardRecord) -> bool:
        """All of the shard's files are present and hash to what the record says."""
        return self._intact(record)

    def write_shard_files(self, start: int, stop: int,
                          rows: dict[str, list[dict[str, Any]]] | dict[str, pa.Table]) -> ShardRecord:
        """Write one file per table atomically, without committing: the returned record is
        what ``commit`` appends. Any process may do this (a worker writes its own shards)."""
        if not 0 <= start < stop:
            raise StoreError(f"invalid shard range [{start}, {stop})")
        unknown = sorted(set(rows) - set(TABLES))
        if unknown:
            raise StoreError(f"unknown tables {unknown}; expected {sorted(TABLES)}")
        files: dict[str, ShardFile] = {}
        for name, schema in TABLES.items():
            table_rows = rows.get(name, [])
            # workers may hand over ready Arrow tables (cheap to pickle, built in parallel)
            table = to_table(table_rows, schema, f"table {name!r}")
            relpath = self.shard_relpath(name, start, stop)
            sha = write_table_file(self.out / relpath, table)
            files[name] = ShardFile(path=relpath, rows=table.num_rows, sha256=sha)
        return ShardRecord(start=start, stop=stop, files=files)

    def _append_manifest(self, line: str) -> None:
        self._append_line(self.manifest_path, line)

    @property
    def spend_path(self) -> Path:
        return self.run_dir / SPEND_FILE

    def record_spend(self, start: int, stop: int, cost_usd: float, discarded_usd: float,
                     unpriced_calls: int) -> None:
        """Append what model calls cost for the shard ``[start, stop)``: the cost of the
        committed trajectories and of work dropped because the budget ran out mid-shard."""
        self._append_line(self.spend_path, json.dumps(
            {"start": start, "stop": stop, "cost_usd": cost_usd, "discarded_usd": discarded_usd,
             "unpriced_calls": unpriced_calls}, sort_keys=True))

    def spent_usd(self) -> float:
        """What this run has spent on model calls so far, over every invocation."""
        total = 0.0
        for number, line in enumerate(_read_manifest_lines(self.spend_path), start=1):
            try:
                entry = json.loads(line)
                total += float(entry["cost_usd"]) + float(entry["discarded_usd"])
            except (ValueError, KeyError, TypeError) as exc:
                raise StoreError(f"{self.spend_path}:{number}: corrupt spend line ({exc})") from exc
        return total

    def _append_line(self, manifest: Path, line: str) -> None:
        """Append one committed line. A torn tail from an earlier kill is cut off first, so
        the new line starts on a line of its own."""
        try:
            manifest.parent.mkdir(parents=True, exist_ok=True)
            created = not manifest.exists()
            with manifest.open("a+b", buffering=0) as f:  # unbuffered: a failed write is undone here
                _truncate_torn_tail(f)
                end = f.seek(0, os.SEEK_END)
                try:
                    data = line.encode("utf-8") + b"\n"
                    if f.write(data) != len(data):
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    os.fsync(f.fileno())
                except OSError:
                    f.truncate(end)  # a full disk leaves no torn line behind
                    raise
            if created:
                fsync_dir(manifest.parent)
        except OSError as exc:
            raise StoreError(f"cannot append to {manifest}: {os_reason(exc)}") from exc

    def write_run_info(self, info: dict[str, Any]) -> None:
        """Write ``runs/<run_id>/run.json`` atomically; ``run_id`` is filled in when absent.
        The catalog's ``runs`` view reads these files."""
        body = {"run_id": self.run_id, **info}
        path = self.run_dir / RUN_INFO_FILE
        try:
            # created_at is when the run was first created; later invocations keep it
            previous = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(previous, dict) and previous.get("created_at"):
                body["created_at"] = previous["created_at"]
        except (OSError, ValueError):
            pass
        try:
            text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"run info is not JSON-able: {exc}") from exc
        write_text_file(path, text + "\n")

    def pending_ranges(self, n: int, shard_size: int) -> list[tuple[int, int]]:
        """The ranges of ``[0, n)`` no completed shard covers, cut at multiples of
        ``shard_size``: ``[0,s), [s,2s), ...`` for a fresh run, exactly the gaps for a resumed
        one, and only the new tail when ``n`` grew."""
        if n < 0 or shard_size < 1:
            raise StoreError(f"invalid n={n} or shard_size={shard_size}")
        pending: list[tuple[int, int]] = []
        cursor = 0
        for record in self.completed():
            if record.start >= n:
                break
            if record.start > cursor:
                pending.extend(_chunks(cursor, record.start, shard_size))
            cursor = max(cursor, record.stop)
        if cursor < n:
            pending.extend(_chunks(cursor, n, shard_size))
        return pending


def _truncate_torn_tail(f: Any) -> None:
    """Cut a manifest opened for append back to its last newline (a kill mid-append leaves a
    partial last line). Works on the open handle so no second open races with it."""
    size = f.seek(0, os.SEEK_END)
    if size == 0:
        return
    fd = f.fileno()
    if os.pread(fd, 1, size - 1) == b"\n":
        return
    keep = 0
    block = 1 << 16
    pos = size
    while pos > 0:
        lo = max(0, pos - block)
        chunk = os.pread(fd, pos - lo, lo)
        idx = chunk.rfind(b"\n")
        if idx >= 0:
            keep = lo + idx + 1
            break
        pos = lo
    f.truncate(keep)
    f.seek(keep)


# --- reading ----------------------------------------------------------------------------------

def run_ids(out: Path) -> list[str]:
    """Runs that have a manifest under ``out``, sorted."""
    root = Path(out) / RUNS_DIR
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob(f"*/{MANIFEST_FILE}") if p.is_file())


def completed_files(out: Path, table: str, run_id: str | None = None) -> list[str]:
    """Relative paths of ``table``'s files in completed shards (of one run, or all runs)."""
    if table not in TABLES:
        raise StoreError(f"unknown table {table!r}; expected one of {sorted(TABLES)}")
    ids = [run_id] if run_id is not None else run_ids(out)
    return [record.files[table].path
            for rid in ids
            for record in RunStore(out, rid).completed() if table in record.files]


def load_rows(out: Path, table: str, run_id: str | None = None) -> list[dict[str, Any]]:
    """Rows of ``table`` from the manifest-listed files, in run then shard order. A small
    convenience for tests and tools; the catalog is the way to query at scale."""
    rows: list[dict[str, Any]] = []
    for relpath in completed_files(out, table, run_id):
        rows.extend(pq.read_table(Path(out) / relpath, schema=TABLES[table]).to_pylist())
    return rows
