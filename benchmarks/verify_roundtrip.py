"""Export -> verify round trip, plain and re-worded, through the real CLI.

1. ``trajforge build --out D`` (the default build; ``--n`` to change its size);
2. ``trajforge export --out D --to X --format openai``;
3. each split's ``X/openai/<split>.jsonl`` fed back unchanged through ``trajforge verify --out D
   --input``: its verdicts must equal the stored ones exactly (check, passed, reason, evidence);
4. the same files with every confirmation request, consent, offer of more help and closing
   re-worded from the evaluation bank (``benchmarks/_reword.py``): every exported trajectory
   passed when it was built, so any failing check is a false positive.

Results go to benchmarks/results/verify_roundtrip.{md,json}.

    .venv/bin/python benchmarks/verify_roundtrip.py            # the default build
    .venv/bin/python benchmarks/verify_roundtrip.py --n 1000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results
from _reword import Reworder

TRAJFORGE = [sys.executable, "-m", "trajforge.cli"]
SPLITS = ("train", "validation", "test")


def _run(*args: str) -> str:
    done = subprocess.run([*TRAJFORGE, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"trajforge {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def _stored(out: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    from trajforge.store import query

    _, rows = query(out, 'SELECT trajectory_id, "check", passed, reason, evidence FROM verdicts')
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


def _verdicts(path: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    out = {}
    for line in path.read_text().splitlines():
        v = json.loads(line)
        out[v["trajectory_id"], v["check"]] = (v["passed"], v["reason"], v["evidence"])
    return out


def _reword_file(source: Path, target: Path, reworder: Reworder) -> int:
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    changed = 0
    with target.open("w") as f:
        for i, row in enumerate(rows):
            rng = random.Random(f"{source.name}:{i}")
            before = json.dumps(row["messages"])
            for message in row["messages"]:
                if isinstance(message.get("content"), str):
                    message["content"] = reworder.reword(message["role"], message["content"], rng)
            changed += json.dumps(row["messages"]) != before
            f.write(json.dumps(row) + "\n")
    return changed


def measure(n: int | None, work: Path) -> dict[str, Any]:
    began = time.perf_counter()
    data, export = work / "dataset", work / "export"
    _run("build", "--out", str(data), *(["--n", str(n)] if n else []))
    _run("export", "--out", str(data), "--to", str(export), "--format", "openai")
    stored = _stored(data)
    reworder = Reworder()
    plain = {"rows": 0, "verdicts": 0, "differ": 0, "examples": []}
    reworded: dict[str, Any] = {"rows": 0, "rows_changed": 0, "verdicts": 0, "failed": Counter(), "examples": []}
    for split in SPLITS:
        source = export / "openai" / f"{split}.jsonl"
        if not source.exists():
            continue
        _run("verify", "--out", str(data), "--input", str(source))
        got = _verdicts(source.with_name(f"{split}.verdicts.jsonl"))
        plain["rows"] += sum(1 for line in source.read_text().splitlines() if line.strip())
        plain["verdicts"] += len(got)
        for key, value in got.items():
            if stored.get(key) != value:
                plain["differ"] += 1
                if len(plain["examples"]) < 10:
                    plain["examples"].append({"key": list(key), "stored": stored.get(key), "got": value})
        target = work / f"{split}.reworded.jsonl"
        reworded["rows_changed"] += _reword_file(source, target, reworder)
        reworded["rows"] += sum(1 for line in target.read_text().splitlines() if line.strip())
        _run("verify", "--out", str(data), "--input", str(target))
        again = _verdicts(target.with_name(f"{split}.reworded.verdicts.jsonl"))
        reworded["verdicts"] += len(again)
        for (trajectory, check), (passed, reason, _) in again.items():
            if not passed:
                reworded["failed"][check] += 1
                if len(reworded["examples"]) < 10:
                    reworded["examples"].append({"trajectory_id": trajectory, "check": check, "reason": reason})
    reworded["failed"] = dict(reworded["failed"])
    reworded["acts_reworded"] = vars(reworder.counts)
    return {"n_blueprints": n or "default", "stored_verdicts": len(stored), "plain": plain,
            "reworded": reworded, "seconds": round(time.perf_counter() - began, 1),
            "plain_exact": plain["verdicts"] > 0 and plain["differ"] == 0,
            "reworded_false_positives_zero": reworded["verdicts"] > 0 and not reworded["failed"]}


def render(payload: dict[str, Any]) -> str:
    r = payload["result"]
    p, w = r["plain"], r["reworded"]
    lines = [
        "# Export -> verify round trip", "",
        f"- Date (UTC): {payload['date_utc']}", f"- Command: `{payload['command']}`",
        f"- Build: `trajforge build` ({r['n_blueprints']} blueprints), `trajforge export --format openai`, "
        "each split fed to `trajforge verify --input`", f"- Time: {r['seconds']} s", "",
        "## Machine", "", *machine_markdown(payload["machine"]), "",
        "## Unchanged export", "",
        f"- {p['rows']} rows, {p['verdicts']} verdicts; differing from the stored verdicts: {p['differ']} "
        f"(**{'exact' if r['plain_exact'] else 'NOT exact'}**)", "",
        "## Re-worded from the evaluation bank", "",
        f"- {w['rows']} rows ({w['rows_changed']} changed); acts re-worded: "
        + ", ".join(f"{k} {v}" for k, v in w["acts_reworded"].items()),
        f"- Verdicts: {w['verdicts']}; failing (every exported trajectory had passed, so each is a false "
        f"positive): {sum(w['failed'].values())} {w['failed'] or ''} "
        f"(**{'PASS' if r['reworded_false_positives_zero'] else 'FAIL'}**)",
    ]
    for e in p["examples"] + w["examples"]:
        lines.append(f"- example: {json.dumps(e)[:400]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=None, help="blueprints (default: the build's default)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tf-roundtrip-") as work:
        result = measure(args.n, Path(work))
    payload = {"benchmark": "verify_roundtrip", "date_utc": utc_now(), "command": command_line(),
               "machine": machine_info(), "result": result}
    md, js = write_results("verify_roundtrip", payload, render(payload), args.results)
    print(f"[verify_roundtrip] exact: {result['plain_exact']}; re-worded false positives: "
          f"{result['reworded']['failed'] or 0}; wrote {md}")
    return 0 if result["plain_exact"] and result["reworded_false_positives_zero"] else 1


if __name__ == "__main__":
    sys.exit(main())
