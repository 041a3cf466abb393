"""The near-copy must-show: dedup precision/recall and selected-vs-random Vendi on a build whose
blueprint pool holds deliberate near-copies.

1. Builds ``--blueprints`` (default 2,000) with ``generation.near_copy_share = 0.3`` (each such
   blueprint is a paraphrase of an earlier original: synonyms, reordered clauses, persona
   wording, a new user style; ``generators/paraphrase.py``) and one oracle episode each, then
   runs the diversity stage exactly as ``trajforge build --select K --dedup-threshold 0.9``
   does (defaults otherwise: MiniLM on the user turns for selection, hashed n-grams of the
   ``calls`` view for dedup). Reported from the stored tables and the blueprints' provenance:
   copies removed (recall), originals kept, precision of the removals, and the Vendi score of
   the selection against 10 random subsets of the same size.
2. Why the dedup view is ``calls``: for each (embedder, view) pair, how many copies are
   removed and originals kept at several thresholds (greedy blocked dedup, index order).

Results: ``benchmarks/results/diversity_nearcopies.{md,json}``.

    .venv/bin/python benchmarks/diversity_nearcopies.py
    .venv/bin/python benchmarks/diversity_nearcopies.py --blueprints 500 --views hashed:calls
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

THRESHOLDS = (0.8, 0.85, 0.9, 0.93, 0.95, 0.97)
VIEWS = ("hashed:calls,hashed:dialogue,hashed:goal,hashed:user,structure:structure,"
         "minilm:goal,minilm:user")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blueprints", type=int, default=2000)
    parser.add_argument("--select", type=int, default=200)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--views", default=VIEWS)
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    import numpy as np

    from trajforge.config import load_config
    from trajforge.curation import load_candidates
    from trajforge.store.builds import run_build
    from trajforge.store import query
    from trajforge.verifiers.diversity.dedup import remove_near_duplicates
    from trajforge.verifiers.diversity.embedders import make_embedder

    load_before = os.getloadavg()
    out = Path(tempfile.mkdtemp(prefix="nearcopies-"))
    cfg = load_config(None, {"store.out": str(out), "generation.n_blueprints": args.blueprints,
                             "generation.near_copy_share": 0.3, "simulation.agents": ["oracle"],
                             "diversity.select": args.select,
                             "diversity.dedup_threshold": args.threshold})
    began = time.perf_counter()
    result = run_build(cfg)
    seconds = time.perf_counter() - began
    summary = result.diversity.summary
    rows = query(out, """
        SELECT s.decision, b.generator = 'paraphrase' AS copy FROM selection s
        JOIN trajectories t ON t.id = s.trajectory_id JOIN blueprints b ON b.id = t.blueprint_id""")[1]
    copies = [d for d, c in rows if c]
    originals = [d for d, c in rows if not c]
    removed = [c for d, c in rows if d == "duplicate"]
    must = {"trajectories": len(rows), "copies": len(copies), "originals": len(originals),
            "copies_removed": sum(d == "duplicate" for d in copies) / len(copies),
            "originals_kept": sum(d != "duplicate" for d in originals) / len(originals),
            "removal_precision": sum(removed) / max(1, len(removed)),
            "selection": summary["selection"], "seconds": seconds}

    cand = load_candidates(out, cfg.run_id(), cfg.diversity,
                           {spec.split(":")[1] for spec in args.views.split(",")})
    is_copy = np.asarray(cand.near_copy)
    sweep = []
    for spec in args.views.split(","):
        name, view = spec.split(":")
        emb = make_embedder(name, device="cpu")
        t0 = time.perf_counter()
        X = emb.embed(cand.docs[view])
        t_embed = time.perf_counter() - t0
        for T in THRESHOLDS:
            keep = remove_near_duplicates(X, T).keep
            sweep.append({"embedder": name, "view": view, "threshold": T,
                          "copies_removed": float((~keep[is_copy]).mean()),
                          "originals_kept": float(keep[~is_copy].mean()), "embed_seconds": t_embed})
        print(spec, "done", flush=True)
    load_after = os.getloadavg()
    payload = {"date": utc_now(), "command": command_line(), "machine": machine_info(),
               "blueprints": args.blueprints, "must_show": must, "summary": summary, "sweep": sweep,
               "load_average_before": load_before, "load_average_after": load_after}
    sel = must["selection"]
    r = sel["random_from_candidates"]
    lines = ["# Near-copies: dedup and selection on a build with 30% paraphrased blueprints", "",
             f"Date: {payload['date']}  ", f"Command: `{payload['command']}`  ",
             f"Load average (1/5/15 min) before: {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
             f"after: {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}", "",
             *machine_markdown(payload["machine"]), "",
             f"## The build: {args.blueprints:,} blueprints, near_copy_share 0.3, one oracle episode each; "
             f"`--select {args.select} --dedup-threshold {args.threshold}` (selection: "
             f"{summary['embedder']['key']} on `{summary['embedder']['view']}`; dedup: "
             f"{summary['dedup']['embedder']} on `{summary['dedup']['view']}`)", "",
             "| | value | target |", "|---|---|---|",
             f"| trajectories (copies / originals) | {must['trajectories']} ({must['copies']} / {must['originals']}) | |",
             f"| copies removed | {must['copies_removed']:.1%} | >= 90% |",
             f"| originals kept | {must['originals_kept']:.1%} | >= 95% |",
             f"| precision of removals (removed that are copies) | {must['removal_precision']:.1%} | |",
             "", "| set | Vendi q=0.5 | q=1 | q=2 | q=inf |", "|---|---|---|---|---|",
             "| selected | " + " | ".join(f"{sel['vendi_selected'][q]:.2f}" for q in ("0.5", "1", "2", "inf")) + " |",
             "| random, same size (mean ± sd of 10) | " + " | ".join(
                 f"{r[q]['mean']:.2f} ± {r[q]['std']:.2f}" for q in ("0.5", "1", "2", "inf")) + " |",
             "| margin (selected / random mean) | " + " | ".join(
                 f"{sel['vendi_selected'][q] / r[q]['mean']:.2f}x" for q in ("0.5", "1", "2", "inf")) + " |",
             "", "## Which view separates copies from originals (greedy dedup in index order)", "",
             "| embedder | view | " + " | ".join(f"T={t}" for t in THRESHOLDS) + " |",
             "|---|---|" + "---|" * len(THRESHOLDS),
             "", "Cells: copies removed / originals kept."]
    table_rows = []
    for spec in args.views.split(","):
        name, view = spec.split(":")
        cells = [f"{s['copies_removed']:.0%} / {s['originals_kept']:.0%}" for s in sweep
                 if s["embedder"] == name and s["view"] == view]
        table_rows.append(f"| {name} | {view} | " + " | ".join(cells) + " |")
    at = lines.index("", len(lines) - 2)
    lines[at:at] = table_rows
    write_results("diversity_nearcopies", payload, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
