"""Faults with many faces: every kind has at least five forms, every form applies to some of a
few hundred blueprints and is drawn by ``choose_fault``, and each form's episode differs from
its oracle twin (same blueprint, same seed) in the way the form says."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from trajforge.environments.dialogue import is_affirmative
from trajforge.environments.retail import RetailDomain
from trajforge.generators import generate_blueprints
from trajforge.schemas import (
    AssistantMessage,
    Fault,
    FaultKind,
    TaskBlueprint,
    TerminationReason,
    ToolCall,
    ToolMessage,
    Trajectory,
    UserMessage,
)
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation.agents import CONFIRM, CONFIRM_AFTER_FOUND, GOODBYE
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer
from trajforge.simulation.faults import (
    ANNOUNCE,
    DONE_BYE,
    FAULT_FORMS,
    HOLD,
    VAGUE_MONEY,
    VAGUE_TEXT,
    choose_fault,
    fault_forms,
)
from trajforge.simulation.user import REDIRECT, REVISE

PER_FORM = 3


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture(scope="module")
def blueprints(domain: RetailDomain) -> list[TaskBlueprint]:
    return [b for b in generate_blueprints(domain, GenerationConfig(), "faults", 0, 400)
            if isinstance(b, TaskBlueprint)]


@pytest.fixture(scope="module")
def options(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> list[dict[FaultKind, dict[int, list[str]]]]:
    return [fault_forms(bp, domain) for bp in blueprints]


Pair = tuple[TaskBlueprint, Fault, Trajectory, Trajectory]


@pytest.fixture(scope="module")
def pairs(domain: RetailDomain, blueprints: list[TaskBlueprint],
          options: list[dict[FaultKind, dict[int, list[str]]]]) -> dict[tuple[FaultKind, str], list[Pair]]:
    """Up to PER_FORM (faulty, oracle twin) episodes of every form."""
    jobs: list[EpisodeJob[tuple[FaultKind, str]]] = []
    count: Counter[tuple[FaultKind, str]] = Counter()
    for i, (bp, found) in enumerate(zip(blueprints, options, strict=True)):
        for kind, targets in found.items():
            for target, forms in targets.items():
                for form in forms:
                    if count[kind, form] < PER_FORM:
                        count[kind, form] += 1
                        fault = Fault(kind=kind, target=target, form=form)
                        jobs += [EpisodeJob(bp, 50_000 + i, fault, tag=(kind, form)),
                                 EpisodeJob(bp, 50_000 + i, None, tag=(kind, form))]
    player = EpisodePlayer(domain_of=lambda bp: domain)
    played = asyncio.run(player.play_all(jobs, lambda p: p.trajectory))
    out: dict[tuple[FaultKind, str], list[Pair]] = {}
    for job, faulty, clean in zip(jobs[::2], played[::2], played[1::2], strict=True):
        assert job.fault is not None and job.tag is not None and faulty is not None and clean is not None
        out.setdefault(job.tag, []).append((job.blueprint, job.fault, faulty, clean))
    return out


def test_every_kind_has_five_forms() -> None:
    assert set(FAULT_FORMS) == set(FaultKind)
    for kind, forms in FAULT_FORMS.items():
        assert len(set(forms)) >= 5, kind


def test_every_form_applies_and_is_drawn(domain: RetailDomain, blueprints: list[TaskBlueprint],
                                         options: list[dict[FaultKind, dict[int, list[str]]]]) -> None:
    applicable = Counter((kind, form) for found in options for kind, targets in found.items()
                         for form in {f for fs in targets.values() for f in fs})
    assert set(applicable) == {(k, f) for k, fs in FAULT_FORMS.items() for f in fs}, applicable
    drawn: Counter[tuple[FaultKind, str | None]] = Counter()
    for i, (bp, found) in enumerate(zip(blueprints, options, strict=True)):
        fault = choose_fault(bp, domain, random.Random(i), list(FaultKind))
        assert fault is not None and fault.form is not None
        assert fault.form in found[fault.kind][fault.target]
        again = choose_fault(bp, domain, random.Random(i), list(FaultKind))
        assert again == fault  # deterministic for its seed
        drawn[fault.kind, fault.form] += 1
    # the rare ones (an unavailable variant's price) need more draws than this
    assert len(drawn) >= 0.85 * len(applicable), sorted(set(applicable) - set(drawn))
    assert {k for k, _ in drawn} == set(FaultKind)


# --- what each form looks like ---------------------------------------------------------------

def _calls(t: Trajectory) -> list[tuple[int, ToolCall, ToolMessage | None]]:
    results = {m.tool_call_id: m for m in t.messages if isinstance(m, ToolMessage)}
    return [(i, c, results.get(c.id)) for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage)
            for c in m.tool_calls]


def _texts(t: Trajectory) -> list[str]:
    return [m.content for m in t.messages if isinstance(m, AssistantMessage) and m.content]


def _seen_before(t: Trajectory, index: int) -> str:
    return " ".join(m.content for m in t.messages[:index] if isinstance(m, (UserMessage, ToolMessage)))


def _ids(args: dict[str, Any]) -> list[str]:
    out = []
    for k, v in args.items():
        if k.endswith("_id") or k.endswith("_ids"):
            out += [str(x) for x in (v if isinstance(v, list) else [v])]
    return out


def _extra_calls(faulty: Trajectory, clean: Trajectory) -> list[tuple[int, ToolCall, ToolMessage | None]]:
    """The faulty episode's calls that its twin did not make (as written)."""
    made = Counter((c.name, c.arguments) for _, c, _ in _calls(clean))
    out = []
    for record in _calls(faulty):
        key = (record[1].name, record[1].arguments)
        if made[key]:
            made[key] -= 1
        else:
            out.append(record)
    return out


def _is_write(d: RetailDomain, name: str) -> bool:
    return name in d.tools and d.tools[name].kind.value == "write"


def _frame(text: str, bank: tuple[str, ...]) -> bool:
    return any(all(part in text for part in f.split("{action}")) for f in bank)


def _hallucinated(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    for i, call, _ in _extra_calls(t, c):
        args = call.parsed_arguments() or {}
        unseen = [v for v in _ids(args) if v not in _seen_before(t, i)]
        if not unseen:
            continue
        if f.form in ("read_near_miss", "read_from_example", "misheard_user_id"):
            ok = not _is_write(d, call.name)
            if f.form == "misheard_user_id":  # two adjacent digits of an id the user said swapped
                said = " ".join(m.content for m in t.messages if isinstance(m, UserMessage))
                ok = ok and any(sorted(v) == sorted(w) for v in unseen for w in re.findall(r"#W\d{7}", said))
            if f.form == "read_from_example":
                ok = ok and call.name not in {c.name for c in bp.ground_truth.calls[:1]}
            return ok
        if f.form == "write_near_miss":
            return _is_write(d, call.name) and any(isinstance(args.get(k), str) and args[k] in unseen
                                                   for k in args)
        if f.form == "write_list_element":
            return _is_write(d, call.name) and any(isinstance(v, list) and set(v) & set(unseen)
                                                   for v in args.values())
    return False


def _unknown(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    names = [call.name for _, call, _ in _calls(t) if call.name not in d.tools]
    if len(names) != 1:
        return False
    name, real = names[0], list(d.tools)
    parts = name.split("_")
    if f.form == "verb_swapped":
        return any(r.split("_")[1:] == parts[1:] and r.split("_")[0] != parts[0] for r in real)
    if f.form == "suffix_dropped":
        return any(len(r.split("_")) == len(parts) + 1 and set(parts) <= set(r.split("_")) for r in real)
    if f.form == "pluralised":
        pairs = [list(zip(r.split("_"), parts, strict=True)) for r in real if len(r.split("_")) == len(parts)]
        return any(sum(a != b for a, b in p) == 1 and any(a + "s" == b or a == b + "s" for a, b in p)
                   for p in pairs)
    if f.form == "camel_case":
        return "_" not in name and any(r.replace("_", "") == name.lower() for r in real)
    if f.form == "borrowed_word":
        words = {w for r in real for w in r.split("_")}
        return set(parts) <= words and any(len(r.split("_")) == len(parts) and sum(
            a != b for a, b in zip(r.split("_"), parts, strict=True)) == 1 for r in real)
    return False


def _invalid(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    bad = [(call, r) for _, call, r in _extra_calls(t, c) if r is not None and r.is_error]
    if len(bad) != 1:
        return False
    call, _ = bad[0]
    args = call.parsed_arguments()
    schema = d.tools[call.name].spec.function.parameters
    props, required = set(schema.get("properties", {})), set(schema.get("required", []))
    if f.form == "not_json_object":
        return args is None
    assert args is not None
    if f.form == "missing_required":
        return bool(required - set(args)) and set(args) <= props
    if f.form == "misspelled_name":
        return any(k not in props and any(sorted(k) == sorted(p) or k == p + "_" for p in props) for k in args)
    if f.form == "extra_parameter":
        return required <= set(args) and bool(set(args) - props)
    if f.form == "wrong_type":
        good = next(c2 for c2 in bp.ground_truth.calls if c2.name == call.name)
        return set(args) == set(good.arguments) and any(type(args[k]) is not type(good.arguments[k])
                                                        for k in args)
    return False


def _repeated(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    calls = [call for _, call, _ in _calls(t)]
    extra = [call for _, call, _ in _extra_calls(t, c)]
    if len(extra) != 1 and f.form in ("immediate", "after_other_read"):
        extra = extra[:1]
    if not extra:  # an identical repeat written identically: the twin made it once
        return False
    again = extra[0]
    first = next(x for x in calls if x.name == again.name and x.parsed_arguments() == again.parsed_arguments())
    at, first_at = calls.index(again, calls.index(first) + 1) if again == first else calls.index(again), \
        calls.index(first)
    if f.form == "immediate":
        return again.arguments == first.arguments and at == first_at + 1
    if f.form == "after_other_read":
        return again.arguments == first.arguments and at > first_at + 1
    if f.form == "keys_reordered":
        return again.arguments != first.arguments and list(json.loads(again.arguments)) != list(
            json.loads(first.arguments))
    if f.form == "compact_json":
        return ": " not in again.arguments and ": " in first.arguments
    if f.form == "spacing_changed":
        return "\n" in again.arguments
    return False


def _wrong(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    writes = [(i, call.parsed_arguments() or {}) for i, call, r in _calls(t) if _is_write(d, call.name)]
    truth = [call.arguments for call in bp.ground_truth.calls if call.kind == "write"]
    diffs = [(i, a, b) for (i, a), b in zip(writes, truth, strict=False) if a != b]
    if len(diffs) != 1:
        return False
    i, made, want = diffs[0]
    changed = [k for k in want if made.get(k) != want[k]]
    if len(changed) != 1:
        return False
    key = changed[0]
    seen = _seen_before(t, i)
    if f.form == "other_entity_scalar":
        return isinstance(made[key], str) and made[key] in seen
    if f.form == "other_entity_list":
        return len(made[key]) == len(want[key]) and all(v in seen for v in made[key])
    if f.form == "list_changed":
        return isinstance(made[key], list) and len(made[key]) != len(want[key])
    if f.form == "other_allowed_value":
        doc = d.tools[next(c2.name for c2 in bp.ground_truth.calls if c2.arguments == want)
                      ].spec.function.parameters["properties"][key].get("description", "")
        return f'"{made[key]}"' in doc
    if f.form == "near_miss_value":
        return len(made[key]) == len(want[key]) and sum(a != b for a, b in zip(made[key], want[key], strict=True)) == 1
    return False


def _unconfirmed(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    writes = [i for i, call, _ in _calls(t) if _is_write(d, call.name)]
    if len(writes) <= f.target:
        return False
    i = writes[f.target]
    message = t.messages[i]
    assert isinstance(message, AssistantMessage)
    before = [m for m in t.messages[:i] if isinstance(m, AssistantMessage) and m.content] or \
        [AssistantMessage(content="")]
    last_user = max(j for j in range(i) if isinstance(t.messages[j], UserMessage))
    asked = [m.content for m in t.messages[last_user:i] if isinstance(m, AssistantMessage) and m.content]
    if f.form == "no_question":
        return not message.content and not _frame(before[-1].content or "", CONFIRM)
    if f.form == "announced":
        return bool(message.content) and _frame(message.content or "", ANNOUNCE)
    if f.form == "write_before_answer":
        return bool(message.content) and _frame(message.content or "", CONFIRM)
    if f.form == "other_question":
        questions = {q for s in d.slots.values() for q in s.questions}
        # (after the words that take the request up, when the question is the intent's first message)
        return not asked and any((before[-1].content or "").endswith(q) for q in questions)
    if f.form == "after_change_of_mind":
        # asked properly; the user answered with a change of mind (REVISE/REDIRECT); the write
        # follows with no confirmation request after that answer (reads and a question for a
        # missing detail may come between)
        frames = [frame.split("{")[0].strip() for frame in (*REVISE, *REDIRECT)]
        changed = [j for j in range(i) if isinstance(t.messages[j], UserMessage)
                   and any(frame in (t.messages[j].content or "") for frame in frames)]
        if not changed:
            return False
        said = [(j, m.content or "") for j, m in enumerate(t.messages[:i]) if isinstance(m, AssistantMessage)
                and m.content]
        asks = [j for j, text in said if _frame(text, CONFIRM) or _frame(text, CONFIRM_AFTER_FOUND)]
        return bool(asks) and asks[-1] < changed[-1]
    if f.form == "different_target":
        target = t.messages[i].tool_calls[0].parsed_arguments()["order_id"]  # type: ignore[index]
        ask = before[-1].content or ""
        return _frame(ask, CONFIRM) and target not in ask and re.search(r"#W\d{7}", ask) is not None
    return False


def _skipped(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    calls = _calls(t)
    auth = [(i, r) for i, call, r in calls if call.name in d.auth_tools]
    ok_auth = [i for i, r in auth if r is not None and not r.is_error]
    asked = any(x in d.identity.asks for x in (s.removeprefix(g) for s in _texts(t) for g in ("", "Hi! ", "Hello, ",
                "Thanks for reaching out. ", "Happy to help. ")))
    first_ok = ok_auth[0] if ok_auth else len(t.messages)
    touched = [(i, call) for i, call, _ in calls if call.name not in d.auth_tools and i < first_ok]
    if not touched:
        return False
    if f.form == "never_asked":
        return not auth and not asked
    if f.form == "asked_not_verified":  # asked, or told unasked: known but never verified
        said = " ".join(m.content for m in t.messages if isinstance(m, UserMessage))
        return not auth and (asked or any(v and v in said for v in (bp.user.fact("email"), bp.user.fact("zip"))))
    if f.form == "failed_lookup_ignored":
        return bool(auth) and not ok_auth
    if f.form == "read_before_auth":
        return bool(ok_auth) and not any(_is_write(d, call.name) for _, call in touched)
    if f.form == "late_after_write":
        return any(_is_write(d, call.name) for _, call in touched)
    return False


def _policy(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    refused = [(i, call) for i, call, r in _calls(t) if r is not None and r.is_error and "policy" in r.content]
    if len(refused) != 1:
        return False
    i, call = refused[0]
    after = next(m.content for m in t.messages[i + 1:] if isinstance(m, AssistantMessage) and m.content)
    if not any(rule in (after or "") or rule[1:] in (after or "") for rule in d.policy_rules.values()):
        return False  # the refusal is explained by the policy's words
    made = call.parsed_arguments() or {}
    want = [g for g in bp.ground_truth.calls if g.kind == "write"][f.target].arguments
    changed = [k for k in want if made.get(k) != want[k]]
    account = set(d.tools[call.name].account_params)
    if f.form == "combined":
        return len(changed) == 2
    if len(changed) != 1:
        return False
    key = changed[0]
    if f.form == "disallowed_value":
        return not key.endswith(("_id", "_ids"))
    if f.form == "ineligible_target":
        return key in account
    if f.form == "other_scalar_id":
        return key.endswith("_id") and key not in account
    if f.form == "other_list_id":
        return key.endswith("_ids")
    return False


def _missing(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    texts, clean = _texts(t), _texts(c)
    if f.form == "bare_report":
        return any(x.startswith(d.bare_reports) for x in texts)
    if f.form == "no_report":
        return len(texts) == len(clean) and any(len(x.split(". ")) == 1 and x.endswith("?") and x not in clean
                                                for x in texts) or texts != clean
    if f.form == "vague_value":
        return any(VAGUE_MONEY in x or VAGUE_TEXT in x for x in texts)
    if f.form == "delayed":
        return any(x in HOLD for x in texts)
    if f.form == "rounded":
        return any(re.search(r"about \$\d+\b(?!\.)", x) for x in texts)
    return False


def _ended(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    writes = [call for _, call, r in _calls(t) if _is_write(d, call.name) and r is not None and not r.is_error]
    if len(writes) > f.target:
        return False
    last = t.messages[-1]
    if f.form == "transfer":
        return t.termination is TerminationReason.transfer
    if t.termination is not TerminationReason.agent_stop or not isinstance(last, AssistantMessage):
        return False
    user = next(m for m in reversed(t.messages) if isinstance(m, UserMessage))
    if f.form in ("goodbye_before_write", "before_slots"):
        return last.content in GOODBYE
    if f.form == "after_confirmation":
        return last.content in DONE_BYE and is_affirmative(user.content)
    if f.form == "promise_then_end":
        return is_affirmative(user.content) and last.content not in DONE_BYE
    return False


STATUSES = ("return requested", "exchange requested", "pending", "processed", "shipped",
            "delivered", "cancelled")


def _values(text: str) -> set[str]:
    """The statuses and amounts a text states."""
    found = set(re.findall(r"\$\d+\.\d\d", text))
    for status in STATUSES:
        if re.search(rf"\b{status}\b", text):
            found.add(status)
            text = text.replace(status, "")
    return found


def _misstated(d: RetailDomain, bp: TaskBlueprint, f: Fault, t: Trajectory, c: Trajectory) -> bool:
    texts, clean = _texts(t), _texts(c)
    diffs = [(a, b) for a, b in zip(texts, clean, strict=False) if a != b]
    if not diffs or [m for m in t.messages if not isinstance(m, AssistantMessage) or not m.content][:5] != \
            [m for m in c.messages if not isinstance(m, AssistantMessage) or not m.content][:5]:
        return False
    said, oracle = diffs[0]  # the first message the twins differ in is the misstated report
    tools = " ".join(m.content for m in t.messages if isinstance(m, ToolMessage))
    if f.form == "omitted_unavailability":
        return "unavailable" in oracle and "unavailable" not in said
    if f.form == "wrong_entity_named":
        ids = set(re.findall(r"#W\d{7}", said)) - set(re.findall(r"#W\d{7}", oracle))
        return bool(ids) and all(i in tools for i in ids) or (said != oracle and "$" in said)
    if f.form == "wrong_value":
        amounts = set(re.findall(r"\$(\d+\.\d\d)", said)) - set(re.findall(r"\$(\d+\.\d\d)", oracle))
        return bool(amounts)
    if f.form in ("other_entity", "stale_value"):
        # the misstated value is one a tool showed (for another entity, or before the write)
        return bool(_values(said) - _values(oracle)) and all(
            v.strip("$") in tools for v in _values(said) - _values(oracle))
    return False


SHOWS: dict[FaultKind, Callable[[RetailDomain, TaskBlueprint, Fault, Trajectory, Trajectory], bool]] = {
    FaultKind.hallucinated_id: _hallucinated, FaultKind.unknown_tool: _unknown,
    FaultKind.invalid_arguments: _invalid, FaultKind.repeated_call: _repeated,
    FaultKind.wrong_argument: _wrong, FaultKind.unconfirmed_write: _unconfirmed,
    FaultKind.skipped_authentication: _skipped, FaultKind.policy_violation: _policy,
    FaultKind.missing_output: _missing, FaultKind.premature_end: _ended,
    FaultKind.misstatement: _misstated,
}


def test_each_form_differs_from_the_oracle_as_it_says(
        domain: RetailDomain, pairs: dict[tuple[FaultKind, str], list[Pair]]) -> None:
    assert set(pairs) == {(k, f) for k, fs in FAULT_FORMS.items() for f in fs}
    wrong = []
    for (kind, form), played in sorted(pairs.items()):
        for bp, fault, faulty, clean in played:
            assert faulty.episode.fault == fault
            if faulty.messages == clean.messages or not SHOWS[kind](domain, bp, fault, faulty, clean):
                wrong.append(f"{kind.value}/{form} (blueprint #{bp.provenance.index})")
    assert not wrong, "\n".join(wrong)
