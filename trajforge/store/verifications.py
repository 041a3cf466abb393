"""The ``verifications`` table: verdict sets of ``trajforge verify``, kept beside the build's.

A re-verification of a run with the current checks writes one Parquet file,
``verifications/run=<run_id>/<verifier_version>.parquet`` (verdict rows, ``VERDICT_SCHEMA``, each
with its ``verifier_version``), atomically like every shard, and a small JSON summary beside it.
The build's own ``verdicts`` are never rewritten: the catalog's ``verdicts`` view stays what the
build decided (and what exports select by), and the ``verifications`` view holds every verdict set
since, one per (run, verifier version). Re-verifying with the same version replaces that file
with the same rows (the checks are deterministic), so the table never holds a set twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajforge.schemas.arrow import VERDICT_SCHEMA
from trajforge.store.shards import RunStore, to_table, write_table_file

VERIFICATIONS_DIR = "verifications"


def verification_path(out: Path, run_id: str, version: str) -> Path:
    RunStore(out, run_id)  # validates the run id before it becomes a folder name
    return Path(out) / VERIFICATIONS_DIR / f"run={run_id}" / f"{version}.parquet"


def verification_files(out: Path) -> list[str]:
    """Relative paths of every stored verdict set under ``out``, sorted."""
    root = Path(out) / VERIFICATIONS_DIR
    if not root.is_dir():
        return []
    return sorted(p.relative_to(out).as_posix() for p in root.glob("run=*/*.parquet") if p.is_file())


def write_verification(out: Path, run_id: str, version: str, rows: list[dict[str, Any]]) -> Path:
    path = verification_path(out, run_id, version)
    write_table_file(path, to_table(rows, VERDICT_SCHEMA, "table 'verifications'"))
    return path
