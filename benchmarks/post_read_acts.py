"""What a policy says right after it reads an order, per task intent (issue 18's diagnosis).

Two readings of the same decision: the agent's first words after the first ``get_order_details``
result

- in the episodes of an evaluation (``--eval PARQUET --catalog DUCKDB``: the evaluation's rows and
  the dataset whose blueprints they played), counted per blueprint intent;
- teacher-forced (``--model DIR --export DIR``): on validation conversations of an ``sft`` export,
  the reference dialogue up to the read, the model's greedy message compared with the reference
  one, counted per act of the reference.

An act is a refusal (the words say the agent cannot), else the dialogue-act recogniser's
(``confirm_request``, ``anything_else``: a report that offers more help), else a question, else
other. Prints JSON; nothing is written.

    .venv/bin/python benchmarks/post_read_acts.py --eval EV.parquet --catalog data/catalog.duckdb
    .venv/bin/python benchmarks/post_read_acts.py --model runs/sft-minilm --export data/export
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import re
from collections.abc import Iterator
from typing import Any

from trajforge.environments.dialogue import classify_agent

READ = '"placed_on"'  # an order's JSON, as the retail tools return it


def act(text: str) -> str:
    if re.search(r"\b(can't|cannot|can no longer|not able to)\b", text, re.IGNORECASE):
        return "refusal"  # a refusal often ends with an offer of more help: it is still a refusal
    label = classify_agent(text).label
    if label in ("confirm_request", "anything_else"):
        return label
    return "question" if text.rstrip().endswith("?") else "other"


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def after_read(messages: list[dict[str, Any]]) -> tuple[int, str] | None:
    """(index of the agent's first text message after the first order read, its act)."""
    for i, m in enumerate(messages):
        if m["role"] == "tool" and READ in (m.get("content") or ""):
            for k in range(i + 1, len(messages)):
                n = messages[k]
                if n["role"] == "assistant" and n.get("content") and not n.get("tool_calls"):
                    return k, act(n["content"])
            return None
    return None


def evaluated(eval_path: str, catalog: str) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(the blueprint's first intent kind, the episode's messages) for each row of an evaluation,
    the blueprints read from the dataset's catalog."""
    import duckdb
    import pyarrow.parquet as pq

    con = duckdb.connect(catalog, read_only=True)
    for row in pq.read_table(eval_path).to_pylist():
        intents = con.execute("SELECT intents FROM blueprints WHERE id = ?", [row["blueprint_id"]]).fetchall()
        yield _loads(intents[0][0])[0]["kind"], _loads(row["trajectory"])["messages"]


def in_evaluation(eval_path: str, catalog: str) -> dict[str, dict[str, int]]:
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for kind, messages in evaluated(eval_path, catalog):
        found = after_read(messages)
        if found is not None:
            per[found[1]][kind] += 1
    return {a: dict(c) for a, c in per.items()}


def teacher_forced(model_dir: str, export: str, rows: int) -> dict[str, str]:
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    right: collections.Counter[str] = collections.Counter()
    seen: collections.Counter[str] = collections.Counter()
    for row in pq.read_table(sorted(glob.glob(f"{export}/sft/validation*.parquet"))[0]).to_pylist()[:rows]:
        messages = [_loads(m) for m in row["messages"]]
        tools = [_loads(t) for t in row["tools"]]
        found = after_read(messages)
        if found is None:
            continue
        k, reference = found
        prompt = tokenizer.apply_chat_template(messages[:k], tools=tools, tokenize=False,
                                               add_generation_prompt=True)
        ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=60, do_sample=False)
        said = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
        seen[reference] += 1
        right[reference] += act(said) == reference
    return {a: f"{right[a]}/{seen[a]}" for a in seen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval")
    parser.add_argument("--catalog")
    parser.add_argument("--model")
    parser.add_argument("--export")
    parser.add_argument("--rows", type=int, default=60, help="validation conversations read")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    if args.eval:
        out["evaluation"] = in_evaluation(args.eval, args.catalog)
    if args.model:
        out["teacher_forced"] = teacher_forced(args.model, args.export, args.rows)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
