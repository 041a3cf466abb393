"""A mixed build of the four built-in domains at the default size, from one command.

Runs ``trajforge build --config configs/mixed.yaml --out <fresh folder>`` (300 blueprints drawn
over retail, airline, banking and telecom; one oracle and one fault-injected episode each), then
``trajforge stats`` and ``trajforge export --format openai``, and records per domain the
blueprints, episodes and pass rates from the catalog, the card's Domains section and the wall
time. Results go to benchmarks/results/mixed_build.{md,json}.

    .venv/bin/python benchmarks/mixed_build.py
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, ROOT, command_line, machine_info, machine_markdown, utc_now, write_results

CONFIG = ROOT / "configs" / "mixed.yaml"


def _cli(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "trajforge.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"trajforge {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return done.stdout


def measure() -> dict[str, Any]:
    from trajforge.store.catalog import query

    with tempfile.TemporaryDirectory(prefix="mixed-build-") as tmp:
        out = Path(tmp) / "mixed"
        began = time.perf_counter()
        _cli("build", "--config", str(CONFIG), "--out", str(out), "--quiet")
        seconds = round(time.perf_counter() - began, 1)
        stats = _cli("stats", "--out", str(out))
        _cli("export", "--out", str(out), "--to", str(Path(tmp) / "export"), "--format", "openai")
        card = (Path(tmp) / "export" / "README.md").read_text()
        columns, rows = query(out, """
            SELECT t.domain, count(DISTINCT t.blueprint_id) AS blueprints, count(*) AS episodes,
                   avg(o.passed::INT) FILTER (WHERE t.fault_kind IS NULL) AS oracle_pass_rate,
                   avg(o.passed::INT) FILTER (WHERE t.fault_kind IS NOT NULL) AS faulty_pass_rate
            FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id GROUP BY 1 ORDER BY 1""")
        domains_section = card.split("## Domains", 1)[1].split("\n## ", 1)[0] if "## Domains" in card else ""
        return {"command": f"trajforge build --config {CONFIG.relative_to(ROOT)} --out <fresh folder>",
                "build_seconds": seconds, "per_domain": [dict(zip(columns, r, strict=True)) for r in rows],
                "stats_by_domain": "by domain" in stats,
                "card_domains_section": domains_section.strip()}


def render_markdown(payload: dict[str, Any]) -> str:
    r = payload["result"]
    lines = ["# Mixed build: the four built-in domains in one run", "",
             f"- Date (UTC): {payload['date_utc']}", f"- Command: `{payload['command']}`",
             f"- The build: `{r['command']}` ({r['build_seconds']} s, load average at start "
             f"{payload['load_average']})", f"- `trajforge stats` shows a 'by domain' table: {r['stats_by_domain']}", "",
             "| domain | blueprints | episodes | oracle pass rate | fault-injected pass rate |",
             "|---|---:|---:|---:|---:|"]
    for d in r["per_domain"]:
        lines.append(f"| {d['domain']} | {d['blueprints']} | {d['episodes']} | {100 * d['oracle_pass_rate']:.1f}% | "
                     f"{100 * d['faulty_pass_rate']:.1f}% |")
    lines += ["", "## The dataset card's Domains section", "", r["card_domains_section"], "",
              "## Machine", ""] + machine_markdown(payload["machine"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    result = measure()
    payload = {"benchmark": "mixed_build", "date_utc": utc_now(), "command": command_line(),
               "load_average": [round(x, 2) for x in load], "machine": machine_info(), "result": result}
    md, js = write_results("mixed_build", payload, render_markdown(payload), args.results)
    print(f"[mixed_build] wrote {md} and {js}")
    return 0 if result["stats_by_domain"] and result["card_domains_section"] else 1


if __name__ == "__main__":
    sys.exit(main())
