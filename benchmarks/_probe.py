"""What the teacher-forced policy probes share (``first_reply.py``, ``next_act.py``): the rows of
an ``sft`` export split, and a model's greedy next message after a prefix of a reference dialogue,
rendered with the model's own chat template as training and evaluation render it."""

from __future__ import annotations

import glob
import json
from typing import Any


def loads(value: Any) -> Any:
    """A message or tool as a dict (``datasets`` decodes the export's Json column; pyarrow may not)."""
    return json.loads(value) if isinstance(value, str) else value


def split_rows(export: str, split: str) -> list[dict[str, Any]]:
    """The rows of ``export``'s ``sft`` ``split``, in file order."""
    import pyarrow.parquet as pq

    files = sorted(glob.glob(f"{export}/sft/{split}-*.parquet"))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def load_policy(model_dir: str) -> tuple[Any, Any]:
    """(model in eval mode, tokenizer) from a saved model folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(model_dir).eval(), AutoTokenizer.from_pretrained(model_dir)


def greedy_reply(model: Any, tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 max_new_tokens: int, bf16: bool) -> str:
    """The model's greedy next assistant message after ``messages``, up to its end token."""
    import torch

    prompt = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        out = model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False)
    said = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=False)
    return said.split(tokenizer.eos_token)[0] if tokenizer.eos_token else said


def run_measured(benchmark: str, args: Any, run: Any, **extra: Any) -> dict[str, Any]:
    """``run()``'s result in a result payload (date, command, machine, load before and after, seconds,
    the probed model and split, ``extra``), its result printed as JSON."""
    import os
    import time

    from _common import command_line, machine_info, utc_now

    load_before = os.getloadavg()
    started = time.perf_counter()
    result = run()
    print(json.dumps(result, indent=1))
    return {"benchmark": benchmark, "date": utc_now(), "command": command_line(), "machine": machine_info(),
            "load_before": load_before, "load_after": os.getloadavg(),
            "seconds": round(time.perf_counter() - started, 1), "model": args.model, "export": args.export,
            "split": args.split, **extra, **result}


def header(title: str, payload: dict[str, Any]) -> list[str]:
    """The first lines of a probe's markdown: title with date, command, load, machine."""
    from _common import machine_markdown

    def load(values: Any) -> tuple[float, ...]:
        return tuple(round(x, 2) for x in values)

    return [f"# {title} ({payload['date']})", "", f"Command: `{payload['command']}`", "",
            f"Load (1/5/15 min) before {load(payload['load_before'])}, after {load(payload['load_after'])}; "
            f"{payload['seconds']} s.", "", *machine_markdown(payload["machine"]), ""]
