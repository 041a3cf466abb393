"""Resynthesis yield and cost: how many structure-matched, validated variants per proposal.

For ``--parents`` programmatic blueprints (retail, size 300), asks ``resynthesize`` for
``--variants`` variants each (default budget: 50 proposals per parent) and reports, overall
and by parent shape (number of intents, with a redirect, with a revision, with a target named
by description): parents with all / some / no variants, proposals per accepted variant,
rejection reasons, and wall time per accepted variant. As the baseline it asks the plain
generator (same axes as a build) for blueprints with the parent's exact structural descriptors,
at the same proposal budget per parent: the yield a resynthesizer without the parent's plan
would get.

Results: ``benchmarks/results/resynthesis.{md,json}``.

    .venv/bin/python benchmarks/resynthesis.py
    .venv/bin/python benchmarks/resynthesis.py --parents 100 --variants 2
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402


def _shape(bp) -> list[str]:  # type: ignore[no-untyped-def]
    tags = [f"{bp.structure.n_intents} intent(s)"]
    if bp.structure.n_redirects:
        tags.append("redirect")
    if bp.structure.n_revisions:
        tags.append("revision")
    if any(i.slots.get("order", "#W").startswith(("the ", "my ")) for i in bp.user.intents):
        tags.append("described target")
    if bp.structure.write_count == 0:
        tags.append("read only")
    return tags


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--parents", type=int, default=300)
    parser.add_argument("--variants", type=int, default=4)
    parser.add_argument("--budget", type=int, default=50, help="proposals per parent")
    parser.add_argument("--seed", type=int, default=11, help="generation seed of the parents")
    args = parser.parse_args()

    from trajforge.environments.retail import RetailDomain
    from trajforge.errors import TaskRejected
    from trajforge.generators import generate_blueprints, validate_blueprint
    from trajforge.generators.compose import compose_blueprint
    from trajforge.generators.resynthesize import resynthesize
    from trajforge.schemas import TaskBlueprint
    from trajforge.schemas.config import GenerationConfig

    load_before = os.getloadavg()
    domain = RetailDomain(300, 0)
    config = GenerationConfig(seed=args.seed)
    parents = [b for b in generate_blueprints(domain, config, "bench", 0, args.parents)
               if isinstance(b, TaskBlueprint)]

    per_shape: dict[str, Counter] = {}
    reasons: Counter = Counter()
    totals = Counter()
    t0 = time.perf_counter()
    for parent in parents:
        result = resynthesize(parent, domain, n=args.variants, seed=0, max_attempts=args.budget)
        got = len(result.accepted)
        totals["proposed"] += result.proposed
        totals["accepted"] += got
        totals["all"] += got == args.variants
        totals["none"] += got == 0
        reasons.update(r for r, _ in result.rejected)
        for tag in ["all parents", *_shape(parent)]:
            c = per_shape.setdefault(tag, Counter())
            c["parents"] += 1
            c["proposed"] += result.proposed
            c["accepted"] += got
            c["all"] += got == args.variants
            c["none"] += got == 0
    seconds = time.perf_counter() - t0

    # baseline: the unconstrained sampler, filtered on the parent's descriptors
    sampler = domain.task_sampler()
    base = Counter()
    t1 = time.perf_counter()
    for parent in parents:
        rng = random.Random(f"baseline:{parent.id}")
        got = 0
        for _ in range(args.budget):
            if got >= args.variants:
                break
            base["proposed"] += 1
            try:
                draft = sampler.sample(rng, parent.structure.n_intents,
                                       p_indirect=config.p_indirect_reference,
                                       p_revision=config.p_revision, p_redirect=config.p_redirect,
                                       p_read_only=config.p_read_only_intent)
                bp = compose_blueprint(domain, draft, rng, seed=0, index=0)
            except TaskRejected:
                continue
            if bp.structure == parent.structure and bp.id != parent.id and \
                    validate_blueprint(bp, domain).ok:
                got += 1
        base["accepted"] += got
        base["all"] += got == args.variants
        base["none"] += got == 0
    base_seconds = time.perf_counter() - t1
    load_after = os.getloadavg()

    n = len(parents)
    payload = {
        "date": utc_now(), "command": command_line(), "machine": machine_info(),
        "load_before": load_before, "load_after": load_after,
        "parents": n, "variants_per_parent": args.variants, "budget": args.budget,
        "resynthesis": {**totals, "seconds": seconds,
                        "ms_per_accepted": 1000 * seconds / max(1, totals["accepted"]),
                        "reasons": dict(reasons.most_common()),
                        "by_shape": {k: dict(v) for k, v in sorted(per_shape.items())}},
        "baseline_unplanned": {**base, "seconds": base_seconds},
    }

    def row(name: str, c: Counter, parents: int) -> str:
        per = c["proposed"] / c["accepted"] if c["accepted"] else float("inf")
        return (f"| {name} | {parents} | {c['all'] / parents:.1%} | {c['none'] / parents:.1%} | "
                f"{c['accepted']} / {parents * args.variants} | {per:.2f} |")

    md = [f"# Resynthesis: structure-matched variants per proposal", "",
          f"Date: {payload['date']}  ", f"Command: `{payload['command']}`  ",
          f"Load average (1/5/15 min) before: {'/'.join(f'{x:.2f}' for x in load_before)}, "
          f"after: {'/'.join(f'{x:.2f}' for x in load_after)}", "",
          *machine_markdown(payload["machine"]), "",
          f"{n} programmatic retail parents (generation seed {args.seed}); {args.variants} variants "
          f"asked per parent, at most {args.budget} proposals each. A variant counts when its "
          "structural descriptors equal the parent's, it authenticates another customer, it is "
          "new, and its ground truth passes `validate_blueprint`.", "",
          "| method / parents | parents | all variants | none | variants | proposals per variant |",
          "|---|---|---|---|---|---|",
          row("resynthesize (parent's plan)", totals, n),
          row("baseline: plain sampler filtered on descriptors", base, n), "",
          f"Time: resynthesize {seconds:.2f} s in all, "
          f"{payload['resynthesis']['ms_per_accepted']:.1f} ms per accepted variant "
          f"(baseline {base_seconds:.2f} s).", "",
          "## By parent shape (resynthesize)", "",
          "| shape | parents | all variants | none | variants | proposals per variant |",
          "|---|---|---|---|---|---|",
          *(row(k, v, v["parents"]) for k, v in sorted(per_shape.items())), "",
          "## Rejected proposals by reason", "",
          "| reason | count |", "|---|---|",
          *(f"| {r} | {c} |" for r, c in reasons.most_common())]
    md_path, _ = write_results("resynthesis", payload, "\n".join(md))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
