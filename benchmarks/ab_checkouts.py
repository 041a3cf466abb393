"""A benchmark run on two checkouts side by side, interleaved: did a change cost speed?

The 2 cores here are shared, so absolute figures move with the load; a ratio of two checkouts
measured in alternation within one run does not. The base checkout is a ``git worktree`` of
``--base`` in a temporary folder, imported through ``PYTHONPATH`` (which wins over the editable
install), and runs its own copy of the benchmark script; the working tree runs the current one.

    python benchmarks/ab_checkouts.py --base ad0f25b --rounds 2 --metric runs.0.episodes_per_s \\
        --name build_throughput -- build_throughput.py --workers 1 --episodes 10000
    python benchmarks/ab_checkouts.py --base ad0f25b --rounds 2 --metric summary.ratio --name flow_overhead \
        --result-file benchmarks/results/flow_overhead.json -- flow_overhead.py --episodes 10000 --repeats 2

Each round runs base then current (odd rounds) or current then base (even rounds), so a trend in
the load hits both alike. Results: ``benchmarks/results/ab-<name>.{json,md}`` with every round's
figure, the medians and current / base.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import ROOT, command_line, machine_info, machine_markdown, utc_now, write_results


def _dig(payload: Any, path: str) -> float:
    for part in path.split("."):
        payload = payload[int(part)] if isinstance(payload, list) else payload[part]
    return float(payload)


def _run(checkout: Path, script: list[str], results: Path, pythonpath: Path | None,
         result_file: str | None) -> Any:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    else:
        env.pop("PYTHONPATH", None)
    cmd = [sys.executable, str(checkout / "benchmarks" / script[0]), *script[1:]]
    if result_file is None:
        cmd += ["--results", str(results)]
    done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    if result_file is not None:  # a script that writes to its checkout's results folder
        return json.loads((checkout / result_file).read_text())
    found = sorted(results.glob("*.json"))
    if not found:
        raise SystemExit(f"{' '.join(cmd)} wrote no JSON result into {results}")
    return json.loads(found[0].read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--metric", action="append", required=True,
                        help="dotted path into the benchmark's JSON (repeatable)")
    parser.add_argument("--name", required=True, help="results go to ab-<name>.{json,md}")
    parser.add_argument("--result-file", default=None,
                        help="for a script without --results: its JSON, relative to the checkout")
    parser.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT ARGS... (in benchmarks/)")
    args = parser.parse_args()
    script = [a for a in args.script if a != "--"] if args.script[:1] == ["--"] else args.script
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    load = [os.getloadavg()]
    figures: dict[str, dict[str, list[float]]] = {m: {"base": [], "current": []} for m in args.metric}
    with tempfile.TemporaryDirectory(prefix="tf-ab-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.base], cwd=ROOT, check=True)
        try:
            for i in range(args.rounds):
                order = ("base", "current") if i % 2 == 0 else ("current", "base")
                for side in order:
                    results = Path(tmp) / f"{side}-{i}"
                    results.mkdir()
                    payload = (_run(base, script, results, base, args.result_file) if side == "base"
                               else _run(ROOT, script, results, None, args.result_file))
                    for metric in args.metric:
                        figures[metric][side].append(_dig(payload, metric))
                    load.append(os.getloadavg())
                    print(f"round {i + 1} {side}: " + ", ".join(f"{m} {figures[m][side][-1]:.4g}"
                                                                for m in args.metric), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
    summary = {m: {"base_median": statistics.median(v["base"]), "current_median": statistics.median(v["current"]),
                   "ratio": statistics.median(v["current"]) / statistics.median(v["base"]), **v}
               for m, v in figures.items()}
    payload = {"benchmark": "ab_checkouts", "date_utc": utc_now(), "command": command_line(), "base": args.base,
               "current": head, "script": script, "rounds": args.rounds, "load_averages": load,
               "summary": summary, "machine": machine_info()}
    lines = [f"# A/B: `{' '.join(script)}`, {args.base[:10]} (base) vs {head[:10]} (current)", "",
             f"`{payload['command']}` on {payload['date_utc']}; {args.rounds} interleaved rounds; load averages "
             f"(1, 5, 15 min) from {tuple(round(x, 2) for x in load[0])} to {tuple(round(x, 2) for x in load[-1])}.",
             "", "| metric | base (each round) | current (each round) | base median | current median | "
             "current / base |", "|---|---|---|---:|---:|---:|"]
    for m, s in summary.items():
        lines.append(f"| {m} | {', '.join(f'{x:.4g}' for x in s['base'])} | "
                     f"{', '.join(f'{x:.4g}' for x in s['current'])} | {s['base_median']:.4g} | "
                     f"{s['current_median']:.4g} | {s['ratio']:.3f} |")
    lines += ["", "## Machine", "", *machine_markdown(payload["machine"])]
    write_results(f"ab-{args.name}", payload, "\n".join(lines) + "\n")
    print("\n".join(lines[4:4 + 2 + len(summary)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
