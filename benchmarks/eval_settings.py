"""``trajforge eval`` of one model under several generation settings, episode by episode.

Each setting is a full ``trajforge eval`` of the same held-out blueprints (greedy, the scripted
user): float32 or bf16 autocast (``--bf16``), with or without the prefix cache
(``--prefix-cache``). Reported per setting: wall seconds, pass@1, format validity, and against
the first setting how many episodes are the same message for message and how many end the same
(passed or not). A setting evaluated earlier can be reused from its rows in the catalog
(``--reuse NAME=EVAL_ID:SECONDS``, the evaluation's id in ``OUT/evaluations`` and its time).

    .venv/bin/python benchmarks/eval_settings.py --model /tmp/m24/model --out /tmp/m24/data --limit 20 \\
        --reuse fp32=ev_2c0ebf733bac0a3ccb28a995:1540.4 --settings fp32+cache bf16+cache
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

TRAJFORGE = str(Path(sys.executable).with_name("trajforge"))
FLAGS = {"fp32": ["--no-prefix-cache"], "bf16": ["--bf16", "--no-prefix-cache"],
         "fp32+cache": ["--prefix-cache"], "bf16+cache": ["--bf16", "--prefix-cache"]}


def episodes(out: Path, eval_id: str) -> dict[str, dict]:
    rows = pq.read_table(out / "evaluations" / f"{eval_id}.parquet").to_pylist()
    return {r["blueprint_id"]: {"passed": r["passed"], "failed": list(r["failed_checks"]),
                                "messages": json.loads(r["trajectory"])["messages"]} for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", type=Path, required=True, help="the dataset whose test split is played")
    parser.add_argument("--settings", nargs="*", default=["fp32", "fp32+cache", "bf16+cache"], choices=sorted(FLAGS))
    parser.add_argument("--reuse", action="append", default=[], help="NAME=EVAL_ID:SECONDS, evaluated earlier")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--max-turns", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--max-steps-per-turn", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stem", default="eval_settings")
    args = parser.parse_args()
    load_before = os.getloadavg()
    results: dict[str, dict] = {}
    for spec in args.reuse:
        name, _, rest = spec.partition("=")
        eval_id, _, seconds = rest.partition(":")
        results[name] = {"eval_id": eval_id, "seconds": float(seconds), "reused": True}
    for name in args.settings:
        summary = args.out / f"eval-{name}.json"
        command = [TRAJFORGE, "eval", "--policy", f"hf:{args.model}", "--out", str(args.out), "--split", "test",
                   "--limit", str(args.limit), "--trials", "1", "--max-turns", str(args.max_turns),
                   "--max-new-tokens", str(args.max_new_tokens), "--max-steps-per-turn",
                   str(args.max_steps_per_turn), "--batch-size", str(args.batch_size), "--threads",
                   str(args.threads), "--quiet", "--json", str(summary), *FLAGS[name]]
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
        results[name] = {"eval_id": json.loads(summary.read_text())["eval_id"], "seconds": round(seconds, 1),
                         "command": " ".join(["trajforge", *command[1:]]), "load_after": os.getloadavg()}
        print(name, results[name], flush=True)
    names = list(results)
    played = {n: episodes(args.out, r["eval_id"]) for n, r in results.items()}
    base = played[names[0]]
    for name in names:
        eps = played[name]
        shared = sorted(set(eps) & set(base))
        results[name].update({
            "episodes": len(eps), "passed": sum(e["passed"] for e in eps.values()),
            "same_messages": sum(eps[b]["messages"] == base[b]["messages"] for b in shared),
            "same_outcome": sum(eps[b]["passed"] == base[b]["passed"] for b in shared),
            "same_failed_checks": sum(sorted(eps[b]["failed"]) == sorted(base[b]["failed"]) for b in shared),
            "speedup": round(results[names[0]]["seconds"] / results[name]["seconds"], 2)})
    payload = {"when": utc_now(), "command": command_line(), "machine": machine_info(), "model": args.model,
               "out": str(args.out), "load_before": load_before, "load_after": os.getloadavg(), "results": results}
    lines = [f"# `trajforge eval` under generation settings ({payload['when']})", "",
             f"Command: `{payload['command']}`", "",
             f"Model `{args.model}`, the first {args.limit} blueprints of `{args.out}`'s test split, greedy, the "
             f"scripted user, {args.max_turns} turns, {args.max_new_tokens} new tokens, batches of "
             f"{args.batch_size}, {args.threads} threads. Load (1/5/15 min) before "
             f"{tuple(round(x, 2) for x in load_before)}, after {tuple(round(x, 2) for x in payload['load_after'])} "
             "(a shared 2-core machine; a reused setting ran earlier, under its own load).", "",
             *machine_markdown(payload["machine"]), "",
             f"| setting | seconds | speed vs {names[0]} | passed | same messages as {names[0]} | same outcome "
             "| same failed checks | eval id |", "|---|---|---|---|---|---|---|---|"]
    for name in names:
        r = results[name]
        lines.append(f"| {name}{' (reused)' if r.get('reused') else ''} | {r['seconds']} | {r['speedup']}x | "
                     f"{r['passed']}/{r['episodes']} | {r['same_messages']} | {r['same_outcome']} | "
                     f"{r['same_failed_checks']} | `{r['eval_id']}` |")
    print(write_results(args.stem, payload, "\n".join(lines)))


if __name__ == "__main__":
    main()
