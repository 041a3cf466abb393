"""The ``build-dataset`` flow on the real Prefect engine: retries on transient errors only, a
failed build recorded as such, and a plain ``trajforge build`` with no server configured (the
managed server, or a temporary one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import trajforge.flows.build as build_module
from trajforge.config import load_config
from trajforge.flows.build import build, code_version
from trajforge.flows.retry import is_transient
from trajforge.store import RunStore, query

N = 20
SHARD_SIZE = 10


def _config(out: Path, **extra):
    return load_config(None, {"store.out": str(out), "generation.n_blueprints": N,
                              "store.shard_size": SHARD_SIZE, **extra})


class FlakySimulation:
    """The real ``simulate_batch``, preceded by ``failures`` raises of ``error``."""

    def __init__(self, error: BaseException, failures: int) -> None:
        self.error, self.failures, self.calls = error, failures, 0
        self.real = build_module.simulate_batch

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return self.real(*args, **kwargs)


@pytest.mark.parametrize("error, transient", [
    (ConnectionError("connection reset"), True), (TimeoutError(), True),
    (OSError(11, "try again"), True), (ValueError("bad"), False), (KeyError("x"), False),
    (OSError(21, "is a directory"), False)])
def test_is_transient(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


def test_transient_error_is_retried_and_the_build_completes(tmp_path: Path, prefect_api: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = FlakySimulation(ConnectionError("provider reset the connection"), failures=1)
    monkeypatch.setattr(build_module, "simulate_batch", flaky)
    result = build(_config(tmp_path / "out", **{"store.workers": 1}), quiet=True)
    assert result.shards_done == N // SHARD_SIZE
    assert flaky.calls == N // SHARD_SIZE + 1  # one retry, then every batch once
    assert query(tmp_path / "out", "SELECT outcome FROM runs")[1] == [("completed",)]


def test_other_errors_are_not_retried_and_the_run_is_recorded_failed(
        tmp_path: Path, prefect_api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = FlakySimulation(ValueError("a bug, not a hiccup"), failures=1)
    monkeypatch.setattr(build_module, "simulate_batch", flaky)
    out = tmp_path / "out"
    cfg = _config(out, **{"store.workers": 1, "generation.n_blueprints": SHARD_SIZE})
    with pytest.raises(ValueError, match="a bug, not a hiccup"):
        build(cfg, quiet=True)
    assert flaky.calls == 1  # never retried
    (outcome, error, computed), = query(out, "SELECT outcome, error, batches_computed FROM runs")[1]
    assert (outcome, computed) == ("failed", 0)
    assert "ValueError: a bug, not a hiccup" in error
    assert RunStore(out, cfg.run_id()).completed() == []

    # the same build again, without the bug, completes and records a second invocation
    monkeypatch.setattr(build_module, "simulate_batch", flaky.real)
    assert build(cfg, quiet=True).shards_done == 1
    assert query(out, "SELECT outcome FROM runs ORDER BY started_at")[1] == [("failed",), ("completed",)]


def test_batch_cache_survives_a_new_process_but_not_a_code_change(tmp_path: Path, prefect_api: str) -> None:
    out = tmp_path / "out"
    first = build(_config(out), quiet=True)
    assert (first.shards_done, first.cached) == (2, 0)
    # the manifest is gone (as if never committed): the batches come from Prefect's cache
    manifest = RunStore(out, first.run_id).manifest_path
    manifest.unlink()
    again = build(_config(out), quiet=True)
    assert (again.shards_done, again.cached, again.adopted) == (0, 2, 0)
    assert len(RunStore(out, first.run_id).completed()) == 2
    # raising n extends: old batches cached, one new batch computed
    more = build(_config(out, **{"generation.n_blueprints": N + SHARD_SIZE}), quiet=True)
    assert (more.shards_done, more.cached) == (1, 2)
    # the cache key holds the stage code's digest: new code, new keys
    keys = sorted(p.name for p in (out / ".prefect" / "results").iterdir())
    assert len(keys) == 3 and all(k.endswith(code_version(("retail",))) for k in keys)


def _plain_env(tmp_path: Path) -> dict[str, str]:
    """No Prefect setting at all, a home and a state folder of the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update({"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state"), "COLUMNS": "200"})
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def _plain_build(tmp_path: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--out", str(out),
                           "--n", str(N), "--shard-size", str(SHARD_SIZE), *extra],
                          cwd=tmp_path, env=_plain_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for noise in ("INFO", "Traceback", "Flow run", "temporary server", "ERROR"):
        assert noise not in proc.stderr, proc.stderr
        assert noise not in proc.stdout, proc.stdout
    return proc


@pytest.mark.slow
def test_plain_builds_share_the_managed_server(tmp_path: Path) -> None:
    """No PREFECT_API_URL: the first build starts the managed server (its database in the state
    folder, nothing in ~/.prefect or OUT/.prefect), the next build, into another folder, reuses
    it, and ``trajforge server stop`` stops it."""
    from trajforge.flows.server import server_status

    state = tmp_path / "state" / "trajforge" / "prefect"
    first = _plain_build(tmp_path, tmp_path / "a")
    assert "Prefect server start-up" in first.stdout
    info = server_status(state)
    assert info is not None
    second = _plain_build(tmp_path, tmp_path / "b", "--seed", "5")
    assert "Prefect server reused" in second.stdout and server_status(state) == info
    for out in (tmp_path / "a", tmp_path / "b"):
        assert query(out, "SELECT outcome, batches_computed FROM runs")[1] == [("completed", 2)]
        assert not (out / ".prefect" / "prefect.db").exists()
    assert (state / "prefect.db").is_file() and not (tmp_path / "home" / ".prefect" / "prefect.db").exists()
    # analytics were off: the telemetry service, which runs in ephemeral mode unless disabled,
    # never started its session (it records one before its first report over the network)
    assert _telemetry_sessions(state / "prefect.db") == 0
    stop = subprocess.run([sys.executable, "-m", "trajforge.cli", "server", "stop"], env=_plain_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert stop.returncode == 0 and f"pid {info.pid}" in stop.stdout, stop.stderr
    assert server_status(state) is None


@pytest.mark.slow
def test_a_temporary_server_lives_under_the_output_folder(tmp_path: Path) -> None:
    """``orchestration.server: temporary``: a server for the one command, under OUT/.prefect."""
    config = tmp_path / "run.yaml"
    config.write_text("orchestration:\n  server: temporary\n")
    out = tmp_path / "out"
    proc = _plain_build(tmp_path, out, "--config", str(config))
    assert "Prefect server start-up" in proc.stdout
    assert (out / ".prefect" / "prefect.db").is_file()
    assert not (tmp_path / "state").exists()
    assert query(out, "SELECT outcome, batches_computed FROM runs")[1] == [("completed", 2)]
    assert _telemetry_sessions(out / ".prefect" / "prefect.db") == 0


def _telemetry_sessions(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM configuration WHERE key = 'TELEMETRY_SESSION'"
                           ).fetchone()[0]


def test_unreachable_configured_server_is_one_line_exit_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update({"PREFECT_API_URL": "http://127.0.0.1:9/api", "COLUMNS": "200"})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--out", str(out),
                           "--n", "2", "--quiet"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: PREFECT_API_URL"), proc.stderr
    assert "127.0.0.1:9" in lines[0]
    assert not out.exists()
