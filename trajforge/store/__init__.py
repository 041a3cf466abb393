"""Storage: crash-safe Parquet shards with a per-run manifest, and a DuckDB catalog of views.

Workers write shards (``RunStore``); one process at the end of a build refreshes the catalog
(``refresh_catalog``); readers query it (``connect``, ``query``). See DESIGN.md section 6.
"""

from trajforge.store.catalog import CATALOG_FILE, connect, query, refresh_catalog
from trajforge.store.shards import (
    TABLES,
    RunStore,
    ShardFile,
    ShardRecord,
    load_rows,
    write_parquet_atomic,
)

__all__ = [
    "CATALOG_FILE", "TABLES", "RunStore", "ShardFile", "ShardRecord", "connect", "load_rows",
    "query", "refresh_catalog", "write_parquet_atomic",
]
