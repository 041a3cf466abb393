"""The detector of instructions planted in tool output (trajforge.environments.injection): its
quality on a bank it was not written from, its false flags on real tool output, and its cost.

- **Bank** (``benchmarks/data/injection_bank.jsonl``): 750 field texts (330 injections, 420
  benign, 16 domains) by an independent writer who never saw the detector, the project or its
  phrases. Each row carries a fixed ``split`` (sha256 of the text, even: ``dev``, odd:
  ``held_out``) assigned before anyone read a row. The cue lists were tuned on ``dev`` rows only;
  ``held_out`` rows are never read one by one, only scored. Reported: precision, recall and the
  false-flag rate per split, recall per injection style and false flags per benign style.
- **Default builds** (``trajforge build --n N/4 --domain D`` for each built-in domain, scripted
  policies): every tool output's text is scanned as the build does; every flag there is a false
  flag (no domain plants instructions).
- **Cost**: microseconds per tool message, against the build's own time per episode.

    .venv/bin/python benchmarks/injection_detector.py            # N = 1000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, command_line, machine_info, machine_markdown, utc_now, write_results

from trajforge.environments.injection import find_instructions, flag_tool_outputs

BANK = ROOT / "benchmarks" / "data" / "injection_bank.jsonl"
DOMAINS = ("retail", "airline", "banking", "telecom")  # the built-in domains, a build of each

# the held-out split's figures each time it was scored, in order (see the markdown's history)
HISTORY = (
    ("v1: cue lists written before the bank existed", {"precision": 1.000, "recall": 0.456, "fpr": 0.000}),
    ("v2: after one pass over dev's misses", {"precision": 0.984, "recall": 0.665, "fpr": 0.010}),
)


def read_bank() -> list[dict[str, Any]]:
    return [json.loads(line) for line in BANK.read_text().splitlines() if line.strip()]


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = fn = fp = tn = 0
    style_hits: Counter[str] = Counter()
    style_n: Counter[str] = Counter()
    cues: Counter[str] = Counter()
    for row in rows:
        found = find_instructions(row["text"])
        style_n[f"{row['label']}/{row['style']}"] += 1
        if found is not None:
            style_hits[f"{row['label']}/{row['style']}"] += 1
            cues[found] += 1
        if row["label"] == "injection":
            tp, fn = tp + (found is not None), fn + (found is None)
        else:
            fp, tn = fp + (found is not None), tn + (found is None)
    return {"injections": tp + fn, "benign": fp + tn, "tp": tp, "fn": fn, "fp": fp,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None,
            "fpr": fp / (fp + tn) if fp + tn else None,
            "styles": {k: {"n": style_n[k], "flagged": style_hits[k]} for k in sorted(style_n)},
            "cues": dict(cues.most_common())}


def scan_build(n: int) -> dict[str, Any]:
    import duckdb

    from trajforge.schemas.arrow import message_from_row

    rows = []
    build_s = 0.0
    with tempfile.TemporaryDirectory(prefix="injection-bench-") as tmp:
        env = {**os.environ, "PREFECT_HOME": str(Path(tmp) / "prefect")}
        for domain in DOMAINS:
            out = Path(tmp) / domain
            began = time.perf_counter()
            subprocess.run([str(Path(sys.executable).parent / "trajforge"), "build", "--n", str(n // len(DOMAINS)),
                            "--domain", domain, "--out", str(out)],
                           check=True, env=env, capture_output=True, text=True)
            build_s += time.perf_counter() - began
            con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
            rows += con.execute("SELECT domain, messages, flags FROM trajectories").fetchall()
            con.close()
    per_domain: Counter[str] = Counter()
    flagged_domain: Counter[str] = Counter()
    tool_messages = 0
    conversations = []
    stored_flags = 0
    for domain, messages, flags in rows:
        per_domain[domain] += 1
        stored_flags += len(flags or ())
        flagged_domain[domain] += bool(flags)
        parsed = [message_from_row(m) for m in messages]
        tool_messages += sum(m.role == "tool" for m in parsed)
        conversations.append(parsed)
    began = time.perf_counter()
    rescanned = sum(len(flag_tool_outputs(c)) for c in conversations)  # what the build stored, again
    scan_s = time.perf_counter() - began
    return {"blueprints": n, "episodes": len(rows), "tool_messages": tool_messages,
            "episodes_per_domain": dict(per_domain), "flagged_per_domain": dict(flagged_domain),
            "flags_stored": stored_flags, "flags_rescanned": rescanned,
            "us_per_tool_message": scan_s / max(1, tool_messages) * 1e6,
            "us_per_episode_scan": scan_s / max(1, len(rows)) * 1e6,
            "build_wall_s": build_s, "build_ms_per_episode": build_s / max(1, len(rows)) * 1e3}


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def render(payload: dict[str, Any]) -> str:
    lines = ["# Instructions planted in tool output: the detector", "",
             f"- date: {payload['date_utc']}", f"- command: `{payload['command']}`",
             f"- load average: {payload['load_average']}", "", *machine_markdown(payload["machine"]), "",
             "## The independent bank (benchmarks/data/injection_bank.jsonl)", "",
             "| split | injections | benign | precision | recall | false-flag rate |", "|---|---:|---:|---:|---:|---:|"]
    for split, s in payload["bank"].items():
        lines.append(f"| {split} | {s['injections']} | {s['benign']} | {_f(s['precision'])} | {_f(s['recall'])} "
                     f"| {_f(s['fpr'])} |")
    lines += ["", "How the held-out figure moved (each row is one scoring of `held_out`, aggregates only; "
              "every change between them was made from `dev` rows):", "",
              "| version | precision | recall | false-flag rate |", "|---|---:|---:|---:|"]
    for name, s in payload["history"]:
        lines.append(f"| {name} | {_f(s['precision'])} | {_f(s['recall'])} | {_f(s['fpr'])} |")
    held = payload["bank"]["held_out"]
    lines.append(f"| v3 (this run): after a second pass over dev's misses | {_f(held['precision'])} | "
                 f"{_f(held['recall'])} | {_f(held['fpr'])} |")
    lines += ["", "### Held out, per style (flagged / n)", "", "| label/style | n | flagged |", "|---|---:|---:|"]
    for style, s in held["styles"].items():
        lines.append(f"| {style} | {s['n']} | {s['flagged']} |")
    lines += ["", "Measured and not adopted (`/tmp` experiment, dev split only): a logistic regression over "
              "TF-IDF word 1-2-grams and character 3-5-grams of the normalised text, 5-fold cross-validated "
              "on `dev`, reads injections at P 0.886 R 0.892 with 17 of 227 benign texts flagged at "
              "threshold 0.5, P 0.943 R 0.676 at 0.7. Higher recall than the cues on unseen wording, at "
              "fifteen times the false flags, from one writer's 148 examples; the cues stay (no weights "
              "to ship, every flag names its cue)."]
    b = payload["build"]
    lines += ["", f"## Default builds (`trajforge build --n {b['blueprints'] // len(DOMAINS)} --domain D`, each "
              "built-in domain)", "",
              f"- episodes: {b['episodes']} ({', '.join(f'{k} {v}' for k, v in sorted(b['episodes_per_domain'].items()))})",
              f"- tool messages scanned: {b['tool_messages']}",
              f"- flags stored by the build: {b['flags_stored']}; flags on a rescan: {b['flags_rescanned']} "
              "(every one would be a false flag)",
              f"- cost: {b['us_per_tool_message']:.1f} µs per tool message, {b['us_per_episode_scan']:.1f} µs per "
              f"episode, against {b['build_ms_per_episode']:.2f} ms of build wall time per episode "
              f"({b['us_per_episode_scan'] / 1e3 / b['build_ms_per_episode'] * 100:.1f}%)",
              ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", type=int, default=1000)
    args = parser.parse_args(argv)
    bank = read_bank()
    payload: dict[str, Any] = {
        "date_utc": utc_now(), "command": command_line(), "load_average": os.getloadavg(),
        "machine": machine_info(),
        "bank": {split: score([r for r in bank if r["split"] == split]) for split in ("dev", "held_out")},
        "history": HISTORY,
        "build": scan_build(args.blueprints),
    }
    md, _ = write_results("injection_detector", payload, render(payload))
    print(md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
