"""Vendi score benchmarks: 1,000,000 x 384 streamed, and the ``vendi-score`` package at n=5,000.

1. **Streaming at 1M.** Writes ``--n`` (default 1,000,000) synthetic 384-d float32 unit
   embeddings (``_embeddings.synthetic_embeddings``) to a raw file, then, in a fresh process
   per setting, scores them with ``trajforge.verifiers.diversity.vendi.stream_score`` (all four
   orders from one pass) reading ``--batch`` rows at a time into one reused buffer. Reported:
   wall and CPU time of the scoring (file reads included, imports excluded), and memory: the
   child's peak RSS (``VmHWM``) minus its RSS before scoring. It runs for two batch sizes at the full
   n, and for a quarter of n at the larger batch, to show memory follows the batch, not n.
2. **Against vendi-score at n=5,000.** ``vendi_score.vendi.score_X(X)`` (its n x n kernel path;
   it ignores ``q`` and always computes q=1) against ours on the same float64 X: the relative
   difference (target <= 1e-9) and the speed ratio (median of ``--repeats``). Our
   ``vendi_score`` picks the dual form here (n > d); the kernel form is timed too.
   vendi-score runs in a subprocess, because its n x n ``eigvalsh`` can crash OpenBLAS on some
   CPUs (see shared notes); it comes from the ``bench`` extra.

Results: ``benchmarks/results/diversity_vendi.{md,json}``.

    .venv/bin/python benchmarks/diversity_vendi.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402
from _embeddings import synthetic_embeddings  # noqa: E402

D = 384


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    """VmHWM: this process image's peak RSS (``ru_maxrss`` would carry over the high-water
    mark of the forking parent across exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def child_stream(path: str, n: int, batch: int) -> dict[str, Any]:
    import numpy as np

    from trajforge.verifiers.diversity.vendi import ORDERS, stream_score

    buf = np.empty((batch, D), dtype=np.float32)
    before = _rss()
    began = time.perf_counter()
    cpu = time.process_time()

    def batches():
        with open(path, "rb", buffering=0) as f:
            left = n
            while left:
                rows = min(batch, left)
                view = buf[:rows]
                got = f.readinto(memoryview(view).cast("B"))
                assert got == rows * D * 4, "short read"
                left -= rows
                yield view

    scores = stream_score(batches(), ORDERS)
    seconds = time.perf_counter() - began
    cpu_seconds = time.process_time() - cpu
    peak = _peak_rss()
    return {"n": n, "batch": batch, "seconds": seconds, "cpu_seconds": cpu_seconds, "extra_mb": (peak - before) / 2**20,
            "batch_mb": batch * D * 4 / 2**20,
            "scores": {("inf" if q == float("inf") else str(q)): v for q, v in scores.items()}}


def child_reference(path: str, repeats: int) -> dict[str, Any]:
    import numpy as np
    from vendi_score import vendi

    X = np.load(path)
    times, value = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        value = float(vendi.score_X(X))
        times.append(time.perf_counter() - began)
    return {"value": value, "seconds": sorted(times)[len(times) // 2], "all_seconds": times}


def _run_child(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--batches", default="16384,131072")
    parser.add_argument("--ref-n", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tmp", default=None)
    parser.add_argument("--stem", default="diversity_vendi")
    parser.add_argument("--child", nargs="*")
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = (child_stream(rest[0], int(rest[1]), int(rest[2])) if kind == "stream"
                  else child_reference(rest[0], int(rest[1])))
        print(json.dumps(result))
        return

    import numpy as np

    from trajforge.verifiers.diversity.vendi import vendi_score

    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(dir=args.tmp, prefix="vendi-bench-"))
    data = tmp / "X.f32"
    with data.open("wb") as f:  # generation is not timed
        for lo in range(0, args.n, 200_000):
            f.write(synthetic_embeddings(min(200_000, args.n - lo), D, seed=lo).tobytes())
    batches = [int(b) for b in args.batches.split(",")]
    stream = [_run_child("stream", str(data), str(args.n), str(b)) for b in batches]
    stream.append(_run_child("stream", str(data), str(args.n // 4), str(batches[-1])))
    data.unlink()

    reference: dict[str, Any] = {"error": "skipped (--ref-n 0)"}
    ours: dict[str, Any] = {}
    X = synthetic_embeddings(max(args.ref_n, 1), D, seed=7).astype(np.float64)
    ref_path = tmp / "ref.npy"
    if args.ref_n:
        np.save(ref_path, X)
        reference = _run_child("reference", str(ref_path), str(args.repeats))
    for form in (("dual", "kernel") if args.ref_n else ()):
        times = []
        for _ in range(args.repeats if form == "dual" else 1):  # the n x n form once: it is slow
            began = time.perf_counter()
            value = vendi_score(X, 1.0, form=form)
            times.append(time.perf_counter() - began)
        ours[form] = {"value": value, "seconds": sorted(times)[len(times) // 2]}
    ref_path.unlink(missing_ok=True)
    tmp.rmdir()
    if "value" in reference:
        for form in ours:
            ours[form]["relative_difference"] = abs(ours[form]["value"] - reference["value"]) / reference["value"]
            ours[form]["speedup_vs_score_X"] = reference["seconds"] / ours[form]["seconds"]
    load_after = os.getloadavg()
    payload = {"date": utc_now(), "command": command_line(), "machine": machine_info(),
               "load_average_before": load_before, "load_average_after": load_after,
               "stream": stream, "reference": {"n": args.ref_n, "vendi_score.score_X": reference,
                                               "trajforge": ours}}
    lines = ["# Vendi score benchmarks", "", f"Date: {payload['date']}  ", f"Command: `{payload['command']}`  ",
             f"Load average (1/5/15 min) before: {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
             f"after: {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} "
             "(2 cores; a load average above 2 means other work shared them)", "",
             *machine_markdown(payload["machine"]), "",
             f"## Streaming: n x {D} float32, all four orders from one pass (target: 1M in < 5 s, memory by batch)", "",
             "| n | batch rows | batch MiB | wall seconds | CPU seconds | extra memory MiB | Vendi q=0.5 | q=1 | q=2 | q=inf |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in stream:
        if "error" in s:
            lines.append(f"| failed: {s['error']} |||||||||")
            continue
        sc = s["scores"]
        lines.append(f"| {s['n']:,} | {s['batch']:,} | {s['batch_mb']:.0f} | {s['seconds']:.2f} | {s['cpu_seconds']:.2f} | "
                     f"{s['extra_mb']:.0f} | {sc['0.5']:.2f} | {sc['1.0']:.2f} | {sc['2.0']:.2f} | {sc['inf']:.2f} |")
    lines += ["", f"## Against vendi-score 0.0.3 `score_X` at n = {args.ref_n:,} x {D} (float64, q = 1)", ""]
    if "value" in reference:
        lines += ["| implementation | Vendi | seconds (median) | relative difference | speed-up |",
                  "|---|---|---|---|---|",
                  f"| vendi_score.vendi.score_X (n x n) | {reference['value']:.12f} | {reference['seconds']:.3f} | - | 1 |"]
        for form, r in ours.items():
            lines.append(f"| trajforge vendi_score(form='{form}') | {r['value']:.12f} | {r['seconds']:.3f} | "
                         f"{r['relative_difference']:.2e} | {r['speedup_vs_score_X']:.0f}x |")
    else:
        lines.append(f"vendi-score failed: {reference['error']}")
    write_results(args.stem, payload, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
