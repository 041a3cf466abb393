"""Generation under bfloat16 autocast (``trajforge eval --bf16``) against float32, side by side.

A trained model folder generates greedily, as ``trajforge eval`` does (``hf_generate_batch``,
left-padded batches), for prompts cut from the validation conversations of an ``sft`` export:
each conversation up to one of its agent messages, the agent to write that message. Every batch
is generated in float32 and in bf16 back to back (the order alternating), so both see the same
load; reported: seconds per setting, the ratio, and how many of the completions are the same
text in both (greedy decoding can branch where two tokens' scores are within bf16's rounding).

    .venv/bin/python benchmarks/eval_bf16.py --model /tmp/m24/model --export /tmp/m24/export
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time

import pyarrow.parquet as pq
import torch
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

from trajforge.simulation.local_model import DecodingConfig, hf_generate_batch, load_hf


def prompts_from_export(export: str, tokenizer: object, conversations: int, cuts: int) -> list[str]:
    """Up to ``cuts`` prompts per conversation, each ending where an agent message starts."""
    rows = pq.read_table(sorted(glob.glob(f"{export}/sft/validation-*.parquet"))[0]).to_pylist()
    prompts = []
    for row in rows[:conversations]:
        messages = [json.loads(m) if isinstance(m, str) else m for m in row["messages"]]
        tools = [json.loads(t) if isinstance(t, str) else t for t in row["tools"]]
        starts = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        step = max(1, len(starts) // cuts)
        for i in starts[::step][:cuts]:
            prompts.append(tokenizer.apply_chat_template(  # type: ignore[attr-defined]
                messages[:i], tools=tools, tokenize=False, add_generation_prompt=True))
    return prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True, help="a trained model folder (hf:)")
    parser.add_argument("--export", required=True, help="an sft export (its validation split)")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--cuts", type=int, default=3, help="prompts per conversation")
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stem", default="eval_bf16")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    model, tokenizer = load_hf(args.model, device="cpu")
    prompts = prompts_from_export(args.export, tokenizer, args.conversations, args.cuts)
    settings = {name: hf_generate_batch(model, tokenizer, DecodingConfig(max_new_tokens=args.max_new_tokens,
                                                                        bf16=name == "bf16"))
                for name in ("fp32", "bf16")}
    seconds = {"fp32": 0.0, "bf16": 0.0}
    texts: dict[str, list[str]] = {"fp32": [], "bf16": []}
    batches = [prompts[i:i + args.batch_size] for i in range(0, len(prompts), args.batch_size)]
    for k, batch in enumerate(batches):
        for name in (("fp32", "bf16") if k % 2 == 0 else ("bf16", "fp32")):
            started = time.perf_counter()
            texts[name] += settings[name](batch)
            seconds[name] += time.perf_counter() - started
        print(k, {n: round(s, 1) for n, s in seconds.items()}, flush=True)
    pairs = list(zip(texts["fp32"], texts["bf16"], strict=True))
    same = sum(a == b for a, b in pairs)
    prompt_tokens = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    payload = {"when": utc_now(), "command": command_line(), "machine": machine_info(),
               "load_before": load_before, "load_after": os.getloadavg(), "model": args.model,
               "prompts": len(prompts), "prompt_tokens_mean": sum(prompt_tokens) / len(prompts),
               "prompt_tokens_max": max(prompt_tokens), "batch_size": args.batch_size,
               "max_new_tokens": args.max_new_tokens, "threads": args.threads,
               "seconds": {n: round(s, 1) for n, s in seconds.items()},
               "speedup": round(seconds["fp32"] / seconds["bf16"], 2), "same_text": same,
               "differing": [{"fp32": a, "bf16": b} for a, b in pairs if a != b][:5]}
    lines = [f"# Greedy generation under bf16 autocast against float32 ({payload['when']})", "",
             f"Command: `{payload['command']}`", "",
             f"Model `{args.model}`; {len(prompts)} prompts cut from validation conversations (mean "
             f"{payload['prompt_tokens_mean']:.0f} tokens, max {payload['prompt_tokens_max']}), batches of "
             f"{args.batch_size}, up to {args.max_new_tokens} new tokens, {args.threads} threads; both settings "
             f"per batch, back to back. Load (1/5/15 min) before {tuple(round(x, 2) for x in load_before)}, "
             f"after {tuple(round(x, 2) for x in payload['load_after'])} (a shared 2-core machine).", "",
             *machine_markdown(payload["machine"]), "",
             "| setting | seconds | ratio |", "|---|---|---|",
             f"| float32 | {payload['seconds']['fp32']} | 1.00 |",
             f"| bf16 autocast | {payload['seconds']['bf16']} | {payload['speedup']:.2f}x faster |", "",
             f"Same completion text in both: **{same} of {len(prompts)}**."]
    for d in payload["differing"]:
        lines += ["", f"- float32: `{d['fp32'][:200]}`", f"  bf16: `{d['bf16'][:200]}`"]
    print(write_results(args.stem, payload, "\n".join(lines)))


if __name__ == "__main__":
    main()
