"""Export throughput and peak memory: ``write_export`` (every format) + ``write_card``.

Builds ``--blueprints`` blueprints (default 5,000, so 10,000 episodes with the default oracle +
faulty agents) into a temporary folder unless ``--out`` names an existing build, then exports
and writes the card in a fresh Python process so its ``ru_maxrss`` is the export's own. Reports
wall time per phase, exported rows per second, the size of the export folder, and peak RSS,
with the machine's load average before and after (the machine is shared).

    .venv/bin/python benchmarks/export_throughput.py
    .venv/bin/python benchmarks/export_throughput.py --blueprints 1000 --out /tmp/bench-build

Results: benchmarks/results/export_throughput.{md,json}.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MIB, command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from trajforge.store.export_writer import write_export
from trajforge.store.card import write_card
out, to = Path(sys.argv[1]), Path(sys.argv[2])
t0 = time.perf_counter()
summary = write_export(out, to)
t1 = time.perf_counter()
write_card(out, to, summary, repo_id="bench/export")
t2 = time.perf_counter()
print(json.dumps({"export_s": t1 - t0, "card_s": t2 - t1, "rows": summary.rows,
                  "contamination": len(summary.contamination),
                  "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blueprints", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=None, help="existing or new build folder to reuse")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="trajforge-export-bench-") as tmp:
        out = args.out or Path(tmp) / "build"
        from trajforge.config import load_config
        from trajforge.store.builds import run_build

        t = time.perf_counter()
        run_build(load_config(None, {"store.out": str(out), "generation.n_blueprints": args.blueprints,
                                     "store.workers": args.workers}))
        build_s = time.perf_counter() - t
        to = Path(tmp) / "export"
        t = time.perf_counter()
        child = subprocess.run([sys.executable, "-c", CHILD, str(out), str(to)], capture_output=True,
                               text=True, check=True)
        wall = time.perf_counter() - t
        result = json.loads(child.stdout.strip().splitlines()[-1])
        size = _folder_bytes(to)
    load_after = os.getloadavg()
    rows = {fmt: sum(v.values()) for fmt, v in result["rows"].items()}
    total_rows = sum(rows.values())
    payload = {
        "date": utc_now(), "command": command_line(), "machine": machine_info(),
        "load_average_before": load_before, "load_average_after": load_after,
        "blueprints": args.blueprints, "build_s": build_s, "export_s": result["export_s"],
        "card_s": result["card_s"], "child_wall_s": wall, "rows": rows,
        "rows_per_s": total_rows / result["export_s"], "export_bytes": size,
        "max_rss_bytes": result["max_rss_bytes"], "contamination_flags": result["contamination"],
    }
    md = [
        "# Export throughput", "",
        f"Date: {payload['date']}  ", f"Command: `{payload['command']}`  ",
        f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
        f"after: {', '.join(f'{x:.2f}' for x in load_after)} (2 shared cores)", "",
        *machine_markdown(payload["machine"]), "",
        "| | |", "|---|---|",
        f"| blueprints | {args.blueprints} (build or resume of --out: {build_s:.1f} s) |",
        *(f"| rows `{fmt}` | {n} |" for fmt, n in rows.items()),
        f"| `write_export` (all formats, splits, contamination check) | {result['export_s']:.2f} s "
        f"({payload['rows_per_s']:.0f} rows/s) |",
        f"| `write_card` (catalog stats + 3 plots) | {result['card_s']:.2f} s |",
        f"| export process wall time (with imports) | {wall:.2f} s |",
        f"| peak RSS of the export process | {result['max_rss_bytes'] / MIB:.0f} MiB |",
        f"| export folder size | {size / MIB:.1f} MiB |",
        f"| test goals flagged as near-duplicates of train goals | {result['contamination']} |",
    ]
    md_path, _ = write_results("export_throughput", payload, "\n".join(md))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
