"""Fingerprint of a built dataset: proof that a refactor changed no row.

Runs the real ``trajforge build`` (a fresh output folder, a fixed config) and hashes, per table,
the sorted canonical JSON of every row, leaving out the columns that hold wall-clock time or
per-invocation ids (``latency_s``; the ``runs`` view is per invocation and is left out whole).
Two checkouts that build the same rows print the same digests.

    python benchmarks/fingerprint.py --label before --n 300 --seed 11
    python benchmarks/fingerprint.py --label after --n 300 --seed 11 --compare before

Results: ``benchmarks/results/fingerprint-<label>.{json,md}``; ``--compare LABEL`` reads that
label's JSON and exits 1 when any table differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results

TABLES = ("blueprints", "rejections", "proposals", "trajectories", "verdicts")
WALL_CLOCK = {"latency_s"}  # measured time, not content


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def fingerprint(out: Path) -> dict[str, dict[str, Any]]:
    import duckdb

    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{out}'")  # the views' shard paths are relative
        tables: dict[str, dict[str, Any]] = {}
        for name in TABLES:
            cursor = con.execute(f"SELECT * FROM {name}")
            columns = [d[0] for d in cursor.description]
            keep = [i for i, c in enumerate(columns) if c not in WALL_CLOCK]
            lines = sorted(json.dumps(_canonical({columns[i]: row[i] for i in keep}), sort_keys=True,
                                      default=str) for row in cursor.fetchall())
            digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
            tables[name] = {"rows": len(lines), "sha256": digest,
                            "columns": [columns[i] for i in keep]}
        return tables
    finally:
        con.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", required=True)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--compare", default=None, help="a label whose result must match")
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("trajforge")
    with tempfile.TemporaryDirectory(prefix="tf-fingerprint-") as tmp:
        out = Path(tmp) / "data"
        cmd = [str(exe), "build", "--n", str(args.n), "--seed", str(args.seed), "--out", str(out)]
        began = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})
        seconds = time.perf_counter() - began
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-4000:], sep="\n")
            raise SystemExit(f"build failed with exit {done.returncode}")
        tables = fingerprint(out)
    payload = {"label": args.label, "date": utc_now(), "command": command_line(),
               "build": " ".join(cmd[1:3] + cmd[3:7]), "build_seconds": round(seconds, 2),
               "machine": machine_info(), "tables": tables}
    lines = [f"# Dataset fingerprint: {args.label}", "",
             f"`{payload['command']}` on {payload['date']}; the build: `trajforge "
             f"{payload['build']} --out <fresh folder>` ({seconds:.1f} s).", "",
             "Per table: the sha256 of its rows as sorted canonical JSON, without "
             f"{', '.join(sorted(WALL_CLOCK))} (wall-clock); the per-invocation `runs` view is left out.",
             "", "| table | rows | sha256 |", "|---|---:|---|"]
    lines += [f"| {name} | {t['rows']} | `{t['sha256']}` |" for name, t in tables.items()]
    status = 0
    if args.compare:
        other = json.loads((RESULTS / f"fingerprint-{args.compare}.json").read_text())["tables"]
        same = {name: other.get(name, {}).get("sha256") == t["sha256"] for name, t in tables.items()}
        status = 0 if all(same.values()) else 1
        lines += ["", f"Compared with `{args.compare}`: "
                  + ("every table identical." if status == 0 else
                     "DIFFERENT: " + ", ".join(n for n, s in same.items() if not s))]
        payload["compared_with"] = args.compare
        payload["identical"] = status == 0
    lines += ["", "## Machine", "", *machine_markdown(payload["machine"])]
    write_results(f"fingerprint-{args.label}", payload, "\n".join(lines) + "\n")
    print("\n".join(lines[6:6 + len(tables) + 3]))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
