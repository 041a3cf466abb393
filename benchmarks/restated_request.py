"""How far the agent's restatement of the request carries in a policy's episodes (issue 18).

The scripted agent takes each request up in words (``IntentSpec.takes``) and says what its first
read of the order is for (``IntentSpec.progress``). For each episode of an evaluation (``--eval
PARQUET --catalog DUCKDB``: the evaluation's rows and the dataset whose blueprints they played),
the policy's first words and its first words that carry a progress line are matched against the
retail banks: the task's intent (a refused cancellation is asked for, and taken up, like any
cancellation), another intent, or none (garbled or not said). Prints JSON; nothing is written.

    .venv/bin/python benchmarks/restated_request.py --eval EV.parquet --catalog data/catalog.duckdb
"""

from __future__ import annotations

import argparse
import collections
import json

from post_read_acts import evaluated

from trajforge.environments.retail.phrasing import INTENTS

ASKED_AS = {"cancel_refused": "cancel_order"}  # the same request, the outcome found by reading


def kinds_said(text: str | None, field: str) -> set[str]:
    """The intents whose ``field`` bank (``takes`` or ``progress``) has a line in ``text``."""
    low = (text or "").lower()
    return {k for k, spec in INTENTS.items() if any(p.lower() in low for p in getattr(spec, field))}


def grade(kind: str, said: set[str]) -> str:
    if kind in said or ASKED_AS.get(kind) in said:
        return "task's intent"
    return "another intent" if said else "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", required=True)
    ap.add_argument("--catalog", required=True)
    args = ap.parse_args()
    counts: dict[str, collections.Counter[str]] = {"takes": collections.Counter(), "progress": collections.Counter()}
    for kind, messages in evaluated(args.eval, args.catalog):
        words = [m.get("content") for m in messages if m["role"] == "assistant" and m.get("content")]
        counts["takes"][grade(kind, kinds_said(words[0] if words else None, "takes"))] += 1
        progress = next((w for w in words if kinds_said(w, "progress")), None)
        counts["progress"][grade(kind, kinds_said(progress, "progress"))] += 1
    print(json.dumps({k: dict(v) for k, v in counts.items()}, indent=1))


if __name__ == "__main__":
    main()
