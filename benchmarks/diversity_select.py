"""Greedy diverse selection: 10,000 of 100,000 384-d embeddings (target: under a minute).

Data: ``_embeddings.synthetic_embeddings(n)`` (anisotropic, Zipf-sized clusters, unit rows,
float32; built before timing). Each method runs in a fresh process with a wall-clock limit
(``--limit``, default 600 s) so a slow one is reported as such rather than hanging the script:

- ``exact``: ``greedy_select`` (exact greedy on order-2 Vendi, certified rounds);
- ``stochastic``: ``stochastic_greedy_select`` (ε = 0.01, seed 0).

Reported: wall and CPU seconds of the selection (CPU time shows the cost when the shared
machine's cores are busy with other work), the selected set's VS₂ (the objective) and VS₁, and the mean VS₁ of 10
random subsets of the same size. Also a near-duplicate pass (``remove_near_duplicates`` at
cosine 0.95) and the nearest-neighbour pass (blocked; no n x n) with ``--methods
stochastic,exact,dedup,neighbours``.

Results: ``benchmarks/results/diversity_select.{md,json}``.

    .venv/bin/python benchmarks/diversity_select.py
    .venv/bin/python benchmarks/diversity_select.py --n 20000 --k 2000 --stem diversity_select-20k
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402
from _embeddings import synthetic_embeddings  # noqa: E402


def child(method: str, n: int, k: int) -> dict[str, Any]:
    import numpy as np

    from trajforge.verifiers.diversity.dedup import nearest_neighbours, remove_near_duplicates
    from trajforge.verifiers.diversity.select import greedy_select, stochastic_greedy_select
    from trajforge.verifiers.diversity.vendi import vendi_score

    X = synthetic_embeddings(n)
    began = time.perf_counter()
    cpu = time.process_time()
    if method == "exact":
        sel = greedy_select(X, k)
    elif method == "stochastic":
        sel = stochastic_greedy_select(X, k, rng=np.random.default_rng(0))
    elif method == "dedup":
        d = remove_near_duplicates(X, 0.95)
        return {"seconds": time.perf_counter() - began, "cpu_seconds": time.process_time() - cpu,
                "removed": int((~d.keep).sum())}
    else:
        idx, sim = nearest_neighbours(X)
        return {"seconds": time.perf_counter() - began, "cpu_seconds": time.process_time() - cpu,
                "median_nn_similarity": float(np.median(sim))}
    seconds = time.perf_counter() - began
    cpu_seconds = time.process_time() - cpu
    rng = np.random.default_rng(1)
    random = [vendi_score(X[rng.choice(n, k, replace=False)], 1.0) for _ in range(10)]
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "vendi2": float(sel.vendi2[-1]),
            "vendi1": vendi_score(X[sel.order], 1.0), "random_vendi1_mean": float(np.mean(random)),
            "random_vendi1_std": float(np.std(random))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=10_000)
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--methods", default="stochastic,exact")
    parser.add_argument("--stem", default="diversity_select")
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), int(args.child[2]))))
        return
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    for method in args.methods.split(","):
        began = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", method, str(args.n), str(args.k)],
                                  capture_output=True, text=True, timeout=args.limit)
            results[method] = (json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0
                               else {"error": proc.stderr.strip().splitlines()[-1:]})
        except subprocess.TimeoutExpired:
            results[method] = {"error": f"did not finish within {args.limit} s"}
        results[method]["process_seconds"] = time.perf_counter() - began
        print(method, results[method], flush=True)
    load_after = os.getloadavg()
    payload = {"date": utc_now(), "command": command_line(), "machine": machine_info(), "n": args.n,
               "k": args.k, "load_average_before": load_before, "load_average_after": load_after,
               "results": results}
    lines = [f"# Diverse selection: {args.k:,} of {args.n:,} x 384", "", f"Date: {payload['date']}  ",
             f"Command: `{payload['command']}`  ",
             f"Load average (1/5/15 min) before: {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
             f"after: {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} "
             "(the machine's 2 cores were shared with other work)", "", *machine_markdown(payload["machine"]), "",
             "| method | wall seconds | CPU seconds | VS2 (objective) | VS1 selected | VS1 random (mean ± sd of 10) |",
             "|---|---|---|---|---|---|"]
    for method in ("exact", "stochastic"):
        r = results.get(method)
        if r is None:
            continue
        if "error" in r:
            lines.append(f"| {method} | {r['error']} | | | | |")
        else:
            lines.append(f"| {method} greedy | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['vendi2']:.2f} | {r['vendi1']:.2f} | "
                         f"{r['random_vendi1_mean']:.2f} ± {r['random_vendi1_std']:.2f} |")
    for method, label in (("dedup", "near-duplicate removal (cosine >= 0.95), blocked"),
                          ("neighbours", "nearest neighbour of every row, blocked")):
        r = results.get(method)
        if r is not None:
            lines.append(f"\n{label}: " + (r["error"] if "error" in r else
                                            f"{r['seconds']:.1f} s wall, {r['cpu_seconds']:.1f} s CPU"))
    write_results(args.stem, payload, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
