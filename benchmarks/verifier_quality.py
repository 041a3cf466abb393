"""Verifier quality: false positives on oracle episodes, recall on fault-injected ones.

Over ``RetailDomain(size, seed)`` (default 300, 0) and the blueprints
``generate_blueprints(domain, GenerationConfig(), "bench", 0, N)`` (default N = 2000), simulates
one oracle and one fault-injected episode per blueprint exactly as the build does
(``trajforge.simulation.batch.simulate_batch``: the same per-episode seeds, ``choose_fault`` over every
``FaultKind``, the same limits) and runs every verifier check on each episode.

Reported:
- oracle: episodes, and for each check the number of episodes it failed (false positives;
  the requirement is 0 for every check);
- for each fault kind: episodes injected, how many the named check (``FAULT_CHECKS[kind]``)
  caught and its recall, how many failed at least one check, and, as a small confusion
  summary, the fraction of that kind's episodes in which each check failed;
- examples of every false positive and of every missed fault (trajectory id, blueprint index,
  what the checks said), in the JSON.

Results go to benchmarks/results/verifier_quality.{md,json}.

    .venv/bin/python benchmarks/verifier_quality.py              # N = 2000
    .venv/bin/python benchmarks/verifier_quality.py --blueprints 5000
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results
from _reword import Reworder

RUN_ID = "bench"
AGENTS = ("oracle", "faulty")
MAX_EXAMPLES = 10  # per check (false positives) or per fault kind (misses)


def measure(n_blueprints: int, size: int, seed: int, chunk: int) -> dict[str, Any]:
    from trajforge.environments.retail import RetailDomain
    from trajforge.evaluation.domain_check import play_and_verify
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.blueprint import BlueprintRejection
    from trajforge.schemas.config import GenerationConfig
    from trajforge.schemas.trajectory import FaultKind
    from trajforge.simulation.faults import FAULT_CHECKS
    from trajforge.verifiers import verify
    from trajforge.verifiers.checks import CHECKS

    began = time.perf_counter()
    domain = RetailDomain(size, seed)
    check_names = list(CHECKS)

    blueprints = []
    rejections: Counter[str] = Counter()
    for item in generate_blueprints(domain, GenerationConfig(), RUN_ID, 0, n_blueprints):
        if isinstance(item, BlueprintRejection):
            rejections[item.reason] += 1
        else:
            blueprints.append(item)

    oracle_episodes = 0
    oracle_fail: Counter[str] = Counter()
    oracle_any_fail = 0
    oracle_examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    injected: Counter[str] = Counter()
    kind_fail: dict[str, Counter[str]] = defaultdict(Counter)  # kind -> check -> failures
    kind_any_fail: Counter[str] = Counter()
    kind_named_caught: Counter[str] = Counter()
    missed_examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    passed_all_examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    terminations: dict[str, Counter[str]] = {a: Counter() for a in AGENTS}
    form_injected: Counter[str] = Counter()  # "kind/form"
    form_caught: Counter[str] = Counter()
    reworder = Reworder()
    reworded_episodes = 0
    reworded_changed = 0
    reworded_fail: Counter[str] = Counter()
    reworded_examples: dict[str, list[dict[str, Any]]] = defaultdict(list)

    faulty_played = 0
    for played in play_and_verify(domain, blueprints, chunk):  # the build's own simulation step
        trajectory, bp = played.trajectory, played.blueprint
        faulty_played += trajectory.episode.fault is not None
        agent = "oracle" if trajectory.episode.fault is None else "faulty"
        terminations[agent][trajectory.termination.value] += 1
        verdicts = played.verdicts
        failed = [name for name in check_names if not verdicts[name].passed]
        record = {"trajectory_id": trajectory.id, "blueprint_id": bp.id,
                  "blueprint_index": bp.provenance.index,
                  "termination": trajectory.termination.value,
                  "failed": {name: verdicts[name].reason for name in failed}}
        if agent == "oracle":
            rng = random.Random(trajectory.id)
            messages = tuple(m.model_copy(update={"content": reworder.reword(m.role, m.content, rng)})
                             if m.role in ("assistant", "user") else m for m in trajectory.messages)
            reworded = trajectory.model_copy(update={"messages": messages})
            reworded_episodes += 1
            reworded_changed += messages != trajectory.messages
            again = {v.check: v for v in verify(reworded, bp, domain)}
            for name in check_names:
                if not again[name].passed:
                    reworded_fail[name] += 1
                    if len(reworded_examples[name]) < MAX_EXAMPLES:
                        reworded_examples[name].append(
                            {**record, "reason": again[name].reason, "evidence": again[name].evidence[:1000]})
            oracle_episodes += 1
            oracle_any_fail += bool(failed)
            for name in failed:
                oracle_fail[name] += 1
                if len(oracle_examples[name]) < MAX_EXAMPLES:
                    oracle_examples[name].append(
                        {**record, "evidence": verdicts[name].evidence[:1000]})
            continue
        fault = trajectory.episode.fault
        assert fault is not None
        kind = fault.kind.value
        named = FAULT_CHECKS[fault.kind]
        injected[kind] += 1
        form = f"{kind}/{fault.form}"
        form_injected[form] += 1
        form_caught[form] += named in failed
        for name in failed:
            kind_fail[kind][name] += 1
        kind_any_fail[kind] += bool(failed)
        if named in failed:
            kind_named_caught[kind] += 1
        else:
            example = {**record, "fault": fault.model_dump(mode="json"), "named_check": named,
                       "named_check_reason": verdicts[named].reason}
            if len(missed_examples[kind]) < MAX_EXAMPLES:
                missed_examples[kind].append(example)
            if not failed and len(passed_all_examples[kind]) < MAX_EXAMPLES:
                passed_all_examples[kind].append(example)

    skipped_faulty = len(blueprints) - faulty_played  # faulty, but the blueprint admits no fault
    kinds = [k.value for k in FaultKind]
    per_kind = {}
    for kind in kinds:
        n = injected[kind]
        per_kind[kind] = {
            "named_check": FAULT_CHECKS[FaultKind(kind)],
            "injected": n,
            "caught_by_named_check": kind_named_caught[kind],
            "recall": round(kind_named_caught[kind] / n, 6) if n else None,
            "failed_any_check": kind_any_fail[kind],
            "detected_any_rate": round(kind_any_fail[kind] / n, 6) if n else None,
            "check_failure_rate": {name: round(kind_fail[kind][name] / n, 4) if n else None
                                   for name in check_names},
            "check_failures": {name: kind_fail[kind][name] for name in check_names},
        }
    per_form = {form: {"injected": n, "caught_by_named_check": form_caught[form],
                       "recall": round(form_caught[form] / n, 6)}
                for form, n in sorted(form_injected.items())}
    oracle_ok = oracle_episodes > 0 and all(oracle_fail[name] == 0 for name in check_names)
    misses = {k: v["injected"] - v["caught_by_named_check"] for k, v in per_kind.items()
              if v["injected"] and v["injected"] != v["caught_by_named_check"]}
    return {
        "domain": {"name": domain.name, "size": size, "seed": seed},
        "blueprints_requested": n_blueprints,
        "blueprints_valid": len(blueprints),
        "rejections": dict(rejections),
        "checks": check_names,
        "oracle": {
            "episodes": oracle_episodes,
            "false_positives": {name: oracle_fail[name] for name in check_names},
            "episodes_failing_any_check": oracle_any_fail,
            "examples": dict(oracle_examples),
        },
        "faulty": {
            "episodes": sum(injected.values()),
            "skipped_no_applicable_fault": skipped_faulty,
            "per_kind": per_kind,
            "per_form": per_form,
            "missed_by_named_check": misses,
            "missed_examples": dict(missed_examples),
            "passed_every_check_examples": dict(passed_all_examples),
        },
        "reworded": {
            "episodes": reworded_episodes,
            "episodes_changed": reworded_changed,
            "acts_reworded": vars(reworder.counts),
            "false_positives": {name: reworded_fail[name] for name in check_names},
            "examples": dict(reworded_examples),
        },
        "withdrawn": withdrawn_recall(domain, blueprints),
        "recogniser": recogniser_quality(),
        "terminations": {a: dict(c) for a, c in terminations.items()},
        "oracle_false_positives_zero": oracle_ok,
        "reworded_false_positives_zero": reworded_episodes > 0 and not any(reworded_fail.values()),
        "every_fault_caught_by_named_check": not misses,
        "seconds": round(time.perf_counter() - began, 2),
    }


def withdrawn_recall(domain: Any, blueprints: list[Any]) -> dict[str, Any]:
    """(d) ``unconfirmed_write/after_change_of_mind`` in the evaluation wording
    (``trajforge.simulation.wording``): at the confirmation the user takes a yes back with a row
    of the evaluation bank ("Sure, go ahead. Never mind, forget it.") and says what changed; the
    agent writes the change unasked. Every blueprint that admits the form, once; recall of
    ``confirmation``."""
    import asyncio

    from trajforge.schemas import Fault, FaultKind
    from trajforge.simulation.episodes import play_scripted
    from trajforge.simulation.faults import kind_forms
    from trajforge.simulation.wording import wording
    from trajforge.verifiers import verify

    bank = wording("evaluation")

    async def play(i: int, bp: Any, target: int) -> tuple[int, bool]:
        fault = Fault(kind=FaultKind.unconfirmed_write, target=target, form="after_change_of_mind")
        t = await play_scripted(bp, domain, i, fault, bank, run_id=RUN_ID)
        [verdict] = verify(t, bp, domain, checks=["confirmation"])
        return bp.provenance.index, verdict.passed

    missed, n = [], 0
    for i, bp in enumerate(blueprints):
        for target, forms in kind_forms(bp, domain, FaultKind.unconfirmed_write).items():
            if "after_change_of_mind" in forms:
                index, passed = asyncio.run(play(i, bp, target))
                n += 1
                if passed:
                    missed.append(index)
    return {"episodes": n, "caught": n - len(missed), "recall": round((n - len(missed)) / n, 6) if n else None,
            "missed_blueprints": missed[:MAX_EXAMPLES]}


def recogniser_quality() -> dict[str, Any]:
    """(c) The dialogue-act recogniser alone on the evaluation bank (templates filled)."""
    from trajforge.environments.dialogue.evaluate import expand, per_class
    from trajforge.environments.dialogue.train import read_bank

    rows = expand(read_bank("eval.jsonl"))
    return {"rows": len(rows), "per_class": per_class(rows)}


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    text = f"{100 * x:.1f}%"
    if 0 < x < 1 and text in ("0.0%", "100.0%"):  # never round a miss away
        text = f"{100 * x:.2f}%"
    return text


def render_markdown(payload: dict[str, Any]) -> str:
    r = payload["result"]
    checks = r["checks"]
    oracle = r["oracle"]
    faulty = r["faulty"]
    lines = [
        "# Verifier quality (oracle false positives, fault recall)",
        "",
        f"- Date (UTC): {payload['date_utc']}",
        f"- Command: `{payload['command']}`",
        f"- Domain: {r['domain']['name']} (size {r['domain']['size']}, seed {r['domain']['seed']}); "
        f"blueprints: `generate_blueprints(domain, GenerationConfig(), \"{RUN_ID}\", 0, "
        f"{r['blueprints_requested']})` -> {r['blueprints_valid']} valid, "
        f"{sum(r['rejections'].values())} rejected" + (f" {r['rejections']}" if r['rejections'] else ""),
        f"- Episodes: {oracle['episodes']} oracle, {faulty['episodes']} fault-injected "
        f"({faulty['skipped_no_applicable_fault']} blueprints admitted no fault), simulated with "
        "`trajforge.evaluation.domain_check.play_and_verify` (the build's `simulate_batch`, then "
        "`verify` with all checks)",
        f"- Oracle false positives = 0 for every check: "
        f"**{'PASS' if r['oracle_false_positives_zero'] else 'FAIL'}**",
        f"- Every injected fault caught by its named check: "
        f"**{'yes' if r['every_fault_caught_by_named_check'] else 'no'}**"
        + ("" if r["every_fault_caught_by_named_check"] else
           f" (misses: {', '.join(f'{k} {n}' for k, n in r['faulty']['missed_by_named_check'].items())})"),
        f"- Time: {r['seconds']} s",
        "",
        "## Machine",
        "",
        *machine_markdown(payload["machine"]),
        "",
        "## Oracle episodes: false positives per check",
        "",
        "| Episodes | " + " | ".join(checks) + " | any check |",
        "|---:|" + "---:|" * (len(checks) + 1),
        f"| {oracle['episodes']} | " + " | ".join(str(oracle["false_positives"][c]) for c in checks)
        + f" | {oracle['episodes_failing_any_check']} |",
        "",
        "## Fault-injected episodes: recall of the named check",
        "",
        "| Fault kind | Named check | Injected | Caught by named check | Recall | Failed any check "
        "| Detected (any) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for kind, k in faulty["per_kind"].items():
        lines.append(f"| {kind} | {k['named_check']} | {k['injected']} | {k['caught_by_named_check']} "
                     f"| {_pct(k['recall'])} | {k['failed_any_check']} | {_pct(k['detected_any_rate'])} |")
    total_inj = sum(k["injected"] for k in faulty["per_kind"].values())
    total_caught = sum(k["caught_by_named_check"] for k in faulty["per_kind"].values())
    total_any = sum(k["failed_any_check"] for k in faulty["per_kind"].values())
    if total_inj:
        lines.append(f"| **all** | | {total_inj} | {total_caught} | {_pct(total_caught / total_inj)} "
                     f"| {total_any} | {_pct(total_any / total_inj)} |")
    lines += ["", "## Recall per fault form", "",
              "Each kind is realised in several forms (`Fault.form`, stored as `fault_form`).", "",
              "| Kind/form | Injected | Caught by named check | Recall |", "|---|---:|---:|---:|"]
    for form, f in faulty["per_form"].items():
        lines.append(f"| {form} | {f['injected']} | {f['caught_by_named_check']} | {_pct(f['recall'])} |")
    rw = r["reworded"]
    lines += ["", "## Oracle episodes re-worded from the evaluation bank", "",
              "Each oracle episode again, with its confirmation requests, consents, offers of more help "
              "and closings replaced by phrasings of `trajforge/environments/dialogue/banks/eval.jsonl` "
              "(`benchmarks/_reword.py`; calls, results and final state unchanged).", "",
              f"- Episodes: {rw['episodes']} ({rw['episodes_changed']} changed); acts re-worded: "
              + ", ".join(f"{k} {v}" for k, v in rw["acts_reworded"].items()),
              f"- False positives = 0 for every check: "
              f"**{'PASS' if r['reworded_false_positives_zero'] else 'FAIL'}**", "",
              "| " + " | ".join(checks) + " |", "|" + "---:|" * len(checks),
              "| " + " | ".join(str(rw["false_positives"][c]) for c in checks) + " |"]
    wd = r["withdrawn"]
    lines += ["", "## Writes after a withdrawn yes, in the evaluation wording", "",
              "`unconfirmed_write/after_change_of_mind` with the user's change of mind opened by a withdrawn "
              "yes of the evaluation bank (\"Yes, go ahead. Actually, no, hold on.\"), which the recogniser "
              "never saw in training; the agent writes the change unasked. Each blueprint admitting the form, "
              "once.", "",
              f"- Episodes: {wd['episodes']}; caught by `confirmation`: {wd['caught']} "
              f"({_pct(wd['recall']) if wd['recall'] is not None else 'n/a'}); missed blueprints: "
              f"{wd['missed_blueprints'] or 'none'}"]
    rec = r["recogniser"]
    lines += ["", "## The dialogue-act recogniser alone on the evaluation bank", "",
              f"{rec['rows']} rows (templates filled); details in `dialogue_acts.md`.", "",
              "| Class | Positives | Precision | Recall |", "|---|---:|---:|---:|"]
    for name, c in rec["per_class"].items():
        lines.append(f"| {name} | {c['positives']} | {_pct(c['precision'])} | {_pct(c['recall'])} |")
    short = {c: c.replace("_", "\\_") for c in checks}
    lines += [
        "",
        "## Confusion summary: share of episodes in which each check failed",
        "",
        "Rows are the injected fault kind (and the oracle); columns are checks. The named check's "
        "cell is in bold.",
        "",
        "| Episodes | n | " + " | ".join(short[c] for c in checks) + " |",
        "|---|---:|" + "---:|" * len(checks),
    ]
    n_or = oracle["episodes"]
    lines.append(f"| oracle | {n_or} | " + " | ".join(
        _pct(oracle["false_positives"][c] / n_or if n_or else None) for c in checks) + " |")
    for kind, k in faulty["per_kind"].items():
        cells = []
        for c in checks:
            text = _pct(k["check_failure_rate"][c])
            cells.append(f"**{text}**" if c == k["named_check"] else text)
        lines.append(f"| {kind} | {k['injected']} | " + " | ".join(cells) + " |")
    lines += ["", "## Terminations", ""]
    for agent, counts in r["terminations"].items():
        lines.append(f"- {agent}: " + ", ".join(f"{t} {n}" for t, n in sorted(counts.items())))
    missed = faulty["missed_examples"]
    if missed or oracle["examples"] or r["reworded"]["examples"]:
        lines += ["", "## Examples (first few; all listed in the JSON)", ""]
        for name, examples in oracle["examples"].items():
            for e in examples[:3]:
                lines.append(f"- oracle false positive, {name}: blueprint {e['blueprint_index']} "
                             f"({e['trajectory_id']}): {e['failed'][name]}")
        for name, examples in r["reworded"]["examples"].items():
            for e in examples[:3]:
                lines.append(f"- re-worded oracle false positive, {name}: blueprint {e['blueprint_index']} "
                             f"({e['trajectory_id']}): {e['reason']}")
        for kind, examples in missed.items():
            for e in examples[:3]:
                others = ", ".join(e["failed"]) or "no check failed"
                lines.append(f"- missed {kind} (target {e['fault']['target']}): blueprint "
                             f"{e['blueprint_index']} ({e['trajectory_id']}); {e['named_check']} said "
                             f"\"{e['named_check_reason']}\"; failed: {others}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", "-n", type=int, default=2000,
                        help="blueprints generated (one oracle + one faulty episode each)")
    parser.add_argument("--size", type=int, default=300, help="RetailDomain size")
    parser.add_argument("--seed", type=int, default=0, help="RetailDomain seed")
    parser.add_argument("--chunk", type=int, default=250, help="blueprints simulated at a time")
    parser.add_argument("--tag", default="",
                        help="suffix for the result files (<name>-TAG.md/.json), for variants")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = measure(args.blueprints, args.size, args.seed, args.chunk)
    payload = {"benchmark": "verifier_quality", "date_utc": utc_now(), "command": command_line(),
               "machine": machine_info(), "result": result}
    stem = "verifier_quality" + (f"-{args.tag}" if args.tag else "")
    md, js = write_results(stem, payload, render_markdown(payload), args.results)
    o = result["oracle"]
    print(f"[verifier_quality] oracle: {o['episodes']} episodes, false positives "
          f"{sum(o['false_positives'].values())}; faulty: {result['faulty']['episodes']} episodes; "
          f"misses by named check: {result['faulty']['missed_by_named_check'] or 'none'}")
    print(f"[verifier_quality] wrote {md} and {js}")
    return 0 if result["oracle_false_positives_zero"] and result["reworded_false_positives_zero"] else 1


if __name__ == "__main__":
    sys.exit(main())
