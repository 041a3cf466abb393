"""Training speed of ``trainable_layers`` (freeze tuning, ``trajforge.sft.freeze``) on this CPU.

One forward and backward pass of SmolLM2-135M (``--model smollm2``'s packaged weights) over a
real conversation of an ``sft`` export, loss on the assistant tokens only (TRL's fused head, as
``train sft`` runs it), bf16 autocast, then an AdamW step over what trains; per setting the mean
of ``--steps`` passes after one warm-up pass, all settings side by side in one process.

    .venv/bin/python benchmarks/freeze_speed.py --export /tmp/m24/export --trainable 30 10 6
    .venv/bin/python benchmarks/freeze_speed.py --export EXPORT --trainable 8 --allocator --steps 4
    .venv/bin/python benchmarks/freeze_speed.py --export EXPORT --trainable 8 --precision --stem freeze_speed-precision

``--precision`` times bf16 autocast against fp32 (what ``sft.bf16: auto`` chooses between,
``trajforge.sft.precision``), with malloc keeping freed memory as ``train sft`` runs.
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
from trl.trainer.utils import add_fused_lm_head

from trajforge.sft.freeze import freeze_lower_layers
from trajforge.sft.smollm import SmolLMConfig, build_smollm
from trajforge.simulation.local_model import keep_freed_memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--export", required=True)
    parser.add_argument("--trainable", type=int, nargs="+", default=[30, 10, 6])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--allocator", action="store_true",
                        help="each setting twice, glibc's malloc default and keep_freed_memory(), alternating")
    parser.add_argument("--precision", action="store_true",
                        help="each setting twice, under bf16 autocast and in fp32, alternating")
    parser.add_argument("--stem", default="freeze_speed")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    model, tokenizer = build_smollm(SmolLMConfig(system_prompt=False))
    add_fused_lm_head(model)
    row = pq.read_table(sorted(glob.glob(f"{args.export}/sft/validation-*.parquet"))[0]).to_pylist()[0]
    messages = [json.loads(m) if isinstance(m, str) else m for m in row["messages"]]
    rendered = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True,
                                             return_assistant_tokens_mask=True)
    ids = torch.tensor([rendered["input_ids"]])
    labels = torch.where(torch.tensor([rendered["assistant_masks"]]) == 1, ids, torch.full_like(ids, -100))
    rows = []
    # (trainable, keep freed memory, bf16): with --allocator default, kept, default, kept; with
    # --precision bf16, fp32, bf16, fp32 (alternating, so a change of load hits both)
    if args.allocator:
        settings = [(t, keep, True) for t in args.trainable for _ in range(2) for keep in (False, True)]
    elif args.precision:
        settings = [(t, True, bf16) for t in args.trainable for _ in range(2) for bf16 in (True, False)]
    else:
        settings = [(t, None, True) for t in args.trainable]
    for trainable, keep, bf16 in settings:
        if keep is not None:
            keep_freed_memory(keep)
        counts = freeze_lower_layers(model, trainable)
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-9)
        times = []
        for step in range(args.steps + 1):
            started = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = model(input_ids=ids, labels=labels, fused_lm_head=True).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if step:
                times.append(time.perf_counter() - started)
        seconds = sum(times) / len(times)
        rows.append({"trainable_layers": trainable, "keep_freed_memory": keep, "bf16": bf16, **counts,
                     "seconds_per_pass": round(seconds, 2),
                     "tokens_per_second": round(ids.numel() / seconds, 1)})
        print(rows[-1], flush=True)
    base = rows[0]["tokens_per_second"]
    payload = {"when": utc_now(), "command": command_line(), "machine": machine_info(),
               "load_before": load_before, "load_after": os.getloadavg(), "tokens": ids.numel(),
               "trained_tokens": int((labels != -100).sum()), "threads": args.threads, "rows": rows}
    lines = [f"# Freeze tuning speed, SmolLM2-135M on CPU ({payload['when']})", "",
             f"Command: `{payload['command']}`", "",
             f"One validation conversation of {ids.numel()} tokens ({payload['trained_tokens']} trained), "
             f"{'bf16 autocast or fp32 as listed' if args.precision else 'bf16 autocast'}, {args.threads} threads, "
             f"forward + backward + AdamW step, mean of {args.steps} "
             f"passes after a warm-up. Load (1/5/15 min) before {tuple(round(x, 2) for x in load_before)}, "
             f"after {tuple(round(x, 2) for x in payload['load_after'])} (a shared 2-core machine).", "",
             *machine_markdown(payload["machine"]), "",
             "| trainable blocks (of 30) | malloc keeps freed memory | precision | trainable parameters "
             "| s per pass | tokens/s | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        kept = "yes" if r["keep_freed_memory"] else "no (glibc default)"
        precision = "bf16 autocast" if r["bf16"] else "fp32"
        lines.append(f"| {r['trainable_layers']} | {kept} | {precision} | {r['trainable']:,} | "
                     f"{r['seconds_per_pass']} | {r['tokens_per_second']} | {r['tokens_per_second'] / base:.2f} |")
    print(write_results(args.stem, payload, "\n".join(lines)))


if __name__ == "__main__":
    main()
