"""Issue 19, item 6: the catalog opens with plain DuckDB from any working directory, and still
reads its own folder's files after the folder is moved or copied."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.store.faults.conftest import N
from trajforge.store.catalog import CATALOG_FILE, query

VIEWS = ("blueprints", "trajectories", "verdicts", "rejections", "outcomes", "runs")


def _plain_counts(catalog: str) -> dict[str, int]:
    con = duckdb.connect(catalog, read_only=True)
    try:
        return {view: con.execute(f"SELECT count(*) FROM {view}").fetchone()[0] for view in VIEWS}
    finally:
        con.close()


def test_plain_duckdb_opens_the_catalog_from_another_directory(dataset, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = dataset
    elsewhere = tmp_path / "notebooks" / "deep"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    counts = _plain_counts(os.path.relpath(out / CATALOG_FILE))
    assert counts["blueprints"] == N and counts["runs"] == 1 and counts["trajectories"] > 0


def test_a_moved_folder_still_opens(dataset_copy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = dataset_copy()
    before = _plain_counts(str(out / CATALOG_FILE))
    moved = tmp_path / "moved" / "dataset"
    moved.parent.mkdir()
    out.rename(moved)
    monkeypatch.chdir(tmp_path)
    assert _plain_counts("moved/dataset/catalog.duckdb") == before
    assert query(moved, "SELECT count(*) FROM blueprints")[1] == [(N,)]


def test_a_copy_reads_its_own_files_not_the_originals(dataset_copy, tmp_path: Path) -> None:
    out, run_id = dataset_copy()
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    before = _plain_counts(str(copy / CATALOG_FILE))
    shutil.rmtree(out / "blueprints")  # the original loses its files: the copy must not care
    assert _plain_counts(str(copy / CATALOG_FILE)) == before
    assert query(copy, "SELECT count(*) FROM blueprints")[1] == [(N,)]


def test_an_attached_catalog_reads_through_file_search_path(dataset) -> None:
    out, _ = dataset
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{out / CATALOG_FILE}' AS data (READ_ONLY)")
        con.execute(f"SET file_search_path = '{out}'")
        assert con.execute("SELECT count(*) FROM data.blueprints").fetchone()[0] == N
    finally:
        con.close()
