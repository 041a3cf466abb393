"""Dialogue-act recognisers: quality on the held-out evaluation bank and on the generator's
phrases, and speed.

Reports per class precision/recall/F1 and counts on trajforge/environments/dialogue/banks/eval.jsonl
(templates filled with the bank's action clauses), consent/non_consent on the dev bank
(banks/dev.jsonl, the hand-written set models are chosen by), per class on the dev2 bank
(banks/dev2.jsonl, multi-domain), per class and per phenomenon on the writer2 bank (banks/writer2.jsonl:
user replies by a second, independent writer who never saw the other banks, held out from training;
harder than eval by design), the same on the banks held out whole (``HELD_OUT_WRITERS`` of
benchmarks/data/dialogue_bank_rows.py: replies to confirmation requests never trained on), the action grid
(request templates filled with the generator's actions), accuracy per phenomenon, the confusion, the
accuracy on the scripted policies' own phrases, and microseconds per classification (first
sight of a text, i.e. uncached, and cached). Results go to benchmarks/results/dialogue_acts.{md,json}.

    .venv/bin/python benchmarks/dialogue_acts.py
"""

from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

from trajforge.environments.dialogue import _agent, _user, classify_agent, classify_user
from trajforge.environments.dialogue.evaluate import (
    action_grid,
    by_phenomenon,
    confusion,
    expand,
    generator_phrases,
    is_right,
    per_class,
    predict,
)
from trajforge.environments.dialogue.train import read_bank

HERE = Path(__file__).resolve().parent


def _speed(rows: list[dict[str, str]], repeat: int = 5) -> dict[str, float]:
    texts = [(r["role"], r["text"]) for r in rows]
    uncached = []
    for _ in range(repeat):
        _agent.cache_clear()
        _user.cache_clear()
        t0 = time.perf_counter()
        for role, text in texts:
            (classify_agent if role == "agent" else classify_user)(text)
        uncached.append((time.perf_counter() - t0) / len(texts))
    t0 = time.perf_counter()
    for _ in range(repeat):
        for role, text in texts:
            (classify_agent if role == "agent" else classify_user)(text)
    cached = (time.perf_counter() - t0) / (len(texts) * repeat)
    return {"uncached_us": min(uncached) * 1e6, "cached_us": cached * 1e6, "messages": len(texts)}


def measure() -> dict[str, Any]:
    bank = read_bank("eval.jsonl")
    rows = expand(bank)
    dev = read_bank("dev.jsonl")
    writer2 = read_bank("writer2.jsonl")
    bank_rows = runpy.run_path(str(HERE / "data" / "dialogue_bank_rows.py"))
    held = bank_rows["held_out"]
    # the banks held out whole, by writers that saw no bank, no generator phrase and no test
    held_out = {name: read_bank(f"{name}.jsonl") for name in bank_rows["HELD_OUT_WRITERS"]}
    gen = generator_phrases()
    eval_templates = [r["text"] for r in bank if r.get("phenomenon") == "template"]
    lists = runpy.run_path(str(HERE / "data" / "action_lists.py"))
    gen_wrong = [{"source": r["phenomenon"], "text": r["text"], "predicted": predict(r)}
                 for r in gen if not is_right(r, predict(r))]
    return {
        "bank_sizes": {"eval_entries": len(bank), "eval_measured": len(rows), "dev_entries": len(dev),
                       "writer2_entries": len(writer2),
                       **{f"{name}_entries": len(written) for name, written in held_out.items()},
                       "train_entries": len(read_bank("train.jsonl"))},
        "per_class": per_class(rows),
        "per_class_dev": {k: v for k, v in per_class(dev).items() if k in ("consent", "non_consent")},
        "per_class_dev2": per_class(read_bank("dev2.jsonl")),
        "per_class_writer2": {k: v for k, v in per_class(writer2).items() if v["positives"]},
        "per_phenomenon_writer2": by_phenomenon(writer2),
        **{f"per_class_{name}": {k: v for k, v in per_class(written).items() if v["positives"]}
           for name, written in held_out.items()},
        **{f"per_phenomenon_{name}": by_phenomenon(written) for name, written in held_out.items()},
        "per_phenomenon": by_phenomenon(rows),
        "confusion": confusion(rows),
        "generator": {"n": len(gen), "right": len(gen) - len(gen_wrong), "wrong": gen_wrong},
        "errors": [{"label": r["label"], "phenomenon": r["phenomenon"], "text": r["text"], "predicted": predict(r)}
                   for r in rows if not is_right(r, predict(r))],
        "speed": _speed(rows),
        # confirmation requests whatever they ask to do: the generator's actions in other templates
        "action_grid": {
            "eval_templates": action_grid(eval_templates, "confirm_request"),
            "held_out_train_templates": action_grid(
                [t for t in lists["TRAIN_CONFIRM_TEMPLATES"] if held(t)], "confirm_request"),
            "held_out_train_other_templates": action_grid(
                [t for t in lists["TRAIN_ACTION_OTHER_TEMPLATES"] if held(t)], "other"),
        },
    }


def _class_rows(scores: dict[str, dict[str, Any]]) -> list[str]:
    """A per-class table: header and one row per class."""
    return ["| class | n | positives | precision | recall | F1 |", "|---|---:|---:|---:|---:|---:|",
            *(f"| {name} | {s['n']} | {s['positives']} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} |"
              for name, s in scores.items())]


def render(payload: dict[str, Any]) -> str:
    r = payload["result"]
    lines = ["# Dialogue acts", "", f"- date: {payload['date_utc']}", f"- command: `{payload['command']}`",
             f"- load average: {payload['load_average']}", "", *machine_markdown(payload["machine"]), "",
             f"Bank sizes: {r['bank_sizes']}", "", "## Per class (eval bank)", "", *_class_rows(r["per_class"])]
    sections = (("Consent among replies to a confirmation request (dev bank, dev.jsonl: the model selection set)",
                 "per_class_dev", None),
                ("Per class (dev2 bank, dev2.jsonl: multi-domain tuning set)", "per_class_dev2", None),
                ("Per class (writer2 bank, writer2.jsonl: an independent writer's replies, held out)",
                 "per_class_writer2", "writer2"),
                *((f"Per class ({name} bank, {name}.jsonl: an independent writer's replies to confirmation "
                   "requests, held out whole; who wrote it: HELD_OUT_WRITERS in benchmarks/data/"
                   "dialogue_bank_rows.py)", f"per_class_{name}", name)
                  for name in sorted(k[len("per_class_"):] for k in r if k.startswith("per_class_writer")
                                     and k != "per_class_writer2")))
    for title, key, phenomena in sections:
        lines += ["", f"## {title}", "", *_class_rows(r.get(key, {}))]
        if phenomena:
            lines += ["", f"| {phenomena} label/phenomenon | n | accuracy |", "|---|---:|---:|"]
            lines += [f"| {k} | {v['n']} | {v['accuracy']:.3f} |"
                      for k, v in r.get(f"per_phenomenon_{phenomena}", {}).items()]
    g = r["generator"]
    lines += ["", f"## Generator phrases: {g['right']}/{g['n']} right", ""]
    lines += [f"- {w['source']}: \"{w['text']}\" -> {w['predicted']}" for w in g["wrong"]]
    lines += ["", "## Whatever the action: templates filled with the generator's actions", "",
              "Each `{action}` template filled with every action phrasing of the four built-in domains' "
              "intents (never in a training bank), alone and after the intent's statement of what the "
              "agent found (`evaluate.action_grid`). Templates: the evaluation bank's (44), and the fifth "
              "of `benchmarks/data/action_lists.py`'s hand-written templates held out of train.jsonl "
              "(`dialogue_bank_rows.held_out`).", "",
              "| templates | expected | templates | messages | read right | accuracy |",
              "|---|---|---:|---:|---:|---:|"]
    for name, grid in r.get("action_grid", {}).items():
        lines.append(f"| {name} | {grid['label']} | {grid['templates']} | {grid['n']} | {grid['right']} "
                     f"| {grid['accuracy']:.4f} |")
    for name, grid in r.get("action_grid", {}).items():
        lines += ["", f"{name}, per domain and form: "
                  + ", ".join(f"{k} {c['right']}/{c['n']}" for k, c in grid["cells"].items())]
        lines += [f"- {m} missed: {t}" for t, m in list(grid["misses"].items())[:6]]
    lines += ["", "## Per phenomenon", "", "| label/phenomenon | n | accuracy |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['n']} | {v['accuracy']:.3f} |" for k, v in r["per_phenomenon"].items()]
    lines += ["", "## Confusion (rows: truth, columns: predicted)", ""]
    lines += [f"- {truth}: {cells}" for truth, cells in r["confusion"].items()]
    s = r["speed"]
    lines += ["", "## Speed", "", f"- first sight (uncached): {s['uncached_us']:.1f} us per message",
              f"- cached: {s['cached_us']:.2f} us per message ({s['messages']} messages)"]
    return "\n".join(lines) + "\n"


def main() -> int:
    result = measure()
    payload = {"benchmark": "dialogue_acts", "date_utc": utc_now(), "command": command_line(),
               "load_average": os.getloadavg(), "machine": machine_info(), "result": result}
    md, js = write_results("dialogue_acts", payload, render(payload))
    for name, s in result["per_class"].items():
        print(f"[dialogue_acts] {name}: P {s['precision']:.3f} R {s['recall']:.3f} (n {s['n']})")
    print(f"[dialogue_acts] generator {result['generator']['right']}/{result['generator']['n']}; "
          f"{result['speed']['uncached_us']:.1f} us uncached; wrote {md} and {js}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
