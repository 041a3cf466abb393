"""Fresh worlds (``domain.fresh_every``): how many entities a model trained on the data meets, and
how many of a held-out blueprint's values it could have memorised (issue 18, scope item 2).

Per registered domain, ``--n`` blueprints of a single-request build (the generation config of
``benchmarks/sft_tiny_cpu.py``'s data) are generated and validated as the build does
(``generators.batch.generate_batch``), once in the one world of ``domain.size`` (the default)
and once with a fresh world per blueprint (``--fresh-every``, at ``--fresh-size``). Counted,
per 1,000 blueprints:

- **customers**: distinct accounts the ground-truth calls act on (``Domain.account_owner`` of
  each call's arguments);
- **identity values**: distinct values of the user's identity facts (``IdentitySpec.factors``:
  an email, a phone number, a name and birth date ...);
- **ids**: distinct values of every argument that references an entity
  (``Domain.references_entity``) in the ground-truth calls.

**Memorisable share**: of the identity values and ids of the last 20% of blueprints (a stand-in
for a held-out split), the share that also occurs in the first 80%: a value a model could have
learned by heart instead of copying it from the dialogue. Generation time per 1,000 blueprints
(each world built at ``--fresh-size`` costs milliseconds) is reported beside.

    .venv/bin/python benchmarks/fresh_entities.py            # 1,000 blueprints per domain and arm
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from trajforge.environments.registry import domain_names
from trajforge.generators.batch import generate_batch
from trajforge.schemas.config import RunConfig
from trajforge.simulation.worker_state import shared_domain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results

SINGLE_REQUEST = {"max_intents": 1, "p_indirect_reference": 0.0, "p_revision": 0.0, "p_redirect": 0.0}


def config(name: str, size: int, fresh_every: int) -> RunConfig:
    return RunConfig.model_validate({"domain": {"name": name, "size": size, "fresh_every": fresh_every},
                                     "generation": SINGLE_REQUEST})


def values(bp: Any) -> dict[str, list[str]]:
    """A blueprint's customers, identity values and entity ids, by what its domain declares."""
    domain = shared_domain(bp.environment.domain, bp.environment.size, bp.environment.seed)
    keys = {k for factor in domain.identity.factors for k in factor}
    out: dict[str, list[str]] = {"customers": [], "identity values": [],
                                 "ids": []}
    out["identity values"] = [f"{k}={bp.user.fact(k)}" for k in sorted(keys) if bp.user.fact(k)]
    for call in bp.ground_truth.calls:
        owner = domain.account_owner(domain.template, call.arguments)
        if owner is not None:
            out["customers"].append(owner)
        for key, value in call.arguments.items():
            items = [str(v) for v in (value if isinstance(value, list) else [value])]
            if domain.references_entity(key):
                out["ids"] += items
    return out


def measure(name: str, n: int, size: int, fresh_every: int) -> dict[str, Any]:
    cfg = config(name, size, fresh_every)
    started = time.perf_counter()
    blueprints = generate_batch(cfg, 0, n).blueprints
    seconds = time.perf_counter() - started
    per = [values(bp) for bp in blueprints]
    scale = 1000 / max(1, len(blueprints))
    row: dict[str, Any] = {"domain": name, "size": size, "fresh_every": fresh_every,
                           "blueprints": len(blueprints), "worlds": len({bp.environment.seed for bp in blueprints}),
                           "seconds_per_1000": round(seconds * scale, 2)}
    cut = int(len(per) * 0.8)
    for kind in ("customers", "identity values", "ids"):
        every = [v for p in per for v in p[kind]]
        row[f"distinct {kind} per 1,000"] = round(len(set(every)) * scale)
        early = {v for p in per[:cut] for v in p[kind]}
        late = [v for p in per[cut:] for v in p[kind]]
        row[f"memorisable {kind}"] = round(sum(v in early for v in late) / len(late), 4) if late else None
    return row


def render(payload: dict[str, Any]) -> str:
    rows = payload["rows"]
    keys = [k for k in rows[0] if k not in ("domain",)]
    lines = [f"# Fresh worlds: distinct entities and memorisable values ({payload['date']})", "",
             f"Command: `{payload['command']}`", "",
             __doc__.split("\n\n", 1)[1].split("    .venv")[0].strip(), "",
             "| domain | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    lines += ["| " + " | ".join(str(r[k]) for k in ["domain", *keys]) + " |" for r in rows]
    lines += ["", f"Load average (1, 5, 15 min) at the end: {payload['load']}", "",
              *machine_markdown(payload["machine"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--domains", nargs="*", default=None)
    parser.add_argument("--size", type=int, default=300, help="the one world's size (the default)")
    parser.add_argument("--fresh-size", type=int, default=20)
    parser.add_argument("--fresh-every", type=int, default=1)
    parser.add_argument("--stem", default="fresh_entities")
    args = parser.parse_args(argv)
    rows = []
    for name in args.domains or domain_names():
        for size, every in ((args.size, 0), (args.fresh_size, args.fresh_every)):
            rows.append(measure(name, args.n, size, every))
            print(rows[-1], flush=True)
    payload = {"date": utc_now(), "command": command_line(), "rows": rows,
               "load": [round(x, 2) for x in os.getloadavg()], "machine": machine_info()}
    md, _ = write_results(args.stem, payload, render(payload))
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
