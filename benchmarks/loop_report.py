"""A loop run's record as a results page: the per-iteration table and the tasks rolled out.

Reads what ``trajforge loop`` wrote into the dataset (``runs/<run_id>/loop/{iterations,tasks}``,
the catalog's ``loop_iterations`` and ``loop_tasks`` views) and nothing else, so the page shows
the stored numbers, not a copy typed by hand:

    .venv/bin/python benchmarks/loop_report.py --tasks /tmp/l1/data --output-dir /tmp/l1/out \\
        --stem loop-smollm2 --loop-command "trajforge loop --config ... --model ... --tasks ..."

``--run-id`` picks a run where the dataset holds several (default: the only one). The loop's
``loop.png`` (in ``--output-dir``) is copied beside the page. A reading, if any, is added by hand
below the generated part.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def main() -> None:
    from trajforge.store.loop import read_loop_iterations, read_loop_tasks

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, required=True, help="the dataset the loop ran on (--tasks)")
    parser.add_argument("--output-dir", type=Path, default=None, help="the loop's --output-dir (for loop.png)")
    parser.add_argument("--run-id", default=None)
    parser.add_argument("--loop-command", default="", help="the trajforge loop command, for the page")
    parser.add_argument("--stem", default="loop-report")
    args = parser.parse_args()

    iterations = read_loop_iterations(args.tasks, args.run_id)
    runs = sorted({r.run_id for r in iterations})
    if len(runs) != 1:
        raise SystemExit(f"error: {args.tasks}: {len(runs)} loop runs ({', '.join(runs) or 'none'}); "
                         "pick one with --run-id")
    run_id = runs[0]
    tasks = read_loop_tasks(args.tasks, run_id)
    # the rows of the tasks rolled out in an iteration: their latest counted group is that iteration's
    rolled = [t for t in tasks if t.group_iteration == t.iteration and t.group_attempts]
    md = [f"# `trajforge loop` run {run_id} ({utc_now()})", "",
          f"Loop command: `{args.loop_command}`" if args.loop_command else "",
          f"Page written by: `{command_line()}`", "", *machine_markdown(machine_info()), "",
          "## Per iteration (`loop_iterations`)", "",
          "| iteration | pool (seed/resynth) | rollout tasks | boundary | retired sat/hopeless "
          "| variants acc/prop (admitted) | trajectories (total) | mean reward | train success | train loss "
          "| held-out pass@1 | bf16 train/rollout | s |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in iterations:
        md.append(f"| {r.iteration} | {r.pool_size} ({r.pool_seed}/{r.pool_resynthesized}) | {r.rollout_tasks} "
                  f"| {r.boundary_count} | {r.saturated_retired}/{r.hopeless_retired} "
                  f"| {r.variants_accepted}/{r.variants_proposed} ({r.variants_admitted}) "
                  f"| {r.trajectories} ({r.trajectories_total}) | {_fmt(r.mean_reward)} "
                  f"| {_fmt(r.train_success_rate)} | {_fmt(r.train_loss)} | {_fmt(r.heldout_pass_at_1)} "
                  f"| {_yes_no(r.train_bf16)}/{_yes_no(r.rollout_bf16)} | {r.wall_seconds:.0f} |")
    md += ["", "## The tasks rolled out, per iteration (`loop_tasks`: the group's successes of its rollouts, "
           "the status after)", "",
           "| iteration | task | origin (parent) | successes / rollouts | status after |", "|---|---|---|---|---|"]
    for t in sorted(rolled, key=lambda t: (t.iteration, t.blueprint_id)):
        origin = t.origin + (f" ({t.parent_id})" if t.parent_id else "")
        md.append(f"| {t.iteration} | {t.blueprint_id} | {origin} | {t.group_successes}/{t.group_attempts} "
                  f"| {t.status} |")
    boundary = sum(r.boundary_count for r in iterations)
    md += ["", f"Boundary tasks over the run: {boundary}; retired: "
           f"{sum(r.saturated_retired for r in iterations)} saturated, {sum(r.hopeless_retired for r in iterations)} "
           f"hopeless; variants accepted: {sum(r.variants_accepted for r in iterations)} of "
           f"{sum(r.variants_proposed for r in iterations)} proposed."]
    plot = args.output_dir / "loop.png" if args.output_dir else None
    if plot is not None and plot.is_file():
        shutil.copyfile(plot, RESULTS / f"{args.stem}.png")
        md += ["", f"Plot: `{args.stem}.png`."]
    payload: dict[str, Any] = {
        "benchmark": "loop_report", "date": utc_now(), "command": command_line(), "loop_command": args.loop_command,
        "machine": machine_info(), "run_id": run_id,
        "iterations": [r.model_dump(mode="json") for r in iterations],
        "tasks_rolled_out": [t.model_dump(mode="json") for t in rolled],
    }
    md_path, _ = write_results(args.stem, payload, "\n".join(md))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
