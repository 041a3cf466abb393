"""Issue 19, item 1: a damaged shard never silently drops rows.

A truncated or byte-flipped shard file is named on every read; reads stop (exit 2) unless
``--allow-damaged``; the intact tables of the same shard stay in; ``trajforge check`` lists damage,
orphans and temporaries and ``--repair`` restores exactly the rows of an undamaged build;
``trajforge catalog rebuild`` recreates a broken catalog from the manifests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.store.faults.conftest import SHARD_SIZE, N, small_config
from trajforge.cli import app
from trajforge.errors import DamagedData
from trajforge.store.builds import run_build
from trajforge.store.catalog import CATALOG_FILE, query
from trajforge.store.integrity import reading_damaged

runner = CliRunner()
SHARD = (SHARD_SIZE, 2 * SHARD_SIZE)  # the middle shard is the one damaged


def _part(out: Path, table: str, run_id: str, shard: tuple[int, int] = SHARD) -> Path:
    return out / table / f"run={run_id}" / f"part-{shard[0]:09d}-{shard[1]:09d}.parquet"


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _counts(out: Path, view: str) -> dict[str, int]:
    return dict(query(out, f"SELECT run_id, count(*) FROM {view} GROUP BY 1")[1])


def _rows(out: Path, view: str, exclude: str = "") -> list[tuple]:
    skip = f" EXCLUDE ({exclude})" if exclude else ""
    return query(out, f"SELECT *{skip} FROM {view} ORDER BY id")[1]


def test_a_later_build_names_the_damage_and_reads_refuse_until_allowed(dataset_copy) -> None:
    out, run_id = dataset_copy()
    with reading_damaged(False):
        trajectories = _counts(out, "trajectories")[run_id]
    victim = _part(out, "trajectories", run_id)
    _truncate(victim)

    # the reproduction: another run's build refreshes the catalog
    later = run_build(small_config(out, **{"generation.seed": 7, "generation.n_blueprints": 5}))
    assert [(d.run_id, d.start, d.stop, d.table) for d in later.damaged] == [(run_id, *SHARD, "trajectories")]

    with pytest.raises(DamagedData) as raised:
        query(out, "SELECT count(*) FROM blueprints")
    assert victim.relative_to(out).as_posix() in str(raised.value)

    for command in (["query", "--out", str(out), "SELECT count(*) FROM blueprints"],
                    ["stats", "--out", str(out)],
                    ["show", "tr_any", "--out", str(out)],
                    ["verify", "--out", str(out)],
                    ["export", "--out", str(out), "--to", str(out.parent / "export")]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, (command, result.output)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and victim.name in errors[0] and "--allow-damaged" in errors[0]
        assert f"warning: run {run_id} shard {SHARD[0]}-{SHARD[1]} is damaged" in result.stderr
    assert not (out.parent / "export").exists()

    # allowed: the damaged file alone is left out; the shard's intact tables stay in
    result = runner.invoke(app, ["query", "--out", str(out), "--allow-damaged", "--format", "json",
                                 "SELECT run_id, count(*) AS n FROM blueprints GROUP BY 1"])
    assert result.exit_code == 0, result.output
    assert "is damaged" in result.stderr and "left out" in result.stderr
    with reading_damaged(True):
        assert _counts(out, "blueprints")[run_id] == N
        assert _counts(out, "trajectories")[run_id] < trajectories
        assert _counts(out, "verdicts")[run_id] > 0
    exported = runner.invoke(app, ["export", "--out", str(out), "--to", str(out.parent / "export"),
                                   "--allow-damaged", "--format", "sft"])
    assert exported.exit_code == 0, exported.output


def test_damage_after_the_last_refresh_is_caught_by_the_read_itself(dataset_copy) -> None:
    out, run_id = dataset_copy()
    _flip(_part(out, "verdicts", run_id))  # no build since: the catalog's views still list it
    with pytest.raises(DamagedData, match="verdicts file .* fails its checksum"):
        query(out, "SELECT count(*) FROM verdicts")
    with reading_damaged(True):
        assert _counts(out, "blueprints")[run_id] == N  # the read went on, without the file


def test_check_lists_damage_orphans_and_temporaries_and_repair_restores_the_rows(dataset, dataset_copy) -> None:
    reference, _ = dataset
    out, run_id = dataset_copy()
    _flip(_part(out, "trajectories", run_id))
    _part(out, "blueprints", run_id, (0, SHARD_SIZE)).unlink()
    orphan = _part(out, "blueprints", run_id, (N, N + SHARD_SIZE))
    orphan.write_bytes(b"PAR1 a shard whose manifest line never landed")
    leftover = out / "verdicts" / f"run={run_id}" / "part-000000000-000000020.parquet.999999-abcd.tmp"
    leftover.write_bytes(b"half")

    found = runner.invoke(app, ["check", "--out", str(out)])
    assert found.exit_code == 1, found.output
    lines = found.stdout.splitlines()
    assert any(line.startswith("damaged: ") and "trajectories" in line and "fails its checksum" in line
               for line in lines)
    assert any(line.startswith("damaged: ") and "blueprints" in line and "missing" in line for line in lines)
    assert any(line.startswith("orphan: ") and orphan.name in line for line in lines)
    assert any(line.startswith("temporary: ") and leftover.name in line for line in lines)
    assert f"repair: trajforge check --out {out} --repair" in lines

    repaired = runner.invoke(app, ["check", "--out", str(out), "--repair"])
    assert repaired.exit_code == 0, repaired.output
    assert "recomputed: run" in repaired.stdout and "0 damaged" in repaired.stdout
    assert not orphan.exists() and not leftover.exists()
    for view, wall_clock in (("blueprints", ""), ("trajectories", "latency_s"), ("verdicts", ""),
                             ("rejections", "")):
        assert _rows(out, view, wall_clock) == _rows(reference, view, wall_clock), view


def test_catalog_rebuild_recreates_a_broken_catalog_from_the_manifests(dataset, dataset_copy) -> None:
    out, run_id = dataset_copy()
    (out / CATALOG_FILE).write_bytes(b"not a duckdb file")
    result = runner.invoke(app, ["catalog", "rebuild", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert _counts(out, "blueprints") == _counts(dataset[0], "blueprints") == {run_id: N}


def test_stats_checks_checksums(dataset_copy) -> None:
    out, run_id = dataset_copy()
    assert runner.invoke(app, ["stats", "--out", str(out)]).exit_code == 0
    _flip(_part(out, "blueprints", run_id, (0, SHARD_SIZE)))
    result = runner.invoke(app, ["stats", "--out", str(out)])
    assert result.exit_code == 2 and "fails its checksum" in result.stderr
