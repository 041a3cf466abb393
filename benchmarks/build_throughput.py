"""End-to-end build throughput and peak memory of ``trajforge.store.builds.run_build``.

Builds N episodes (default 10,000) from scratch into an empty output folder: generate ->
validate -> simulate -> verify -> write Parquet -> refresh the DuckDB catalog, exactly as
``trajforge build`` does. Default agents are ("oracle", "faulty"), so N/2 blueprints give N
episodes. Each worker count is measured in its own fresh Python process, so
``getrusage(RUSAGE_SELF/RUSAGE_CHILDREN).ru_maxrss`` belong to that build alone.

Measured per worker count:
- wall time of ``run_build`` (domain construction, all shards, catalog refresh);
- episodes per second, with episodes counted from the catalog (``SELECT count(*) FROM
  trajectories``);
- peak RSS of the whole process tree: a thread in the orchestrating process (so it never takes
  the build's GIL) samples the build process and every descendant (the pool workers) every
  50 ms with psutil and keeps the peak of the *sum* and the peak of the largest *single*
  process; every 10th sample also sums PSS (shared pages split between the processes that map
  them, so forked workers are not double-counted);
- ``ru_maxrss`` of RUSAGE_SELF (the build process) and RUSAGE_CHILDREN (the largest reaped
  worker).

Targets (DESIGN.md section 8 / the build brief): >= 300 episodes/s and peak tree RSS < 1 GiB.
Results go to benchmarks/results/build_throughput.{md,json}.

    .venv/bin/python benchmarks/build_throughput.py                  # workers 2, then 1
    .venv/bin/python benchmarks/build_throughput.py --workers 2      # only 2
    .venv/bin/python benchmarks/build_throughput.py --workers 2 --compare   # 2, then 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import GIB, MIB, RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

TARGET_EPS = 300.0
TARGET_RSS_BYTES = 1 * GIB
SAMPLE_INTERVAL_S = 0.05
PSS_EVERY = 10  # samples


# --- the process-tree memory sampler ------------------------------------------------------------

class TreeSampler(threading.Thread):
    """Samples RSS of process ``pid`` plus all its descendants every ``interval`` seconds.

    It runs in the orchestrating process, not in the build process, so it never competes with
    the build for the GIL (sampling from a thread inside a busy single-process build starved
    the sampler and slowed the build)."""

    def __init__(self, pid: int, interval: float = SAMPLE_INTERVAL_S) -> None:
        super().__init__(daemon=True, name="rss-sampler")
        import psutil

        self._psutil = psutil
        self.me = psutil.Process(pid)
        self.interval = interval
        self._stop_event = threading.Event()
        self.t0 = time.perf_counter()
        self.samples = 0
        self.pss_samples = 0
        self.peak_sum = 0
        self.peak_sum_at = 0.0
        self.peak_sum_procs = 0
        self.peak_single = 0
        self.peak_single_role = ""
        self.peak_pss_sum = 0
        self.max_procs = 0
        self.per_pid: dict[int, dict[str, Any]] = {}
        self.sample_seconds = 0.0  # time spent sampling (overhead)

    def _role(self, proc: Any) -> str:
        if proc.pid == self.me.pid:
            return "build process"
        try:
            if proc.ppid() == self.me.pid:
                return "worker"
            cmd = " ".join(proc.cmdline()[:3])
        except (self._psutil.Error, OSError):
            cmd = "?"
        return f"descendant ({cmd[:60]})"

    def sample(self, with_pss: bool = False) -> None:
        psutil = self._psutil
        began = time.perf_counter()
        try:
            procs = [self.me, *self.me.children(recursive=True)]
        except psutil.Error:  # the build process has exited
            return
        total = 0
        total_pss = 0
        alive = 0
        for proc in procs:
            try:
                if with_pss:
                    full = proc.memory_full_info()
                    rss, pss = full.rss, getattr(full, "pss", full.rss)
                    total_pss += pss
                else:
                    rss = proc.memory_info().rss
            except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                continue
            alive += 1
            total += rss
            entry = self.per_pid.get(proc.pid)
            if entry is None:
                entry = self.per_pid[proc.pid] = {"role": self._role(proc), "peak_rss": 0}
            if rss > entry["peak_rss"]:
                entry["peak_rss"] = rss
            if rss > self.peak_single:
                self.peak_single = rss
                self.peak_single_role = entry["role"]
        self.samples += 1
        self.max_procs = max(self.max_procs, alive)
        if total > self.peak_sum:
            self.peak_sum = total
            self.peak_sum_at = began - self.t0
            self.peak_sum_procs = alive
        if with_pss:
            self.pss_samples += 1
            self.peak_pss_sum = max(self.peak_pss_sum, total_pss)
        self.sample_seconds += time.perf_counter() - began

    def run(self) -> None:
        n = 0
        while not self._stop_event.wait(self.interval):
            n += 1
            self.sample(with_pss=(n % PSS_EVERY == 0))

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def summary(self) -> dict[str, Any]:
        return {
            "peak_tree_rss_sum_bytes": self.peak_sum,
            "peak_tree_rss_sum_at_s": round(self.peak_sum_at, 3),
            "peak_tree_rss_sum_processes": self.peak_sum_procs,
            "peak_single_process_rss_bytes": self.peak_single,
            "peak_single_process_role": self.peak_single_role,
            "peak_tree_pss_sum_bytes": self.peak_pss_sum,
            "max_processes_seen": self.max_procs,
            "per_process_peak_rss": [
                {"pid": pid, "role": e["role"], "peak_rss_bytes": e["peak_rss"]}
                for pid, e in sorted(self.per_pid.items())],
            "samples": self.samples,
            "pss_samples": self.pss_samples,
            "sample_interval_s": self.interval,
            "sampler_busy_s": round(self.sample_seconds, 3),
        }


# --- one measured build (runs in a fresh child process) -------------------------------------------

def _maxrss_bytes(who: int) -> int:
    # Linux reports ru_maxrss in KiB (macOS in bytes)
    value = resource.getrusage(who).ru_maxrss
    return value if sys.platform == "darwin" else value * 1024


def measure_one(workers: int, episodes: int, shard_size: int, out: Path) -> dict[str, Any]:
    import psutil

    from trajforge.config import load_config
    from trajforge.store.builds import run_build
    from trajforge.store.catalog import query

    probe = load_config(None, {"store.out": str(out)})
    n_agents = len(probe.simulation.agents)
    n_blueprints = math.ceil(episodes / n_agents)
    config = load_config(None, {
        "generation.n_blueprints": n_blueprints,
        "store.out": str(out),
        "store.workers": workers,
        "store.shard_size": shard_size,
    })
    baseline_rss = psutil.Process().memory_info().rss
    commits: list[float] = []
    began = time.perf_counter()
    result = run_build(config, progress=lambda _s: commits.append(time.perf_counter()))
    wall = time.perf_counter() - began
    _, rows = query(out, "SELECT count(*) FROM trajectories")
    counted = int(rows[0][0])
    _, vrows = query(out, "SELECT count(*), count(DISTINCT trajectory_id), "
                          "count(DISTINCT trajectory_id) FILTER (WHERE trajectory_passed) FROM verdicts")
    summaries = result.summaries
    shard_secs = [s.seconds for s in summaries]
    rejections: dict[str, int] = {}
    for s in summaries:
        for reason, n in s.rejections.items():
            rejections[reason] = rejections.get(reason, 0) + n
    files = [p for p in out.rglob("*.parquet")]
    eps = counted / wall if wall > 0 else 0.0
    return {
        "workers": workers,
        "shard_size": shard_size,
        "agents": list(config.simulation.agents),
        "run_id": result.run_id,
        "n_blueprints_requested": n_blueprints,
        "blueprints_generated": sum(s.blueprints for s in summaries),
        "rejections": rejections,
        "episodes_catalog": counted,
        "episodes_summaries": sum(s.episodes for s in summaries),
        "episodes_skipped_no_fault": sum(s.skipped_episodes for s in summaries),
        "verdict_rows": int(vrows[0][0]),
        "trajectories_with_verdicts": int(vrows[0][1]),
        "trajectories_passed": int(vrows[0][2]),
        "shards_done": result.shards_done,
        "wall_s": round(wall, 3),
        "episodes_per_s": round(eps, 1),
        "first_shard_committed_s": round(commits[0] - began, 3) if commits else None,
        "last_shard_committed_s": round(commits[-1] - began, 3) if commits else None,
        "after_last_commit_s (catalog refresh)": round(wall - (commits[-1] - began), 3) if commits else None,
        "shard_seconds": {"mean": round(statistics.mean(shard_secs), 3),
                          "min": round(min(shard_secs), 3),
                          "max": round(max(shard_secs), 3),
                          "each": [round(x, 3) for x in shard_secs]} if shard_secs else None,
        "parquet_files": len(files),
        "parquet_bytes": sum(p.stat().st_size for p in files),
        "memory": {
            "baseline_rss_before_build_bytes": baseline_rss,
            "ru_maxrss_self_bytes": _maxrss_bytes(resource.RUSAGE_SELF),
            "ru_maxrss_children_bytes": _maxrss_bytes(resource.RUSAGE_CHILDREN),
        },
    }


def verdict(run: dict[str, Any]) -> dict[str, Any]:
    mem = run["memory"]
    # the gating memory number is the larger of the sampled tree peak and the rusage peaks
    peak = max(mem["peak_tree_rss_sum_bytes"],
               mem["ru_maxrss_self_bytes"], mem["ru_maxrss_children_bytes"])
    eps_ok = run["episodes_per_s"] >= TARGET_EPS
    rss_ok = peak < TARGET_RSS_BYTES
    return {"episodes_per_s_target": TARGET_EPS, "episodes_per_s_pass": eps_ok,
            "peak_rss_target_bytes": TARGET_RSS_BYTES, "peak_rss_gating_bytes": peak,
            "peak_rss_pass": rss_ok, "pass": eps_ok and rss_ok}


# --- the orchestrating parent ---------------------------------------------------------------------

def _busy_cpu_s() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine since boot."""
    import psutil

    t = psutil.cpu_times()
    busy = t.user + t.system + getattr(t, "nice", 0.0) + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)
    return busy, getattr(t, "steal", 0.0)


def _own_cpu_s() -> float:
    """CPU seconds of this process plus its reaped descendants (the build and its workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def wait_for_quiet(max_wait_s: float, threshold_pct: float = 25.0) -> dict[str, Any]:
    """Wait (up to ``max_wait_s``) until the machine's CPU use over 2 s is below ``threshold_pct``
    so a concurrent job does not skew the measurement. Returns what was seen."""
    import psutil

    began = time.perf_counter()
    busy = psutil.cpu_percent(interval=2.0)
    while busy >= threshold_pct and time.perf_counter() - began < max_wait_s:
        print(f"[build_throughput] machine busy ({busy:.0f}% CPU from other processes); waiting ...",
              flush=True)
        time.sleep(5)
        busy = psutil.cpu_percent(interval=2.0)
    return {"cpu_percent_before": round(busy, 1), "waited_s": round(time.perf_counter() - began, 1),
            "quiet": busy < threshold_pct, "loadavg_before": [round(x, 2) for x in os.getloadavg()]}

def _run_child(workers: int, episodes: int, shard_size: int, out: Path,
               quiet_wait_s: float) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as handle:
        result_file = Path(handle.name)
    try:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_child", str(result_file),
               "--workers", str(workers), "--episodes", str(episodes),
               "--shard-size", str(shard_size), "--out", str(out)]
        print(f"[build_throughput] workers={workers}: building {episodes} episodes into {out} ...",
              flush=True)
        quiet = wait_for_quiet(quiet_wait_s)
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        busy0, steal0 = _busy_cpu_s()
        own0 = _own_cpu_s()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent)
        sampler = TreeSampler(proc.pid)
        sampler.sample(with_pss=True)
        sampler.start()
        returncode = proc.wait()
        elapsed = time.perf_counter() - t0
        sampler.stop()
        busy1, steal1 = _busy_cpu_s()
        own1 = _own_cpu_s()
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        if returncode != 0:
            raise SystemExit(f"measurement with workers={workers} failed (exit {returncode})")
        run = json.loads(result_file.read_text())
        run["memory"].update(sampler.summary())
        run["memory"]["sampler_cpu_s"] = round(
            (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime), 3)
        foreign = max(0.0, (busy1 - busy0) - (own1 - own0))
        run["machine_load"] = {
            **quiet,
            "process_lifetime_s": round(elapsed, 2),
            "build_tree_cpu_s": round(own1 - own0, 2),
            "other_processes_cpu_s": round(foreign, 2),
            "other_processes_avg_cores": round(foreign / elapsed, 2) if elapsed else None,
            "steal_cpu_s": round(steal1 - steal0, 2),
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        }
        return run
    finally:
        result_file.unlink(missing_ok=True)


def _mib(n: int) -> str:
    return f"{n / MIB:,.0f} MiB"


def render_markdown(payload: dict[str, Any]) -> str:
    runs = payload["runs"]
    lines = [
        "# Build throughput (`run_build`, end to end)",
        "",
        f"- Date (UTC): {payload['date_utc']}",
        f"- Command: `{payload['command']}`",
        f"- Episodes requested: {payload['episodes_requested']} "
        f"(agents {', '.join(runs[0]['agents'])}; {runs[0]['n_blueprints_requested']} blueprints), "
        f"shard size {payload['shard_size']}",
        f"- Targets: >= {TARGET_EPS:.0f} episodes/s and peak RSS of the process tree < 1 GiB",
        f"- Overall: **{'PASS' if payload['pass'] else 'FAIL'}** (the first row; other rows are for comparison)",
        *([f"- **Warning:** other processes used on average more than 0.2 cores during "
           f"{', '.join(str(r['workers']) + ' worker(s)' for r in runs if (r['machine_load']['other_processes_avg_cores'] or 0) > 0.2)}; "
           "those numbers are pessimistic"]
          if any((r["machine_load"]["other_processes_avg_cores"] or 0) > 0.2 for r in runs) else []),
        "",
        "## Machine",
        "",
        *machine_markdown(payload["machine"]),
        "",
        "## Results",
        "",
        "| Workers | Episodes (catalog) | Wall (s) | Episodes/s | Peak tree RSS (sum) | Peak tree PSS (sum) "
        "| Max single process RSS | ru_maxrss self | ru_maxrss children | Throughput | Memory | Verdict |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for run in runs:
        mem, v = run["memory"], run["verdict"]
        lines.append(
            f"| {run['workers']} | {run['episodes_catalog']:,} | {run['wall_s']:.2f} "
            f"| {run['episodes_per_s']:,.1f} | {_mib(mem['peak_tree_rss_sum_bytes'])} "
            f"| {_mib(mem['peak_tree_pss_sum_bytes'])} | {_mib(mem['peak_single_process_rss_bytes'])} "
            f"| {_mib(mem['ru_maxrss_self_bytes'])} | {_mib(mem['ru_maxrss_children_bytes'])} "
            f"| {'PASS' if v['episodes_per_s_pass'] else 'FAIL'} "
            f"| {'PASS' if v['peak_rss_pass'] else 'FAIL'} | **{'PASS' if v['pass'] else 'FAIL'}** |")
    lines += ["", "## Details", ""]
    for run in runs:
        mem = run["memory"]
        lines += [
            f"### workers = {run['workers']}",
            "",
            f"- Blueprints generated {run['blueprints_generated']:,}, rejected "
            f"{sum(run['rejections'].values())}{' ' + str(run['rejections']) if run['rejections'] else ''}; faulty episodes skipped "
            f"(no applicable fault) {run['episodes_skipped_no_fault']}",
            f"- Episodes: catalog {run['episodes_catalog']:,}, shard summaries {run['episodes_summaries']:,}; "
            f"verdict rows {run['verdict_rows']:,}; trajectories passing all checks "
            f"{run['trajectories_passed']:,}",
            f"- Shards {run['shards_done']}; per-shard seconds (in the worker) mean "
            f"{run['shard_seconds']['mean']}, min {run['shard_seconds']['min']}, max {run['shard_seconds']['max']}",
            f"- First shard committed at {run['first_shard_committed_s']} s, last at "
            f"{run['last_shard_committed_s']} s; after the last commit (catalog refresh) "
            f"{run['after_last_commit_s (catalog refresh)']} s",
            f"- Parquet: {run['parquet_files']} files, {run['parquet_bytes'] / MIB:.1f} MiB",
            f"- RSS before the build (imports done): {_mib(mem['baseline_rss_before_build_bytes'])}; "
            f"peak tree sum at {mem['peak_tree_rss_sum_at_s']} s over {mem['peak_tree_rss_sum_processes']} "
            f"processes; largest single process: {mem['peak_single_process_role']}",
            f"- Sampling: {mem['samples']} samples every {int(mem['sample_interval_s'] * 1000)} ms "
            f"({mem['pss_samples']} with PSS) from the orchestrating process (whole life of the "
            f"build process, imports included); sampler CPU {mem['sampler_cpu_s']} s",
            f"- Machine load: before the build {run['machine_load']['cpu_percent_before']}% CPU "
            f"(waited {run['machine_load']['waited_s']} s); during it other processes used "
            f"{run['machine_load']['other_processes_cpu_s']} CPU s "
            f"(avg {run['machine_load']['other_processes_avg_cores']} cores), steal "
            f"{run['machine_load']['steal_cpu_s']} s; the build tree used "
            f"{run['machine_load']['build_tree_cpu_s']} CPU s in {run['machine_load']['process_lifetime_s']} s",
            "- Per-process peak RSS: " + ", ".join(
                f"{p['role']} {_mib(p['peak_rss_bytes'])}" for p in mem["per_process_peak_rss"]),
            "",
        ]
    lines += [
        "Notes: the RSS *sum* counts pages shared between the build process and its forked "
        "workers once per process, so it overstates real use; PSS splits shared pages and is the "
        "fairer total. The PASS/FAIL memory verdict uses the larger of the RSS sum and the two "
        "ru_maxrss values. Episodes/s = catalog episodes / wall time of `run_build`.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default 2, and a 1-worker run for comparison)")
    parser.add_argument("--compare", action="store_true",
                        help="also measure --workers 1 when --workers is given")
    parser.add_argument("--shard-size", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (kept; one sub-folder per worker count). Default: a "
                             "temporary folder, removed afterwards")
    parser.add_argument("--tag", default="",
                        help="suffix for the result files (<name>-TAG.md/.json), for variants")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="where build_throughput.{md,json} go (default benchmarks/results)")
    parser.add_argument("--quiet-wait", type=float, default=180.0,
                        help="seconds to wait for other CPU load to stop before each build "
                             "(it is measured and reported either way)")
    parser.add_argument("--_child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._child is not None:  # one measured build in this fresh process
        run = measure_one(args.workers, args.episodes, args.shard_size, args.out)
        args._child.write_text(json.dumps(run))
        return 0

    explicit = args.workers is not None
    primary = args.workers if explicit else 2
    worker_counts = [primary]
    if (not explicit or args.compare) and primary != 1:
        worker_counts.append(1)

    temp_root = None
    if args.out is None:
        temp_root = Path(tempfile.mkdtemp(prefix="trajforge-bench-"))
        root = temp_root
    else:
        root = args.out
    runs = []
    try:
        for workers in worker_counts:
            out = root / f"workers-{workers}"
            if out.exists() and any(out.iterdir()):
                raise SystemExit(f"{out} is not empty: a resumed build measures nothing; "
                                 "remove it or pick another --out")
            run = _run_child(workers, args.episodes, args.shard_size, out, args.quiet_wait)
            run["verdict"] = verdict(run)
            runs.append(run)
            mem = run["memory"]
            print(f"[build_throughput] workers={workers}: {run['episodes_catalog']} episodes in "
                  f"{run['wall_s']:.2f} s = {run['episodes_per_s']:.1f} episodes/s; peak tree RSS "
                  f"{_mib(mem['peak_tree_rss_sum_bytes'])} (PSS {_mib(mem['peak_tree_pss_sum_bytes'])}), "
                  f"max single {_mib(mem['peak_single_process_rss_bytes'])} -> "
                  f"{'PASS' if run['verdict']['pass'] else 'FAIL'}", flush=True)
    finally:
        if temp_root is not None:
            shutil.rmtree(temp_root, ignore_errors=True)

    payload = {
        "benchmark": "build_throughput",
        "date_utc": utc_now(),
        "command": command_line(),
        "episodes_requested": args.episodes,
        "shard_size": args.shard_size,
        "targets": {"episodes_per_s_min": TARGET_EPS, "peak_rss_max_bytes": TARGET_RSS_BYTES},
        "pass": runs[0]["verdict"]["pass"],
        "machine": machine_info(),
        "runs": runs,
    }
    stem = "build_throughput" + (f"-{args.tag}" if args.tag else "")
    md, js = write_results(stem, payload, render_markdown(payload), args.results)
    print(f"[build_throughput] wrote {md} and {js}")
    return 0 if payload["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
