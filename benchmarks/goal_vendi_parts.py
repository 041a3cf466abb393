"""Where the goal texts' Vendi score comes from (issue 17): the score of each part of a goal.

A goal (``generators.scenario.goal_text``) is ``You are <role> (<who>). <story> <opener> (1)
<request> [<details>] ...``. Per built-in domain, ``--blueprints`` blueprints of the default
generation config; the Vendi score (as ``realism.py``: q = 1, cosine kernel on the packaged
all-MiniLM-L6-v2, n = 114, mean over ``--samples`` samples) and the mean pairwise cosine of:

- **goal**: the goal as generated;
- **story**: the person and their story, up to the opener;
- **story, no person**: the story alone (background, situations, constraint, fallbacks);
- **requests**: the opener and the numbered requests with their details;
- **person last**: the goal with ``You are <role> (<who>).`` moved to its end;
- **person last, no details**: that, with the ``[slot: value, ...]`` details left out;
- **no person, no details**: the story and the requests alone.

The last three are renderings the generator does not write: what a change of the goal's layout
would give, measured before making it.

    .venv/bin/python benchmarks/goal_vendi_parts.py
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results
from realism import vendi_samples

from trajforge.generators.paraphrase import goal_shape

DOMAINS = ("retail", "airline", "banking", "telecom")


def parts(goal: str, role: str) -> dict[str, str]:
    m = goal_shape(role).match(goal)
    if m is None:
        raise ValueError(f"not the goal_text shape: {goal[:80]}")
    person, story = f"You are {role} ({m['who']}).", (m["story"] or "").strip()
    requests = goal[m.end("story") if m["story"] else m.end("who") + 2:].strip()
    bare = re.sub(r" \[[^\]]*\]", "", requests)
    return {"goal": goal, "story": f"{person} {story}".strip(), "story, no person": story,
            "requests": requests, "person last": f"{story} {requests} {person}".strip(),
            "person last, no details": f"{story} {bare} {person}".strip(),
            "no person, no details": f"{story} {bare}".strip()}


def measure(blueprints: int, samples: int) -> dict[str, Any]:
    from trajforge.environments.registry import load_domain
    from trajforge.generators import generate_blueprints
    from trajforge.schemas import TaskBlueprint
    from trajforge.schemas.config import GenerationConfig
    from trajforge.verifiers.diversity.embedders import make_embedder

    embedder = make_embedder("minilm", device="cpu")
    out: dict[str, Any] = {}
    for name in DOMAINS:
        domain = load_domain(name, 300, 0)
        goals = [b.user.goal for b in generate_blueprints(domain, GenerationConfig(), "realism", 0, blueprints)
                 if isinstance(b, TaskBlueprint)]
        split = [parts(g, domain.prose.role) for g in goals]
        out[name] = {}
        for key in split[0]:
            X = embedder.embed([p[key] for p in split])
            S = X @ X.T
            n = len(X)
            out[name][key] = {"vendi": vendi_samples(X, samples)["mean"],
                              "mean_cosine": round(float((S.sum() - np.trace(S)) / (n * n - n)), 3)}
    return out


def render(payload: dict[str, Any]) -> str:
    res = payload["results"]
    keys = list(next(iter(res.values())))
    lines = [
        "# Goal-text Vendi by part (issue 17)", "",
        f"- Date (UTC): {payload['date']}", f"- Command: `{payload['command']}`",
        f"- Load average at start: {payload['load']}",
        f"- {payload['blueprints']} blueprints per domain (default generation config), Vendi q=1 on the "
        f"packaged all-MiniLM-L6-v2, n=114, mean of {payload['samples']} samples; target: goal >= 30", "",
        "| part | " + " | ".join(f"{d} Vendi | {d} mean cos" for d in res) + " |",
        "|---|" + "---:|---:|" * len(res),
    ]
    for key in keys:
        lines.append(f"| {key} | " + " | ".join(f"{res[d][key]['vendi']} | {res[d][key]['mean_cosine']}"
                                               for d in res) + " |")
    lines += ["", "## Machine", "", *machine_markdown(payload["machine"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", "-n", type=int, default=300)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    payload = {"date": utc_now(), "command": command_line(), "load": load, "blueprints": args.blueprints,
               "samples": args.samples, "machine": machine_info(), "results": measure(args.blueprints, args.samples)}
    md, _ = write_results("goal_vendi_parts", payload, render(payload), args.results)
    print(md.read_text())


if __name__ == "__main__":
    main()
