"""``trajforge verify``: the current checks over a dataset's stored trajectories, or over
conversations produced elsewhere, checked against the dataset's blueprints.

- ``reverify(out, run_ids, checks)``: every stored trajectory of each run (all runs by default)
  through the checks, in the run's own domain (its config's name, size and seed, as the build
  verified it) and, unless ``checks`` names them, the run's configured checks (all current
  checks when it configured none). Each run's verdicts become one verdict set of the
  ``verifications`` table (``store/verifications.py``), tagged with its verifier version; the
  build's ``verdicts`` are left as they are.
- ``verify_file(out, path, run_ids, checks)``: a JSONL or Parquet file of rows in the openai
  export's shape (``verifiers/external.py`` says what a row holds and how it is replayed), each
  checked against its blueprint in the dataset, with the checks and domain of the blueprint's
  run. The verdicts go beside the input, ``<stem>.verdicts.jsonl`` (one verdict per line, with
  ``row``: the input row it judges, counted from 1), never into the catalog. A row the checks
  cannot read (``MalformedRow``, or a blueprint the dataset does not hold, or a line that is not
  a JSON object) is reported with its number and reason and counted; the rest are verified. The
  input as a whole is refused (``StoreError``) when it is missing or cannot be read as JSONL or
  Parquet; a report with no verified row (every row malformed) writes nothing, and the command
  then fails.

Both compare the new verdicts with the stored ones of the same trajectory and check (passed,
reason and evidence), so a report says how many changed: re-verifying with unchanged code, or
feeding an openai export back, changes none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.config import validate_config
from trajforge.environments.base import Domain
from trajforge.errors import ConfigError, StoreError
from trajforge.schemas.arrow import blueprint_from_row, trajectory_from_row, verdict_to_row
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.schemas.trajectory import Verdict
from trajforge.simulation.worker_state import blueprint_domain
from trajforge.store.catalog import connect, refresh_catalog
from trajforge.store.export_writer import resolve_runs
from trajforge.store.shards import RUN_INFO_FILE, RUNS_DIR
from trajforge.store.verifications import write_verification
from trajforge.verifiers.checks import CHECKS, verify
from trajforge.verifiers.external import MalformedRow, rebuild, row_fields
from trajforge.verifiers.version import stamped, verifier_version

VERDICTS_SUFFIX = ".verdicts.jsonl"
_JSONL = (".jsonl", ".json", ".ndjson")
_FETCH = 500

Stored = dict[tuple[str, str], tuple[bool, str, str]]


@dataclass
class CheckTally:
    verdicts: int = 0
    passed: int = 0
    compared: int = 0  # had a stored verdict of the same trajectory and check
    changed: int = 0  # of those, passed, reason or evidence differ


@dataclass
class VerifyReport:
    """What one ``trajforge verify`` decided, per check, and what it wrote."""

    checks: dict[str, CheckTally] = field(default_factory=dict)
    trajectories: int = 0
    passed: int = 0
    versions: dict[str, str] = field(default_factory=dict)  # run id (or input) -> verifier version
    written: list[Path] = field(default_factory=list)
    rows: int = 0  # input rows (verify_file)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    termination_assumed: int = 0

    @property
    def changed(self) -> int:
        return sum(t.changed for t in self.checks.values())

    @property
    def compared(self) -> int:
        return sum(t.compared for t in self.checks.values())

    def add(self, verdicts: Sequence[Verdict], stored: Stored) -> None:
        self.trajectories += 1
        self.passed += bool(verdicts) and verdicts[0].trajectory_passed
        for v in verdicts:
            tally = self.checks.setdefault(v.check, CheckTally())
            tally.verdicts += 1
            tally.passed += v.passed
            before = stored.get((v.trajectory_id, v.check))
            if before is not None:
                tally.compared += 1
                tally.changed += before != (v.passed, v.reason, v.evidence)


def check_names(names: Sequence[str] | None, field_name: str = "--checks") -> list[str] | None:
    """Checks named (comma-separated lists allowed), each once; ``None``: none named."""
    if not names:
        return None
    chosen = list(dict.fromkeys(n.strip() for v in names for n in v.split(",") if n.strip()))
    unknown = [n for n in chosen if n not in CHECKS]
    if unknown or not chosen:
        raise ConfigError(field_name, f"'{unknown[0] if unknown else ''}' is not a check "
                                      f"(checks: {', '.join(CHECKS)})")
    return chosen


def run_config_of(out: Path, run_id: str) -> RunConfig:
    """The config a run was built with, from ``runs/<run_id>/run.json``."""
    path = Path(out) / RUNS_DIR / run_id / RUN_INFO_FILE
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        values = json.loads(info["config"]) if isinstance(info["config"], str) else info["config"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"cannot read the config of run {run_id} from {path}: {exc}") from exc
    return validate_config(RunConfig, values)


class _Runs:
    """Each run's config and checks, loaded once; a blueprint's domain (a mixed run has several)
    and the verifier version of the checks in it."""

    def __init__(self, out: Path, checks: list[str] | None) -> None:
        self.out, self.checks = out, checks
        self._seen: dict[str, tuple[RunConfig, list[str]]] = {}

    def __call__(self, run_id: str, blueprint: TaskBlueprint) -> tuple[RunConfig, Domain, list[str], str]:
        if run_id not in self._seen:
            config = run_config_of(self.out, run_id)
            configured = config.verification.checks
            self._seen[run_id] = (config, self.checks or list(CHECKS if configured is None else configured))
        config, checks = self._seen[run_id]
        domain = blueprint_domain(blueprint)
        return config, domain, checks, verifier_version(domain.name, checks)


def _version_key(run_id: str, config: RunConfig, domain: Domain) -> str:
    """Where a verifier version is reported: the run, and in a mixed run also the domain."""
    return run_id if len(config.domain.all_names) == 1 else f"{run_id} ({domain.name})"


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> Iterator[dict[str, Any]]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    while batch := cursor.fetchmany(_FETCH):
        for row in batch:
            yield dict(zip(columns, row, strict=True))


def _stored(con: duckdb.DuckDBPyConnection, runs: Sequence[str]) -> Stored:
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in con.execute(
        'SELECT trajectory_id, "check", passed, reason, evidence FROM verdicts '
        "WHERE list_contains(?, run_id)", [list(runs)]).fetchall()}


def _blueprints(con: duckdb.DuckDBPyConnection, runs: Sequence[str]) -> dict[str, tuple[str, TaskBlueprint]]:
    """Blueprint id -> (its run, the blueprint); one in several runs counts for the first."""
    found: dict[str, tuple[str, TaskBlueprint]] = {}
    for row in _rows(con, "SELECT * FROM blueprints WHERE list_contains(?, run_id) ORDER BY run_id, id",
                     [list(runs)]):
        found.setdefault(row["id"], (row["run_id"], blueprint_from_row(row)))
    return found


def reverify(out: Path, run_ids: Sequence[str] | None = None,
             checks: Sequence[str] | None = None) -> VerifyReport:
    """Re-verify the stored trajectories of ``run_ids`` (all runs) and store the verdict sets."""
    out = Path(out)
    runs_of = _Runs(out, list(checks) if checks else None)
    report = VerifyReport()
    sets: dict[str, list[dict[str, Any]]] = {}
    con = connect(out, read_only=True)
    try:
        runs = resolve_runs(con, run_ids)
        if not runs:
            raise StoreError(f"{out}: the catalog holds no runs to verify")
        for run_id in runs:
            blueprints = {bp_id: bp for bp_id, (_, bp) in _blueprints(con, [run_id]).items()}
            stored = _stored(con, [run_id])
            rows = sets.setdefault(run_id, [])
            for row in _rows(con, "SELECT * FROM trajectories WHERE run_id = ? ORDER BY id", [run_id]):
                trajectory = trajectory_from_row(row)
                blueprint = blueprints.get(trajectory.blueprint_id)
                if blueprint is None:
                    raise StoreError(f"run {run_id}: trajectory {trajectory.id} has no blueprint "
                                     f"{trajectory.blueprint_id} in the catalog")
                config, domain, names, version = runs_of(run_id, blueprint)
                report.versions[_version_key(run_id, config, domain)] = version
                verdicts = stamped(verify(trajectory, blueprint, domain, names), version)
                report.add(verdicts, stored)
                rows.extend(verdict_to_row(v) for v in verdicts)
    except duckdb.Error as exc:
        raise StoreError(f"cannot read catalog at {out}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
    for run_id, rows in sets.items():
        report.written.append(write_verification(out, run_id, report.versions[run_id], rows))
    refresh_catalog(out)
    return report


# --- conversations produced elsewhere ---------------------------------------------------------

def verdicts_path(path: Path) -> Path:
    """Where the verdicts of an input file go: beside it, ``<stem>.verdicts.jsonl``."""
    return path.with_name(path.name.rsplit(".", 1)[0] + VERDICTS_SUFFIX if "." in path.name
                          else path.name + VERDICTS_SUFFIX)


def _is_parquet(path: Path) -> bool:
    if path.suffix.lower() == ".parquet":
        return True
    if path.suffix.lower() in _JSONL:
        return False
    with path.open("rb") as f:
        return f.read(4) == b"PAR1"


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    """A Parquet row of the export (JSON-typed messages and tools are JSON text) as objects."""
    for name in ("messages", "tools"):
        value = row.get(name)
        if isinstance(value, list):
            try:
                row[name] = [json.loads(v) if isinstance(v, str) else v for v in value]
            except ValueError:
                pass  # left as text: the row is then malformed, and says which message
    return row


def input_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(row number from 1, row, None)`` per row, or ``(number, None, reason)`` for a JSONL
    line that is not a JSON object. Blank lines are not rows."""
    try:
        if _is_parquet(path):
            number = 0
            for batch in pq.ParquetFile(path).iter_batches(batch_size=_FETCH):
                for row in batch.to_pylist():
                    number += 1
                    yield number, _decoded(row), None
            return
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield number, None, f"not JSON ({exc.msg})"
                    continue
                if isinstance(value, dict):
                    yield number, value, None
                else:
                    yield number, None, "not a JSON object"
    except FileNotFoundError:
        raise StoreError(f"--input {path}: no such file") from None
    except IsADirectoryError:
        raise StoreError(f"--input {path}: is a folder, not a JSONL or Parquet file") from None
    except UnicodeDecodeError:
        raise StoreError(f"--input {path}: neither JSONL (UTF-8 text) nor Parquet") from None
    except (pa.ArrowException, OSError) as exc:
        raise StoreError(f"--input {path}: cannot read it as Parquet or JSONL ({exc})") from None


def verify_file(out: Path, path: Path, run_ids: Sequence[str] | None = None,
                checks: Sequence[str] | None = None) -> VerifyReport:
    """Verify an input file's conversations against the dataset at ``out`` (see the module
    docstring); the verdicts go to ``verdicts_path(path)``."""
    out, path = Path(out), Path(path)
    if path.is_dir():
        raise StoreError(f"--input {path}: is a folder, not a JSONL or Parquet file")
    if not path.is_file():
        raise StoreError(f"--input {path}: no such file")
    runs_of = _Runs(out, list(checks) if checks else None)
    report = VerifyReport()
    con = connect(out, read_only=True)
    try:
        runs = resolve_runs(con, run_ids)
        blueprints = _blueprints(con, runs)
        stored = _stored(con, runs)
    except duckdb.Error as exc:
        raise StoreError(f"cannot read catalog at {out}: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
    target = verdicts_path(path)
    tmp = target.with_name(target.name + ".tmp")
    seen: dict[str, int] = {}
    try:
        with tmp.open("w", encoding="utf-8") as sink:
            for number, row, problem in input_rows(path):
                report.rows += 1
                try:
                    if row is None:
                        raise MalformedRow(problem or "unreadable")
                    bp_id = row_fields(row)["blueprint_id"]
                    if bp_id not in blueprints:
                        raise MalformedRow(f"blueprint {bp_id} is not in the dataset at {out}")
                    run_id, blueprint = blueprints[bp_id]
                    config, domain, names, version = runs_of(run_id, blueprint)
                    episode = rebuild(row, blueprint, domain, config.simulation.max_turns)
                    trajectory = episode.trajectory
                    if trajectory.id in seen:
                        raise MalformedRow(f"trajectory {trajectory.id} is also row {seen[trajectory.id]}")
                except MalformedRow as exc:
                    report.malformed.append((number, " ".join(str(exc).split())))
                    continue
                seen[trajectory.id] = number
                report.versions[_version_key(run_id, config, domain)] = version
                report.termination_assumed += episode.termination_assumed
                verdicts = stamped(verify(trajectory, blueprint, domain, names), version)
                report.add(verdicts, stored)
                for v in verdicts:
                    sink.write(json.dumps({**v.model_dump(mode="json"), "row": number},
                                          ensure_ascii=False) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
        if report.trajectories:
            os.replace(tmp, target)
            report.written.append(target)
    except OSError as exc:
        raise StoreError(f"cannot write {target}: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return report
