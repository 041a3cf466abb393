"""A scripted ``trajforge build`` at 10,000 blueprints, as a user runs it: episodes/s and the
peak memory of every process the build uses, per task runner.

Each run is ``trajforge build --n N --workers W --runner R`` into a fresh folder, launched as a
subprocess on a machine that has built before (the managed Prefect server is up and the warm
build process serves the command, ``flows/warm.py``). Every 50 ms psutil samples the resident
memory (RSS) of:

- **the build**: the command's own process, the child the warm process forked for it, and every
  descendant of either (the runner's worker processes);
- **the shared processes**: the managed Prefect server and the warm process, which outlive the
  command and serve every build (each reported on its own);
- and counts the Prefect servers the build uses: the managed one, plus any server process among
  the build's own processes (a build must use one, never start several).

Episodes are counted from the catalog. Load averages are recorded before each run.

    .venv/bin/python benchmarks/cli_build.py                      # N = 10,000, threads and processes
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

TRAJFORGE = str(Path(sys.executable).parent / "trajforge")
SAMPLE_S = 0.05


def _cmd(proc: Any) -> str:
    try:
        return " ".join(proc.cmdline())
    except Exception:  # noqa: BLE001 - gone or not ours
        return ""


class Sampler(threading.Thread):
    def __init__(self, client: int, warm_pid: int | None, server_pid: int | None) -> None:
        super().__init__(daemon=True)
        import psutil

        self.psutil = psutil
        self.client = psutil.Process(client)
        self.warm = psutil.Process(warm_pid) if warm_pid else None
        self.server = psutil.Process(server_pid) if server_pid else None
        self.known_children = {c.pid for c in self.warm.children()} if self.warm else set()
        self.stop_event = threading.Event()
        self.peak_build = 0
        self.peak_build_procs = 0
        self.peak_total = 0
        self.peak_shared: dict[str, int] = {}
        self.max_servers = 0
        self.build_child: int | None = None

    def _rss(self, procs: list[Any]) -> tuple[int, int]:
        total = alive = 0
        for proc in procs:
            try:
                total += proc.memory_info().rss
                alive += 1
            except (self.psutil.Error, OSError):
                continue
        return total, alive

    def sample(self) -> None:
        ps = self.psutil
        build: list[Any] = []
        try:
            build = [self.client, *self.client.children(recursive=True)]
        except ps.Error:
            pass
        if self.warm is not None:
            try:
                for child in self.warm.children():
                    if child.pid not in self.known_children:  # forked for this build
                        self.build_child = child.pid
                        build += [child, *child.children(recursive=True)]
            except ps.Error:
                pass
        build_rss, build_procs = self._rss(build)
        shared = {}
        if self.server is not None:
            shared["managed Prefect server"] = self._rss([self.server])[0]
        if self.warm is not None:
            shared["warm process"] = self._rss([self.warm])[0]
        # Prefect servers this build uses: the managed one, and any the build's processes started
        servers = (self.server is not None) + sum(
            1 for proc in build if "uvicorn" in _cmd(proc) or "server_process" in _cmd(proc))
        self.max_servers = max(self.max_servers, servers)
        if build_rss > self.peak_build:
            self.peak_build, self.peak_build_procs = build_rss, build_procs
        self.peak_total = max(self.peak_total, build_rss + sum(shared.values()))
        for name, rss in shared.items():
            self.peak_shared[name] = max(self.peak_shared.get(name, 0), rss)

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.sample()
            time.sleep(SAMPLE_S)


def _warm_pid() -> int | None:
    from trajforge.flows.warm import warm_status

    info = warm_status()
    return int(info["pid"]) if info else None


def _warm_up() -> None:
    from trajforge.flows.warm import ensure_warm, warm_status

    ensure_warm(idle_s=1800)
    deadline = time.monotonic() + 300
    while warm_status() is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the warm process did not start")
        time.sleep(0.1)


def one_build(root: Path, name: str, n: int, workers: int, runner: str, shard: int,
              env: dict[str, str]) -> dict[str, Any]:
    import duckdb

    out = root / name
    load = os.getloadavg()
    began = time.perf_counter()
    proc = subprocess.Popen([TRAJFORGE, "build", "--n", str(n), "--workers", str(workers), "--runner", runner,
                             "--shard-size", str(shard), "--out", str(out), "--quiet"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    from trajforge.flows.server import server_home, server_status

    server = server_status(server_home())
    sampler = Sampler(proc.pid, _warm_pid(), server.pid if server else None)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - began
    sampler.stop_event.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"build {name} failed: {err}")
    with duckdb.connect(str(out / "catalog.duckdb"), read_only=True) as con:
        row = con.execute("SELECT count(*) FROM trajectories").fetchone()
    episodes = int(row[0]) if row else 0
    return {"runner": runner, "workers": workers, "blueprints": n, "episodes": episodes, "wall_s": wall,
            "episodes_per_s": episodes / wall, "peak_build_rss": sampler.peak_build,
            "peak_build_processes": sampler.peak_build_procs, "peak_shared_rss": sampler.peak_shared,
            "peak_total_rss": sampler.peak_total, "prefect_servers_max": sampler.max_servers,
            "served_warm": sampler.build_child is not None, "load_before": load}


def measure(n: int, workers: int, runners: list[str], shard: int) -> list[dict[str, Any]]:
    from trajforge.flows.server import server_home, stop_server
    from trajforge.flows.warm import stop_warm

    with tempfile.TemporaryDirectory(prefix="cli-build-bench-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        env["XDG_STATE_HOME"] = os.environ["XDG_STATE_HOME"] = str(root / "state")
        subprocess.run([TRAJFORGE, "build", "--n", "4", "--out", str(root / "first"), "--quiet"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        runs = []
        try:
            for runner in runners:
                _warm_up()
                runs.append(one_build(root, f"{runner}", n, workers, runner, shard, env))
        finally:
            stop_warm()
            stop_server(server_home())
    return runs


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def render(p: dict[str, Any]) -> str:
    lines = ["# `trajforge build`, scripted, as a user runs it: throughput and memory", "",
             f"- date: {p['date_utc']}", f"- command: `{p['command']}`", "", *machine_markdown(p["machine"]), "",
             "| runner | workers | blueprints | episodes | wall s | episodes/s | peak RSS of the build (processes) "
             "| managed server peak | warm process peak | build + shared peak | Prefect servers at once "
             "| served by the warm process | load before (1, 5, 15 min) |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|"]
    for r in p["runs"]:
        shared = r["peak_shared_rss"]
        lines.append(
            f"| {r['runner']} | {r['workers']} | {r['blueprints']:,} | {r['episodes']:,} | {r['wall_s']:.1f} | "
            f"{r['episodes_per_s']:.0f} | {_mib(r['peak_build_rss'])} ({r['peak_build_processes']}) | "
            f"{_mib(shared.get('managed Prefect server', 0))} | {_mib(shared.get('warm process', 0))} | "
            f"{_mib(r['peak_total_rss'])} | {r['prefect_servers_max']} | {'yes' if r['served_warm'] else 'no'} | "
            f"{', '.join(f'{x:.2f}' for x in r['load_before'])} |")
    lines += ["", "RSS counts pages shared between a forked child and the warm process once in each, so the "
              "build + shared sum is an upper bound.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runners", nargs="+", default=["threads", "processes"])
    parser.add_argument("--shard-size", type=int, default=500)
    args = parser.parse_args(argv)
    payload = {"date_utc": utc_now(), "command": command_line(), "machine": machine_info(),
               "runs": measure(args.blueprints, args.workers, args.runners, args.shard_size)}
    md, _ = write_results("cli_build", payload, render(payload))
    print(md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
