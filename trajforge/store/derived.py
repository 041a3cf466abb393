"""Tables derived from a whole run (embeddings, scores, selection): one Parquet file per run and
key, ``<table>/run=<run_id>/<key>.parquet``, written atomically (tmp + fsync + rename), so a
listed ``*.parquet`` is always complete and a re-run replaces it whole.

Unlike shards these are not per blueprint range: they need every trajectory of the run at once
(nearest neighbours, greedy selection), and are cheap to recompute.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.errors import StoreError
from trajforge.schemas.arrow import DIVERSITY_TABLES
from trajforge.store.shards import to_table, write_table_file, write_text_file

if TYPE_CHECKING:
    import numpy as np

ROW_GROUP = 16_384


def derived_path(out: Path, table: str, run_id: str, key: str) -> Path:
    if table not in DIVERSITY_TABLES:
        raise StoreError(f"unknown table {table!r}; expected one of {sorted(DIVERSITY_TABLES)}")
    return Path(out) / table / f"run={run_id}" / f"{key}.parquet"


def write_derived(out: Path, table: str, run_id: str, key: str,
                  data: pa.Table | list[dict[str, Any]]) -> Path:
    path = derived_path(out, table, run_id, key)
    write_table_file(path, to_table(data, DIVERSITY_TABLES[table], f"table {table!r}"))
    return path


def derived_files(out: Path, table: str) -> list[str]:
    """Relative paths of ``table``'s files over all runs, sorted."""
    root = Path(out) / table
    if table not in DIVERSITY_TABLES:
        raise StoreError(f"unknown table {table!r}; expected one of {sorted(DIVERSITY_TABLES)}")
    if not root.is_dir():
        return []
    return sorted(p.relative_to(out).as_posix() for p in root.glob("run=*/*.parquet") if p.is_file())


def embeddings_table(run_id: str, embedder: str, view: str, ids: list[str], X: np.ndarray) -> pa.Table:
    """Arrow table of vectors without a Python loop over rows."""
    import numpy as np

    X = np.ascontiguousarray(X, dtype=np.float32)
    n, d = X.shape
    offsets = pa.array(np.arange(0, (n + 1) * d, d, dtype=np.int32))
    vectors = pa.ListArray.from_arrays(offsets, pa.array(X.reshape(-1)))
    return pa.table({"trajectory_id": pa.array(ids, pa.string()),
                     "run_id": pa.array([run_id] * n, pa.string()),
                     "embedder": pa.array([embedder] * n, pa.string()),
                     "view": pa.array([view] * n, pa.string()),
                     "vector": vectors}, schema=DIVERSITY_TABLES["embeddings"])


def read_embeddings(path: Path) -> tuple[list[str], np.ndarray]:
    """Ids and the (n, d) float32 matrix of one embeddings file."""
    import numpy as np

    table = pq.read_table(path, columns=["trajectory_id", "vector"])
    ids = table.column("trajectory_id").to_pylist()
    vectors = table.column("vector").combine_chunks()
    if len(vectors) == 0:
        return ids, np.zeros((0, 0), dtype=np.float32)
    flat = vectors.flatten().to_numpy(zero_copy_only=False)
    return ids, flat.reshape(len(vectors), -1).astype(np.float32, copy=False)


def write_json_atomic(path: Path, body: dict[str, Any]) -> None:
    write_text_file(path, json.dumps(body, sort_keys=True, indent=1, default=str) + "\n")


def selection_summaries(out: Path) -> list[dict[str, Any]]:
    """The summary JSON of every stored selection (``selection/run=*/<id>.json``), oldest first."""
    root = Path(out) / "selection"
    if not root.is_dir():
        return []
    found = [json.loads(p.read_text()) for p in root.glob("run=*/*.json") if p.is_file()]
    return sorted(found, key=lambda s: (s.get("created_at", ""), s.get("selection_id", "")))
