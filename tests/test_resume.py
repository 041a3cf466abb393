"""The crash test: a build killed with SIGKILL part-way and run again ends with exactly the
rows of an uninterrupted build (DESIGN.md section 6), and the re-run takes every batch the killed
one finished from Prefect's cache instead of recomputing it.

A real ``trajforge build`` runs in a subprocess; the test watches the run's manifest (the
commit point) and kills the process once a few shards are committed. It then adds the debris a
kill mid-write can leave (a torn ``.parquet.tmp``, a shard file whose manifest line never
landed, a half-written manifest line), re-runs the same command to completion and compares the
catalog row for row with that of the same build run uninterrupted in another folder. The
uninterrupted build runs alongside the interrupted one to keep the wall time down. The builds
run their ``build-dataset`` flow against the session's Prefect server (``prefect_api``).

The killed process must be the one that runs the build. A ``trajforge build`` hands its work to
the warm build process when one serves its environment (flows/warm.py), and killing that caller
only SIGTERMs the child, which then ends like a failed build (run record, catalog refreshed): a
stop, not a crash. Earlier tests of the session may leave a warm process behind, so these builds
use a state folder of their own (no warm process there) and start none themselves.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trajforge.config import load_config
from trajforge.store import RunStore, query
from trajforge.store.shards import MANIFEST_FILE, RUNS_DIR

# Twenty shards, so a kill after MIN_COMMITTED of them lands part-way with most of the run still
# to do (the resumed build computes at least one); small shards keep the three builds short.
N = 400
SHARD_SIZE = 20
N_SHARDS = N // SHARD_SIZE
MIN_COMMITTED = 2
POLL_TIMEOUT_S = 120.0
BUILD_TIMEOUT_S = 300.0

# Columns that measure wall-clock time and so legitimately differ between two builds.
WALL_CLOCK = {"trajectories": ("latency_s",)}
VIEWS = ("blueprints", "rejections", "trajectories", "verdicts")


def _build_cmd(out: Path) -> list[str]:
    return [sys.executable, "-m", "trajforge.cli", "build", "--out", str(out), "--n", str(N),
            "--shard-size", str(SHARD_SIZE), "--quiet", "--set", "orchestration.warm_process=false"]


def _env(api_url: str, cwd: Path) -> dict[str, str]:
    """No warm build process can serve these builds: their state folder is their own."""
    return {**os.environ, "PREFECT_API_URL": api_url, "COLUMNS": "200",
            "XDG_STATE_HOME": str(cwd / "state")}


def _start(out: Path, cwd: Path, api_url: str) -> subprocess.Popen[str]:
    # cwd is a scratch folder so nothing lands in the repository's data/ by accident
    return subprocess.Popen(_build_cmd(out), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(api_url, cwd))


def _committed_lines(manifest: Path) -> int:
    """Lines of the manifest that end in a newline (what the store counts as committed)."""
    try:
        return manifest.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _finish(proc: subprocess.Popen[str], what: str) -> str:
    try:
        stdout, stderr = proc.communicate(timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{what} did not finish within {BUILD_TIMEOUT_S:.0f} s")
    assert proc.returncode == 0, f"{what} failed (exit {proc.returncode}):\n{stderr}\n{stdout}"
    return stdout


def _shard_counts(summary: str) -> tuple[int, int, int]:
    """(computed, already done, of those from Prefect's cache) from the build summary, which
    rich may wrap anywhere."""
    flat = " ".join(summary.split())
    match = re.search(r"(\d+) shard\(s\) computed, (\d+) already done \((\d+) from Prefect's cache\)",
                      flat)
    assert match, f"no shard counts in the build summary:\n{summary}"
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def _file_digests(out: Path, run_id: str, ranges: list[tuple[int, int]]) -> dict[str, str]:
    """sha256 of every Parquet file of the given shards."""
    import hashlib

    digests = {}
    for start, stop in ranges:
        for table in VIEWS:
            path = out / table / f"run={run_id}" / f"part-{start:09d}-{stop:09d}.parquet"
            digests[path.relative_to(out).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def _columns(out: Path, view: str) -> list[str]:
    columns, _ = query(out, f"SELECT * FROM {view} LIMIT 0")
    return columns


def _ids(out: Path, view: str) -> list[str]:
    return [r[0] for r in query(out, f"SELECT id FROM {view}")[1]]


def _content(out: Path, view: str) -> tuple[list[str], list[tuple]]:
    skip = WALL_CLOCK.get(view, ())
    exclude = f" EXCLUDE ({', '.join(skip)})" if skip else ""
    return query(out, f"SELECT *{exclude} FROM {view} ORDER BY id")


def _damage(out: Path, run_id: str, committed: list[tuple[int, int]]) -> list[Path]:
    """Leave what a kill in the middle of the next shard can leave behind. Returns the paths
    of files that must be gone after the resumed build."""
    next_start = max(stop for _, stop in committed)
    next_stop = min(N, next_start + SHARD_SIZE)
    part = f"part-{next_start:09d}-{next_stop:09d}.parquet"
    # a Parquet file torn mid-write: no footer; it must never reach a glob or the catalog
    torn = out / "trajectories" / f"run={run_id}" / (part + ".tmp")
    torn.write_bytes(b"PAR1" + os.urandom(512))
    # a shard whose files landed but whose manifest line did not: garbage must be overwritten
    orphan = out / "blueprints" / f"run={run_id}" / part
    orphan.write_bytes(b"PAR1 not really parquet")
    # a manifest line cut off before its newline: not committed, cut off by the next append
    with (out / RUNS_DIR / run_id / MANIFEST_FILE).open("ab") as f:
        f.write(f'{{"files":{{"blueprints":{{"path":"{part}","rows":1'.encode())
    return [torn]


@pytest.mark.slow
def test_killed_build_resumes_from_prefect_cache_to_exactly_the_rows_of_an_uninterrupted_build(
        tmp_path: Path, prefect_api: str) -> None:
    crashed, reference = tmp_path / "crashed", tmp_path / "reference"
    run_id = load_config(None, {"store.out": str(crashed), "generation.n_blueprints": N,
                                "store.shard_size": SHARD_SIZE}).run_id()
    assert run_id == load_config(None, {"store.out": str(reference), "generation.n_blueprints": N,
                                        "store.shard_size": SHARD_SIZE}).run_id()
    manifest = crashed / RUNS_DIR / run_id / MANIFEST_FILE

    victim = _start(crashed, tmp_path, prefect_api)
    uninterrupted = _start(reference, tmp_path, prefect_api)
    try:
        # --- kill the build once a few shards are committed, before it is done -------------
        deadline = time.monotonic() + POLL_TIMEOUT_S
        while _committed_lines(manifest) < MIN_COMMITTED:
            if victim.poll() is not None:
                _, stderr = victim.communicate()
                pytest.fail(f"the build exited (code {victim.returncode}) before {MIN_COMMITTED} "
                            f"shards were committed, so it could not be killed part-way; raise N "
                            f"(now {N}) if the machine got faster.\n{stderr}")
            if time.monotonic() > deadline:
                pytest.fail(f"fewer than {MIN_COMMITTED} shards committed after "
                            f"{POLL_TIMEOUT_S:.0f} s")
            time.sleep(0.02)
        if victim.poll() is not None:
            pytest.fail("the build finished before it could be killed; raise N "
                        f"(now {N}) so that the kill lands part-way")
        os.kill(victim.pid, signal.SIGKILL)
        _, victim_err = victim.communicate(timeout=30)
        assert victim.returncode == -signal.SIGKILL, f"not killed: exit {victim.returncode}"
        lines_at_kill = _committed_lines(manifest)
        assert MIN_COMMITTED <= lines_at_kill < N_SHARDS, (
            f"killed with {lines_at_kill} of {N_SHARDS} shards committed: not part-way")
        # (a build refreshes the catalog when it ends, or when it fails: then its stderr says why)
        assert not (crashed / "catalog.duckdb").exists(), (
            f"catalog refreshed before the build ended; the build's stderr:\n{victim_err[-3000:]}")

        store = RunStore(crashed, run_id)
        committed = [(r.start, r.stop) for r in store.completed()]
        assert len(committed) == lines_at_kill
        must_vanish = _damage(crashed, run_id, committed)
        assert len(store.completed()) == len(committed), "debris changed what counts as committed"
        finished_files = _file_digests(crashed, run_id, committed)
        # batches whose result Prefect persisted before the kill (committed or not yet)
        cached_results = len(list((crashed / ".prefect" / "results").glob(f"trajforge-batch-{run_id}-*")))
        assert cached_results >= len(committed)

        # --- the same command again finishes the run, computing only the missing shards ----
        resumed = subprocess.run(_build_cmd(crashed), cwd=tmp_path, capture_output=True, text=True,
                                 timeout=BUILD_TIMEOUT_S, env=_env(prefect_api, tmp_path))
        assert resumed.returncode == 0, f"resume failed:\n{resumed.stderr}\n{resumed.stdout}"
        computed, done, hits = _shard_counts(resumed.stdout)
        # every batch finished before the kill is a cache hit (the one whose file the debris
        # overwrote, if it had finished, is recomputed), nothing is adopted or done twice
        assert hits == done, f"{done - hits} shard(s) done without a cache hit"
        assert len(committed) <= hits <= cached_results, (hits, len(committed), cached_results)
        assert computed + hits == N_SHARDS and computed >= 1, (computed, hits)
        print(f"\nkilled with {len(committed)} of {N_SHARDS} shards committed, {cached_results} batch "
              f"results persisted; resume: {hits} cache hits, {computed} computed")
        # the finished shards were not recomputed: their files are byte for byte the same
        assert _file_digests(crashed, run_id, committed) == finished_files

        _finish(uninterrupted, "the uninterrupted build")
    finally:
        for proc in (victim, uninterrupted):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate()

    assert not list((tmp_path / "state").rglob("warm-*")), "a build of this test started a warm process"
    # --- the store is clean and complete ----------------------------------------------------
    for path in must_vanish:
        assert not path.exists(), f"leftover {path} survived the resumed build"
    leftovers = sorted(p.relative_to(crashed).as_posix() for p in crashed.rglob("*.tmp"))
    assert leftovers == [], f"temporary files left behind: {leftovers}"
    expected = [(a, min(N, a + SHARD_SIZE)) for a in range(0, N, SHARD_SIZE)]
    for folder in (crashed, reference):
        records = RunStore(folder, run_id).completed()
        assert [(r.start, r.stop) for r in records] == expected, folder.name
        data = (folder / RUNS_DIR / run_id / MANIFEST_FILE).read_bytes()
        n_lines = data.count(b"\n")
        assert data.endswith(b"\n") and n_lines == N_SHARDS, (
            f"{folder.name}: manifest has {n_lines} lines, expected {N_SHARDS}")

    # --- both catalogs hold exactly the same rows -------------------------------------------
    generated = 0
    for view in VIEWS:
        assert _columns(crashed, view) == _columns(reference, view), view
        ids_crashed, ids_reference = _ids(crashed, view), _ids(reference, view)
        assert len(ids_crashed) == len(set(ids_crashed)), f"duplicate ids in resumed {view}"
        assert len(ids_reference) == len(set(ids_reference)), f"duplicate ids in reference {view}"
        assert len(ids_crashed) == len(ids_reference), (
            f"{view}: {len(ids_crashed)} rows after resume, {len(ids_reference)} uninterrupted")
        assert set(ids_crashed) == set(ids_reference), (
            f"{view}: ids differ, e.g. only resumed: {sorted(set(ids_crashed) - set(ids_reference))[:3]}, "
            f"only uninterrupted: {sorted(set(ids_reference) - set(ids_crashed))[:3]}")
        columns, rows_crashed = _content(crashed, view)
        _, rows_reference = _content(reference, view)
        assert columns and not set(WALL_CLOCK.get(view, ())) & set(columns)
        if rows_crashed != rows_reference:
            bad = next(i for i, (a, b) in enumerate(zip(rows_crashed, rows_reference, strict=True)) if a != b)
            diff = [c for c, a, b in zip(columns, rows_crashed[bad], rows_reference[bad], strict=True) if a != b]
            pytest.fail(f"{view}: row {rows_crashed[bad][0]} differs in columns {diff}")
        if view in ("blueprints", "rejections"):
            generated += len(ids_crashed)
    # every index became exactly one blueprint or one rejection, with episodes and verdicts
    assert generated == N
    assert query(crashed, "SELECT count(*) FROM trajectories")[1][0][0] > 0
    assert query(crashed, "SELECT count(*) FROM verdicts")[1][0][0] > 0

    # derived views agree too
    outcomes = "SELECT * FROM outcomes ORDER BY trajectory_id"
    assert query(crashed, outcomes) == query(reference, outcomes)
    runs = "SELECT DISTINCT run_id, name, config FROM runs ORDER BY run_id"
    assert query(crashed, runs) == query(reference, runs)
    assert query(crashed, runs)[1][0][0] == run_id
    # the runs view holds each invocation: the killed one never ended; the resume says what
    # it computed and what came from the cache
    invocations = query(crashed, "SELECT outcome, batches_computed, batches_cached, batches_adopted, "
                                 "episodes FROM runs ORDER BY started_at")[1]
    assert [i[0] for i in invocations] == ["running", "completed"], invocations
    assert invocations[1][1:4] == (computed, hits, 0)
    total = query(crashed, "SELECT count(*) FROM trajectories")[1][0][0]
    assert 0 < invocations[1][4] < total, "the resume added only the missing batches' episodes"
