"""Write exports from a catalog to a folder in the Hugging Face Hub layout.

```
<to>/README.md                                   the dataset card (trajforge.store.card)
<to>/<format>/<split>-00000-of-00002.parquet     Parquet shards with embedded Features
<to>/openai/<split>.jsonl                        OpenAI fine-tuning files (same rows)
<to>/plots/*.png                                 the card's plots
<to>/trajforge_export.json                       what was exported: counts, splits, sources
```

Trajectories are read from the catalog in blueprint order, one blueprint at a time, and each
(format, split) buffers at most ``shard_rows`` records before a shard is written, so memory does
not grow with the dataset. Shards are written under temporary names and renamed to their
final ``-of-N`` names at the end. The folder is rebuilt from scratch on every export; a folder
that is not empty and was not made by an export is refused rather than overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from trajforge import __version__
from trajforge.errors import StoreError
from trajforge.store.catalog import connect
from trajforge.store.exports import (
    Judged,
    Row,
    openai_record,
    preference_records,
    reference_trajectory,
    rl_task_record,
    sft_record,
    sharegpt_record,
)
from trajforge.store.features import EXPORT_FORMATS, ExportFormat, rows_to_table, to_arrow_rows
from trajforge.store.splits import (
    SPLITS,
    NearDuplicate,
    Split,
    SplitConfig,
    assign_splits,
    contamination,
    families,
)

EXPORT_INFO_FILE = "trajforge_export.json"
DEFAULT_SHARD_ROWS = 2000
_BLUEPRINTS_PER_SCAN = 1000  # trajectories are read (and sorted) this many blueprints at a time
_PARTIAL = ".partial"


@dataclass
class ExportSummary:
    """What an export wrote: rows per format and split, files, and the split facts."""

    formats: tuple[ExportFormat, ...]
    run_ids: tuple[str, ...]
    split_config: SplitConfig
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    files: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    blueprints_per_split: dict[str, int] = field(default_factory=dict)
    families_per_split: dict[str, int] = field(default_factory=dict)
    contamination: list[NearDuplicate] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    selection: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "trajforge_version": __version__,
            "formats": list(self.formats),
            "run_ids": list(self.run_ids),
            "split_config": self.split_config.model_dump(mode="json"),
            "rows": self.rows,
            "files": self.files,
            "blueprints_per_split": self.blueprints_per_split,
            "families_per_split": self.families_per_split,
            "contamination": [{"test_blueprint": d.test_id, "train_blueprint": d.train_id,
                               "jaccard": round(d.similarity, 4)} for d in self.contamination],
            "skipped": self.skipped,
            "diversity_selection_applied": self.selection,
        }


# --- reading the catalog ----------------------------------------------------------------------

def relation_columns(con: duckdb.DuckDBPyConnection, name: str) -> set[str]:
    rows = con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                       [name]).fetchall()
    return {r[0] for r in rows}


def selected_trajectories(con: duckdb.DuckDBPyConnection) -> set[str] | None:
    """Ids a diversity selection kept, when the catalog has one (the ``selection`` view, with
    ``trajectory_id`` and a boolean ``selected``). ``None`` when there is no selection."""
    # the diversity stage's ``selection`` view (store/derived.py); an empty view: no selection ran
    if not {"trajectory_id", "selected"} <= relation_columns(con, "selection"):
        return None
    (selected,) = con.execute("SELECT count(*) FROM selection").fetchone() or (0,)
    if not selected:
        return None
    return {r[0] for r in con.execute("SELECT trajectory_id FROM selection WHERE selected").fetchall()}


def resolve_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None) -> tuple[str, ...]:
    known = sorted(r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM blueprints WHERE run_id IS NOT NULL").fetchall())
    if not run_ids:
        return tuple(known)
    unknown = [r for r in run_ids if r not in known]
    if unknown:
        raise StoreError(f"--run: no run {unknown[0]!r} in the catalog (runs: {', '.join(known) or 'none'})")
    return tuple(sorted(set(run_ids)))


def _dicts(cursor: duckdb.DuckDBPyConnection, batch: int = 500) -> Iterator[dict[str, Any]]:
    columns = [d[0] for d in cursor.description]
    while rows := cursor.fetchmany(batch):
        for row in rows:
            yield dict(zip(columns, row, strict=True))


def _blueprints(con: duckdb.DuckDBPyConnection, runs: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    cursor = con.execute("SELECT * FROM blueprints WHERE list_contains(?, run_id) ORDER BY id",
                         [list(runs)])
    out: dict[str, dict[str, Any]] = {}
    for row in _dicts(cursor):
        out.setdefault(row["id"], row)  # the same blueprint in two runs is one task
    return out


def _judged_by_blueprint(con: duckdb.DuckDBPyConnection, runs: tuple[str, ...],
                         tools: dict[str, list[dict[str, Any]]] | None = None,
                         ) -> Iterator[tuple[str, list[Judged]]]:
    """Each blueprint's trajectories with their outcome, in blueprint id order.

    Sorting every trajectory at once holds them all in memory, so they are read in ranges of
    ``_BLUEPRINTS_PER_SCAN`` blueprint ids, each range one sorted scan; the order is the same
    whatever the range size. ``tools`` caches parsed tool lists by their JSON text, so the rows
    of a domain share one list (parsed and encoded once)."""
    ids = [r[0] for r in con.execute("SELECT DISTINCT blueprint_id FROM trajectories "
                                     "WHERE list_contains(?, run_id) ORDER BY 1", [list(runs)]).fetchall()]
    for start in range(0, len(ids), _BLUEPRINTS_PER_SCAN):
        lo, hi = ids[start], ids[min(start + _BLUEPRINTS_PER_SCAN, len(ids)) - 1]
        cursor = con.execute(
            """
            WITH t AS (SELECT * FROM trajectories
                       WHERE list_contains($runs, run_id) AND blueprint_id BETWEEN $lo AND $hi),
            v AS (
              SELECT trajectory_id, bool_and(passed) AS passed,
                     list("check" ORDER BY "check") FILTER (WHERE NOT passed) AS failed
              FROM verdicts WHERE list_contains($runs, run_id) AND blueprint_id BETWEEN $lo AND $hi
              GROUP BY 1)
            SELECT t.*, coalesce(v.passed, false) AS passed__, coalesce(v.failed, []) AS failed__
            FROM t LEFT JOIN v ON v.trajectory_id = t.id
            ORDER BY t.blueprint_id, t.id
            """, {"runs": list(runs), "lo": lo, "hi": hi})
        current: str | None = None
        group: list[Judged] = []
        for row in _dicts(cursor):
            passed, failed = row.pop("passed__"), row.pop("failed__")
            if tools is not None and isinstance(row["tools"], str):
                parsed = tools.get(row["tools"])
                if parsed is None:
                    parsed = tools[row["tools"]] = json.loads(row["tools"])
                row["tools"] = parsed
            if row["blueprint_id"] != current and group:
                yield current, group  # type: ignore[misc]
                group = []
            current = row["blueprint_id"]
            group.append(Judged(row, bool(passed), tuple(failed or ())))
        if group and current is not None:
            yield current, group


# --- writing shards ---------------------------------------------------------------------------

class _ShardSink:
    """Buffers one (format, split)'s records, encoded at once (JSON text is far smaller than
    the Python objects), and writes numbered shards."""

    def __init__(self, folder: Path, fmt: ExportFormat, split: Split, shard_rows: int,
                 tool_cache: dict[int, tuple[Any, str]]) -> None:
        self.folder, self.fmt, self.split, self.shard_rows = folder, fmt, split, shard_rows
        self.tool_cache = tool_cache
        self.buffer: list[dict[str, Any]] = []
        self.parts: list[Path] = []
        self.rows = 0

    def add(self, record: dict[str, Any]) -> None:
        self.buffer.extend(to_arrow_rows(self.fmt, [record], self.tool_cache))
        self.rows += 1
        if len(self.buffer) >= self.shard_rows:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.split}-{len(self.parts):05d}{_PARTIAL}"
        pq.write_table(rows_to_table(self.fmt, self.buffer), path, compression="zstd")
        self.parts.append(path)
        self.buffer = []

    def close(self) -> list[str]:
        """Final names (relative to the export folder's parent format folder's parent)."""
        self.flush()
        names = []
        for i, part in enumerate(self.parts):
            final = part.with_name(f"{self.split}-{i:05d}-of-{len(self.parts):05d}.parquet")
            os.replace(part, final)
            names.append(f"{self.fmt}/{final.name}")
        return names


def _prepare_folder(to: Path) -> None:
    if to.exists() and not to.is_dir():
        raise StoreError(f"--to {to}: exists and is not a folder")
    if to.is_dir() and any(to.iterdir()):
        if not (to / EXPORT_INFO_FILE).is_file():
            raise StoreError(f"--to {to}: folder is not empty and holds no earlier export; "
                             "choose an empty or new folder")
        shutil.rmtree(to)
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"--to {to}: cannot create folder ({exc.strerror or exc})") from exc


def _write_jsonl(folder: Path, split: Split, parquet_files: list[Path]) -> None:
    """The OpenAI JSONL next to the Parquet shards: the same rows, decoded."""
    from trajforge.store.features import FEATURES

    json_columns = [n for n, f in FEATURES["openai"].items() if f.get("_type") == "List"]
    with (folder / f"{split}.jsonl").open("w", encoding="utf-8") as f:
        for file in parquet_files:
            for row in pq.read_table(file).to_pylist():
                for name in json_columns:
                    row[name] = [json.loads(v) for v in row[name]]
                f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


# --- the formats ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BlueprintGroup:
    """One blueprint's trajectories, as every format's rows are built from them."""

    blueprint: Row
    family: str
    judged: list[Judged]  # all of them, in id order
    accepted: list[Judged]  # those that passed and that a diversity selection (if any) kept


# a format's rows for one blueprint, and how many rows it had to leave out
RowBuilder = Callable[[BlueprintGroup], tuple[list[dict[str, Any]], int]]


@dataclass(frozen=True)
class FormatSpec:
    """How one export format is made: its rows per blueprint, and (optionally) files written
    next to a split's finished Parquet shards, from them: ``(folder, split, shards)``."""

    rows: RowBuilder
    companion: Callable[[Path, Split, list[Path]], None] | None = None


def _each_accepted(record: Callable[[Row], dict[str, Any] | None]) -> RowBuilder:
    """One row per accepted trajectory; one the format cannot hold (``None``) is left out."""

    def rows(group: BlueprintGroup) -> tuple[list[dict[str, Any]], int]:
        built = [record(j.row) for j in group.accepted]
        kept = [r for r in built if r is not None]
        return kept, len(built) - len(kept)

    return rows


def _preference_rows(group: BlueprintGroup) -> tuple[list[dict[str, Any]], int]:
    """Chosen/rejected pairs among all the blueprint's trajectories; a failing one that found
    no passing partner it shares a prefix with is left out (when there is a passing one)."""
    failing = sum(not j.passed for j in group.judged)
    pairs = preference_records(group.judged)
    if failing and any(j.passed for j in group.judged) and len(pairs) < failing:
        return pairs, failing - len(pairs)
    return pairs, 0


def _rl_task_rows(group: BlueprintGroup) -> tuple[list[dict[str, Any]], int]:
    reference = reference_trajectory([j.row for j in group.judged])
    if reference is None:
        return [], 0
    return [rl_task_record(group.blueprint, reference, group.family)], 0


# every export format, so adding one is one entry here (and its Features in store/features.py)
FORMATS: dict[ExportFormat, FormatSpec] = {
    "sft": FormatSpec(_each_accepted(sft_record)),
    "preferences": FormatSpec(_preference_rows),
    "sharegpt": FormatSpec(_each_accepted(sharegpt_record)),
    "openai": FormatSpec(_each_accepted(openai_record), companion=_write_jsonl),
    "rl_tasks": FormatSpec(_rl_task_rows),
}


def write_export(out: Path, to: Path, formats: Sequence[ExportFormat] = EXPORT_FORMATS,
                 split_config: SplitConfig | None = None, run_ids: Sequence[str] | None = None,
                 shard_rows: int = DEFAULT_SHARD_ROWS) -> ExportSummary:
    """Export the catalog at ``out`` to ``to``: data shards and ``trajforge_export.json``.
    (The card is added by ``trajforge.store.card.write_card``.)"""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise StoreError(f"--format: unknown format {unknown[0]!r} (one of {', '.join(FORMATS)}, all)")
    split_config = split_config or SplitConfig()
    to = Path(to)
    con = connect(out, read_only=True)
    try:
        con.execute("SET enable_progress_bar = false")  # DuckDB would draw on stdout
        runs = resolve_runs(con, run_ids)
        if not runs:
            raise StoreError(f"{out}: the catalog holds no blueprints to export")
        _prepare_folder(to)
        summary = ExportSummary(formats=tuple(formats), run_ids=runs, split_config=split_config)
        blueprints = _blueprints(con, runs)
        parents = {bp: row["parent_id"] for bp, row in blueprints.items()}
        family = families(parents)
        split = assign_splits(parents, split_config)
        selected = selected_trajectories(con)
        summary.selection = selected is not None
        tool_lists: dict[str, list[dict[str, Any]]] = {}
        tool_cache: dict[int, tuple[Any, str]] = {}
        sinks = {(fmt, s): _ShardSink(to / fmt, fmt, s, shard_rows, tool_cache)
                 for fmt in formats for s in SPLITS}
        skipped: dict[str, int] = {}
        seen_blueprints: set[str] = set()
        chosen = list(dict.fromkeys(formats))  # each format once, however often it was named
        for blueprint_id, judged in _judged_by_blueprint(con, runs, tool_lists):
            if blueprint_id not in blueprints:
                continue
            seen_blueprints.add(blueprint_id)
            group = BlueprintGroup(
                blueprints[blueprint_id], family[blueprint_id], judged,
                [j for j in judged if j.passed and (selected is None or j.row["id"] in selected)])
            for fmt in chosen:
                rows, left_out = FORMATS[fmt].rows(group)
                for row in rows:
                    sinks[fmt, split[blueprint_id]].add(row)
                if left_out:
                    skipped[fmt] = skipped.get(fmt, 0) + left_out
        for (fmt, s), sink in sinks.items():
            names = sink.close()
            if names:
                summary.files.setdefault(fmt, {})[s] = names
                summary.rows.setdefault(fmt, {})[s] = sink.rows
        for fmt in chosen:
            companion, written = FORMATS[fmt].companion, summary.files.get(fmt, {})
            for s in SPLITS:
                if companion is not None and s in written:
                    companion(to / fmt, s, [to / n for n in written[s]])
        summary.skipped = skipped
        in_export = {bp: split[bp] for bp in seen_blueprints}
        summary.blueprints_per_split = {s: sum(v == s for v in in_export.values()) for s in SPLITS}
        summary.families_per_split = {
            s: len({family[bp] for bp, v in in_export.items() if v == s}) for s in SPLITS}
        goals = {bp: blueprints[bp]["goal"] for bp in seen_blueprints}
        summary.contamination = contamination(goals, in_export, split_config.near_duplicate_threshold)
    except duckdb.Error as exc:
        raise StoreError(f"cannot read catalog at {out}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
    (to / EXPORT_INFO_FILE).write_text(json.dumps(summary.to_json(), indent=1, sort_keys=True) + "\n",
                                       encoding="utf-8")
    return summary
