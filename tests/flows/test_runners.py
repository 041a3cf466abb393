"""The same config built by the thread runner, by a real local Dask cluster of two worker
processes and by a local Ray instance gives the same trajectory ids and verdicts, and the
workers wrote their own shards."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajforge.config import load_config
from trajforge.flows.build import build
from trajforge.store import query

N = 60
SHARD_SIZE = 10  # six batches, so both workers get some


def _config(out: Path, runner: str, workers: int):
    return load_config(None, {"store.out": str(out), "generation.n_blueprints": N,
                              "store.shard_size": SHARD_SIZE, "store.workers": workers,
                              "orchestration.runner": runner})


def _verdicts(out: Path) -> list[tuple]:
    return query(out, 'SELECT id, trajectory_id, "check", passed, reason, evidence, reward '
                      "FROM verdicts ORDER BY id")[1]


def _assert_same_rows(expected: Path, got: Path) -> None:
    ids = "SELECT id FROM trajectories ORDER BY id"
    assert query(expected, ids)[1] == query(got, ids)[1]
    assert len(query(got, ids)[1]) > N  # oracle + faulty episodes
    assert _verdicts(expected) == _verdicts(got)
    blueprints = "SELECT id FROM blueprints ORDER BY id"
    assert query(expected, blueprints) == query(got, blueprints)


@pytest.fixture(scope="module")
def threads_out(tmp_path_factory: pytest.TempPathFactory, prefect_api: str) -> Path:
    out = tmp_path_factory.mktemp("runners") / "threads"
    threads = build(_config(out, "threads", 1), quiet=True)
    assert (threads.shards_done, threads.cached) == (N // SHARD_SIZE, 0)
    return out


@pytest.mark.slow
def test_dask_cluster_of_two_workers_builds_what_threads_build(tmp_path: Path, threads_out: Path) -> None:
    import distributed

    # a real two-worker cluster (separate processes), reached by address like a user's would be
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        cfg = _config(tmp_path / "dask", "dask", 2).model_copy(update={
            "orchestration": load_config(None, {"orchestration.runner": "dask",
                                                "orchestration.address": cluster.scheduler_address}
                                         ).orchestration})
        with distributed.Client(cluster) as client, distributed.get_task_stream(client) as stream:
            dask = build(cfg, quiet=True)
        # which workers ran batches (and so wrote their shards): both of them
        workers_used = {t["worker"] for t in stream.data}
    assert (dask.shards_done, dask.cached) == (N // SHARD_SIZE, 0)

    _assert_same_rows(threads_out, tmp_path / "dask")
    assert len(workers_used) == 2, workers_used
    runners = query(tmp_path / "dask", "SELECT runner, outcome, batches_computed FROM runs")[1]
    assert runners == [("dask", "completed", N // SHARD_SIZE)]


@pytest.mark.slow
def test_cli_dask_runner_starts_a_local_cluster(tmp_path: Path, prefect_api: str) -> None:
    """``--runner dask`` without an address: a local cluster of ``--workers`` processes, started
    and stopped with the build."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--out", str(out), "--n", "20",
                           "--shard-size", "10", "--runner", "dask", "--workers", "2", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "2 shard(s) computed" in proc.stdout
    assert query(out, "SELECT runner, outcome FROM runs")[1] == [("dask", "completed")]
    assert query(out, "SELECT count(*) FROM blueprints")[1][0][0] + query(
        out, "SELECT count(*) FROM rejections")[1][0][0] == 20


@pytest.mark.slow
def test_ray_builds_what_threads_build(tmp_path: Path, threads_out: Path) -> None:
    """``--runner ray`` without an address: a local Ray instance with ``workers`` CPUs, started
    and shut down with the build (with an address it joins that cluster instead)."""
    import ray

    ray_build = build(_config(tmp_path / "ray", "ray", 2), quiet=True)
    assert (ray_build.shards_done, ray_build.cached) == (N // SHARD_SIZE, 0)
    assert not ray.is_initialized(), "the build left its Ray instance running"
    _assert_same_rows(threads_out, tmp_path / "ray")
    assert query(tmp_path / "ray", "SELECT runner, outcome FROM runs")[1] == [("ray", "completed")]


@pytest.mark.slow
def test_process_pool_builds_what_threads_build(tmp_path: Path, threads_out: Path) -> None:
    """``--runner processes``: Prefect's process pool, for CPU-bound scripted builds."""
    processes = build(_config(tmp_path / "processes", "processes", 2), quiet=True)
    assert (processes.shards_done, processes.cached) == (N // SHARD_SIZE, 0)
    _assert_same_rows(threads_out, tmp_path / "processes")


@pytest.mark.parametrize(("models", "concurrency", "shard_size", "ahead"), [
    (False, 64, 10, 0),  # scripted: no model server to keep busy
    (True, 64, 500, 1),  # a batch fills the gate: one waits
    (True, 16, 15, 2),  # batches smaller than the gate: enough wait to fill it
    (True, 64, 10, 7),
])
def test_a_model_backed_build_keeps_enough_batches_waiting_to_fill_the_gate(
        models: bool, concurrency: int, shard_size: int, ahead: int) -> None:
    from trajforge.flows.runners import STRAGGLING, batches_ahead, episode_feed, make_task_runner, threads_ahead

    settings = {"simulation.concurrency": concurrency, "store.shard_size": shard_size}
    if models:
        settings.update({"simulation.agents": ["llm"], "simulation.agent_model.model": "openai/oracle",
                         "simulation.agent_model.api_base": "http://127.0.0.1:9/v1"})
    config = load_config(None, settings)
    assert config.uses_models() is models
    assert batches_ahead(config) == ahead
    runner = make_task_runner(config.orchestration, 2, ahead=threads_ahead(config))
    assert runner._max_workers == 2 + STRAGGLING * ahead  # room for the batches the feed adds
    feed = episode_feed(config.model_copy(update={"store": config.store.model_copy(update={"workers": 2})}), "x")
    if models:  # a gate's worth of places kept waiting, up to the threads
        assert feed is not None
        assert (feed.keep_waiting, feed.most, feed.granted()) == (concurrency, runner._max_workers, 0)
    else:
        assert feed is None
