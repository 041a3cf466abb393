"""Tiny-model SFT recipes compared at a fixed number of optimizer steps, then evaluated on
held-out blueprints: what the tiny model learns from a given number of steps does not depend on
the device, so an accelerator can try several recipes for the step budget the CPU benchmark
(``sft_tiny_cpu.py``) reaches in its 15 minutes, and the CPU run then uses the best one.

Each recipe names a data set (a ``trajforge build`` with its own ``--set`` overrides, built once
and exported as ``sft``) and ``trajforge train sft`` overrides; recipes run ``--parallel`` at a
time, each training then ``trajforge eval --split test`` (scripted user). The recipes are a JSON
file: ``{"data": {NAME: [BUILD_OVERRIDE, ...]}, "recipes": {NAME: {"data": NAME, "set": [...]}},
"common": [TRAIN_OVERRIDE, ...]}`` (``common`` comes first, a recipe's ``set`` overrides it). A
recipe may name its ``model`` (default ``tiny``; ``minilm``, the pretrained policy) and its train
``config`` (default ``configs/sft-tiny.yaml``); ``recipes/gpu_policies.json`` compares the pretrained
policy on fresh-world data, with and without a curriculum, against the ~100M config model.

    python benchmarks/sft_recipe_sweep.py --recipes benchmarks/sft_recipes.json --work /tmp/sweep

Results: benchmarks/results/sft_recipe_sweep.{md,json} (partial results are written as recipes
finish, so a run stopped by its deadline still reports what it measured).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

TRAJFORGE = [sys.executable, "-m", "trajforge.cli"]


def run(args: list[str], log: Path, timeout: float) -> float:
    started = time.perf_counter()
    with log.open("a") as out:
        out.write("$ " + shlex.join(args) + "\n")
        out.flush()
        subprocess.run(args, check=True, stdout=out, stderr=subprocess.STDOUT, timeout=timeout)
    return time.perf_counter() - started


BUILD = """import json, sys
from trajforge.config import load_config
from trajforge.store.builds import run_build
run_build(load_config(None, json.loads(sys.argv[1])))
"""


def build(name: str, overrides: list[str], work: Path, blueprints: int, workers: int) -> Path:
    """The scripted build of ``trajforge build`` (``run_build``, the flow's own body, called
    directly: an accelerator machine may have no Prefect), then the ``sft`` export."""
    from trajforge.config import parse_override

    data, export = work / name / "data", work / name / "export"
    log = work / f"data-{name}.log"
    config = {"store.out": str(data), "generation.n_blueprints": blueprints, "store.workers": workers,
              **dict(parse_override(o) for o in overrides)}
    run([sys.executable, "-c", BUILD, json.dumps(config)], log, 900)
    run([*TRAJFORGE, "export", "--out", str(data), "--to", str(export), "--format", "sft"], log, 600)
    return work / name


def recipe(name: str, spec: dict[str, Any], common: list[str], root: Path, work: Path, limit: int,
           eval_args: list[str]) -> dict:
    model, log = work / "models" / name, work / f"recipe-{name}.log"
    train = [*TRAJFORGE, "train", "sft", "--config", spec.get("config", "configs/sft-tiny.yaml"),
             "--model", spec.get("model", "tiny"), "--data", str(root / "export"), "--output-dir", str(model)]
    for o in [*common, *spec.get("set", [])]:
        train += ["--set", o]
    result: dict[str, Any] = {"recipe": name, "model": spec.get("model", "tiny"), "data": spec["data"],
                              "set": spec.get("set", [])}
    try:
        result["train_s"] = round(run(train, log, 1800), 1)
        summary = json.loads((model / "train_summary.json").read_text())
        result.update(steps=summary.get("global_step"), tokens=summary.get("num_tokens"),
                      train_loss=summary.get("train_loss"), eval_loss=summary.get("final_eval_loss"),
                      copy_probe=summary.get("copy_probe"))
        out = work / f"eval-{name}.json"
        run([*TRAJFORGE, "eval", "--policy", f"hf:{model}", "--out", str(root / "data"), "--split", "test",
             "--limit", str(limit), "--trials", "1", "--quiet", "--json", str(out), *eval_args], log, 1800)
        [domain] = json.loads(out.read_text())["domains"]
        result.update({k: domain.get(k) for k in ("blueprints", "pass@1", "format_validity", "tool_calls",
                                                   "failures", "terminations")})
    except Exception as exc:  # one recipe's failure is a result, not the end of the sweep
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result


def report(results: list[dict], args: argparse.Namespace, started: str) -> None:
    payload = {"benchmark": "sft_recipe_sweep", "date": started, "command": command_line(),
               "machine": machine_info(), "results": results}
    try:
        import torch

        payload["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    except ImportError:
        payload["device"] = "cpu"
    md = [f"# SFT recipes at a fixed step budget ({started})", "", f"Command: `{payload['command']}`", "",
          f"Device: {payload['device']}", "", *machine_markdown(payload["machine"]), "",
          "| recipe | model | data | overrides | steps | tokens | eval loss | copy probe: first token / exact "
          "| pass@1 | format validity | error |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        probe = r.get("copy_probe") or {}
        md.append(f"| {r['recipe']} | {r.get('model', 'tiny')} | {r['data']} | {' '.join(r['set'])} | {r.get('steps')} "
                  f"| {r.get('tokens')} | {r.get('eval_loss')} | {probe.get('first_token')} / {probe.get('exact')} "
                  f"| {r.get('pass@1')} | {r.get('format_validity')} | {r.get('error', '')} |")
    write_results(args.stem, payload, "\n".join(md))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/trajforge-sweep"))
    parser.add_argument("--blueprints", type=int, default=2700)
    parser.add_argument("--build-workers", type=int, default=4)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--limit", type=int, default=30, help="held-out blueprints evaluated per recipe")
    parser.add_argument("--eval-args", default="--max-turns 10 --max-new-tokens 192 --max-steps-per-turn 4 "
                                               "--batch-size 10")
    parser.add_argument("--stem", default="sft_recipe_sweep")
    args = parser.parse_args()
    spec = json.loads(args.recipes.read_text())
    started = utc_now()
    args.work.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max(1, len(spec["data"]))) as pool:
        roots = dict(zip(spec["data"], pool.map(
            lambda item: build(item[0], item[1], args.work, args.blueprints, args.build_workers),
            spec["data"].items())))
    results: list[dict] = []
    with ThreadPoolExecutor(args.parallel) as pool:
        futures = [pool.submit(recipe, name, r, spec.get("common", []), roots[r["data"]], args.work, args.limit,
                               args.eval_args.split())
                   for name, r in spec["recipes"].items()]
        for future in as_completed(futures):
            results.append(future.result())
            report(results, args, started)
            print(json.dumps(results[-1]), flush=True)


if __name__ == "__main__":
    main()
