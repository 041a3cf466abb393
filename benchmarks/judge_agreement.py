"""Agreement of the checklist judge with the deterministic checks, for any model.

Builds scripted oracle and fault-injected episodes with the judge switched on, then compares,
per trajectory, the judge's criteria with the deterministic checks they correspond to:

- ``judge:told_*``   vs ``outputs``
- ``judge:policy``   vs ``policy`` and ``confirmation`` and ``authentication``
- ``judge:intent_*`` (all of them) vs ``final_state``
- all judge criteria vs the trajectory passing every check

With no ``--model`` it starts ``trajforge serve-policy`` and uses its rule-based scripted judge
(a plumbing baseline, not a claim about models). With a model (``--model openai/gpt-4.1-mini``,
or a local server through ``--api-base``) it measures that model; the API key comes from the
provider's usual environment variable.

    .venv/bin/python benchmarks/judge_agreement.py --n 100
    .venv/bin/python benchmarks/judge_agreement.py --n 100 --model hosted_vllm/Qwen3-8B --api-base http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PAIRS = {
    "told": ("judge:told_%", ["outputs"]),
    "policy": ("judge:policy", ["policy", "confirmation", "authentication"]),
    "intents": ("judge:intent_%", ["final_state"]),
}


def measure(out: Path) -> dict[str, Any]:
    from trajforge.store import query

    results: dict[str, Any] = {}
    for name, (pattern, checks) in PAIRS.items():
        rows = query(out, f"""
            WITH j AS (SELECT trajectory_id, bool_and(passed) AS judge FROM verdicts
                       WHERE "check" LIKE '{pattern}' GROUP BY 1),
                 d AS (SELECT trajectory_id, bool_and(passed) AS det FROM verdicts
                       WHERE "check" IN ({", ".join(repr(c) for c in checks)}) GROUP BY 1)
            SELECT t.fault_kind IS NULL AS oracle, j.judge, d.det, count(*)
            FROM j JOIN d USING (trajectory_id) JOIN trajectories t ON t.id = j.trajectory_id
            GROUP BY 1, 2, 3""")[1]
        total = sum(r[3] for r in rows)
        agree = sum(r[3] for r in rows if r[1] == r[2])
        caught = sum(r[3] for r in rows if not r[2] and not r[1])
        failures = sum(r[3] for r in rows if not r[2])
        false_alarms = sum(r[3] for r in rows if r[2] and not r[1])
        results[name] = {"trajectories": total, "agreement": agree / total if total else None,
                         "recall_of_failures": caught / failures if failures else None,
                         "false_alarm_rate": false_alarms / max(1, total - failures)}
    overall = query(out, """
        WITH j AS (SELECT trajectory_id, bool_and(passed) AS judge FROM verdicts
                   WHERE "check" LIKE 'judge:%' GROUP BY 1)
        SELECT avg((j.judge = o.passed)::INT), count(*) FROM j JOIN outcomes o USING (trajectory_id)""")[1][0]
    results["overall"] = {"agreement": overall[0], "trajectories": overall[1]}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="blueprints (oracle + faulty episode each)")
    parser.add_argument("--model", default=None, help="litellm model string; default: the scripted judge")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--stem", default="judge_agreement")
    args = parser.parse_args()
    import yaml

    with tempfile.TemporaryDirectory(prefix="tf-judge-") as tmp:
        folder = Path(tmp)
        tree: dict[str, Any] = {"generation": {"n_blueprints": args.n},
                                "simulation": {"agents": ["oracle", "faulty"], "concurrency": 32}}
        server = None
        model, api_base = args.model, args.api_base
        if model is None:
            path = folder / "serve.yaml"
            path.write_text(yaml.safe_dump(tree))
            server = subprocess.Popen([sys.executable, "-m", "trajforge.cli", "serve-policy", "--config",
                                       str(path), "--port", "0"], stdout=subprocess.PIPE, text=True)
            line = server.stdout.readline()  # type: ignore[union-attr]
            api_base = "http://127.0.0.1:%s/v1" % re.search(r":(\d+)/v1", line).group(1)  # type: ignore[union-attr]
            model = "openai/judge"
        tree["verification"] = {"judge": {"model": model, **({"api_base": api_base} if api_base else {})}}
        config = folder / "run.yaml"
        config.write_text(yaml.safe_dump(tree))
        try:
            subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--config", str(config),
                            "--out", str(folder / "out"), "--quiet"], check=True)
        finally:
            if server is not None:
                server.terminate()
        results = measure(folder / "out")
    payload = {"date": utc_now(), "command": command_line(), "judge_model": args.model or "scripted judge (serve-policy)",
               "blueprints": args.n, "results": results, "machine": machine_info()}
    lines = [f"# Checklist judge vs deterministic checks ({payload['date']})", "",
             f"Command: `{payload['command']}`", "", f"Judge: {payload['judge_model']}; {args.n} "
             "blueprints, one scripted oracle and one fault-injected episode each.", "",
             "| criteria | deterministic checks | trajectories | agreement | judge catches failures | false alarms |",
             "|---|---|---|---|---|---|"]
    for name, (pattern, checks) in PAIRS.items():
        r = results[name]
        fmt = lambda v: "-" if v is None else f"{v:.1%}"  # noqa: E731
        lines.append(f"| `{pattern}` | {', '.join(checks)} | {r['trajectories']} | {fmt(r['agreement'])} | "
                     f"{fmt(r['recall_of_failures'])} | {fmt(r['false_alarm_rate'])} |")
    lines += ["", f"All judge criteria vs passing every check: {results['overall']['agreement']:.1%} "
                  f"agreement over {results['overall']['trajectories']} trajectories.", "",
              *machine_markdown(payload["machine"])]
    md, js = write_results(args.stem, payload, "\n".join(lines), RESULTS)
    print(json.dumps(results, indent=1))
    print(f"wrote {md}")


if __name__ == "__main__":
    main()
