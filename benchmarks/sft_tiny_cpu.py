"""The offline train-then-evaluate path on CPU: the tiny model, SFT on scripted trajectories for
at most ``--minutes``, then evaluated against its own untrained initialisation on held-out
blueprints (the ``test`` split).

Steps, each an ordinary ``trajforge`` command (printed in the result file):
1. ``trajforge build`` ``--blueprints`` blueprints (oracle + faulty episodes), ``trajforge export``
   the ``sft`` format (passing trajectories only, split by blueprint family);
2. the untrained model: the same tokenizer and initial weights the training run starts from;
3. ``trajforge train sft --model tiny`` with ``max_minutes``;
4. ``trajforge eval`` of both on the same held-out blueprints.

    .venv/bin/python benchmarks/sft_tiny_cpu.py                 # 2,700 blueprints (>= 2,000 train rows), 14 minutes
    .venv/bin/python benchmarks/sft_tiny_cpu.py --blueprints 300 --minutes 2 --limit 5   # smoke
    .venv/bin/python benchmarks/sft_tiny_cpu.py --config configs/sft-minilm.yaml --model minilm \
        --stem minilm_policy     # the pretrained policy (trajforge/sft/minilm.py); copy probe before and after

Results: benchmarks/results/sft_tiny_cpu.{md,json} and sft_tiny_cpu-loss_curve.{csv,png}.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

TRAJFORGE = str(Path(sys.executable).with_name("trajforge"))


def run(args: list[str], log: list[dict]) -> float:
    started = time.perf_counter()
    print("$", shlex.join(args), flush=True)
    subprocess.run(args, check=True)
    seconds = time.perf_counter() - started
    log.append({"command": shlex.join(["trajforge", *args[1:]]), "seconds": round(seconds, 1),
                "load_after": [round(x, 2) for x in os.getloadavg()]})
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blueprints", type=int, default=2700)
    parser.add_argument("--minutes", type=float, default=14.0)
    parser.add_argument("--limit", type=int, default=30, help="held-out blueprints evaluated")
    parser.add_argument("--max-turns", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--work", type=Path, default=Path("/tmp/trajforge-sft-bench"))
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        help="extra train overrides, e.g. sft.learning_rate=3e-3")
    parser.add_argument("--build-set", dest="build_overrides", action="append", default=[],
                        help="run-config overrides for the build, e.g. generation.max_intents=1")
    parser.add_argument("--stem", default="sft_tiny_cpu")
    parser.add_argument("--config", default="configs/sft-tiny.yaml", help="the train config")
    parser.add_argument("--model", default="tiny", help="a built-in model (tiny, minilm) or a model folder")
    parser.add_argument("--reuse-data", action="store_true", help="keep WORK/data and WORK/export if present")
    parser.add_argument("--reuse-model", action="store_true",
                        help="also keep WORK/model and WORK/untrained from an earlier run (evaluate only)")
    parser.add_argument("--max-steps-per-turn", type=int, default=12)
    parser.add_argument("--eval-threads", type=int, default=None, help="torch threads for the evaluations")
    parser.add_argument("--eval-bf16", action="store_true", help="evaluate under bf16 autocast (eval --bf16)")
    parser.add_argument("--untrained-eval", type=Path, default=None, help=(
        "the untrained model's evaluation JSON from an earlier run of the same model, data and evaluation "
        "settings, read instead of evaluating it again (the log records the reuse)"))
    args = parser.parse_args()
    work = args.work
    data, export, model, untrained = work / "data", work / "export", work / "model", work / "untrained"
    reuse = args.reuse_data and (export / "trajforge_export.json").is_file()
    keep_model = args.reuse_model and reuse and (model / "train_summary.json").is_file()
    for path in ([] if keep_model else [model, untrained] if reuse else [work]):
        shutil.rmtree(path, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(data / "evaluations", ignore_errors=True)
    log: list[dict] = []
    untrained_probe = None
    load_before = os.getloadavg()
    if not reuse:
        build = [TRAJFORGE, "build", "--n", str(args.blueprints), "--out", str(data), "--workers", "2", "--quiet"]
        for o in args.build_overrides:
            build += ["--set", o]
        run(build, log)
        run([TRAJFORGE, "export", "--out", str(data), "--to", str(export), "--format", "sft"], log)
    info = json.loads((export / "trajforge_export.json").read_text())

    train = [TRAJFORGE, "train", "sft", "--config", args.config, "--model", args.model,
             "--data", str(export), "--output-dir", str(model), "--set", f"max_minutes={args.minutes}"]
    for o in args.overrides:
        train += ["--set", o]
    # the untrained model: the run's own tokenizer and initial weights (same data, sizes, seed)
    from trajforge.sft.train import load_model, load_sft_data, load_train_config
    from trajforge.config import parse_override

    overrides = dict(parse_override(o) for o in args.overrides)
    cfg = load_train_config(Path(args.config),
                            {**overrides, "model": args.model, "data": str(export), "output_dir": str(untrained)})
    rows = load_sft_data(cfg.data, untrained)["train"].select_columns(["messages", "tools"])
    if cfg.max_train_rows:
        rows = rows.select(range(min(cfg.max_train_rows, rows.num_rows)))
    if keep_model:
        train_seconds = float(json.loads((model / "train_summary.json").read_text())["seconds"])
        log.append({"command": shlex.join(["trajforge", *train[1:]]), "seconds": None,
                    "note": "from the earlier run (--reuse-model)"})
    else:
        m0, tok0 = load_model(cfg, rows, None)
        m0.save_pretrained(untrained)
        tok0.save_pretrained(untrained)
        if cfg.copy_probe_rows:
            from trajforge.sft.copy_probe import copy_probe

            validation = load_sft_data(cfg.data, untrained).get("validation")
            if validation is not None:
                untrained_probe = copy_probe(m0, tok0, validation, cfg.copy_probe_rows,
                                             int(cfg.sft.get("max_length", 4096))).as_dict()
        del m0
        train_seconds = run(train, log)
    summary = json.loads((model / "train_summary.json").read_text())
    evals = {}
    for name, folder in (("untrained", untrained), ("trained", model)):
        out_json = work / f"eval-{name}.json"
        if name == "untrained" and args.untrained_eval is not None:
            evals[name] = {**json.loads(args.untrained_eval.read_text()), "reused_from": str(args.untrained_eval)}
            log.append({"command": "trajforge eval (untrained)", "seconds": None,
                        "note": f"reused from {args.untrained_eval}"})
            continue
        run([TRAJFORGE, "eval", "--policy", f"hf:{folder}", "--out", str(data), "--split", "test",
             "--limit", str(args.limit), "--trials", "1", "--max-turns", str(args.max_turns),
             "--max-new-tokens", str(args.max_new_tokens), "--batch-size", "10",
             "--max-steps-per-turn", str(args.max_steps_per_turn), "--quiet", "--json", str(out_json),
             *(["--threads", str(args.eval_threads)] if args.eval_threads else []),
             *(["--bf16"] if args.eval_bf16 else [])], log)
        evals[name] = json.loads(out_json.read_text())
    load_after = os.getloadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for suffix in ("csv", "png"):
        src = model / f"loss_curve.{suffix}"
        if src.exists():
            shutil.copyfile(src, RESULTS / f"{args.stem}-loss_curve.{suffix}")
    trained = evals["trained"]["domains"][0]
    base = evals["untrained"]["domains"][0]
    payload = {
        "benchmark": "sft_tiny_cpu", "date": utc_now(), "command": command_line(),
        "machine": machine_info(), "load_before": load_before, "load_after": load_after,
        "sft_rows": info.get("rows", {}).get("sft"), "train": summary, "train_wall_s": round(train_seconds, 1),
        "eval": evals, "steps": log, "copy_probe": {"untrained": untrained_probe, "trained": summary.get("copy_probe")},
        "targets": {"format_validity>=0.9": (trained["format_validity"] or 0) >= 0.9,
                    "pass@1_above_untrained": trained["pass@1"] > base["pass@1"]},
    }
    md = [f"# `--model {args.model}` SFT on CPU, then evaluation ({payload['date']})", "",
          f"Command: `{payload['command']}`", "",
          f"Machine load (1/5/15 min) before: {load_before}, after: {load_after} (a shared 2-core machine).", "",
          *machine_markdown(payload["machine"]), "",
          "## Data", "", f"sft export rows per split: {payload['sft_rows']}", "",
          "## Training", "",
          f"{summary['parameters']:,} parameters; {summary['global_step']} steps in {summary['seconds']} s "
          f"(limit {args.minutes} min); {summary['num_tokens']} tokens, {summary['tokens_per_second']} tokens/s; "
          f"train loss {summary['train_loss']:.3f}, final validation loss {summary['final_eval_loss']}.", "",
          f"Loss curve: `{args.stem}-loss_curve.png` / `.csv`.", "",
          "Copy probe (trajforge.sft.copy_probe, teacher-forced, validation rows; values / first token / exact / "
          f"tokens): untrained {untrained_probe}, trained {summary.get('copy_probe')}.", "",
          "## Evaluation (held-out test split, scripted user)", "",
          "| model | blueprints | pass@1 | format validity | tool calls | failures by check | terminations |",
          "|---|---|---|---|---|---|---|"]
    for name, result in evals.items():
        d = result["domains"][0]
        md.append(f"| {name} | {d['blueprints']} | {d['pass@1']:.3f} | {d['format_validity']} | {d['tool_calls']} "
                  f"| {d['failures']} | {d['terminations']} |")
    md += ["", f"Targets: {payload['targets']}", "", "## Commands", ""]
    md += [f"- `{s['command']}` ({s['seconds']} s, load after {s.get('load_after')}) {s.get('note', '')}" for s in log]
    md_path, _ = write_results(args.stem, payload, "\n".join(md))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
