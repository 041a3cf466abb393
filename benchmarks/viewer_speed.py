"""How fast the dataset browser's pages come back on a big dataset (target: the overview and a
filtered list page each under 1 s).

Starts ``trajforge view --out DIR --port 0`` as its own process (as a user would), then times
each page twice over: the HTTP answer (urllib, loopback, the whole body read) and the page as a
browser shows it (Debian's headless Chromium through Playwright: navigation start to the load
event, plots decoded). Each page is fetched ``--repeat`` times; the first fetch and the median
and max of the rest are reported. Also measured in-process: the index build (what the server
does at start) and the overview with its plots drawn afresh (what the first visitor after a new
catalog waits for).

Build the dataset once, e.g. ``trajforge build --n 50000 --out /tmp/tfview100k --workers 2``
(100,000 episodes: oracle and faulty agent per blueprint), then:

    .venv/bin/python benchmarks/viewer_speed.py --out /tmp/tfview100k
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from _common import command_line, machine_info, machine_markdown, utc_now, write_results

TARGET_S = 1.0
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _get(url: str) -> tuple[float, int]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
    return time.perf_counter() - started, len(body)


def _pages(out: Path) -> tuple[dict[str, str], dict[str, Any]]:
    """The pages to time, chosen from the dataset itself."""
    from trajforge.store import query

    (n, verdicts), = query(out, "SELECT (SELECT count(*) FROM trajectories), (SELECT count(*) FROM verdicts)")[1]
    check, failing = query(out, 'SELECT "check", count(*) FROM verdicts WHERE NOT passed GROUP BY 1 '
                                "ORDER BY 2 DESC LIMIT 1")[1][0]
    fault = query(out, "SELECT fault_kind FROM trajectories WHERE fault_kind IS NOT NULL GROUP BY 1 "
                       "ORDER BY count(*) DESC LIMIT 1")[1][0][0]
    domain = query(out, "SELECT domain FROM trajectories GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")[1][0][0]
    (tid, bid), = query(out, "SELECT t.id, t.blueprint_id FROM trajectories t JOIN outcomes o "
                             "ON o.trajectory_id = t.id WHERE NOT o.passed AND t.fault_kind IS NOT NULL "
                             "ORDER BY t.id LIMIT 1")[1]
    pages = {
        "overview": "",
        "list (no filter)": "trajectories",
        f"list: failing check {check}": "trajectories?" + urlencode({"check": check}),
        f"list: failing check {check}, page 100": "trajectories?" + urlencode({"check": check, "page": 100}),
        f"list: domain {domain}, failed, fault {fault}": "trajectories?" + urlencode(
            {"domain": domain, "outcome": "failed", "fault": fault}),
        "list: user behaviour chatty, termination user_stop": "trajectories?" + urlencode(
            {"style": "chatty", "termination": "user_stop"}),
        "transcript (failing episode)": f"t/{quote(tid)}",
        "twin side by side": f"compare/{quote(tid)}",
        "blueprint": f"b/{quote(bid)}",
        "runs and evaluations": "runs",
        "search 'rain jacket' (first: scans every message)": "trajectories?q=rain+jacket",
    }
    facts = {"trajectories": n, "verdict_rows": verdicts, "check": check, "check_failing": failing,
             "parquet_files": sum(1 for _ in out.rglob("*.parquet"))}
    return pages, facts


def _in_process(out: Path) -> dict[str, float]:
    """What a catalog costs once: its index, and its plots (drawn before any page is served)."""
    from trajforge.viewer.render import ServerLinks
    from trajforge.viewer.views import Viewer

    started = time.perf_counter()
    viewer = Viewer(out)
    index_s = time.perf_counter() - started
    viewer.warm()  # imports matplotlib once, as the server does before it listens
    viewer.drop_plots()  # what a new catalog does: the plots are drawn again
    started = time.perf_counter()
    viewer.warm()
    redraw_s = time.perf_counter() - started
    started = time.perf_counter()
    viewer.overview(ServerLinks())
    cached_s = time.perf_counter() - started
    viewer.dataset.close()
    return {"index_build_s": index_s, "plots_drawn_s": redraw_s, "overview_prepared_s": cached_s}


def _browser_times(base: str, pages: dict[str, str], repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        tab.goto(base + "runs")  # the browser's own start-up is not the page's time
        for name, path in pages.items():
            times[name] = []
            for _ in range(repeat):
                tab.goto(base + path, wait_until="load")
                times[name].append(tab.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return (n.loadEventEnd - n.startTime) / 1000; }"))
        browser.close()
    return times


def _summary(values: list[float]) -> dict[str, float]:
    rest = values[1:] or values
    return {"first_s": values[0], "median_s": statistics.median(rest), "max_s": max(rest)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="a built dataset folder")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tag", default="", help="suffix of the result files")
    args = parser.parse_args()
    out = args.out.resolve()

    load_before = os.getloadavg()
    pages, facts = _pages(out)
    in_process = _in_process(out)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "trajforge.cli", "view", "--out", str(out), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
        if not found:
            raise SystemExit(f"the viewer did not start: {line!r}")
        base = found.group(1)
        startup_s = time.perf_counter() - started
        http: dict[str, dict[str, Any]] = {}
        for name, path in pages.items():
            runs = [_get(base + path) for _ in range(args.repeat)]
            http[name] = {**_summary([t for t, _ in runs]), "bytes": runs[0][1]}
        browser = {name: _summary(values) for name, values in _browser_times(base, pages, args.repeat).items()}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    load_after = os.getloadavg()

    gated = [name for name in pages if name == "overview" or name.startswith("list: failing check")]
    worst = max(max(http[n]["max_s"], browser[n]["max_s"]) for n in gated)
    verdict = "PASS" if worst < TARGET_S else "FAIL"
    info = machine_info()
    payload = {"date": utc_now(), "command": command_line(), "dataset": str(out), **facts,
               "load_average_before": load_before, "load_average_after": load_after,
               "server_startup_s": startup_s, **in_process, "http": http, "browser": browser,
               "target_s": TARGET_S, "verdict": verdict, "machine": info}
    lines = [
        "# Dataset browser speed (`trajforge view`)", "",
        f"- Date (UTC): {payload['date']}",
        f"- Command: `{payload['command']}`",
        f"- Dataset: `{out}`: {facts['trajectories']:,} trajectories, {facts['verdict_rows']:,} verdict rows, "
        f"{facts['parquet_files']} Parquet files (built with `trajforge build --n 50000 --workers 2`, "
        "the scripted default: an oracle and a faulty episode per blueprint)",
        f"- Load average (1, 5, 15 min): before {', '.join(f'{x:.2f}' for x in load_before)}; "
        f"after {', '.join(f'{x:.2f}' for x in load_after)} (2 shared cores)",
        f"- Target: the overview and a filtered list page each under {TARGET_S:.0f} s, served from a "
        "prepared catalog (its index built and its plots drawn: what `trajforge view` does before it "
        "listens, and again, before answering, when a build replaces the catalog; those once-per-catalog "
        f"costs are the next table). Verdict: **{verdict}** (worst HTTP or Chromium time of the overview "
        f"and the failing-check lists: {worst:.3f} s)", "",
        "## Start-up (once per catalog)", "",
        "| | seconds |", "|---|---:|",
        f"| index build: per-trajectory table from the read-only catalog (in-process; the first open after "
        "a build also checks the new shards' checksums, `store.connect`) | "
        f"{in_process['index_build_s']:.3f} |",
        f"| `trajforge view` until it prints its URL (imports, index, overview drawn once) | {startup_s:.3f} |",
        f"| the overview's plots drawn for a catalog (in-process, matplotlib already imported) | "
        f"{in_process['plots_drawn_s']:.3f} |",
        f"| the overview from a prepared catalog (in-process) | {in_process['overview_prepared_s']:.3f} |", "",
        f"## Pages ({args.repeat} fetches each; median and max leave out the first)", "",
        "| page | HTTP first | HTTP median | HTTP max | KiB | Chromium first | Chromium median | Chromium max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in pages:
        h, b = http[name], browser[name]
        lines.append(f"| {name} | {h['first_s']:.3f} | {h['median_s']:.3f} | {h['max_s']:.3f} | "
                     f"{h['bytes'] / 1024:.0f} | {b['first_s']:.3f} | {b['median_s']:.3f} | {b['max_s']:.3f} |")
    lines += ["", "HTTP: request sent to body read over loopback. Chromium: navigation start to the load "
              "event (HTML parsed, stylesheet and plot images decoded). A full-text search scans every "
              "message once; its hits are kept per query, so its later pages and repeats are list-speed.",
              "", "## Machine", "", *machine_markdown(info)]
    md, js = write_results("viewer_speed" + (f"-{args.tag}" if args.tag else ""), payload, "\n".join(lines))
    print(md.read_text())


if __name__ == "__main__":
    main()
