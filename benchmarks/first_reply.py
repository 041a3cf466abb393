"""Does a policy take the user's request up right in its first reply? (issue 18's diagnosis)

The 60-minute SmolLM2 policies misread the request at the start: "Let's get your return started"
to a user who wants another colour, a cancellation refused to a user who wants a return. The
first reply is where the scripted agent names the request it took up (``IntentSpec.takes``, a
phrase bank the domain declares per intent kind), so the first decision of an episode can be read
without playing it.

Teacher-forced on the rows of an ``sft`` export split: the reference dialogue up to the first
user message, the model's greedy first reply, and which intent kinds each of the reference and the
generated reply names (a kind is named when the reply holds one of its ``takes`` phrases,
case-insensitive; a phrase two kinds share names both). Counted per reference kind: **right** (the
generated reply names exactly the reference's kinds), **wrong** (another kind), **none** (names
no kind). Rows whose reference names no kind (the user had not said what they want yet) are
counted apart, with how often the model named one anyway. This reads the scripted agent's
wording on purpose: it measures imitation of the training data, not verification.

    .venv/bin/python benchmarks/first_reply.py --model /tmp/m25/model --export /tmp/m25/export --rows 80

Prints JSON and, with ``--stem``, writes ``benchmarks/results/<stem>.{json,md}``.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results
from _probe import greedy_reply, header, load_policy, loads, run_measured, split_rows


def phrase_banks(domains: set[str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per domain, per intent kind, its ``takes`` phrases (lower-cased)."""
    from trajforge.environments.registry import load_domain

    return {name: {kind: tuple(p.lower() for p in spec.takes)
                   for kind, spec in load_domain(name, size=5, seed=0).intents.items() if spec.takes}
            for name in domains}


def named(text: str, bank: dict[str, tuple[str, ...]]) -> frozenset[str]:
    low = text.lower()
    return frozenset(kind for kind, phrases in bank.items() if any(p in low for p in phrases))


def first_user(messages: list[dict[str, Any]]) -> int | None:
    """Index of the first assistant message, when a user message comes before it."""
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            return i if any(n["role"] == "user" for n in messages[:i]) else None
    return None


def probe(model_dir: str, export: str, split: str, rows: int, max_new_tokens: int, bf16: bool) -> dict[str, Any]:
    model, tokenizer = load_policy(model_dir)
    table = split_rows(export, split)[:rows]
    banks = phrase_banks({r["domain"] for r in table})
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    examples: list[dict[str, str]] = []
    for row in table:
        messages = [loads(m) for m in row["messages"]]
        k = first_user(messages)
        if k is None:
            continue
        bank = banks[row["domain"]]
        reference = named(messages[k].get("content") or "", bank)
        said = greedy_reply(model, tokenizer, messages[:k], [loads(t) for t in row["tools"]], max_new_tokens, bf16)
        got = named(said, bank)
        key = "/".join(sorted(reference)) or "(none named)"
        if not reference:
            verdict = "named one" if got else "none"
        else:
            verdict = "right" if got == reference else ("none" if not got else "wrong")
        per[key][verdict] += 1
        if verdict in ("wrong", "named one") and len(examples) < 12:
            user = next(m["content"] for m in messages[:k] if m["role"] == "user")
            examples.append({"user": user[:200], "reference": (messages[k].get("content") or "")[:120],
                             "generated": said[:120]})
    totals: collections.Counter[str] = collections.Counter()
    for key, counts in per.items():
        if key != "(none named)":
            totals.update(counts)
    return {"per_reference_kind": {k: dict(v) for k, v in sorted(per.items())},
            "named_rows": dict(totals), "examples": examples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--export", required=True)
    parser.add_argument("--split", default="validation")
    parser.add_argument("--rows", type=int, default=80)
    parser.add_argument("--max-new-tokens", type=int, default=40)
    parser.add_argument("--bf16", action="store_true", help="generate under bfloat16 autocast")
    parser.add_argument("--stem", help="write benchmarks/results/<stem>.{json,md}")
    args = parser.parse_args()
    result = payload = run_measured("first_reply", args, lambda: probe(
        args.model, args.export, args.split, args.rows, args.max_new_tokens, args.bf16), rows=args.rows)
    if not args.stem:
        return
    named_rows = result["named_rows"]
    n = sum(named_rows.values())
    md = [*header("First reply: the request taken up", payload),
          f"Model `{args.model}`, the first {args.rows} rows of `{args.export}`'s `{args.split}` split, greedy, "
          f"{args.max_new_tokens} new tokens{', bf16 autocast' if args.bf16 else ''}.", "",
          f"Rows whose reference reply names the request: {n}; right {named_rows.get('right', 0)}, "
          f"wrong {named_rows.get('wrong', 0)}, none {named_rows.get('none', 0)}.", "",
          "| reference names | right | wrong | none | named one |", "|---|---:|---:|---:|---:|"]
    for key, counts in result["per_reference_kind"].items():
        md.append(f"| {key} | {counts.get('right', 0)} | {counts.get('wrong', 0)} | {counts.get('none', 0)} | "
                  f"{counts.get('named one', 0)} |")
    md += ["", "Examples (wrong, or a request named before the user said it):", ""]
    md += [f"- user: {e['user']!r}<br>reference: {e['reference']!r}<br>generated: {e['generated']!r}"
           for e in result["examples"]]
    write_results(args.stem, payload, "\n".join(md))


if __name__ == "__main__":
    main()
