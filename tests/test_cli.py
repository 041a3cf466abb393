"""The ``trajforge`` command line: the happy paths in-process (typer's CliRunner), and bad input
through a real subprocess, so exit codes and what reaches stderr are exactly what a user sees.

Contract (trajforge/cli.py): a config or usage error exits 2 with one line ``error: ...`` on
stderr that names the offending field or path, and changes nothing that already exists.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.schemas.trajectory import FaultKind
from trajforge.store import query

N = 40
SHARD_SIZE = 20
runner = CliRunner()
# in-process builds run their flow against the session's Prefect server
pytestmark = pytest.mark.usefixtures("prefect_api")

PASS_RATE_PER_FAULT_KIND = (
    "SELECT t.fault_kind, count(*) AS episodes, avg(o.passed::INT) AS pass_rate "
    "FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id GROUP BY 1 ORDER BY 1"
)


def _flat(text: str) -> str:
    """Output without line breaks and runs of spaces: rich wraps to the console width."""
    return " ".join(text.split())


def _unwrapped(text: str) -> str:
    """Output with rich's folding undone: long words are cut at the width with no added
    characters, so dropping the newlines gives the text back."""
    return text.replace("\n", "")


@dataclass
class Dataset:
    out: Path
    summary: str


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    out = tmp_path_factory.mktemp("cli") / "dataset"
    result = runner.invoke(app, ["build", "--out", str(out), "--n", str(N),
                                 "--shard-size", str(SHARD_SIZE), "--quiet"])
    assert result.exit_code == 0, f"{result.stderr}\n{result.stdout}\n{result.exception!r}"
    return Dataset(out=out, summary=result.stdout)


def _snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder`` (folders included, as '<dir>')."""
    files: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        files[rel] = "<dir>" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the console command for real. COLUMNS is pinned so the result does not depend on
    the terminal pytest runs in (stderr is a pipe either way)."""
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "trajforge.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _assert_config_error(proc: subprocess.CompletedProcess[str], *names: str) -> None:
    """Exit code 2, and exactly one line ``error: ...`` on stderr naming each of ``names``."""
    assert proc.returncode == 2, f"exit {proc.returncode}\nstderr:\n{proc.stderr}\nstdout:\n{proc.stdout}"
    text = _unwrapped(proc.stderr)
    for name in names:
        assert name in text, f"{name!r} not named in stderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (
        f"stderr must be one line 'error: ...', got {len(lines)} line(s):\n{proc.stderr}")


# --- happy paths ---------------------------------------------------------------------------

def test_build_prints_summary_with_dataset_path_and_pass_rates(dataset: Dataset) -> None:
    flat, unwrapped = _flat(dataset.summary), _unwrapped(dataset.summary)
    assert "Built run_" in flat
    assert f"{N} blueprints" in flat
    assert str(dataset.out.resolve()) in unwrapped, dataset.summary
    assert str((dataset.out / "catalog.duckdb").resolve()) in unwrapped
    assert "pass rate" in flat and "overall" in flat
    assert "%" in flat
    # the numbers shown are the catalog's
    passed = query(dataset.out, "SELECT count(*) FROM outcomes WHERE passed")[1][0][0]
    assert f"episodes passing every check │ {passed}" in flat
    assert (dataset.out / "catalog.duckdb").is_file()


def test_build_again_resumes_without_recomputing(dataset: Dataset) -> None:
    before = _snapshot(dataset.out / "trajectories")
    result = runner.invoke(app, ["build", "--out", str(dataset.out), "--n", str(N),
                                 "--shard-size", str(SHARD_SIZE), "--quiet"])
    assert result.exit_code == 0, result.stderr
    assert f"0 shard(s) computed, {N // SHARD_SIZE} already done" in _flat(result.stdout)
    assert _snapshot(dataset.out / "trajectories") == before


def test_domains_lists_retail() -> None:
    result = runner.invoke(app, ["domains"])
    assert result.exit_code == 0, result.stderr
    assert "retail" in result.stdout
    assert "policy rules" in _flat(result.stdout)


def test_stats_summarises_the_folder(dataset: Dataset) -> None:
    result = runner.invoke(app, ["stats", "--out", str(dataset.out)])
    assert result.exit_code == 0, result.stderr
    flat = _flat(result.stdout)
    assert "1 run(s)" in flat
    # recent runs: the build and its re-run (nothing computed, both batches from the cache)
    assert "recent runs" in flat and "completed" in flat
    invocations = query(dataset.out, "SELECT batches_computed, batches_cached FROM runs "
                                     "ORDER BY started_at")[1]
    assert invocations[0] == (N // SHARD_SIZE, 0)
    assert all(row == (0, N // SHARD_SIZE) for row in invocations[1:])
    assert f"blueprints generated │ {N}" in flat
    for check in ("final_state", "outputs", "overall"):
        assert check in flat


def test_show_prints_transcript_and_verdicts(dataset: Dataset) -> None:
    (tid, fault), = query(dataset.out, "SELECT id, fault_kind FROM trajectories "
                                       "WHERE fault_kind IS NOT NULL ORDER BY id LIMIT 1")[1]
    checks = [r[0] for r in query(dataset.out, "SELECT \"check\" FROM verdicts WHERE "
                                               f"trajectory_id = '{tid}' ORDER BY 1")[1]]
    assert checks
    result = runner.invoke(app, ["show", tid, "--out", str(dataset.out)])
    assert result.exit_code == 0, result.stderr
    flat = _flat(result.stdout)
    assert tid in _unwrapped(result.stdout) or tid in flat
    assert f"fault={fault}" in flat
    assert "user:" in flat and "assistant:" in flat
    assert "verdicts" in flat
    for check in checks:
        assert check in flat, f"verdict {check} not shown"


def test_query_json_and_csv(dataset: Dataset) -> None:
    sql = "SELECT id, agent, fault_kind, n_messages FROM trajectories ORDER BY id LIMIT 7"
    expected_columns, expected_rows = query(dataset.out, sql)

    as_json = runner.invoke(app, ["query", sql, "--out", str(dataset.out), "--format", "json"])
    assert as_json.exit_code == 0, as_json.stderr
    records = json.loads(as_json.stdout)
    assert records == [dict(zip(expected_columns, row)) for row in expected_rows]

    as_csv = runner.invoke(app, ["query", sql, "--out", str(dataset.out), "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.stderr
    table = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert table[0] == expected_columns
    assert len(table) == 1 + len(expected_rows)
    assert [row[0] for row in table[1:]] == [row[0] for row in expected_rows]

    as_table = runner.invoke(app, ["query", "SELECT count(*) AS n FROM blueprints",
                                   "--out", str(dataset.out)])
    assert as_table.exit_code == 0, as_table.stderr
    assert str(N) in as_table.stdout


def test_query_output_has_no_progress_bar(dataset: Dataset) -> None:
    """DuckDB draws a progress bar on stdout for queries longer than two seconds unless the
    connection turns it off; the query output must be the result alone."""
    result = runner.invoke(app, ["query", "SELECT current_setting('enable_progress_bar') AS bar",
                                 "--out", str(dataset.out), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [{"bar": False}]


def test_pass_rate_per_fault_kind_is_one_query(dataset: Dataset) -> None:
    """The must-show question, answered by one SQL statement through the CLI: oracle episodes
    (no fault) all pass, and every injected fault is caught."""
    result = runner.invoke(app, ["query", PASS_RATE_PER_FAULT_KIND, "--out", str(dataset.out),
                                 "--format", "json"])
    assert result.exit_code == 0, result.stderr
    rows = {r["fault_kind"]: r for r in json.loads(result.stdout)}
    assert None in rows, "no oracle (fault-free) episodes"
    assert rows.pop(None)["pass_rate"] == 1.0
    assert rows, "no faulty episodes"
    assert set(rows) <= {k.value for k in FaultKind}
    for kind, row in rows.items():
        assert row["pass_rate"] == 0.0, f"fault {kind} passed verification: {row}"
    total = sum(r[0] for r in query(dataset.out, "SELECT count(*) FROM trajectories")[1])
    assert sum(r["episodes"] for r in json.loads(result.stdout)) == total


def test_config_file_with_cli_overrides(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "name: cli-override\n"
        "generation:\n"
        "  seed: 5\n"
        "  n_blueprints: 500\n"
        "  max_intents: 3\n"
        "store:\n"
        "  shard_size: 10\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", "--config", str(config), "--out", str(out), "--n", "15",
                                 "--set", "generation.max_intents=1", "--quiet"])
    assert result.exit_code == 0, f"{result.stderr}\n{result.exception!r}"

    (count, generated, lo, hi), = query(out, """
        SELECT count(*), count(*) + (SELECT count(*) FROM rejections),
               min(structure.n_intents), max(structure.n_intents) FROM blueprints""")[1]
    assert count > 0 and generated == 15  # --n beats the file's n_blueprints
    assert (lo, hi) == (1, 1), "--set generation.max_intents=1 did not win over the file's 3"
    assert all(len(json.loads(i)) == 1 for (i,) in query(out, "SELECT intents FROM blueprints")[1])
    (name, raw), = query(out, "SELECT name, config FROM runs")[1]
    stored = json.loads(raw)
    assert name == "cli-override"
    assert stored["generation"]["seed"] == 5 and stored["generation"]["max_intents"] == 1
    shards = (out / "blueprints").rglob("*.parquet")
    assert len(list(shards)) == 2  # 15 blueprints in shards of 10 from the file

    # same overrides, other seed: different blueprints (the file's seed was really used)
    other = tmp_path / "other"
    again = runner.invoke(app, ["build", "--out", str(other), "--n", "15", "--seed", "6",
                                "--set", "generation.max_intents=1", "--quiet"])
    assert again.exit_code == 0, again.stderr
    ids = {r[0] for r in query(out, "SELECT id FROM blueprints")[1]}
    assert ids.isdisjoint(r[0] for r in query(other, "SELECT id FROM blueprints")[1])


# --- bad input: exit 2, one line naming the culprit, nothing changed -----------------------

def _bad_yaml(tmp: Path) -> Path:
    path = tmp / "broken.yaml"
    path.write_text("generation:\n  seed: [1, 2\n  n_blueprints: 3\n")
    return path


def _unknown_field(tmp: Path) -> Path:
    path = tmp / "typo.yaml"
    path.write_text("generation: {n_blueprintz: 3}\n")
    return path


BAD_BUILDS = {
    # id: (extra args given tmp, names the error must mention)
    "yaml-syntax": (lambda t: ["--config", str(_bad_yaml(t))], lambda t: ["--config", "broken.yaml", "line"]),
    "yaml-unknown-field": (lambda t: ["--config", str(_unknown_field(t))],
                           lambda t: ["generation.n_blueprintz"]),
    "missing-config": (lambda t: ["--config", str(t / "nope.yaml")], lambda t: ["--config", "nope.yaml"]),
    "bad-value": (lambda t: ["--set", "generation.n_blueprints=-1"], lambda t: ["generation.n_blueprints"]),
    "bad-flag-value": (lambda t: ["--shard-size", "0"], lambda t: ["store.shard_size"]),
    "bad-nested-value": (lambda t: ["--set", "generation.min_intents=9"], lambda t: ["generation.min_intents"]),
    "unknown-set-field": (lambda t: ["--set", "store.shardsize=3"], lambda t: ["store.shardsize"]),
    "malformed-set": (lambda t: ["--set", "generation.seed"], lambda t: ["--set", "generation.seed"]),
    "unknown-domain": (lambda t: ["--domain", "nope"], lambda t: ["domain.name", "nope"]),
    "unknown-runner": (lambda t: ["--runner", "spark"], lambda t: ["orchestration.runner", "threads"]),
    "address-without-cluster": (lambda t: ["--address", "tcp://127.0.0.1:8786"],
                                lambda t: ["orchestration", "dask or ray"]),
}


@pytest.mark.parametrize("case", list(BAD_BUILDS))
def test_bad_build_config_exits_2_and_changes_nothing(case: str, dataset: Dataset, tmp_path: Path) -> None:
    extra, names = BAD_BUILDS[case]
    before = _snapshot(dataset.out)
    # no --n: it would override a bad generation.n_blueprints given with --set
    proc = _cli("build", "--out", str(dataset.out), "--quiet", *extra(tmp_path), cwd=tmp_path)
    _assert_config_error(proc, *names(tmp_path))
    assert proc.stdout == ""
    assert _snapshot(dataset.out) == before
    assert not (tmp_path / "data").exists(), "a failed build wrote to the default output folder"


def test_output_under_a_regular_file_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    target = blocker / "dataset"
    proc = _cli("build", "--out", str(target), "--n", "3", "--quiet", cwd=tmp_path)
    _assert_config_error(proc, "store.out", str(target))
    assert blocker.read_text() == "not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_unwritable_output_exits_2(tmp_path: Path) -> None:
    # /proc refuses new entries even for root (whom os.access lets write anywhere)
    target = "/proc/trajforge-test"
    proc = _cli("build", "--out", target, "--n", "3", "--quiet", cwd=tmp_path)
    _assert_config_error(proc, target)
    assert not Path(target).exists()


def test_query_unknown_format_exits_2(dataset: Dataset, tmp_path: Path) -> None:
    before = _snapshot(dataset.out)
    proc = _cli("query", "SELECT 1", "--out", str(dataset.out), "--format", "xml", cwd=tmp_path)
    _assert_config_error(proc, "--format", "xml")
    assert proc.stdout == ""
    assert _snapshot(dataset.out) == before


def test_query_without_catalog_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = _cli("query", "SELECT count(*) FROM blueprints", "--out", str(empty), cwd=tmp_path)
    _assert_config_error(proc, str(empty / "catalog.duckdb"))
    assert list(empty.iterdir()) == [], "querying a folder without a catalog created files"
    missing = tmp_path / "missing"
    proc = _cli("stats", "--out", str(missing), cwd=tmp_path)
    _assert_config_error(proc, str(missing / "catalog.duckdb"))
    assert not missing.exists()


@pytest.mark.parametrize("sql", ["SELEC 1", "DROP VIEW blueprints",
                                 "CREATE TABLE junk AS SELECT 1 AS x"])
def test_query_that_fails_or_writes_exits_2_and_changes_nothing(sql: str, dataset: Dataset,
                                                                 tmp_path: Path) -> None:
    before = _snapshot(dataset.out)
    proc = _cli("query", sql, "--out", str(dataset.out), cwd=tmp_path)
    _assert_config_error(proc)
    assert _snapshot(dataset.out) == before
    assert query(dataset.out, "SELECT count(*) FROM blueprints")[1][0][0] == N


# the second id holds rich markup: user text must be printed as-is, never parsed as markup
@pytest.mark.parametrize("tid", ["tr_does_not_exist", "tr_[bold]odd[/]"])
def test_show_unknown_id_exits_2(tid: str, dataset: Dataset, tmp_path: Path) -> None:
    before = _snapshot(dataset.out)
    proc = _cli("show", tid, "--out", str(dataset.out), cwd=tmp_path)
    _assert_config_error(proc, tid)
    assert proc.stdout == ""
    assert _snapshot(dataset.out) == before
