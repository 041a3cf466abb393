"""Start-up of a scripted build: time from launch to the first committed batch, and to the end
of the command, with the managed Prefect server (warm: a build ran before) against a temporary
server per command (``orchestration.server: temporary``), side by side in interleaved rounds.

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


def measure(n: int, shard: int, rounds: int) -> dict[str, Any]:
    from trajforge.flows.server import server_home, stop_server

    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        env["XDG_STATE_HOME"] = str(root / "state")
        temporary = root / "temporary.yaml"
        temporary.write_text("orchestration:\n  server: temporary\n")
        cold = one_build(root, "cold", n, shard, env, [])  # starts and migrates the managed server
        runs: dict[str, list[dict[str, float]]] = {"managed (warm)": [], "temporary": []}
        load = []
        for r in range(rounds):
            load.append(os.getloadavg()[0])
            runs["managed (warm)"].append(one_build(root, f"m{r}", n, shard, env, []))
            runs["temporary"].append(one_build(root, f"t{r}", n, shard, env, ["--config", str(temporary)]))
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        stop_server(server_home())
    summary = {mode: {key: {"median": statistics.median(r[key] for r in rs), "min": min(r[key] for r in rs),
                            "max": max(r[key] for r in rs)} for key in ("first_batch_s", "total_s")}
               for mode, rs in runs.items()}
    return {"blueprints": n, "shard_size": shard, "rounds": rounds, "cold_managed": cold, "runs": runs,
            "summary": summary, "load_average_per_round": load}


def render(p: dict[str, Any]) -> str:
    s = p["result"]["summary"]
    ratio_first = s["temporary"]["first_batch_s"]["median"] / s["managed (warm)"]["first_batch_s"]["median"]
    ratio_total = s["temporary"]["total_s"]["median"] / s["managed (warm)"]["total_s"]["median"]
    lines = ["# Build start-up: the managed Prefect server against a temporary one", "",
             f"- date: {p['date_utc']}", f"- command: `{p['command']}`",
             f"- load average at start: {p['load_average']}; 1-min load before each round: "
             f"{', '.join(f'{x:.2f}' for x in p['result']['load_average_per_round'])}", "",
             *machine_markdown(p["machine"]), "",
             f"`trajforge build --n {p['result']['blueprints']} --shard-size {p['result']['shard_size']}` into a fresh "
             f"folder, {p['result']['rounds']} interleaved rounds, medians (min-max):", "",
             "| server | launch to first committed batch (s) | whole command (s) |", "|---|---:|---:|"]
    for mode, row in s.items():
        f, t = row["first_batch_s"], row["total_s"]
        lines.append(f"| {mode} | {f['median']:.2f} ({f['min']:.2f}-{f['max']:.2f}) | "
                     f"{t['median']:.2f} ({t['min']:.2f}-{t['max']:.2f}) |")
    c = p["result"]["cold_managed"]
    lines += [f"| managed, first ever (start + migration, once) | {c['first_batch_s']:.2f} | {c['total_s']:.2f} |", "",
              f"Temporary / managed (warm): first batch {ratio_first:.1f}x, whole command {ratio_total:.1f}x.", ""]
    return "\n".join(lines)


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
