"""The boundary-sample resynthesis loop versus GRPO on a fixed task set, at the same budget of
trajectories, from the same SFT policy; held-out pass@1 after every iteration.

Both arms are ``trajforge.loop.run.run_loop`` with the same config, seeds and step counts; the
fixed arm sets ``fixed: true`` (no retirement, no resynthesis: the seed tasks all along). Each
iteration consumes ``grpo.max_steps x per_device_train_batch_size x gradient_accumulation_steps``
trajectories in both arms, so the x-axis (trajectories consumed) is shared. The claim tested:
the loop reaches at least the fixed arm's final held-out pass@1 with fewer trajectories than the
fixed arm needed to reach it (``claim``).

    .venv/bin/python benchmarks/loop_vs_fixed.py --model /tmp/trajforge-sft-bench/model \\
        --data /tmp/trajforge-sft-bench/data --iterations 3 --seeds 0 1 2

Each arm runs once per ``--seeds`` value (the loop config's ``seed``: which seed tasks are drawn,
and the rollouts' sampling); the table gives every run, the summary the mean and the range over
seeds per iteration. The claim is read on the means.

Results: benchmarks/results/loop_vs_fixed.{md,json,png}. The numbers are reported whatever they show.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results


def weights_digest(model: Path) -> str:
    """sha256 of the model folder's top-level weight and config files: ``--resume`` reuses a run
    only from the same weights (a policy retrained into the same path has another digest)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in model.iterdir() if p.is_file() and (p.suffix == ".safetensors"
                                                                      or p.name == "config.json")):
        digest.update(path.name.encode())
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def arm(args: argparse.Namespace, digest: str, fixed: bool, seed: int, initial: float | None) -> dict[str, Any]:
    """One run; its result is kept in ``work/<arm>-<seed>.json`` and in
    ``results/<stem>-runs/<arm>-<seed>.json`` (to be committed), which ``--resume`` reads back instead
    of running again when the run's config and the model's weights are the same."""
    from trajforge.loop.run import load_loop_config, run_loop

    name = f"{'fixed' if fixed else 'loop'}-{seed}"
    overrides = {"model": str(args.model), "tasks": str(args.work / f"{name}-data"), "iterations": args.iterations,
                 "fixed": fixed, "seed_tasks": args.seed_tasks, "pool.capacity": args.seed_tasks + 8,
                 "output_dir": str(args.work / name), "threads": args.threads, "seed": seed,
                 "heldout.limit": args.heldout, "grpo.max_steps": args.steps}
    for item in args.overrides:
        key, _, value = item.partition("=")
        overrides[key] = value
    config = load_loop_config(args.config, overrides)
    done = args.work / f"{name}.json"
    stored = RESULTS / f"{args.stem}-runs" / f"{name}.json"  # committed: a comparison spans sessions
    for path in (done, stored) if args.resume else ():
        if path.exists():
            kept = json.loads(path.read_text())
            if kept["run_id"] == config.run_id() and kept.get("model_digest") == digest:
                print(f"{name}: reused from {path}", flush=True)
                return kept
    data = Path(config.tasks)  # each run its own copy: every run refreshes a catalog
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(args.data, data, ignore=shutil.ignore_patterns(".prefect"))
    started = time.perf_counter()
    result = run_loop(config, progress=lambda line: print(f"{name}: {line}", flush=True),
                      initial_pass_at_1=initial)
    kept = {"seed": seed, "run_id": result.run_id, "model_digest": digest,
            "seconds": round(time.perf_counter() - started, 1),
            "initial_pass_at_1": result.initial_pass_at_1, "initial_measured_here": initial is None,
            "load_after": os.getloadavg(), "config": config.model_dump(mode="json"),
            "iterations": [r.model_dump(mode="json") for r in result.iterations]}
    stored.parent.mkdir(parents=True, exist_ok=True)
    for path in (done, stored):
        path.write_text(json.dumps(kept, indent=1, default=str))
    return kept


def curve(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per iteration (0: the starting policy): trajectories consumed, and the mean, min and max of
    held-out pass@1 over the seeds."""
    points = []
    for i in range(min(len(r["iterations"]) for r in runs) + 1):
        values = [r["initial_pass_at_1"] if i == 0 else r["iterations"][i - 1]["heldout_pass_at_1"] for r in runs]
        consumed = 0 if i == 0 else runs[0]["iterations"][i - 1]["trajectories_total"]
        points.append({"iteration": i, "trajectories": consumed,
                       "mean": statistics.fmean(values), "min": min(values), "max": max(values),
                       "sd": statistics.stdev(values) if len(values) > 1 else 0.0})
    return points


def first_reach(points: list[dict[str, Any]], level: float) -> int | None:
    """Trajectories consumed when an arm's mean first reaches ``level`` after training began (to
    within rounding: means over seeds summed in another order)."""
    return next((p["trajectories"] for p in points[1:] if p["mean"] >= level - 1e-9), None)


def claim(curves: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The issue's claim, read on the means over seeds: the loop reaches the fixed arm's final
    held-out pass@1 with *fewer* trajectories than the fixed arm needed to reach it itself (its
    first iteration at that mean, not its last: a fixed arm that got there early and stayed
    must be beaten to it). When the fixed arm ends no higher than the starting policy,
    "reaching" it asks nothing of the loop: the claim is then ``None`` (untested), not true.
    ``reading`` says which, with the numbers, and also the weaker reading (fewer than the fixed
    arm's whole budget)."""
    start, fixed_final = curves["fixed"][0]["mean"], curves["fixed"][-1]["mean"]
    fixed_total, loop_final = curves["fixed"][-1]["trajectories"], curves["loop"][-1]["mean"]
    reach, fixed_reach = first_reach(curves["loop"], fixed_final), first_reach(curves["fixed"], fixed_final)
    # the fixed arm's last point is at its final mean, so fixed_reach is always found
    holds = None if fixed_final <= start else reach is not None and reach < fixed_reach
    reading = (f"Starting policy {start:.3f}; after {fixed_total} trajectories the fixed arm's mean held-out "
               f"pass@1 is {fixed_final:.3f} and the loop's {loop_final:.3f}. ")
    if holds is None:
        reading += ("The fixed arm did not improve on the starting policy, so the claim (the loop reaches the "
                    "fixed arm's final result with fewer trajectories) is not tested by this run: **untested**.")
    else:
        reached = (f"first reached {fixed_final:.3f} after {reach} trajectories" if reach is not None
                   else f"never reached {fixed_final:.3f}")
        reading += (f"The loop's mean {reached}; the fixed arm's after {fixed_reach}. Claim (the loop reaches the "
                    f"fixed arm's final result with fewer trajectories than the fixed arm needed): "
                    f"**{'holds' if holds else 'does not hold'}**")
        weak = reach is not None and reach < fixed_total
        reading += (f" (with fewer than the fixed arm's whole budget of {fixed_total}: "
                    f"{'yes' if weak else 'no'}).")
    return {"start_mean_pass_at_1": start, "fixed_final_mean_pass_at_1": fixed_final,
            "loop_final_mean_pass_at_1": loop_final, "loop_trajectories_to_reach_it": reach,
            "fixed_trajectories_to_reach_it": fixed_reach, "fixed_trajectories": fixed_total,
            "claim_holds": holds, "reading": reading}


def plot(curves: dict[str, list[dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, points in curves.items():
        xs = [p["trajectories"] for p in points]
        ax.plot(xs, [p["mean"] for p in points], marker="o", label=f"{name} (mean over seeds)")
        ax.fill_between(xs, [p["min"] for p in points], [p["max"] for p in points], alpha=0.2)
    ax.set_xlabel("trajectories consumed")
    ax.set_ylabel("held-out pass@1 (band: min-max over seeds)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/loop-tiny.yaml"),
                        help="the loop config both arms start from (configs/loop-smollm2.yaml for SmolLM2)")
    parser.add_argument("--model", type=Path, default=Path("/tmp/trajforge-sft-bench/model"))
    parser.add_argument("--data", type=Path, default=Path("/tmp/trajforge-sft-bench/data"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/trajforge-loop-bench"))
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="one run per arm per seed")
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps per iteration")
    parser.add_argument("--seed-tasks", type=int, default=16)
    parser.add_argument("--heldout", type=int, default=16, help="held-out blueprints played per evaluation")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="loop config KEY=VALUE")
    parser.add_argument("--stem", default="loop_vs_fixed")
    parser.add_argument("--resume", action="store_true",
                        help="keep --work and reuse the finished runs kept there or in results/<stem>-runs/ "
                             "(a run with another config or other weights runs again); a CPU comparison "
                             "takes several sessions")
    args = parser.parse_args()
    digest = weights_digest(args.model)
    if not args.resume:
        shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, Any]]] = {"loop": [], "fixed": []}
    # The starting policy's held-out pass@1 is greedy on the same held-out blueprints in every run,
    # so the first run measures it and the others reuse it (each run records which it did).
    initial: float | None = None
    for seed in args.seeds:  # interleaved, so a change of machine load falls on both arms
        for name in runs:
            res = arm(args, digest, fixed=name == "fixed", seed=seed, initial=initial)
            runs[name].append(res)
            initial = res["initial_pass_at_1"]
    load_after = os.getloadavg()
    curves = {name: curve(arm_runs) for name, arm_runs in runs.items()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    plot(curves, RESULTS / f"{args.stem}.png")
    verdict = claim(curves)
    payload = {"benchmark": "loop_vs_fixed", "date": utc_now(), "command": command_line(),
               "machine": machine_info(), "load_before": load_before, "load_after": load_after,
               "seeds": args.seeds, "model_digest": digest, "runs": runs, "curves": curves,
               **verdict}
    md = [f"# Boundary-sample resynthesis loop vs a fixed task set ({payload['date']})", "",
          f"Command: `{payload['command']}`", "",
          f"Machine load (1/5/15 min) before: {tuple(round(x, 2) for x in load_before)}, "
          f"after: {tuple(round(x, 2) for x in load_after)}.", "", *machine_markdown(payload["machine"]), "",
          f"Starting policy: `{args.model}` (SFT, weights digest {digest}); tasks and held-out "
          f"blueprints from `{args.data}` (a copy per run) "
          f"({args.seed_tasks} seed tasks from the train split, {args.heldout} held-out from the test split, "
          f"greedy decoding for pass@1); seeds {args.seeds}, one run per arm and seed. The starting policy's "
          f"pass@1 (iteration 0) was measured once, by the first run, and shared.", "",
          "## Held-out pass@1 per iteration, over the seeds", "",
          "| arm | iteration | trajectories | mean | sd | min | max |", "|---|---|---|---|---|---|---|"]
    for name, points in curves.items():
        md += [f"| {name} | {p['iteration']} | {p['trajectories']} | {p['mean']:.3f} | {p['sd']:.3f} | "
               f"{p['min']:.3f} | {p['max']:.3f} |" for p in points]
    md += ["", "## Every run", "",
           "| arm | seed | iteration | trajectories | pool (seed/resynth) | boundary | retired sat/hopeless | "
           "variants acc/prop | train success | mean reward | held-out pass@1 |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, arm_runs in runs.items():
        for res in arm_runs:
            md.append(f"| {name} | {res['seed']} | 0 | 0 | | | | | | | {res['initial_pass_at_1']:.3f} |")
            for r in res["iterations"]:
                md.append(f"| {name} | {res['seed']} | {r['iteration']} | {r['trajectories_total']} | "
                          f"{r['pool_size']} ({r['pool_seed']}/{r['pool_resynthesized']}) | {r['boundary_count']} | "
                          f"{r['saturated_retired']}/{r['hopeless_retired']} | "
                          f"{r['variants_accepted']}/{r['variants_proposed']} | "
                          f"{(r['train_success_rate'] or 0):.3f} | {(r['mean_reward'] or 0):.3f} | "
                          f"{r['heldout_pass_at_1']:.3f} |")
    seconds = {name: sum(r["seconds"] for r in arm_runs) for name, arm_runs in runs.items()}
    md += ["", f"Wall time: loop {seconds['loop']:.0f} s, fixed {seconds['fixed']:.0f} s (all seeds).", "",
           verdict["reading"], "", f"Plot: `{args.stem}.png`."]
    md_path, _ = write_results(args.stem, payload, "\n".join(md))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
