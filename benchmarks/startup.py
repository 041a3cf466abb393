"""Start-up of a scripted build: time from launch to the first committed batch, and to the end
of the command, side by side in interleaved rounds, in three set-ups:

- **managed server + warm process**: the managed Prefect server is up and a warm build process
  (``flows/warm.py``) serves the command (the default on a machine that has built before);
- **managed server, own process**: the server is up, no warm process (``orchestration.warm_process:
  false`` and none running): the command imports Prefect and the rest itself;
- **temporary server**: ``orchestration.server: temporary``, a server started per command.

With a small ``--shard-size`` the first committed batch is a bound on the first episode: its
blueprints generated, played, verified and written.

Each run is ``trajforge build --n N --shard-size S`` into a fresh folder, launched as a
subprocess with no ``PREFECT_API_URL``; the first batch counts as committed when its
trajectories shard appears under ``OUT/trajectories`` (polled every 10 ms). The managed server
lives in a state folder of the benchmark's own (``XDG_STATE_HOME``), warmed by one build first
(its start and migration are reported separately) and stopped at the end.

    .venv/bin/python benchmarks/startup.py                  # N = 100, S = 20, 4 rounds
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

TRAJFORGE = str(Path(sys.executable).parent / "trajforge")


def one_build(root: Path, name: str, n: int, shard: int, env: dict[str, str], extra: list[str]) -> dict[str, float]:
    out = root / name
    began = time.perf_counter()
    proc = subprocess.Popen([TRAJFORGE, "build", "--n", str(n), "--shard-size", str(shard), "--out", str(out),
                             "--quiet", *extra], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = None
    while proc.poll() is None:
        if first is None and any((out / "trajectories").glob("run=*/part-*.parquet")):
            first = time.perf_counter() - began
        time.sleep(0.01)
    total = time.perf_counter() - began
    if proc.returncode != 0:
        raise RuntimeError(f"build {name} failed: {proc.stderr.read() if proc.stderr else ''}")
    if first is None:
        first = total
    return {"first_batch_s": first, "total_s": total}


WARM, OWN, TEMPORARY = "managed server + warm process", "managed server, own process", "temporary server"


def _warm_up(timeout_s: float = 300.0) -> None:
    from trajforge.flows.warm import ensure_warm, warm_status

    ensure_warm(idle_s=900)
    deadline = time.monotonic() + timeout_s
    while warm_status() is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the warm process did not start")
        time.sleep(0.1)


def measure(n: int, shard: int, rounds: int) -> dict[str, Any]:
    from trajforge.flows.server import server_home, stop_server
    from trajforge.flows.warm import stop_warm

    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        env["XDG_STATE_HOME"] = os.environ["XDG_STATE_HOME"] = str(root / "state")
        own = ["--set", "orchestration.warm_process=false"]
        temporary = ["--set", "orchestration.server=temporary", *own]
        cold = one_build(root, "cold", n, shard, env, own)  # starts and migrates the managed server
        runs: dict[str, list[dict[str, float]]] = {WARM: [], OWN: [], TEMPORARY: []}
        load = []
        for r in range(rounds):
            load.append(os.getloadavg()[0])
            stop_warm()
            runs[TEMPORARY].append(one_build(root, f"t{r}", n, shard, env, temporary))
            runs[OWN].append(one_build(root, f"o{r}", n, shard, env, own))
            _warm_up()
            runs[WARM].append(one_build(root, f"w{r}", n, shard, env, []))
        stop_warm()
        stop_server(server_home())
    summary = {mode: {key: {"median": statistics.median(r[key] for r in rs), "min": min(r[key] for r in rs),
                            "max": max(r[key] for r in rs)} for key in ("first_batch_s", "total_s")}
               for mode, rs in runs.items()}
    return {"blueprints": n, "shard_size": shard, "rounds": rounds, "cold_managed": cold, "runs": runs,
            "summary": summary, "load_average_per_round": load}


def render(p: dict[str, Any]) -> str:
    s = p["result"]["summary"]
    lines = ["# Build start-up: warm process, managed Prefect server, temporary server", "",
             f"- date: {p['date_utc']}", f"- command: `{p['command']}`",
             f"- load average at start: {p['load_average']}; 1-min load before each round: "
             f"{', '.join(f'{x:.2f}' for x in p['result']['load_average_per_round'])}", "",
             *machine_markdown(p["machine"]), "",
             f"`trajforge build --n {p['result']['blueprints']} --shard-size {p['result']['shard_size']}` into a fresh "
             f"folder, {p['result']['rounds']} interleaved rounds, medians (min-max):", "",
             "| set-up | launch to first committed batch (s) | whole command (s) |", "|---|---:|---:|"]
    for mode, row in s.items():
        f, t = row["first_batch_s"], row["total_s"]
        lines.append(f"| {mode} | {f['median']:.2f} ({f['min']:.2f}-{f['max']:.2f}) | "
                     f"{t['median']:.2f} ({t['min']:.2f}-{t['max']:.2f}) |")
    c = p["result"]["cold_managed"]
    lines += [f"| managed server, first ever (start + migration, once) | {c['first_batch_s']:.2f} | "
              f"{c['total_s']:.2f} |", ""]
    for other in (OWN, TEMPORARY):
        lines.append(f"- {other} / {WARM}: first batch "
                     f"{s[other]['first_batch_s']['median'] / s[WARM]['first_batch_s']['median']:.1f}x, whole command "
                     f"{s[other]['total_s']['median'] / s[WARM]['total_s']['median']:.1f}x.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", type=int, default=100)
    parser.add_argument("--shard-size", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    payload = {"date_utc": utc_now(), "command": command_line(), "load_average": os.getloadavg(),
               "machine": machine_info(), "result": measure(args.blueprints, args.shard_size, args.rounds)}
    md, _ = write_results("startup", payload, render(payload))
    print(md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
