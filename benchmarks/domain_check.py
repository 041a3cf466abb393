"""Every built-in domain (and the example plug-in) through ``trajforge domains check``.

For each domain, ``trajforge.evaluation.domain_check.check_domain(domain, N)`` (what
``trajforge domains check NAME -n N`` prints): N blueprints, one oracle and one fault-injected
episode each, played and verified as the build does. Reported per domain: the oracle pass rate
and each check's oracle failures, each fault kind's draws and catches by its named check (a
kind drawn fewer than ``--min-drawn`` times is under-drawn), the fault forms, what the domain
leaves undeclared, and the wall time. The target: oracle pass rate 100%, every kind drawn at
least 30 times and always caught.

Results go to benchmarks/results/domain_check.{md,json}.

    .venv/bin/python benchmarks/domain_check.py                      # N = 2000, every domain
    .venv/bin/python benchmarks/domain_check.py -n 300 --domains airline
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, ROOT, command_line, machine_info, machine_markdown, utc_now, write_results

EXAMPLE = ROOT / "examples" / "plugin_domain" / "src"


def _domains(names: list[str] | None, size: int, seed: int) -> list[Any]:
    """The registered domains (or ``names``), and the example plug-in from its folder."""
    from trajforge.environments.registry import domain_names, load_domain

    chosen = names or domain_names()
    out = [load_domain(name, size, seed) for name in chosen if name in domain_names()]
    if (names is None or "example" in names) and EXAMPLE.is_dir():
        sys.path.insert(0, str(EXAMPLE))
        from importlib.metadata import EntryPoint

        import tomllib

        project = tomllib.loads((EXAMPLE.parent / "pyproject.toml").read_text())
        for value in project["project"]["entry-points"]["trajforge.domains"].values():
            cls = EntryPoint(name="example", value=value, group="trajforge.domains").load()
            out.append(cls(size=size, seed=seed))
    return out


def measure(names: list[str] | None, n: int, size: int, seed: int, min_drawn: int) -> dict[str, Any]:
    from trajforge.evaluation.domain_check import check_domain

    results = []
    for domain in _domains(names, size, seed):
        began = time.perf_counter()
        report = check_domain(domain, n, min_drawn=min_drawn)
        row = report.as_dict()
        row["seconds"] = round(time.perf_counter() - began, 1)
        row["tools"] = len(domain.tools)
        row["policy_rules"] = len(domain.policy_rules)
        row["intents"] = len(domain.intents)
        results.append(row)
        print(f"[domain_check] {domain.name}: oracle {report.oracle_pass_rate}, missed {report.missed()}, "
              f"under-drawn {report.under_drawn()}, {row['seconds']} s", flush=True)
    return {"blueprints": n, "size": size, "seed": seed, "min_drawn": min_drawn, "domains": results,
            "all_ok": all(r["ok"] for r in results)}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render_markdown(payload: dict[str, Any]) -> str:
    r = payload["result"]
    lines = ["# Domain check: every domain, oracle and fault-injected episodes", "",
             f"- Date (UTC): {payload['date_utc']}", f"- Command: `{payload['command']}`",
             f"- Per domain: {r['blueprints']} blueprints (size {r['size']}, seed {r['seed']}), one oracle "
             "and one fault-injected episode each (`trajforge.evaluation.domain_check.check_domain`, "
             "what `trajforge domains check NAME` prints)",
             f"- Target: oracle pass rate 100%, every fault kind drawn >= {r['min_drawn']} times and caught "
             f"by its named check: **{'met' if r['all_ok'] else 'NOT met'}**", ""]
    lines += ["## Summary", "", "| domain | tools | rules | intents | blueprints | oracle pass rate | "
              "fault kinds under-drawn | faults missed | undeclared | seconds |",
              "|---|---:|---:|---:|---:|---:|---|---|---:|---:|"]
    for d in r["domains"]:
        lines.append(f"| {d['domain']} | {d['tools']} | {d['policy_rules']} | {d['intents']} | {d['blueprints']} | "
                     f"{_pct(d['oracle']['pass_rate'])} | {', '.join(d['under_drawn']) or 'none'} | "
                     f"{d['missed'] or 'none'} | {len(d['undeclared'])} | {d['seconds']} |")
    kinds = list(r["domains"][0]["faults"]) if r["domains"] else []
    lines += ["", "## Fault kinds: drawn / caught by the named check", "",
              "| fault kind | " + " | ".join(d["domain"] for d in r["domains"]) + " |",
              "|---|" + "---:|" * len(r["domains"])]
    for kind in kinds:
        lines.append(f"| {kind} | " + " | ".join(
            f"{d['faults'][kind]['drawn']} / {d['faults'][kind]['caught']}" for d in r["domains"]) + " |")
    lines += ["", "## Oracle episodes: failures per check", "",
              "| check | " + " | ".join(d["domain"] for d in r["domains"]) + " |",
              "|---|" + "---:|" * len(r["domains"])]
    checks = list(r["domains"][0]["oracle"]["failures"]) if r["domains"] else []
    for check in checks:
        lines.append(f"| {check} | " + " | ".join(str(d["oracle"]["failures"][check]) for d in r["domains"]) + " |")
    for d in r["domains"]:
        if d["undeclared"]:
            lines += ["", f"### {d['domain']}: left undeclared", ""] + [f"- {u}" for u in d["undeclared"]]
    lines += ["", "## Machine", ""] + machine_markdown(payload["machine"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", "-n", type=int, default=2000)
    parser.add_argument("--domains", nargs="*", default=None, help="default: every registered one and the example")
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-drawn", type=int, default=30)
    parser.add_argument("--tag", default="")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = measure(args.domains, args.blueprints, args.size, args.seed, args.min_drawn)
    payload = {"benchmark": "domain_check", "date_utc": utc_now(), "command": command_line(),
               "machine": machine_info(), "result": result}
    stem = "domain_check" + (f"-{args.tag}" if args.tag else "")
    md, js = write_results(stem, payload, render_markdown(payload), args.results)
    print(f"[domain_check] wrote {md} and {js}")
    return 0 if result["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
