"""The checks on wording the generator does not produce, in every built-in domain.

For each registered domain: N blueprints, their oracle episodes played as the build plays them
(``trajforge.evaluation.domain_check.play_and_verify``), then each oracle episode again with its
confirmation requests, consents, offers of more help and closings re-worded from the evaluation
bank (``benchmarks/_reword.py``: calls, results and final state unchanged), and every check run
on both. Reported per domain and check: false positives on the episodes as played and as
re-worded. (``verifier_quality.py`` does the same for retail alone, with the fault recall.)

Results go to benchmarks/results/reworded_domains.{md,json}.

    .venv/bin/python benchmarks/reworded_domains.py            # N = 500 per domain
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results
from _reword import Reworder


def measure(n: int, size: int, seed: int) -> dict[str, Any]:
    from trajforge.environments.registry import domain_names, load_domain
    from trajforge.evaluation.domain_check import RUN_ID, play_and_verify
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.blueprint import TaskBlueprint
    from trajforge.schemas.config import GenerationConfig
    from trajforge.verifiers import verify
    from trajforge.verifiers.checks import CHECKS

    out = []
    for name in domain_names():
        began = time.perf_counter()
        domain = load_domain(name, size, seed)
        blueprints = [b for b in generate_blueprints(domain, GenerationConfig(), RUN_ID, 0, n)
                      if isinstance(b, TaskBlueprint)]
        reworder = Reworder()
        played = reworded = changed = 0
        as_played: Counter[str] = Counter()
        as_reworded: Counter[str] = Counter()
        examples: list[dict[str, Any]] = []
        for episode in play_and_verify(domain, blueprints):
            trajectory = episode.trajectory
            if trajectory.episode.fault is not None:
                continue
            played += 1
            as_played.update(episode.failed)
            rng = random.Random(trajectory.id)
            messages = tuple(m.model_copy(update={"content": reworder.reword(m.role, m.content, rng)})
                             if m.role in ("assistant", "user") and m.content else m for m in trajectory.messages)
            changed += messages != trajectory.messages
            again = trajectory.model_copy(update={"messages": messages})
            failed = [v.check for v in verify(again, episode.blueprint, domain) if not v.passed]
            reworded += 1
            as_reworded.update(failed)
            if failed and len(examples) < 5:
                examples.append({"trajectory_id": trajectory.id, "failed": failed})
        out.append({"domain": name, "oracle_episodes": played, "reworded_episodes": reworded,
                    "episodes_changed": changed, "acts_reworded": vars(reworder.counts),
                    "false_positives_as_played": {c: as_played[c] for c in CHECKS},
                    "false_positives_reworded": {c: as_reworded[c] for c in CHECKS},
                    "examples": examples, "seconds": round(time.perf_counter() - began, 1)})
        print(f"[reworded_domains] {name}: {played} oracle episodes, false positives as played "
              f"{sum(as_played.values())}, re-worded {dict(+as_reworded)}", flush=True)
    return {"blueprints": n, "size": size, "seed": seed, "domains": out}


def render_markdown(payload: dict[str, Any]) -> str:
    r = payload["result"]
    checks = list(r["domains"][0]["false_positives_reworded"]) if r["domains"] else []
    lines = ["# The checks on re-worded oracle episodes, per domain", "",
             f"- Date (UTC): {payload['date_utc']}", f"- Command: `{payload['command']}`",
             f"- Load average at start: {payload['load_average']}",
             f"- Per domain: {r['blueprints']} blueprints (size {r['size']}, seed {r['seed']}); each oracle "
             "episode checked as played and again with its confirmation requests, consents, offers of help "
             "and closings re-worded from the evaluation bank (`benchmarks/_reword.py`)", "",
             "## False positives per check (as played / re-worded)", "",
             "| check | " + " | ".join(d["domain"] for d in r["domains"]) + " |",
             "|---|" + "---:|" * len(r["domains"])]
    for check in checks:
        lines.append(f"| {check} | " + " | ".join(
            f"{d['false_positives_as_played'][check]} / {d['false_positives_reworded'][check]}"
            for d in r["domains"]) + " |")
    lines += ["", "| domain | oracle episodes | re-worded (changed) | acts re-worded | seconds |",
              "|---|---:|---:|---|---:|"]
    for d in r["domains"]:
        acts = ", ".join(f"{k} {v}" for k, v in d["acts_reworded"].items())
        lines.append(f"| {d['domain']} | {d['oracle_episodes']} | {d['reworded_episodes']} ({d['episodes_changed']}) | "
                     f"{acts} | {d['seconds']} |")
    lines += ["", "## Machine", ""] + machine_markdown(payload["machine"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", "-n", type=int, default=500)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load = [round(x, 2) for x in os.getloadavg()]
    result = measure(args.blueprints, args.size, args.seed)
    payload = {"benchmark": "reworded_domains", "date_utc": utc_now(), "command": command_line(),
               "load_average": load, "machine": machine_info(), "result": result}
    md, js = write_results("reworded_domains", payload, render_markdown(payload), args.results)
    print(f"[reworded_domains] wrote {md} and {js}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
