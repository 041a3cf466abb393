"""The blueprints an evaluation plays: the held-out split of a dataset, or a fresh set."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trajforge.errors import ConfigError, StoreError
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.simulation.worker_state import shared_domain


def heldout_blueprints(out: Path, split: str = "test", salt: str = "",
                       run_ids: Sequence[str] | None = None, limit: int | None = None) -> list[TaskBlueprint]:
    """The blueprints of ``split`` in a catalog, by the exports' family split, in id order."""
    from trajforge.schemas.arrow import blueprint_from_row
    from trajforge.store.catalog import connect
    from trajforge.store.splits import SplitConfig, assign_splits

    con = connect(out)
    try:
        cursor = con.execute("SELECT * FROM blueprints ORDER BY id")
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, r, strict=True)) for r in cursor.fetchall()]
    finally:
        con.close()
    if run_ids:
        rows = [r for r in rows if r["run_id"] in set(run_ids)]
    unique = {r["id"]: r for r in rows}
    splits = assign_splits({bp: r["parent_id"] for bp, r in unique.items()}, SplitConfig(salt=salt))
    chosen = [blueprint_from_row(r) for bp, r in unique.items() if splits[bp] == split]
    if not chosen:
        raise StoreError(f"{out}: no blueprints in the '{split}' split")
    return chosen[:limit] if limit is not None else chosen


def fresh_blueprints(n: int, seed: int, domain_name: str = "retail", size: int = 300,
                     domain_seed: int = 0) -> list[TaskBlueprint]:
    """``n`` newly generated valid blueprints (rejected drafts are skipped, not counted)."""
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.config import GenerationConfig

    domain = shared_domain(domain_name, size, domain_seed)
    config = GenerationConfig(n_blueprints=n, seed=seed)
    found: list[TaskBlueprint] = []
    start = 0
    while len(found) < n:
        for item in generate_blueprints(domain, config, f"eval-{seed}", start, start + n):
            if isinstance(item, TaskBlueprint):
                found.append(item)
        start += n
        if start > 20 * n:
            raise ConfigError("--fresh", f"the generator yielded only {len(found)} valid blueprints")
    return found[:n]
