"""``trajforge check --repair``: recompute damaged shards, remove strays, rebuild the catalog.

A damaged shard is recomputed from its run's recorded config (``runs/<id>/run.json``): blueprint
``i`` and its episodes depend only on the config and ``i``, so the new files hold exactly the
rows the lost ones held. The recomputation is an ordinary resumed build of that run (direct,
without Prefect), recorded as an invocation like any other. Orphans and leftover temporaries are
removed under the build lock, so no live build's files are among them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.errors import ConfigError, StoreError
from trajforge.schemas.config import RunConfig
from trajforge.store.catalog import refresh_catalog_checked
from trajforge.store.integrity import DatasetCheck, check_dataset, committed_records, remove_strays
from trajforge.store.lock import build_lock
from trajforge.store.shards import RUN_INFO_FILE, RunStore


@dataclass
class RepairResult:
    recomputed: list[tuple[str, int, int]] = field(default_factory=list)  # (run, start, stop)
    removed: list[str] = field(default_factory=list)
    after: DatasetCheck | None = None


def _run_config(out: Path, run_id: str) -> RunConfig:
    """The config a run was built with, pointed at ``out``, with shards as the manifest has them."""
    from trajforge.config import run_config

    store = RunStore(out, run_id)
    info_path = store.run_dir / RUN_INFO_FILE
    try:
        values = json.loads(json.loads(info_path.read_text(encoding="utf-8"))["config"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"cannot repair run {run_id}: {info_path} does not hold its config ({exc})") from exc
    records = committed_records(out, run_id)
    values["generation"]["n_blueprints"] = max(r.stop for r in records)
    values["store"] = {"out": str(out), "shard_size": max(r.stop - r.start for r in records), "workers": 1}
    config = run_config(values)
    if config.run_id() != run_id:
        raise ConfigError(str(info_path), f"its config is run {config.run_id()}, not {run_id}: it cannot be "
                                          "recomputed exactly; rebuild the run from its original config")
    return config


def repair(out: Path) -> RepairResult:
    """Recompute every damaged shard, remove orphans and temporaries, rebuild the catalog."""
    from trajforge.store.builds import run_build  # builds imports the catalog; keep this light

    out = Path(out)
    result = RepairResult()
    found = check_dataset(out)
    for run_id in sorted({d.run_id for d in found.damaged}):
        config = _run_config(out, run_id)
        run_build(config)
        result.recomputed.extend(sorted({(d.run_id, d.start, d.stop) for d in found.damaged
                                         if d.run_id == run_id}))
    with build_lock(out):
        result.removed = remove_strays(check_dataset(out))
        result.after = refresh_catalog_checked(out, fresh=True).check
    return result
