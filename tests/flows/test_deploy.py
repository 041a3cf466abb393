"""A scheduled deployment on a real ``prefect server``: registered by ``trajforge deploy`` with a
cron schedule, run by a real process worker, its rows land in the catalog; a second run of it
adds new, deduplicated rows and takes the finished batches from the cache. ``--serve`` runs one
without a worker.

Everything runs on loopback: the server (its own PREFECT_HOME in a temporary folder, analytics
off), the worker, and the flow-run processes the worker starts. All are stopped at the end.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from trajforge.store import query

ROOT = Path(__file__).resolve().parents[2]
CRON = "0 3 * * *"
POOL = "trajforge-test"
NAME = "nightly-test"
SERVER_START_S = 240.0
RUN_TIMEOUT_S = 300.0


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prefect_cli() -> str:
    return str(Path(sys.executable).with_name("prefect"))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in its own session, and everything it started."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"prefect server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"prefect server not healthy after {SERVER_START_S:.0f} s:\n{log.read_text()[-3000:]}")


def _wait_final(client, flow_run_id, worker: subprocess.Popen[bytes], log: Path):
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        run = client.read_flow_run(flow_run_id)
        if run.state is not None and run.state.is_final():
            return run
        if worker.poll() is not None:
            pytest.fail(f"worker exited ({worker.returncode}):\n{log.read_text()[-3000:]}")
        time.sleep(1)
    pytest.fail(f"flow run not finished after {RUN_TIMEOUT_S:.0f} s:\n{log.read_text()[-3000:]}")


@pytest.mark.slow
def test_scheduled_deployment_on_a_real_server_adds_rows_to_the_catalog(tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect-home"), "PREFECT_API_URL": api,
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_WORKER_QUERY_SECONDS": "1",
           "PREFECT_RUNNER_POLL_FREQUENCY": "1",
           "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "300", "COLUMNS": "200"}
    data = tmp_path / "data"
    config = tmp_path / "run.yaml"
    config.write_text(f"name: {NAME}\ngeneration:\n  n_blueprints: 20\n"
                      f"store:\n  out: {data}\n  shard_size: 10\n")
    server_log, worker_log = tmp_path / "server.log", tmp_path / "worker.log"
    serve_log, served = tmp_path / "serve.log", tmp_path / "served"
    server = worker = serving = None
    try:
        with server_log.open("wb") as sink:
            server = subprocess.Popen([_prefect_cli(), "server", "start", "--host", "127.0.0.1",
                                       "--port", str(port)], env=env, stdout=sink,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        _wait_healthy(api, server, server_log)

        # --- register the scheduled deployment through the CLI ------------------------------
        deployed = subprocess.run([sys.executable, "-m", "trajforge.cli", "deploy", "--cron", CRON,
                                   "--config", str(config), "--pool", POOL, "--grow", "10"],
                                  cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
        assert deployed.returncode == 0, deployed.stderr
        assert "Registered deployment" in deployed.stdout

        with temporary_settings(updates={PREFECT_API_URL: api}), get_client(sync_client=True) as client:
            deployment = client.read_deployment_by_name(f"trajforge-scheduled-build/{NAME}")
            assert deployment.work_pool_name == POOL
            assert [s.schedule.cron for s in deployment.schedules] == [CRON]
            assert all(s.active for s in deployment.schedules)
            assert deployment.parameters["grow"] == 10
            assert deployment.parameters["config"]["store"]["out"] == str(data)
            assert client.read_work_pool(POOL).type == "process"

            # the example project file registers too, once its work pool exists
            created = subprocess.run([_prefect_cli(), "work-pool", "create", "trajforge", "--type",
                                      "process"], cwd=ROOT, env=env, capture_output=True, text=True,
                                     timeout=120)
            assert created.returncode == 0, created.stdout + created.stderr
            registered = subprocess.run([_prefect_cli(), "--no-prompt", "deploy", "--prefect-file",
                                         str(ROOT / "configs" / "prefect.yaml"), "--all"],
                                        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
            assert registered.returncode == 0, registered.stdout + registered.stderr
            example = client.read_deployment_by_name("trajforge-scheduled-build/nightly")
            assert [s.schedule.cron for s in example.schedules] == ["0 3 * * *"]
            assert example.parameters["grow"] == 500

            # --- a process worker runs it ----------------------------------------------------
            with worker_log.open("wb") as sink:
                worker = subprocess.Popen([_prefect_cli(), "worker", "start", "--pool", POOL],
                                          env=env, stdout=sink, stderr=subprocess.STDOUT,
                                          start_new_session=True, cwd=tmp_path)
            first = run_deployment(f"trajforge-scheduled-build/{NAME}", timeout=0)
            run = _wait_final(client, first.id, worker, worker_log)
            assert run.state.is_completed(), f"{run.state}\n{worker_log.read_text()[-3000:]}"
            generated = query(data, "SELECT (SELECT count(*) FROM blueprints) + "
                                    "(SELECT count(*) FROM rejections)")[1][0][0]
            assert generated == 20  # n_blueprints; grow extends only past what is committed
            episodes_first = query(data, "SELECT count(*) FROM trajectories")[1][0][0]
            assert episodes_first > 0

            # --- the next scheduled run appends new rows, no duplicates ------------------------
            second = run_deployment(f"trajforge-scheduled-build/{NAME}", timeout=0)
            run = _wait_final(client, second.id, worker, worker_log)
            assert run.state.is_completed(), f"{run.state}\n{worker_log.read_text()[-3000:]}"
            _stop(worker)

            # --- or no worker: `trajforge deploy --serve` registers and runs it itself -----------
            with serve_log.open("wb") as sink:
                serving = subprocess.Popen(
                    [sys.executable, "-m", "trajforge.cli", "deploy", "--serve", "--cron", CRON,
                     "--config", str(config), "--name", "served-test", "--out", str(served)],
                    cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT,
                    start_new_session=True)
            deadline = time.monotonic() + 120
            while True:
                try:
                    client.read_deployment_by_name("trajforge-scheduled-build/served-test")
                    break
                except Exception:  # noqa: BLE001 - not registered yet
                    if time.monotonic() > deadline or serving.poll() is not None:
                        pytest.fail(f"--serve did not register:\n{serve_log.read_text()[-3000:]}")
                    time.sleep(1)
            third = run_deployment("trajforge-scheduled-build/served-test", timeout=0)
            run = _wait_final(client, third.id, serving, serve_log)
            assert run.state.is_completed(), f"{run.state}\n{serve_log.read_text()[-3000:]}"
    finally:
        for proc in (serving, worker, server):
            if proc is not None:
                _stop(proc)
    assert query(served, "SELECT count(*) FROM blueprints")[1][0][0] + query(
        served, "SELECT count(*) FROM rejections")[1][0][0] == 20

    generated = query(data, "SELECT (SELECT count(*) FROM blueprints) + "
                            "(SELECT count(*) FROM rejections)")[1][0][0]
    assert generated == 30
    ids = [r[0] for r in query(data, "SELECT id FROM trajectories")[1]]
    assert len(ids) == len(set(ids)) > episodes_first
    invocations = query(data, "SELECT flow_name, outcome, n_blueprints, batches_computed, "
                              "batches_cached FROM runs ORDER BY started_at")[1]
    assert invocations == [("build-dataset", "completed", 20, 2, 0),
                           ("build-dataset", "completed", 30, 1, 2)]
    # the server ran with analytics off: its telemetry service never opened a session
    import sqlite3

    with sqlite3.connect(tmp_path / "prefect-home" / "prefect.db") as con:
        assert con.execute("SELECT count(*) FROM configuration WHERE key = 'TELEMETRY_SESSION'"
                           ).fetchone()[0] == 0


def test_example_project_file_holds_a_valid_run_config() -> None:
    import yaml

    from trajforge.flows.deploy import check_schedule
    from trajforge.schemas.config import RunConfig

    from trajforge.sft.train import TrainConfig

    project = yaml.safe_load((ROOT / "configs" / "prefect.yaml").read_text())
    build, train = project["deployments"]
    functions = []
    for deployment in (build, train):
        path, _, function = deployment["entrypoint"].partition(":")
        assert (ROOT / path).is_file()
        functions.append(function)
        config = RunConfig.model_validate(deployment["parameters"]["config"])
        assert config.store.out.is_absolute()
        for schedule in deployment["schedules"]:
            check_schedule(schedule["cron"])
    assert functions == ["scheduled_build", "build_train_eval"]
    from trajforge.flows.stages import DEFAULT_EVAL

    parameters = train["parameters"]
    assert Path(TrainConfig.model_validate(parameters["train"]).output_dir).is_absolute()
    assert set(parameters["evaluation"]) <= set(DEFAULT_EVAL)


def test_deploy_with_a_train_config_registers_build_train_eval(tmp_path: Path, prefect_api: str) -> None:
    """``trajforge deploy --train-config``: the deployment runs build -> export -> train -> eval,
    with the train config as a parameter (its output folder made absolute for the worker)."""
    from prefect.client.orchestration import get_client
    from typer.testing import CliRunner

    from trajforge.cli import app

    result = CliRunner().invoke(app, [
        "deploy", "--cron", CRON, "--name", "nightly-train", "--pool", "trajforge-test-train",
        "--out", str(tmp_path / "data"), "--train-config", str(ROOT / "configs" / "sft-tiny.yaml")])
    assert result.exit_code == 0, result.output
    assert "trajforge-build-train-eval/nightly-train" in " ".join(result.output.split())
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("trajforge-build-train-eval/nightly-train")
    assert deployment.entrypoint == "trajforge.flows.stages.build_train_eval"
    assert deployment.work_pool_name == "trajforge-test-train"
    assert [s.schedule.cron for s in deployment.schedules] == [CRON]
    train = deployment.parameters["train"]
    assert train["model"] == "tiny" and Path(train["output_dir"]).is_absolute()
    assert deployment.parameters["config"]["store"]["out"] == str((tmp_path / "data").resolve())

    missing = CliRunner().invoke(app, ["deploy", "--cron", CRON, "--train-config",
                                       str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "--train-config" in missing.output


def _deploy_cli(tmp_path: Path, *args: str, api_url: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update({"COLUMNS": "200", "PREFECT_HOME": str(tmp_path / "prefect-home")})
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return subprocess.run([sys.executable, "-m", "trajforge.cli", "deploy", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, api, names", [
    (["--cron", "0 3 * * *"], None, ["PREFECT_API_URL", "prefect server start"]),
    (["--cron", "every night"], "http://127.0.0.1:9/api", ["--cron", "every night"]),
    (["--cron", "0 3 * * *", "--grow", "-1"], "http://127.0.0.1:9/api", ["--grow"]),
])
def test_deploy_refuses_bad_input_with_one_line(tmp_path: Path, args: list[str], api: str | None,
                                                 names: list[str]) -> None:
    proc = _deploy_cli(tmp_path, *args, api_url=api)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for name in names:
        assert name in lines[0]
