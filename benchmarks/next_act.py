"""Which act does a policy take right after a tool's result? (issue 18's diagnosis)

The 60-minute SmolLM2 policy with the first-reply curriculum takes the request up right in its
first reply, yet fails every ``update_profile_address`` episode at the next decision: after the
account read (``get_customer_details``) it calls ``list_product_types`` (the price-question flow)
instead of confirming the new address. This probe reads that decision without playing episodes.

Teacher-forced on the rows of an ``sft`` export split: the reference dialogue up to and including
the first result of ``--after-tool``, the model's greedy next message, and the act of each of the
reference and the generated message: the name of its first tool call, or ``text`` for a message
without one (``trajforge.simulation.local_model.parse_completion`` reads the model's text, as the
evaluation does). Counted per reference act and per intent kind of the row's blueprint (read from
the dataset's catalog): **same** act, **other call** (a call of another tool, or a call where the
reference writes text), **text** (text where the reference calls a tool). The tool name is an
argument, so the probe knows no domain.

    .venv/bin/python benchmarks/next_act.py --model /tmp/s9/c4 --data /tmp/s9/w/data \\
        --export /tmp/s9/w/export --after-tool get_customer_details --rows 120 --bf16 --stem next_act-x

Prints JSON and, with ``--stem``, writes ``benchmarks/results/<stem>.{json,md}``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from _probe import greedy_reply, header, load_policy, loads, run_measured, split_rows


def act_of_message(message: dict[str, Any]) -> str:
    """A reference message's act: its first call's tool name, or ``text``."""
    calls = message.get("tool_calls") or []
    return str(calls[0]["function"]["name"]) if calls else "text"


def act_of_completion(text: str, tool_names: set[str]) -> str:
    """A generated message's act, read as the evaluation reads it."""
    from trajforge.simulation.local_model import parse_completion

    turn = parse_completion(text, tool_names, "probe")
    return (turn.calls[0].name or "(malformed)") if turn.calls else "text"


def after_tool(messages: list[dict[str, Any]], tool: str) -> int | None:
    """Index of the message right after the first result of ``tool``, when it is the agent's."""
    for i, m in enumerate(messages[:-1]):
        if m["role"] == "tool" and m.get("name") == tool:
            return i + 1 if messages[i + 1]["role"] == "assistant" else None
    return None


def intent_kinds(data: str) -> dict[str, str]:
    """Blueprint id -> its intent kinds joined by ``+`` (from the dataset's catalog)."""
    import duckdb

    with duckdb.connect(f"{data}/catalog.duckdb", read_only=True) as con:
        rows = con.execute("SELECT id, intents FROM blueprints").fetchall()
    return {bid: "+".join(i["kind"] for i in json.loads(intents)) for bid, intents in rows}


def verdict(reference: str, generated: str) -> str:
    if generated == reference:
        return "same"
    return "text" if generated == "text" else "other call"


def probe(model_dir: str, data: str, export: str, split: str, tool: str, rows: int, max_new_tokens: int,
          bf16: bool) -> dict[str, Any]:
    model, tokenizer = load_policy(model_dir)
    kinds = intent_kinds(data)
    table = split_rows(export, split)
    by_act: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    generated_acts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    examples: list[dict[str, str]] = []
    probed = 0
    for row in table:
        if probed >= rows:
            break
        messages = [loads(m) for m in row["messages"]]
        k = after_tool(messages, tool)
        if k is None:
            continue
        probed += 1
        tools = [loads(t) for t in row["tools"]]
        names = {t["function"]["name"] for t in tools if "function" in t}
        said = greedy_reply(model, tokenizer, messages[:k], tools, max_new_tokens, bf16)
        reference, generated = act_of_message(messages[k]), act_of_completion(said, names)
        v = verdict(reference, generated)
        kind = kinds.get(row["blueprint_id"], "(unknown)")
        by_act[reference][v] += 1
        by_kind[kind][v] += 1
        generated_acts[kind][generated] += 1
        if v != "same" and len(examples) < 12:
            examples.append({"kind": kind, "reference": reference, "generated": said[:160]})
    totals: collections.Counter[str] = collections.Counter()
    for counts in by_act.values():
        totals.update(counts)
    return {"rows_probed": probed, "totals": dict(totals),
            "by_reference_act": {k: dict(v) for k, v in sorted(by_act.items())},
            "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
            "generated_acts_by_kind": {k: dict(v.most_common()) for k, v in sorted(generated_acts.items())},
            "examples": examples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True, help="the dataset the export came from (its catalog)")
    parser.add_argument("--export", required=True)
    parser.add_argument("--after-tool", required=True, help="the tool whose first result the act follows")
    parser.add_argument("--split", default="validation")
    parser.add_argument("--rows", type=int, default=120)
    parser.add_argument("--max-new-tokens", type=int, default=128,
                        help="enough for a sentence and a call: a call cut short reads as malformed")
    parser.add_argument("--bf16", action="store_true", help="generate under bfloat16 autocast")
    parser.add_argument("--stem", help="write benchmarks/results/<stem>.{json,md}")
    args = parser.parse_args()
    result = payload = run_measured("next_act", args, lambda: probe(
        args.model, args.data, args.export, args.split, args.after_tool, args.rows, args.max_new_tokens, args.bf16),
        after_tool=args.after_tool)
    if not args.stem:
        return
    t = result["totals"]
    md = [*header(f"The act after `{args.after_tool}`", payload),
          f"Model `{args.model}`, rows of `{args.export}`'s `{args.split}` split with a `{args.after_tool}` result "
          f"followed by the agent ({result['rows_probed']} probed), greedy, {args.max_new_tokens} new tokens"
          f"{', bf16 autocast' if args.bf16 else ''}.", "",
          f"Same act as the reference: {t.get('same', 0)}; another call: {t.get('other call', 0)}; "
          f"text where the reference calls: {t.get('text', 0)}.", "",
          "| intent kind | same | other call | text | generated acts |", "|---|---:|---:|---:|---|"]
    for kind, counts in result["by_kind"].items():
        acts = ", ".join(f"{a} {n}" for a, n in result["generated_acts_by_kind"][kind].items())
        md.append(f"| {kind} | {counts.get('same', 0)} | {counts.get('other call', 0)} | {counts.get('text', 0)} "
                  f"| {acts} |")
    md += ["", "| reference act | same | other call | text |", "|---|---:|---:|---:|"]
    for act, counts in result["by_reference_act"].items():
        md.append(f"| {act} | {counts.get('same', 0)} | {counts.get('other call', 0)} | {counts.get('text', 0)} |")
    md += ["", "Examples (not the reference's act):", ""]
    md += [f"- {e['kind']}, reference `{e['reference']}`: {e['generated']!r}" for e in result["examples"]]
    write_results(args.stem, payload, "\n".join(md))


if __name__ == "__main__":
    main()
