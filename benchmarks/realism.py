"""How much the embedded default reads like people: the realism report of issue 17.

Per registered domain (``environments.registry.domain_names``), ``--episodes`` blueprints of the
default generation config, each played once by the scripted oracle and the scripted user as the
build plays them (``simulation.batch.simulate_batch``), verified by every check. Reported:

- **Vendi** (q = 1, cosine kernel on L2-normalised embeddings of the packaged all-MiniLM-L6-v2,
  ``verifiers.diversity``) at ``n = 114``, mean +- sd over ``--samples`` random samples (sample i
  drawn with ``numpy.random.default_rng(i)``, in blueprint order), of the blueprint goal texts and
  of each episode's user turns concatenated (one document per episode); the same over a mixed
  sample of every domain's pool.
- **Surface forms** per 1,000 episodes: distinct closing user lines (the last user message of an
  episode the user ended) and distinct confirmation requests (agent messages the dialogue-act
  recogniser reads as one, as the checks and the scripted user read them: a message that ends with
  a question is one only when that question is, ``trajforge.text.closing_question``: "I see order
  #W1. Where should the refund go?" asks for a detail) after masking (``mask``: ids, emails, numbers and amounts, and every
  capitalised word that does not start a sentence, which covers names and products).
- **Glitches**: sentences that start in lower case (``lower_starts``) and capitalisation glitches
  (``glitches``: a comma followed by a capitalised function word, "Hello, Before ...", "Oh sure,
  It's ..."), over every user and agent message.
- **The oracle's reads**: calls to a read tool identical (name and canonical JSON arguments) to
  an earlier read of the episode with no write in between.
- **User behaviours** (``schemas.blueprint.Behaviour``): the share of blueprints labelled with
  any, and with each (the scripted user acts out every label: ``tests/generators/test_behaviours``);
  the share where the user's words for an entity fit several and the agent must ask which one
  (a ``clarify`` disclosure step; ``tests/simulation/test_clarify``).
- **Outcomes**: the share of single-request tasks; the share of policy-bound blueprints
  (``TaskBlueprint.policy_bound``) and the requests whose correct outcome is a refusal; tool
  errors; refusals after a failed write (an agent message with no call right after a tool error
  on a write); transfers (a call of the domain's
  ``transfer_tool``); oracle pass rate (every check).

Twenty transcripts per domain go to ``benchmarks/results/samples/<stem>-<domain>.md``.
Results: ``benchmarks/results/realism.{md,json}``; ``--tag after`` writes ``realism-after.*``,
and ``--before realism.json`` puts an earlier run's figures beside this one's.

    .venv/bin/python benchmarks/realism.py                       # 1,000 episodes per domain
    .venv/bin/python benchmarks/realism.py --episodes 200 --samples 3 --domains retail
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from trajforge.schemas.blueprint import Behaviour

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results

RUN_ID = "realism"
SAMPLE_N = 114
SAMPLES_SHOWN = 20
# a capitalised function word right after a comma is a capitalisation glitch ("Hello, Before")
FUNCTION_WORDS = frozenset("""a an the this that these those it it's its my your our their his her
we you he she they me us them can could would will shall should is are was were do does did
please yes no sure thanks thank just here there what how when where why which who let so and but
or of to for in on at also one now then if once since because as before after certainly actually
okay ok sorry hello hi hey got right well oh alright great perfect fine good that's let's
you're we're there's here's what's""".split())
_GLITCH = re.compile(r",\s+([A-Z][a-z']*)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MASKS = (
    (re.compile(r"\S+@\S+"), "<EMAIL>"),
    (re.compile(r"#?\b[\w-]*\d[\w-]*\b"), "<ID>"),
    (re.compile(r"\$<ID>(\.<ID>)?"), "<AMOUNT>"),
)
_CAPITAL = re.compile(r"(?<=[^.!?:]\s)[A-Z][\w'-]*")


def mask(text: str, values: tuple[str, ...] = ()) -> str:
    """A message with the episode's own values (``values``: the blueprint's facts and slots,
    longest first), ids, emails, numbers, amounts and non-initial capitalised words (names,
    products) replaced by placeholders, runs of placeholders collapsed."""
    for value in values:
        text = re.sub(re.escape(value), "<V>", text, flags=re.IGNORECASE)
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    text = _CAPITAL.sub(lambda m: m.group(0) if m.group(0) in ("I", "I'm", "I'll", "I'd", "I've")
                        else "<NAME>", text)
    return re.sub(r"(<[A-Z]+>[ ,]*)+<([A-Z]+)>", r"<\2>", text).strip()


def episode_values(bp: Any) -> tuple[str, ...]:
    """Every value of a blueprint's facts and intents, longest first (for ``mask``)."""
    found = {*bp.user.known_facts.values(), *bp.user.hidden_facts.values()}
    for intent in bp.user.intents:
        found.update(intent.slots.values())
    return tuple(sorted((str(v) for v in found if v and len(str(v)) > 2), key=len, reverse=True))


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text.strip()) if s]


def lower_starts(text: str) -> int:
    """Sentences that start with a lower-case letter (after any opening quote or bracket)."""
    return sum(bool(re.match(r"[\"'(\[]*[a-z]", s)) for s in sentences(text))


def glitches(text: str) -> list[str]:
    return [m.group(0) for m in _GLITCH.finditer(text) if m.group(1).lower() in FUNCTION_WORDS
            and m.group(1) != "I"]


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments


def repeated_reads(messages: Any, domain: Any, *, writes_reset: bool = True) -> int:
    """Agent read calls identical to an earlier one of the episode (``writes_reset``: with no
    write by the agent in between)."""
    from trajforge.environments.base import ToolKind
    from trajforge.schemas.messages import AssistantMessage

    seen: set[tuple[str, str]] = set()
    repeats = 0
    for m in messages:
        if not isinstance(m, AssistantMessage):
            continue
        for call in m.tool_calls or ():
            tool = domain.tools.get(call.name)
            if tool is None:
                continue
            if tool.kind is ToolKind.write and writes_reset:
                seen.clear()
            elif tool.kind is ToolKind.read:
                key = (call.name, _canonical(call.arguments))
                repeats += key in seen
                seen.add(key)
    return repeats


def unchanged_rereads(messages: Any, domain: Any) -> int:
    """Agent read calls identical to an earlier one whose result is the earlier result again:
    whatever happened in between, the read learned nothing new."""
    from trajforge.environments.base import ToolKind
    from trajforge.schemas.messages import AssistantMessage, ToolMessage

    calls: dict[str, tuple[str, str]] = {}
    last: dict[tuple[str, str], str] = {}
    repeats = 0
    for m in messages:
        if isinstance(m, AssistantMessage):
            for call in m.tool_calls or ():
                tool = domain.tools.get(call.name)
                if tool is not None and tool.kind is ToolKind.read:
                    calls[call.id] = (call.name, _canonical(call.arguments))
        elif isinstance(m, ToolMessage) and m.tool_call_id in calls:
            key = calls.pop(m.tool_call_id)
            repeats += last.get(key) == m.content
            last[key] = m.content
    return repeats


def play(name: str, n: int, size: int, seed: int, chunk: int = 250) -> list[tuple[Any, Any, bool]]:
    """``n`` blueprints of domain ``name`` (default generation config), each with its oracle
    episode and whether every check passed it."""
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.blueprint import BlueprintRejection
    from trajforge.schemas.config import GenerationConfig, RunConfig, SimulationConfig
    from trajforge.simulation.batch import simulate_batch
    from trajforge.simulation.worker_state import SimulationContext, shared_domain
    from trajforge.verifiers import verify

    domain = shared_domain(name, size, seed)
    blueprints = [b for b in generate_blueprints(domain, GenerationConfig(), RUN_ID, 0, n)
                  if not isinstance(b, BlueprintRejection)]
    config = RunConfig(simulation=SimulationConfig(agents=("oracle",)))
    out = []
    for start in range(0, len(blueprints), chunk):
        part = blueprints[start:start + chunk]
        ctx = SimulationContext(config, domain)
        try:
            simulated = simulate_batch(config, part, part[-1].provenance.index + 1, ctx)
        finally:
            ctx.close()
        by_id = {bp.id: bp for bp in part}
        for t in simulated.trajectories:
            bp = by_id[t.blueprint_id]
            out.append((bp, t, all(v.passed for v in verify(t, bp, domain))))
    return out


def user_document(trajectory: Any) -> str:
    from trajforge.schemas.messages import UserMessage

    return " ".join(m.content for m in trajectory.messages if isinstance(m, UserMessage) and m.content)


def surface(name: str, played: list[tuple[Any, Any, bool]], size: int, seed: int) -> dict[str, Any]:
    """The per-1,000-episode counts of one domain (module docstring)."""
    from trajforge.environments.dialogue import is_confirmation_request
    from trajforge.schemas.messages import AssistantMessage, ToolMessage, UserMessage
    from trajforge.simulation.worker_state import shared_domain

    domain = shared_domain(name, size, seed)
    closings: Counter[str] = Counter()
    confirms: Counter[str] = Counter()
    glitch_examples: Counter[str] = Counter()
    lower_examples: list[str] = []
    counts: Counter[str] = Counter()
    for bp, t, passed in played:
        counts["episodes"] += 1
        counts["oracle_passed"] += passed
        counts["single_request"] += len(bp.user.intents) == 1
        counts["policy_bound"] += bp.policy_bound
        counts["refused_intents"] += sum(i.outcome == "refused" for i in bp.user.intents)
        counts["with_behaviours"] += bool(bp.user.behaviours)
        counts["clarify"] += any(d.action == "clarify" for d in bp.user.disclosure)
        for behaviour in bp.user.behaviours:
            counts[f"behaviour:{behaviour}"] += 1
        counts["repeated_reads"] += repeated_reads(t.messages, domain)
        unchanged = unchanged_rereads(t.messages, domain)
        counts["unchanged_rereads"] += unchanged
        counts["episodes_with_repeated_reads"] += unchanged > 0
        counts["repeated_reads_any"] += repeated_reads(t.messages, domain, writes_reset=False)
        values = episode_values(bp)
        users = [m for m in t.messages if isinstance(m, UserMessage) and m.content]
        if t.termination == "user_stop" and users:
            closings[mask(users[-1].content, values)] += 1
        after_write_error = False
        for m in t.messages:
            text = getattr(m, "content", None) or ""
            if isinstance(m, (UserMessage, AssistantMessage)) and text:
                counts["messages"] += 1
                counts["sentences"] += len(sentences(text))
                low = lower_starts(text)
                counts["lower_starts"] += low
                if low and len(lower_examples) < 8:
                    lower_examples.append(text[:160])
                found = glitches(text)
                counts["glitches"] += len(found)
                glitch_examples.update(found)
            if isinstance(m, AssistantMessage):
                for call in m.tool_calls or ():
                    tool = domain.tools.get(call.name)
                    counts["agent_calls"] += 1
                    counts["agent_reads"] += bool(tool and tool.kind.value == "read")
                    counts["transfers"] += call.name == domain.transfer_tool
                if after_write_error and not m.tool_calls:
                    counts["refusals"] += 1
                after_write_error = False
                if text and is_confirmation_request(text):
                    confirms[mask(text, values)] += 1
            if isinstance(m, ToolMessage):
                counts["tool_errors"] += m.is_error
                tool = domain.tools.get(m.name or "")
                after_write_error = bool(m.is_error and tool and tool.kind.value == "write")
    n = counts["episodes"] or 1
    per_k = 1000 / n
    return {
        "episodes": counts["episodes"],
        "oracle_pass_rate": round(counts["oracle_passed"] / n, 4),
        "distinct_closings": len(closings), "distinct_closings_per_1000": round(len(closings) * per_k, 1),
        "distinct_confirmations": len(confirms),
        "distinct_confirmations_per_1000": round(len(confirms) * per_k, 1),
        "confirmation_requests": sum(confirms.values()),
        "messages": counts["messages"], "sentences": counts["sentences"],
        "lower_starts_per_1000": round(counts["lower_starts"] * per_k, 1),
        "glitches_per_1000": round(counts["glitches"] * per_k, 1),
        "agent_reads": counts["agent_reads"], "agent_reads_per_1000": round(counts["agent_reads"] * per_k, 1),
        "repeated_reads_per_1000": round(counts["repeated_reads"] * per_k, 1),
        "unchanged_rereads_per_1000": round(counts["unchanged_rereads"] * per_k, 1),
        "repeated_reads_any_per_1000": round(counts["repeated_reads_any"] * per_k, 1),
        "episodes_with_repeated_reads_per_1000": round(counts["episodes_with_repeated_reads"] * per_k, 1),
        "single_request_share": round(counts["single_request"] / n, 3),
        "policy_bound_share": round(counts["policy_bound"] / n, 3),
        "refused_intents_per_1000": round(counts["refused_intents"] * per_k, 1),
        "tool_errors_per_1000": round(counts["tool_errors"] * per_k, 1),
        "refusals_per_1000": round(counts["refusals"] * per_k, 1),
        "transfers_per_1000": round(counts["transfers"] * per_k, 1),
        "behaviour_share": round(counts["with_behaviours"] / n, 3),
        "clarify_share": round(counts["clarify"] / n, 3),
        "behaviour_shares": {str(b): round(counts[f"behaviour:{b}"] / n, 3) for b in Behaviour},
        "top_closings": closings.most_common(5), "top_confirmations": confirms.most_common(5),
        "glitch_examples": glitch_examples.most_common(8), "lower_start_examples": lower_examples,
    }


def story(bp: Any) -> str:
    """The goal's scenario: background, situations and constraint, as the generator drew them."""
    scenario = bp.user.scenario
    return " ".join(t for t in (scenario.background, *scenario.situations, scenario.constraint) if t)


def plain_goal(bp: Any) -> str:
    """The goal without its ``You are <role> (<who>).`` head and its ``[details]`` brackets."""
    return re.sub(r" \[[^\]]*\]", "", re.sub(r"^You are [^(]*\([^)]*\)\. ", "", bp.user.goal))


def vendi_samples(X: np.ndarray, samples: int, n: int = SAMPLE_N) -> dict[str, Any]:
    from trajforge.verifiers.diversity import vendi_score

    scores = []
    for i in range(samples):
        rows = np.sort(np.random.default_rng(i).choice(len(X), size=min(n, len(X)), replace=False))
        scores.append(vendi_score(X[rows], q=1.0))
    return {"mean": round(float(np.mean(scores)), 2), "sd": round(float(np.std(scores, ddof=1)), 2)
            if samples > 1 else 0.0, "scores": [round(s, 3) for s in scores], "n": min(n, len(X))}


def transcript(bp: Any, t: Any) -> str:
    from trajforge.schemas.messages import AssistantMessage, ToolMessage, UserMessage

    lines = [f"### {bp.id[:12]} ({bp.user.persona.style.value}, {len(bp.user.intents)} request(s), "
             f"{t.termination})", "", f"> goal: {bp.user.goal}", ""]
    for m in t.messages:
        if isinstance(m, UserMessage) and m.content:
            lines.append(f"**user:** {m.content}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                lines.append(f"**agent:** {m.content}")
            for call in m.tool_calls or ():
                lines.append(f"    -> {call.name}({call.arguments})")
        elif isinstance(m, ToolMessage):
            lines.append(f"    <- {'ERROR ' if m.is_error else ''}{m.content[:140]}")
        lines.append("")
    return "\n".join(lines)


def measure(names: list[str] | None, episodes: int, samples: int, size: int, seed: int,
            stem: str, results: Path) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from trajforge.environments.registry import domain_names
    from trajforge.verifiers.diversity.embedders import make_embedder

    embedder = make_embedder("minilm", device="cpu")
    out: dict[str, Any] = {"domains": {}}
    pools: dict[str, dict[str, np.ndarray]] = {}
    samples_dir = results / "samples"
    samples_dir.mkdir(parents=True, exist_ok=True)
    for name in names or domain_names():
        began = time.perf_counter()
        played = play(name, episodes, size, seed)
        row = surface(name, played, size, seed)
        goals = embedder.embed([bp.user.goal for bp, _, _ in played])
        users = embedder.embed([user_document(t) for _, t, _ in played])
        pools[name] = {"goals": goals, "users": users}
        row["vendi_goals"] = vendi_samples(goals, samples)
        row["vendi_user_turns"] = vendi_samples(users, samples)
        # where the goal's sameness comes from: its story alone, and the goal without the
        # identity head and the bracketed details (the numbered requests stay)
        row["vendi_goal_story"] = vendi_samples(embedder.embed([story(bp) for bp, _, _ in played]), samples)
        row["vendi_goal_plain"] = vendi_samples(embedder.embed([plain_goal(bp) for bp, _, _ in played]), samples)
        row["seconds"] = round(time.perf_counter() - began, 1)
        out["domains"][name] = row
        shown = [transcript(bp, t) for bp, t, _ in played[:: max(1, len(played) // SAMPLES_SHOWN)]]
        (samples_dir / f"{stem}-{name}.md").write_text(
            f"# {SAMPLES_SHOWN} oracle transcripts: {name} ({stem})\n\n"
            + "\n".join(shown[:SAMPLES_SHOWN]) + "\n")
        print(f"[realism] {name}: goals {row['vendi_goals']['mean']}, users {row['vendi_user_turns']['mean']}, "
              f"{row['seconds']} s", flush=True)
    if len(pools) > 1:
        mixed = {}
        for kind in ("goals", "users"):
            # every pool in equal parts, interleaved, so a sample draws evenly from the domains
            stacked = np.stack([p[kind][:min(len(q[kind]) for q in pools.values())] for p in pools.values()], 1)
            mixed[kind] = vendi_samples(stacked.reshape(-1, stacked.shape[-1]), samples)
        out["mixed"] = {"domains": list(pools), "vendi_goals": mixed["goals"], "vendi_user_turns": mixed["users"]}
    return out


ROWS = (
    ("Vendi, goal texts (n=114)", lambda d: f"{d['vendi_goals']['mean']} ± {d['vendi_goals']['sd']}"),
    ("Vendi, the goal's story alone: background, situations, constraint (n=114)",
     lambda d: f"{d['vendi_goal_story']['mean']} ± {d['vendi_goal_story']['sd']}" if "vendi_goal_story" in d else "-"),
    ("Vendi, goal without identity head and [details] (n=114)",
     lambda d: f"{d['vendi_goal_plain']['mean']} ± {d['vendi_goal_plain']['sd']}" if "vendi_goal_plain" in d else "-"),
    ("Vendi, user turns per episode (n=114)",
     lambda d: f"{d['vendi_user_turns']['mean']} ± {d['vendi_user_turns']['sd']}"),
    ("distinct closing user lines / 1,000", lambda d: d["distinct_closings_per_1000"]),
    ("distinct confirmation requests (masked) / 1,000", lambda d: d["distinct_confirmations_per_1000"]),
    ("lower-case sentence starts / 1,000", lambda d: d["lower_starts_per_1000"]),
    ("capitalisation glitches / 1,000", lambda d: d["glitches_per_1000"]),
    ("oracle reads / 1,000", lambda d: d.get("agent_reads_per_1000", "-")),
    ("repeated identical oracle reads, no write between / 1,000", lambda d: d["repeated_reads_per_1000"]),
    ("repeated identical oracle reads, writes between or not / 1,000",
     lambda d: d.get("repeated_reads_any_per_1000", "-")),
    ("repeated identical oracle reads returning the same result / 1,000",
     lambda d: d.get("unchanged_rereads_per_1000", "-")),
    ("episodes with a read returning the same result again / 1,000",
     lambda d: d["episodes_with_repeated_reads_per_1000"]),
    ("single-request share", lambda d: d["single_request_share"]),
    ("tool errors / 1,000", lambda d: d["tool_errors_per_1000"]),
    ("policy-bound blueprint share (a refusal or a hand-over)", lambda d: d.get("policy_bound_share", "-")),
    ("requests the policy refuses (oracle refuses, no write) / 1,000",
     lambda d: d.get("refused_intents_per_1000", "-")),
    ("refusals after a failed write / 1,000", lambda d: d["refusals_per_1000"]),
    ("transfers / 1,000", lambda d: d["transfers_per_1000"]),
    ("oracle pass rate (every check)", lambda d: d["oracle_pass_rate"]),
    ("blueprints where the agent must ask which one is meant (share)", lambda d: d.get("clarify_share", "-")),
    ("blueprints whose user does something beyond giving facts (share)", lambda d: d.get("behaviour_share", "-")),
    *((f"user behaviour: {b} (share)", lambda d, b=str(b): d.get("behaviour_shares", {}).get(b, "-"))
      for b in Behaviour),
)


def _table(result: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    names = list(result["domains"])
    head = "| measure | " + " | ".join(
        f"{n} before | {n} after" if before else n for n in names) + " |"
    lines = [head, "|---|" + "---:|" * (len(names) * (2 if before else 1))]
    for label, get in ROWS:
        cells = []
        for n in names:
            if before:
                b = before["domains"].get(n)
                cells.append(str(get(b)) if b else "-")
            cells.append(str(get(result["domains"][n])))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def render_markdown(payload: dict[str, Any]) -> str:
    r = payload["result"]
    before = payload.get("before")
    lines = ["# Realism of the embedded default (issue 17)", "",
             f"- Date (UTC): {payload['date_utc']}", f"- Command: `{payload['command']}`",
             f"- Load average at start (1, 5, 15 min): {payload['load_average']}",
             f"- Per domain: {payload['episodes']} blueprints of the default generation config, one oracle "
             "episode each with the scripted user; Vendi q=1, cosine kernel, packaged all-MiniLM-L6-v2, "
             f"n=114, mean ± sd over {payload['samples']} samples (sample i: numpy default_rng(i))",
             "- Targets (issue 17): goal Vendi >= 30, user-turn Vendi >= 25, mixed >= 40; >= 200 distinct "
             "closings and >= 300 distinct confirmation requests per 1,000; 0 lower-case starts, 0 glitches, "
             "0 repeated reads", ""]
    if before:
        lines += [f"Before: `{before['command']}` at {before['date_utc']} (commit "
                  f"{before['machine']['git_commit'][:10]}); after: this run.", ""]
    lines += ["## Per domain", ""] + _table(r, before)
    if "mixed" in r:
        m = r["mixed"]
        bm = (before or {}).get("mixed")
        lines += ["", f"## Mixed sample ({', '.join(m['domains'])}, equal parts)", "",
                  "| measure | " + ("before | after |" if bm else "value |"), "|---|---:|" + ("---:|" if bm else "")]
        for label, key in (("Vendi, goal texts", "vendi_goals"), ("Vendi, user turns", "vendi_user_turns")):
            now = f"{m[key]['mean']} ± {m[key]['sd']}"
            lines.append(f"| {label} | " + (f"{bm[key]['mean']} ± {bm[key]['sd']} | " if bm else "") + now + " |")
    lines += ["", "## Examples (this run)", ""]
    for n, d in r["domains"].items():
        closings = "; ".join(f"\"{t}\" ({c})" for t, c in d["top_closings"])
        lines += [f"### {n}", "", "Most frequent closings: " + closings,
                  "", "Most frequent confirmation requests: " + "; ".join(
                      f"\"{t}\" ({c})" for t, c in d["top_confirmations"][:3]), "",
                  "Glitches: " + (", ".join(f"\"{t}\" ({c})" for t, c in d["glitch_examples"]) or "none"), "",
                  "Lower-case starts: " + (" / ".join(f"\"{t}\"" for t in d["lower_start_examples"][:4]) or "none"),
                  ""]
    lines += ["## Machine", ""] + machine_markdown(payload["machine"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", "-n", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--domains", nargs="*", default=None, help="default: every registered one")
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tag", default="")
    parser.add_argument("--before", type=Path, default=None, help="an earlier run's JSON, shown beside this one")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    stem = "realism" + (f"-{args.tag}" if args.tag else "")
    load = [round(x, 2) for x in os.getloadavg()]
    machine = machine_info()  # before the run: the code it measures, not what an edit made of it since
    result = measure(args.domains, args.episodes, args.samples, args.size, args.seed, stem, args.results)
    payload: dict[str, Any] = {"benchmark": "realism", "date_utc": utc_now(), "command": command_line(),
                               "load_average": load, "machine": machine, "episodes": args.episodes,
                               "samples": args.samples, "result": result}
    if args.before is not None:
        earlier = json.loads(args.before.read_text())
        payload["before"] = {"command": earlier["command"], "date_utc": earlier["date_utc"],
                             "machine": earlier["machine"], **earlier["result"]}
    md, js = write_results(stem, payload, render_markdown(payload), args.results)
    print(f"[realism] wrote {md} and {js}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
