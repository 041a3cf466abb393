"""Storage faults end to end (issue 19): each scenario runs the real ``trajforge`` CLI in
subprocesses against one dataset folder, then counts what the dataset holds against an
uninterrupted build of the same config.

Scenarios: kill -9 at five points of a build then the same command again; a truncated shard
file followed by another run's build (the issue's silent row loss), then ``check --repair``; a
byte-flipped shard then a resuming build; a disk that fills mid-run (a tmpfs filled by a ballast
file), then freed; no room to start (a 2 MB tmpfs, the temporary Prefect server); a table folder
turned read-only mid-run (a read-only bind mount); two builds into one folder at once; an error
raised inside the flow (a table folder that is a file). The tmpfs and bind-mount scenarios need
root; without it they are reported as skipped.

For each: rows expected (the reference build's rows, over blueprints, rejections, trajectories and
verdicts), rows found, whether they are exactly the reference rows (``latency_s`` aside),
duplicate ids, stale manifest lines (committed lines whose files do not match them), wasted work
(batches computed more than once, over every invocation), and the line the faulted command printed.

    .venv/bin/python benchmarks/fault_matrix.py [--n 600] [--shard-size 50]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

from trajforge.store import query
from trajforge.store.integrity import reading_damaged

VIEWS = ("blueprints", "rejections", "trajectories", "verdicts")
WALL_CLOCK = {"trajectories": "latency_s"}


@dataclass
class Outcome:
    scenario: str
    rows_expected: int
    rows_found: int | None = None
    exact: bool | None = None
    duplicate_ids: int | None = None
    stale_lines: int | None = None
    wasted_batches: int | None = None
    line: str = ""
    seconds: float = 0.0
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Bench:
    def __init__(self, root: Path, n: int, shard_size: int, api: str) -> None:
        self.root, self.n, self.shard_size, self.api = root, n, shard_size, api
        self.shards = math.ceil(n / shard_size)

    def cmd(self, out: Path, *extra: str, n: int | None = None, seed: int | None = None) -> list[str]:
        args = [sys.executable, "-m", "trajforge.cli", "build", "--out", str(out), "--n", str(n or self.n),
                "--shard-size", str(self.shard_size), "--quiet", *extra]
        return args + (["--seed", str(seed)] if seed is not None else [])

    def env(self, api: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        if api:
            env["PREFECT_API_URL"] = self.api
        return env

    def run(self, args: list[str], api: bool = True, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, env=self.env(api), timeout=timeout)

    def start(self, args: list[str], api: bool = True) -> subprocess.Popen[str]:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env(api))


def manifest_lines(out: Path) -> int:
    manifests = list((out / "runs").glob("*/manifest.jsonl")) if (out / "runs").is_dir() else []
    return sum(len(m.read_bytes().split(b"\n")) - 1 for m in manifests)


def wait_lines(out: Path, proc: subprocess.Popen[str], lines: int, timeout: float = 3600) -> bool:
    deadline = time.monotonic() + timeout
    while manifest_lines(out) < lines:
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def digest(out: Path) -> tuple[int, str, int]:
    """(rows, content digest, duplicate ids) over the four shard views."""
    rows, dups = 0, 0
    h = hashlib.sha256()
    with reading_damaged(False):
        for view in VIEWS:
            skip = f" EXCLUDE ({WALL_CLOCK[view]})" if view in WALL_CLOCK else ""
            found = query(out, f"SELECT *{skip} FROM {view} ORDER BY id")[1]
            rows += len(found)
            h.update(repr(found).encode())
            dups += query(out, f"SELECT count(*) - count(DISTINCT id) FROM {view}")[1][0][0]
    return rows, h.hexdigest(), dups


def stale_lines(out: Path) -> int:
    """Committed manifest lines (the latest for their range) whose files no longer match them;
    a line a recomputation superseded is not stale, it is history."""
    from trajforge.store.shards import RunStore, run_ids

    return sum(len(RunStore(out, rid).committed()) - len(RunStore(out, rid).completed()) for rid in run_ids(out))


def computed_batches(out: Path) -> int:
    """Batches computed over every invocation that recorded its end."""
    with reading_damaged(True):
        value = query(out, "SELECT coalesce(sum(batches_computed), 0) FROM runs")[1][0][0]
    return int(value)


def first_line(text: str) -> str:
    """The line a command printed on stderr ("[k lines] <last>" when it printed more than one)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "(nothing on stderr)"
    return (lines[0] if len(lines) == 1 else f"[{len(lines)} lines] {lines[-1]}")[:300]


def finish(bench: Bench, o: Outcome, out: Path, reference: tuple[int, str, int], extra_computed: int = 0) -> Outcome:
    rows, content, dups = digest(out)
    o.rows_found, o.exact, o.duplicate_ids = rows, content == reference[1], dups
    o.stale_lines = stale_lines(out)
    o.wasted_batches = computed_batches(out) + extra_computed - bench.shards
    return o


def can_mount(probe: Path) -> bool:
    probe.mkdir(parents=True, exist_ok=True)
    ok = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)],
                                              capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(probe)], capture_output=True)
    return ok


def mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)


def umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path) -> Path:
    ballast = folder / "ballast"
    with ballast.open("wb", buffering=0) as f:
        for size in (1 << 16, 512):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass
    return ballast


# --- scenarios -------------------------------------------------------------------------------------

def kill_at(bench: Bench, reference: tuple[int, str, int], share: float) -> Outcome:
    out = bench.root / f"kill-{int(share * 100)}"
    o = Outcome(f"kill -9 at {share:.0%} of the shards", reference[0])
    began = time.perf_counter()
    proc = bench.start(bench.cmd(out))
    target = max(1, round(share * bench.shards))
    if not wait_lines(out, proc, target):
        o.notes = "the build ended before the kill point"
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    at_kill = manifest_lines(out)
    resumed = bench.run(bench.cmd(out))
    o.line = "resume: " + first_line(resumed.stderr)
    with reading_damaged(True):
        hits, adopted = query(out, "SELECT coalesce(sum(batches_cached), 0), coalesce(sum(batches_adopted), 0) "
                                   "FROM runs WHERE outcome = 'completed'")[1][0]
    o.extra = {"committed_at_kill": at_kill, "resume_rc": resumed.returncode, "resume_cache_hits": int(hits),
               "resume_adopted": int(adopted)}
    # the killed invocation recorded no end: what it computed is what the resume found in the cache
    finish(bench, o, out, reference, extra_computed=int(hits))
    o.seconds = time.perf_counter() - began
    return o


def truncated_then_other_build(bench: Bench, reference: tuple[int, str, int], ref_out: Path) -> Outcome:
    out = bench.root / "truncated"
    shutil.copytree(ref_out, out)
    o = Outcome("truncated shard, then another run's build", reference[0])
    began = time.perf_counter()
    part = sorted(out.glob("trajectories/run=*/part-*.parquet"))[1]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    other = bench.run(bench.cmd(out, n=10, seed=7))
    reads = bench.run([sys.executable, "-m", "trajforge.cli", "query", "--out", str(out),
                       "SELECT count(*) FROM blueprints"])
    o.line = first_line(other.stderr) + " | query: " + first_line(reads.stderr)
    o.extra = {"other_build_rc": other.returncode, "query_rc": reads.returncode}
    repair = bench.run([sys.executable, "-m", "trajforge.cli", "check", "--out", str(out), "--repair"])
    o.extra["repair_rc"] = repair.returncode
    # the other run's rows are in the folder too: compare this run's rows only
    shutil.rmtree(out / "runs" / next(p.name for p in (out / "runs").iterdir() if not
                                      (ref_out / "runs" / p.name).exists()))
    bench.run([sys.executable, "-m", "trajforge.cli", "catalog", "rebuild", "--out", str(out)])
    finish(bench, o, out, reference)  # the copied reference invocation counts the first computation
    o.seconds = time.perf_counter() - began
    return o


def flipped_then_resume(bench: Bench, reference: tuple[int, str, int], ref_out: Path) -> Outcome:
    out = bench.root / "flipped"
    shutil.copytree(ref_out, out)
    o = Outcome("byte-flipped shard, then the same build again", reference[0])
    began = time.perf_counter()
    part = sorted(out.glob("verdicts/run=*/part-*.parquet"))[2]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    resumed = bench.run(bench.cmd(out))
    o.line = "resume: " + first_line(resumed.stderr)
    o.extra = {"resume_rc": resumed.returncode}
    finish(bench, o, out, reference)
    o.seconds = time.perf_counter() - began
    return o


def disk_full(bench: Bench, reference: tuple[int, str, int], size: str) -> Outcome:
    mnt = bench.root / "mnt-full"
    mount_tmpfs(mnt, size)
    out = mnt / "D"
    o = Outcome(f"disk fills mid-run ({size} tmpfs), then freed", reference[0])
    began = time.perf_counter()
    try:
        proc = bench.start(bench.cmd(out))
        wait_lines(out, proc, max(1, bench.shards // 3))
        ballast = fill(mnt)
        _, stderr = proc.communicate()
        o.line = first_line(stderr)
        outcome = [pq_outcome(p) for p in (out / "runs").glob("*/invocations/*.parquet")]
        temporaries = [str(p) for p in out.rglob("*.tmp") if ".prefect" not in p.parts]
        ballast.unlink()
        resumed = bench.run(bench.cmd(out))
        o.extra = {"rc": proc.returncode, "recorded": outcome, "temporaries_left": len(temporaries),
                   "resume_rc": resumed.returncode, "resume_line": first_line(resumed.stderr)}
        finish(bench, o, out, reference)
    finally:
        umount(mnt)
    o.seconds = time.perf_counter() - began
    return o


def pq_outcome(path: Path) -> str:
    import pyarrow.parquet as pq

    return str(pq.read_table(path, columns=["outcome"]).column(0)[0])


def no_room(bench: Bench) -> Outcome:
    mnt = bench.root / "mnt-2m"
    mount_tmpfs(mnt, "2m")
    o = Outcome("no room to start (2 MB tmpfs, temporary Prefect server)", 0)
    # the case: a server per command, its database under the full folder (the managed
    # server's lives elsewhere and needs no room there)
    temporary = bench.root / "temporary.yaml"
    temporary.write_text("orchestration:\n  server: temporary\n")
    began = time.perf_counter()
    try:
        result = bench.run(bench.cmd(mnt / "D", "--config", str(temporary)), api=False, timeout=900)
        o.line = first_line(result.stderr)
        o.extra = {"rc": result.returncode}
        o.rows_found = 0
    finally:
        umount(mnt)
    o.seconds = time.perf_counter() - began
    return o


def read_only_mid_run(bench: Bench, reference: tuple[int, str, int], run_id: str) -> Outcome:
    out = bench.root / "read-only"
    folder = out / "verdicts" / f"run={run_id}"
    o = Outcome("table folder turned read-only mid-run", reference[0])
    began = time.perf_counter()
    proc = bench.start(bench.cmd(out))
    wait_lines(out, proc, max(1, bench.shards // 3))
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
    try:
        _, stderr = proc.communicate()
        o.line = first_line(stderr)
        o.extra = {"rc": proc.returncode,
                   "recorded": [pq_outcome(p) for p in (out / "runs").glob("*/invocations/*.parquet")]}
    finally:
        umount(folder)
    resumed = bench.run(bench.cmd(out))
    o.extra["resume_rc"] = resumed.returncode
    finish(bench, o, out, reference)
    o.seconds = time.perf_counter() - began
    return o


def concurrent(bench: Bench, reference: tuple[int, str, int]) -> Outcome:
    out = bench.root / "concurrent"
    o = Outcome("two builds into one folder at once", reference[0])
    began = time.perf_counter()
    first = bench.start(bench.cmd(out))
    wait_lines(out, first, 1)
    second = bench.run(bench.cmd(out))
    first.communicate()
    o.line = first_line(second.stderr)
    o.extra = {"first_rc": first.returncode, "second_rc": second.returncode}
    finish(bench, o, out, reference)
    o.seconds = time.perf_counter() - began
    return o


def error_in_flow(bench: Bench, run_id: str) -> Outcome:
    out = bench.root / "error-in-flow"
    folder = out / "trajectories" / f"run={run_id}"
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where a folder goes")
    o = Outcome("error raised inside the flow (a table folder is a file)", 0)
    began = time.perf_counter()
    result = bench.run(bench.cmd(out))
    o.line = first_line(result.stderr)
    o.extra = {"rc": result.returncode, "stderr_lines": len(result.stderr.strip().splitlines())}
    o.rows_found = 0
    o.seconds = time.perf_counter() - began
    return o


# --- the report ------------------------------------------------------------------------------------

def markdown(outcomes: list[Outcome], info: dict[str, Any], args: argparse.Namespace, began: str,
             load: tuple[float, float, float], reference_s: float, skipped: list[str]) -> str:
    lines = [
        "# Storage fault matrix (issue 19)", "",
        f"Date: {began}. Command: `{command_line()}`. Load average at start: "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}." + (f" Code: {args.source}." if args.source else ""), "",
        f"Workload: the default config, {args.n} blueprints in shards of {args.shard_size}; every command "
        f"is the real `trajforge` CLI in a subprocess (one Prefect server for all, except the no-room "
        f"scenario, which starts the temporary one). Reference: an uninterrupted build ({reference_s:.0f} s).",
        "",
        "| scenario | rows expected | rows found | exact | duplicate ids | stale manifest lines | "
        "wasted batches | the line printed | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        cells = [o.scenario, str(o.rows_expected), "-" if o.rows_found is None else str(o.rows_found),
                 "-" if o.exact is None else ("yes" if o.exact else "**no**"),
                 "-" if o.duplicate_ids is None else str(o.duplicate_ids),
                 "-" if o.stale_lines is None else str(o.stale_lines),
                 "-" if o.wasted_batches is None else str(o.wasted_batches),
                 "`" + o.line.replace("|", "\\|").replace("`", "'") + "`", f"{o.seconds:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Details per scenario (exit codes, what was recorded, kill points):", ""]
    for o in outcomes:
        lines.append(f"- {o.scenario}: {json.dumps(o.extra)}" + (f" ({o.notes})" if o.notes else ""))
    if skipped:
        lines += ["", "Skipped (need root to mount a tmpfs or bind mount): " + ", ".join(skipped)]
    lines += ["", "Wasted batches: batches computed over every invocation minus the batches of the run (a "
              "killed invocation records no end, so what it computed is counted as the resume's cache hits: "
              "batches it finished, persisted, and the resume reused). A damaged shard's recomputation counts "
              "as one. Work lost inside a batch in flight at a kill is not counted.", "", "## Machine", "",
              *machine_markdown(info)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--shard-size", type=int, default=50)
    parser.add_argument("--kills", default="0.1,0.3,0.5,0.7,0.9")
    parser.add_argument("--source", default="", help="what code ran, when not this checkout (e.g. a snapshot)")
    args = parser.parse_args()
    began, load = utc_now(), os.getloadavg()
    from trajforge.config import load_config
    from trajforge.flows.runtime import prefect_runtime
    from trajforge.schemas.config import OrchestrationConfig

    run_id = load_config(None, {"generation.n_blueprints": args.n}).run_id()
    with tempfile.TemporaryDirectory(prefix="fault-matrix-") as tmp:
        root = Path(tmp)
        with prefect_runtime(root / "prefect-home", OrchestrationConfig(server="temporary"), quiet=True) as runtime:
            bench = Bench(root, args.n, args.shard_size, runtime.api_url)
            t0 = time.perf_counter()
            ref_out = root / "reference"
            assert bench.run(bench.cmd(ref_out)).returncode == 0, "the reference build failed"
            reference_s = time.perf_counter() - t0
            reference = digest(ref_out)
            outcomes: list[Outcome] = []
            skipped: list[str] = []
            for share in (float(s) for s in args.kills.split(",")):
                outcomes.append(kill_at(bench, reference, share))
                print(outcomes[-1], flush=True)
            for scenario in (lambda: truncated_then_other_build(bench, reference, ref_out),
                             lambda: flipped_then_resume(bench, reference, ref_out),
                             lambda: concurrent(bench, reference),
                             lambda: error_in_flow(bench, run_id)):
                outcomes.append(scenario())
                print(outcomes[-1], flush=True)
            if can_mount(root / "probe"):
                # room for the whole dataset and a catalog refresh (which writes a copy) once freed
                data_mb = sum(p.stat().st_size for p in ref_out.rglob("*") if p.is_file()) / 2 ** 20
                for scenario in (lambda: disk_full(bench, reference, f"{int(data_mb * 2) + 6}m"),
                                 lambda: no_room(bench),
                                 lambda: read_only_mid_run(bench, reference, run_id)):
                    outcomes.append(scenario())
                    print(outcomes[-1], flush=True)
            else:
                skipped = ["disk fills mid-run", "no room to start", "read-only folder mid-run"]
    info = machine_info()
    payload = {"date": began, "command": command_line(), "load_average": load, "n": args.n,
               "shard_size": args.shard_size, "reference_seconds": reference_s, "skipped": skipped,
               "outcomes": [asdict(o) for o in outcomes], "machine": info}
    md, js = write_results("fault_matrix", payload,
                           markdown(outcomes, info, args, began, load, reference_s, skipped))
    print(f"wrote {md} and {js}")


if __name__ == "__main__":
    main()
