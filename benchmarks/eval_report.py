"""Several ``trajforge eval`` runs of one dataset as a results page: pass@1 per policy on the same
held-out blueprints, and each policy against a baseline blueprint by blueprint.

Reads the evaluations ``trajforge eval`` stored in the dataset (the catalog's ``evaluations``
view) and nothing else, so the page shows the stored outcomes, not numbers typed by hand:

    for m in /tmp/s12/model /tmp/lvf/loop-1 /tmp/lvf/fixed-1; do
        trajforge eval --policy hf:$m --out /tmp/ev/data --limit 32 --temperature 0 ...; done
    .venv/bin/python benchmarks/eval_report.py --out /tmp/ev/data --baseline hf:/tmp/s12/model \\
        --first 8 --stem loop_vs_fixed-smollm2-final32 --eval-command "trajforge eval ..."

Each policy's latest evaluation is used; all must cover the same blueprints. ``--first K`` also
reports pass@1 on the first K of them in the split's order (the loop's held-out set is the split's
first ``heldout.limit`` blueprints), a check that the evaluations agree with what the loop measured.
Against the baseline, a blueprint one passes and the other fails is a discordant pair; the page
gives the counts and the exact two-sided sign-test p-value over them (McNemar's exact test).

``--pair A B`` (repeatable) also sets policy A against policy B blueprint by blueprint, for
example the two arms of one seed, and the pairs' counts pooled: the pooled test treats every
discordant blueprint of every pair as an independent trial, which is approximate when the pairs
share blueprints (a hard blueprint is hard in every seed).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results

from trajforge.store.catalog import query, refresh_catalog


def sign_test(gained: int, lost: int) -> float:
    """Exact two-sided p-value of ``gained`` vs ``lost`` discordant pairs under p = 1/2."""
    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(gained, lost) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def versus(a: dict[str, bool], b: dict[str, bool], order: list[str]) -> tuple[int, int]:
    """Blueprints ``a`` passes and ``b`` fails, and the reverse."""
    return sum(a[x] and not b[x] for x in order), sum(b[x] and not a[x] for x in order)


def latest_outcomes(out: Path, policy: str) -> tuple[str, dict[str, bool]]:
    """The eval id of ``policy``'s latest evaluation in ``out``, and its outcome per blueprint
    (trial 0: pass@1)."""
    quoted = policy.replace("'", "''")
    _, ids = query(out, f"SELECT eval_id FROM evaluations WHERE policy = '{quoted}' "
                        "GROUP BY eval_id ORDER BY max(created_at) DESC LIMIT 1")
    if not ids:
        raise SystemExit(f"error: no evaluation of {policy!r} in {out}")
    eval_id = ids[0][0]
    _, rows = query(out, f"SELECT blueprint_id, passed FROM evaluations WHERE eval_id = '{eval_id}' AND trial = 0")
    return eval_id, {b: bool(p) for b, p in rows}


def main() -> None:
    from trajforge.evaluation.blueprints import heldout_blueprints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the dataset the evaluations were stored in")
    parser.add_argument("--baseline", required=True, help="the --policy string of the baseline's evaluation")
    parser.add_argument("--policies", nargs="*", default=None,
                        help="--policy strings to report (default: every policy evaluated in --out)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--first", type=int, default=None, help="also pass@1 on the split's first K blueprints")
    parser.add_argument("--stem", required=True)
    parser.add_argument("--eval-command", default="", help="the trajforge eval command the evaluations came from")
    parser.add_argument("--pair", nargs=2, action="append", default=[], metavar=("A", "B"),
                        help="also policy A against policy B, blueprint by blueprint (repeatable; pooled too)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    refresh_catalog(args.out)
    if args.policies is None:
        _, found = query(args.out, "SELECT policy FROM evaluations GROUP BY policy ORDER BY min(created_at), policy")
        args.policies = [p for (p,) in found]
    policies = [args.baseline] + [p for p in args.policies if p != args.baseline]
    policies += [p for p in dict.fromkeys(p for pair in args.pair for p in pair) if p not in policies]
    outcomes = {p: latest_outcomes(args.out, p) for p in policies}
    blueprints = set(outcomes[args.baseline][1])
    for p, (_, got) in outcomes.items():
        if set(got) != blueprints:
            raise SystemExit(f"error: {p}'s evaluation covers other blueprints than the baseline's")
    order = [bp.id for bp in heldout_blueprints(args.out, args.split) if bp.id in blueprints]
    first = order[:args.first] if args.first else []
    base = outcomes[args.baseline][1]
    rows: list[dict[str, Any]] = []
    for p in policies:
        eval_id, got = outcomes[p]
        gained, lost = versus(got, base, order)
        rows.append({"policy": p, "eval_id": eval_id, "n": len(order), "pass_at_1": sum(got.values()) / len(order),
                     "pass_at_1_first": sum(got[b] for b in first) / len(first) if first else None,
                     "gained": gained, "lost": lost, "sign_test_p": sign_test(gained, lost),
                     "passed": "".join("1" if got[b] else "." for b in order)})
    payload = {"benchmark": "eval_report", "date": utc_now(), "command": command_line(),
               "eval_command": args.eval_command, "machine": machine_info(), "dataset": str(args.out),
               "split": args.split, "baseline": args.baseline, "first": args.first, "blueprints": order,
               "policies": rows, "pairs": []}
    for a, b in args.pair:
        wins, losses = versus(outcomes[a][1], outcomes[b][1], order)
        payload["pairs"].append({"a": a, "b": b, "a_only": wins, "b_only": losses,
                                 "sign_test_p": sign_test(wins, losses)})
    if args.pair:
        wins, losses = (sum(r[k] for r in payload["pairs"]) for k in ("a_only", "b_only"))
        payload["pooled"] = {"a_only": wins, "b_only": losses, "sign_test_p": sign_test(wins, losses)}
    first_col = f"pass@1, first {args.first}" if first else ""
    md = [f"# Policies on the same held-out blueprints ({payload['date']})", "",
          f"Report: `{payload['command']}`", "",
          *([f"Evaluations: `{args.eval_command}`", ""] if args.eval_command else []),
          f"{len(order)} blueprints of the `{args.split}` split of `{args.out}`, one greedy episode each "
          f"(pass@1); baseline `{args.baseline}`. Gained / lost: blueprints this policy passes and the baseline "
          "fails / the reverse; p: exact two-sided sign test over them.", "",
          f"| policy | eval id | pass@1 ({len(order)}) |{f' {first_col} |' if first else ''} gained | lost | p | "
          "passed, in the split's order |",
          f"|---|---|---|{'---|' if first else ''}---|---|---|---|"]
    for r in rows:
        cell = f" {r['pass_at_1_first']:.3f} |" if first else ""
        md.append(f"| `{r['policy']}` | {r['eval_id']} | {r['pass_at_1']:.3f} |{cell} {r['gained']} | {r['lost']} | "
                  f"{r['sign_test_p']:.3f} | `{r['passed']}` |")
    if args.pair:
        md += ["", "## Pairs", "", "A only / B only: blueprints A passes and B fails / the reverse; the pooled row "
               "adds them up over the pairs (approximate: the pairs share blueprints).", "",
               "| A | B | A only | B only | p |", "|---|---|---|---|---|"]
        md += [f"| `{r['a']}` | `{r['b']}` | {r['a_only']} | {r['b_only']} | {r['sign_test_p']:.3f} |"
               for r in payload["pairs"]]
        pooled = payload["pooled"]
        md.append(f"| pooled | | {pooled['a_only']} | {pooled['b_only']} | {pooled['sign_test_p']:.3f} |")
    md += ["", *machine_markdown(payload["machine"])]
    md_path, _ = write_results(args.stem, payload, "\n".join(md), args.results)
    print(md_path.read_text())


if __name__ == "__main__":
    main()
