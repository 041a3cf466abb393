"""Where a shard's time goes: stage timings and a cProfile of ``process_shard``.

1. Stage timings (no profiler): blueprints [0, N) of the default config through generate +
   validate, simulate, verify, row conversion, then the writer's ``RunStore.write_shard`` (Arrow +
   Parquet + fsync) into a temporary folder. The stages are timed by reproducing
   ``process_batch`` step by step with the stages' own functions.
2. ``cProfile`` of one ``process_batch(config, 0, N, ctx)`` call (the domain is built
   beforehand, as a worker has it), top functions by cumulative and by own time.

Writes benchmarks/results/profile_shard.txt (and .json with the stage timings).

    .venv/bin/python benchmarks/profile_shard.py            # N = 1000 blueprints
    .venv/bin/python benchmarks/profile_shard.py -n 250 --top 40
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, utc_now  # noqa: E402


def stage_timings(n: int) -> dict[str, Any]:
    from trajforge.config import load_config
    from trajforge.environments.registry import load_domain
    from trajforge.generators import generate_blueprints
    from trajforge.simulation.batch import simulate_batch
    from trajforge.simulation.worker_state import SimulationContext
    from trajforge.schemas.arrow import blueprint_to_row, trajectory_to_row, verdict_to_row
    from trajforge.schemas.blueprint import BlueprintRejection
    from trajforge.store import RunStore
    from trajforge.verifiers import verify

    tmp = Path(tempfile.mkdtemp(prefix="trajforge-profile-"))
    try:
        config = load_config(None, {"store.out": str(tmp), "generation.n_blueprints": n})
        t = time.perf_counter()
        domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
        timings = {"domain_build_s": time.perf_counter() - t}
        run_id = config.run_id()

        t = time.perf_counter()
        items = list(generate_blueprints(domain, config.generation, run_id, 0, n))
        timings["generate_validate_s"] = time.perf_counter() - t
        blueprints = {b.id: b for b in items if not isinstance(b, BlueprintRejection)}

        t = time.perf_counter()
        ctx = SimulationContext(config, domain)
        trajectories = simulate_batch(config, list(blueprints.values()), n, ctx).trajectories
        ctx.close()
        timings["simulate_s"] = time.perf_counter() - t

        t = time.perf_counter()
        verdicts = [v for tr in trajectories
                    for v in verify(tr, blueprints[tr.blueprint_id], domain, config.verification.checks)]
        timings["verify_s"] = time.perf_counter() - t

        t = time.perf_counter()
        rows = {"blueprints": [blueprint_to_row(b, run_id) for b in blueprints.values()],
                "rejections": [],
                "trajectories": [trajectory_to_row(tr) for tr in trajectories],
                "verdicts": [verdict_to_row(v) for v in verdicts]}
        timings["to_rows_s"] = time.perf_counter() - t

        store = RunStore(tmp, run_id)
        store.prepare()
        t = time.perf_counter()
        store.write_shard(0, n, rows)
        timings["write_shard_s"] = time.perf_counter() - t
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    shard = sum(v for k, v in timings.items() if k not in ("domain_build_s", "write_shard_s"))
    return {"blueprints": len(blueprints), "episodes": len(trajectories),
            "seconds": {k: round(v, 3) for k, v in timings.items()},
            "process_shard_equivalent_s": round(shard, 3),
            "episodes_per_s_one_core_excluding_write": round(len(trajectories) / shard, 1)}


def profile(n: int, top: int) -> str:
    from trajforge.config import load_config
    from trajforge.environments.registry import load_domain
    from trajforge.simulation.worker_state import SimulationContext
    from trajforge.store.builds import process_batch

    config = load_config(None, {"store.out": tempfile.gettempdir(), "generation.n_blueprints": n})
    domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    profiler = cProfile.Profile()
    profiler.enable()
    ctx = SimulationContext(config, domain)
    _, summary = process_batch(config, 0, n, ctx)
    ctx.close()
    profiler.disable()
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    buffer.write(f"process_batch(config, 0, {n}): {summary.episodes} episodes "
                 "(times are inflated by the profiler)\n\n== by cumulative time ==\n")
    stats.sort_stats("cumulative").print_stats(top)
    buffer.write("\n== by own (total) time ==\n")
    stats.sort_stats("tottime").print_stats(top)
    root = str(Path(__file__).resolve().parent.parent) + "/"
    return buffer.getvalue().replace(root, "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", "-n", type=int, default=1000)
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    stages = stage_timings(args.blueprints)
    text = profile(args.blueprints, args.top)
    info = machine_info()
    header = [f"# profile_shard  date(UTC) {utc_now()}", f"# command: {command_line()}",
              f"# machine: {info['cpu_model']}, {info['cpu_count']} cores, Python {info['python']}; "
              f"git {info['git_commit'][:12]}, trajforge digest {info['trajforge_source_digest']}",
              "", "== stage timings (no profiler) ==", json.dumps(stages, indent=2), ""]
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "profile_shard.txt").write_text("\n".join(header) + "\n" + text)
    (args.results / "profile_shard.json").write_text(json.dumps(
        {"benchmark": "profile_shard", "date_utc": utc_now(), "command": command_line(),
         "machine": info, "stages": stages}, indent=2) + "\n")
    print(json.dumps(stages, indent=2))
    print(f"[profile_shard] wrote {args.results / 'profile_shard.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
