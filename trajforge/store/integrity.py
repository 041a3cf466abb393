"""Is every committed file still what its manifest line says? Damage and orphans of a dataset.

A committed shard's files are the source of truth for the catalog; a file that is missing or no
longer hashes to its manifest checksum (a torn copy, a flipped byte, a half-restored backup) is
*damaged*. Damage is never hidden: the catalog leaves a damaged file out of its views but
records it, and every command that reads the catalog names it and refuses to go on unless the
caller allows damaged data (``reading_damaged``). The other tables of the same shard stay in:
only the file that fails its checksum is left out.

Hashing every file on every read would cost a full read of the dataset, so a verified file's
*stamp* (size, mtime, ctime, inode: any write, truncate or rename changes the ctime) is kept
next to its checksum in the catalog; a file whose stamp has not moved since it was verified is
not hashed again. A moved or copied folder has new inodes, so it is verified afresh once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from trajforge.errors import DamagedData, StoreError
from trajforge.store.shards import (
    RUNS_DIR,
    TABLES,
    TMP_SUFFIX,
    RunStore,
    ShardFile,
    ShardRecord,
    file_sha256,
    run_ids,
)

# problems a committed file can have
MISSING = "missing"
MISMATCH = "fails its checksum"
UNREADABLE = "unreadable"

_PART = re.compile(r"part-\d{9}-\d{9}\.parquet")
_ALLOW_DAMAGED: ContextVar[bool] = ContextVar("trajforge_allow_damaged", default=False)


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a file looked like when it was last verified against ``sha256``."""

    sha256: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, path: Path, sha256: str) -> Stamp:
        st = path.stat()
        return cls(sha256=sha256, size=st.st_size, mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns,
                   inode=st.st_ino)

    def matches(self, st: os.stat_result) -> bool:
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode) == (
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass(frozen=True, slots=True)
class FileDamage:
    """One committed file that is not what its manifest line says."""

    run_id: str
    start: int
    stop: int
    table: str
    path: str  # relative to the output folder
    problem: str

    @property
    def shard(self) -> str:
        return f"run {self.run_id} shard {self.start}-{self.stop}"

    def describe(self) -> str:
        return f"{self.shard}: {self.table} file {self.path} {self.problem}"


def by_shard(damaged: Iterable[FileDamage]) -> list[tuple[str, str]]:
    """``(shard, "path problem, ...")`` per damaged shard, in shard order: what one warning line
    about a shard names."""
    files: dict[str, list[str]] = {}
    for d in damaged:
        files.setdefault(d.shard, []).append(f"{d.path} {d.problem}")
    return [(shard, ", ".join(files[shard])) for shard in sorted(files)]


@dataclass(frozen=True)
class DatasetCheck:
    """Every committed file of every run checked: the intact ones (with fresh stamps), the
    damaged ones, and the files under the table folders that no manifest line commits."""

    out: Path
    intact: dict[str, list[str]]  # table -> relative paths, run then shard order
    stamps: dict[str, Stamp]  # relative path -> stamp, for the intact files
    damaged: tuple[FileDamage, ...]
    orphans: tuple[str, ...]
    temporaries: tuple[str, ...]
    files_checked: int
    files_hashed: int

    @property
    def ok(self) -> bool:
        return not self.damaged

    def damaged_paths(self) -> frozenset[str]:
        return frozenset(d.path for d in self.damaged)


def committed_records(out: Path, run_id: str) -> list[ShardRecord]:
    """The run's committed shards as its manifest has them (later lines supersede earlier ones
    they overlap), intact or not, sorted by ``start``."""
    return RunStore(out, run_id).committed()


def _check_file(out: Path, shard_file: ShardFile, trusted: Stamp | None) -> tuple[str | None, Stamp | None, bool]:
    """(problem or None, the file's stamp when intact, whether it was hashed)."""
    path = out / shard_file.path
    try:
        st = path.stat()
    except FileNotFoundError:
        return MISSING, None, False
    except OSError as exc:
        return f"{UNREADABLE} ({exc.strerror or exc})", None, False
    if trusted is not None and trusted.sha256 == shard_file.sha256 and trusted.matches(st):
        return None, trusted, False
    try:
        sha = file_sha256(path)
    except FileNotFoundError:
        return MISSING, None, True
    except OSError as exc:
        return f"{UNREADABLE} ({exc.strerror or exc})", None, True
    if sha != shard_file.sha256:
        return MISMATCH, None, True
    return None, Stamp.of(path, sha), True


def check_dataset(out: Path, trusted: Mapping[str, Stamp] | None = None) -> DatasetCheck:
    """Check every committed file of every run under ``out`` against its manifest line; files
    whose ``trusted`` stamp still matches are not hashed again."""
    out = Path(out)
    trusted = trusted or {}
    intact: dict[str, list[str]] = {name: [] for name in TABLES}
    stamps: dict[str, Stamp] = {}
    damaged: list[FileDamage] = []
    committed_paths: set[str] = set()
    checked = hashed = 0
    for rid in run_ids(out):
        for record in committed_records(out, rid):
            for table, shard_file in sorted(record.files.items()):
                if table not in TABLES:
                    continue
                committed_paths.add(shard_file.path)
                problem, stamp, did_hash = _check_file(out, shard_file, trusted.get(shard_file.path))
                checked += 1
                hashed += did_hash
                if problem is None and stamp is not None:
                    intact[table].append(shard_file.path)
                    stamps[shard_file.path] = stamp
                else:
                    damaged.append(FileDamage(rid, record.start, record.stop, table, shard_file.path,
                                              problem or MISMATCH))
    orphans, temporaries = _strays(out, committed_paths)
    return DatasetCheck(out=out, intact=intact, stamps=stamps, damaged=tuple(damaged),
                        orphans=tuple(orphans), temporaries=tuple(temporaries),
                        files_checked=checked, files_hashed=hashed)


def _strays(out: Path, committed: set[str]) -> tuple[list[str], list[str]]:
    """Shard files no manifest line commits (a shard whose line never landed, or one a later
    line superseded with other bounds), and temporaries under the table and run folders."""
    orphans: list[str] = []
    temporaries: list[str] = []
    for table in TABLES:
        root = out / table
        if not root.is_dir():
            continue
        for path in sorted(root.glob("run=*/*")):
            rel = path.relative_to(out).as_posix()
            if path.name.endswith(TMP_SUFFIX):
                temporaries.append(rel)
            elif _PART.fullmatch(path.name) and rel not in committed:
                orphans.append(rel)
    runs = out / RUNS_DIR
    if runs.is_dir():
        temporaries.extend(sorted(p.relative_to(out).as_posix() for p in runs.rglob(f"*{TMP_SUFFIX}")))
    return orphans, temporaries


# --- the read policy ---------------------------------------------------------------------------

def damaged_allowed() -> bool:
    """Whether the reads in progress may go on without the damaged files (``--allow-damaged``)."""
    return _ALLOW_DAMAGED.get()


@contextmanager
def reading_damaged(allowed: bool) -> Iterator[None]:
    """For the duration: reads of a dataset with damaged files leave them out (``allowed``) or
    raise ``DamagedData`` (the default)."""
    token = _ALLOW_DAMAGED.set(allowed)
    try:
        yield
    finally:
        _ALLOW_DAMAGED.reset(token)


def damage_error(out: Path, damaged: tuple[FileDamage, ...] | list[FileDamage]) -> DamagedData:
    """The one-line error for reads of a dataset with damaged files: what, where, and the two
    ways on."""
    shards = sorted({(d.run_id, d.start, d.stop) for d in damaged})
    named = "; ".join(d.describe() for d in damaged[:3])
    more = f"; and {len(damaged) - 3} more file(s)" if len(damaged) > 3 else ""
    return DamagedData(
        f"{len(shards)} damaged shard(s) in {out}: {named}{more}; repair with `trajforge check --out "
        f"{out} --repair`, or pass --allow-damaged to read without them",
        tuple(d.path for d in damaged))


def require_intact(out: Path, check: DatasetCheck) -> None:
    """Raise ``DamagedData`` for damage unless damaged reads are allowed."""
    if check.damaged and not damaged_allowed():
        raise damage_error(out, check.damaged)


def remove_strays(check: DatasetCheck) -> list[str]:
    """Delete the orphans and temporaries a check found (call it holding the build lock, so no
    live build's files are among them). Returns what was removed."""
    removed: list[str] = []
    for rel in (*check.orphans, *check.temporaries):
        try:
            (check.out / rel).unlink()
            removed.append(rel)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(f"cannot remove {check.out / rel}: {exc.strerror or exc}") from exc
    return removed
