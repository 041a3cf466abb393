"""One small direct build (no Prefect) shared by every fault test of the session; a test that damages
it works on a copy (``dataset_copy``)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from trajforge.config import load_config
from trajforge.schemas.config import RunConfig
from trajforge.store.builds import run_build

N = 60
SHARD_SIZE = 20


def small_config(out: Path, **overrides: object) -> RunConfig:
    return load_config(None, {"store.out": str(out), "generation.n_blueprints": N,
                              "store.shard_size": SHARD_SIZE, **overrides})


@pytest.fixture(scope="session")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(folder, run id) of a built 60-blueprint run in 3 shards."""
    out = tmp_path_factory.mktemp("faults") / "data"
    result = run_build(small_config(out))
    return out, result.run_id


@pytest.fixture
def dataset_copy(dataset: tuple[Path, str], tmp_path: Path) -> Callable[[], tuple[Path, str]]:
    def copy() -> tuple[Path, str]:
        target = tmp_path / "data"
        shutil.copytree(dataset[0], target)
        return target, dataset[1]
    return copy
