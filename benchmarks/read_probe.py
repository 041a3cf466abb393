"""Copy and read probes (trajforge.sft.copy_probe) of saved policies on an export's validation rows,
teacher-forced; printed, for a results file's reading (minilm_policy-fast.md was read with
``--export /tmp/m19/export /tmp/m19/model /tmp/m19/untrained``).

    .venv/bin/python benchmarks/read_probe.py --export EXPORT_DIR MODEL_DIR [MODEL_DIR ...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--export", type=Path, required=True, help="an export folder with sft/validation-*.parquet")
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import datasets
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trajforge.sft.copy_probe import copy_probe, read_probe

    torch.set_num_threads(args.threads)
    files = sorted(str(p) for p in (args.export / "sft").glob("validation-*.parquet"))
    rows = datasets.load_dataset("parquet", data_files=files, split="train")
    for path in args.models:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path)
        began = time.perf_counter()
        copied = copy_probe(model, tokenizer, rows, args.rows, args.max_tokens).as_dict()
        read = read_probe(model, tokenizer, rows, args.rows, args.max_tokens).as_dict()
        print(f"{path}: copy {copied} read {read} ({time.perf_counter() - began:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
