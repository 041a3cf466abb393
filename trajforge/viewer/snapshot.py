"""One read-only look at a dataset: its catalog opened read-only, and a per-trajectory index.

Why an index: the list page filters on outcome and failing checks (a join of every trajectory
with its verdicts) and the overview aggregates over all of them; done against the Parquet views
on every request that is a scan of the verdicts and of every message. The index is one
in-memory table (``viewer_index``, a DuckDB temporary table beside the read-only catalog) with
one narrow row per trajectory, built once per snapshot, so pages query a few columns of
100,000 rows in memory. Transcripts, blueprints and search still read the catalog's views.

A build refreshes the catalog by renaming a new file into place; ``Dataset.current`` notices
the new file and opens a new snapshot, so a running viewer shows the new rows.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from trajforge.curation import complexity_bucket
from trajforge.errors import StoreError
from trajforge.store import CATALOG_FILE, connect
from trajforge.store.derived import selection_summaries
from trajforge.store.integrity import reading_damaged

SEARCH_CACHE = 32  # full-text queries whose hits a snapshot keeps (paging a search re-reads none)

# The structure fields complexity_bucket reads (curation.py defines the buckets).
_COMPLEXITY_FIELDS = ("n_intents", "write_count", "n_revisions", "n_redirects")

_INDEX_SQL = """
CREATE TEMP TABLE viewer_index AS
WITH v AS (
    SELECT trajectory_id, bool_or(trajectory_passed) AS passed, max(reward) AS reward,
           coalesce(list("check" ORDER BY "check") FILTER (WHERE NOT passed), []) AS failed_checks
    FROM verdicts GROUP BY trajectory_id),
b AS (
    SELECT id, any_value(persona.style) AS style,
           any_value(json_extract_string(intents, '$[0].kind')) AS intent,
           any_value(structure.n_intents) AS n_intents, any_value(structure.write_count) AS write_count,
           any_value(structure.n_revisions) AS n_revisions, any_value(structure.n_redirects) AS n_redirects,
           any_value(gen_index) AS gen_index
    FROM blueprints GROUP BY id),
s AS (
    SELECT trajectory_id, any_value(decision) AS decision FROM selection
    WHERE list_contains($selections, selection_id) GROUP BY trajectory_id),
t AS (
    SELECT id, blueprint_id, run_id, domain, agent, "user", fault_kind, termination, n_messages, cost_usd,
           len(list_filter(messages, lambda m: m.role = 'user')) AS user_turns,
           coalesce(list_sum(list_transform(list_filter(messages, lambda m: m.role = 'assistant'),
                                            lambda m: coalesce(len(m.tool_calls), 0))), 0) AS tool_calls
    FROM trajectories
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY run_id) = 1)
SELECT row_number() OVER (ORDER BY t.run_id, b.gen_index NULLS LAST, t.blueprint_id, t.agent, t.id) AS ord,
       t.*, v.passed, v.reward, coalesce(v.failed_checks, []) AS failed_checks,
       b.style, b.intent, b.n_intents, b.write_count, b.n_revisions, b.n_redirects, s.decision
FROM t LEFT JOIN v ON v.trajectory_id = t.id LEFT JOIN b ON b.id = t.blueprint_id
LEFT JOIN s ON s.trajectory_id = t.id
"""

_CHECKS_SQL = """
CREATE TEMP TABLE viewer_checks AS
SELECT v."check", i.domain, count(*) AS verdicts, count(*) FILTER (WHERE NOT v.passed) AS failed
FROM verdicts v JOIN viewer_index i ON i.id = v.trajectory_id GROUP BY ALL
"""

_SEARCH_SQL = """
INSERT INTO viewer_search
SELECT DISTINCT $q, id FROM trajectories
WHERE len(list_filter(messages, lambda m: contains(lower(concat_ws(' ', m.content, array_to_string(
    list_transform(m.tool_calls, lambda c: concat_ws(' ', c.name, c.arguments)), ' '))), $q))) > 0
"""


@dataclass(frozen=True)
class CatalogStamp:
    """What identifies one catalog file: a refresh renames a new file into place."""

    inode: int
    mtime_ns: int
    size: int


def catalog_stamp(out: Path) -> CatalogStamp:
    path = Path(out) / CATALOG_FILE
    try:
        st = path.stat()
    except FileNotFoundError:
        raise StoreError(f"no catalog at {path}: run `trajforge build` first") from None
    return CatalogStamp(st.st_ino, st.st_mtime_ns, st.st_size)


class Snapshot:
    """The catalog of ``out`` opened read-only, with ``viewer_index`` and ``viewer_checks``.

    One DuckDB connection, used under a lock (temporary tables belong to one connection, and a
    connection is not safe to share between threads)."""

    def __init__(self, out: Path, allow_damaged: bool = False) -> None:
        self.out = Path(out)
        self.stamp = catalog_stamp(self.out)
        self._lock = threading.Lock()
        self._searches: OrderedDict[str, None] = OrderedDict()
        # where a page reads stored rows: the catalog's views, or what ``prefetch`` copied
        self.tables = {"trajectories": "trajectories", "verdicts": "verdicts", "blueprints": "blueprints"}
        started = time.perf_counter()
        with reading_damaged(allow_damaged):  # damaged shards: left out, or DamagedData
            self._con = connect(self.out, read_only=True)
        try:
            self._build_index()
        except duckdb.Error as exc:
            self._con.close()
            raise StoreError(f"cannot index {self.out / CATALOG_FILE}: {str(exc).splitlines()[0]}") from exc
        except BaseException:
            self._con.close()
            raise
        self.index_seconds = time.perf_counter() - started

    def _build_index(self) -> None:
        latest: dict[str, str] = {}
        for summary in selection_summaries(self.out):  # oldest first: the last one per run wins
            latest[summary["run_id"]] = summary["selection_id"]
        self._con.execute(_INDEX_SQL, {"selections": list(latest.values())})
        self.selection_ids = tuple(latest.values())
        combos = self._con.execute(f"SELECT DISTINCT {', '.join(_COMPLEXITY_FIELDS)} FROM viewer_index "
                                   "WHERE n_intents IS NOT NULL").fetchall()
        self._con.execute("CREATE TEMP TABLE viewer_complexity (n_intents INT, write_count INT, "
                          "n_revisions INT, n_redirects INT, complexity VARCHAR)")
        if combos:
            self._con.executemany("INSERT INTO viewer_complexity VALUES (?, ?, ?, ?, ?)",
                                  [(*c, complexity_bucket(dict(zip(_COMPLEXITY_FIELDS, c, strict=True))))
                                   for c in combos])
        self._con.execute("ALTER TABLE viewer_index ADD COLUMN complexity VARCHAR")
        self._con.execute("UPDATE viewer_index i SET complexity = c.complexity FROM viewer_complexity c "
                          "WHERE " + " AND ".join(f"i.{f} = c.{f}" for f in _COMPLEXITY_FIELDS))
        # point lookups (a transcript, its twin, its blueprint's episodes) use these, not a scan
        self._con.execute("CREATE INDEX viewer_index_id ON viewer_index (id)")
        self._con.execute("CREATE INDEX viewer_index_blueprint ON viewer_index (blueprint_id)")
        self._con.execute(_CHECKS_SQL)
        self._con.execute("CREATE TEMP TABLE viewer_search (q VARCHAR, id VARCHAR)")

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of one read-only statement (bound parameters only: values never become SQL)."""
        with self._lock:
            try:
                return self._con.execute(sql, params).fetchall()
            except duckdb.Error as exc:
                raise StoreError(f"{self.out / CATALOG_FILE}: {str(exc).splitlines()[0]}") from exc

    def dicts(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with self._lock:
            try:
                cursor = self._con.execute(sql, params)
                names = [d[0] for d in cursor.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            except duckdb.Error as exc:
                raise StoreError(f"{self.out / CATALOG_FILE}: {str(exc).splitlines()[0]}") from exc

    def ensure_search(self, text: str) -> str:
        """Index the trajectories whose messages contain ``text`` (any case) into
        ``viewer_search`` under its lower-cased form, which is returned."""
        q = text.lower()
        with self._lock:
            if q in self._searches:
                self._searches.move_to_end(q)
                return q
            if len(self._searches) >= SEARCH_CACHE:
                old, _ = self._searches.popitem(last=False)
                self._con.execute("DELETE FROM viewer_search WHERE q = ?", [old])
            try:
                self._con.execute(_SEARCH_SQL, {"q": q})
            except duckdb.Error as exc:
                raise StoreError(f"{self.out / CATALOG_FILE}: {str(exc).splitlines()[0]}") from exc
            self._searches[q] = None
        return q

    def restrict(self, ids: Sequence[str]) -> None:
        """Name the trajectories a static report holds (``viewer_subset``), for lists that
        show only those."""
        with self._lock:
            self._con.execute("CREATE OR REPLACE TEMP TABLE viewer_subset AS SELECT unnest(?::VARCHAR[]) AS id",
                              [list(ids)])

    def prefetch(self) -> None:
        """Copy the stored rows of the trajectories ``restrict`` named (and their verdicts and
        blueprints) into memory, in one scan each, for a report that renders every one of them
        (a lookup by id scans the id column of every shard)."""
        copies = {
            "trajectories": "SELECT * FROM trajectories WHERE id IN (SELECT id FROM viewer_subset)",
            "verdicts": "SELECT * FROM verdicts WHERE trajectory_id IN (SELECT id FROM viewer_subset)",
            "blueprints": "SELECT * FROM blueprints WHERE id IN (SELECT blueprint_id FROM viewer_index "
                          "WHERE id IN (SELECT id FROM viewer_subset))",
        }
        with self._lock:
            for table, sql in copies.items():
                self._con.execute(f"CREATE OR REPLACE TEMP TABLE viewer_pre_{table} AS {sql}")
                self.tables[table] = f"viewer_pre_{table}"

    def close(self) -> None:
        with self._lock:
            self._con.close()


class Dataset:
    """The dataset folder a viewer shows: its current snapshot, reopened when the catalog file
    is replaced (a build ended) and kept otherwise.

    A request holds the snapshot for its whole length (``lease``), one request at a time: the
    snapshot's queries are serialised by its one connection anyway, and the old snapshot has to
    be closed before the new one opens (DuckDB hands a second connection to the same path the
    database instance already open, which would be the replaced file)."""

    def __init__(self, out: Path, allow_damaged: bool = False) -> None:
        self.out = Path(out)
        self.allow_damaged = allow_damaged
        self._lock = threading.RLock()
        self._snapshot: Snapshot | None = Snapshot(self.out, allow_damaged)

    @contextmanager
    def lease(self) -> Iterator[Snapshot]:
        with self._lock:
            if self._snapshot is None or catalog_stamp(self.out) != self._snapshot.stamp:
                if self._snapshot is not None:
                    self._snapshot.close()
                    self._snapshot = None  # a new one that fails to open is tried again next time
                self._snapshot = Snapshot(self.out, self.allow_damaged)
            yield self._snapshot

    def close(self) -> None:
        with self._lock:
            if self._snapshot is not None:
                self._snapshot.close()
                self._snapshot = None
