"""Scripted agents: the oracle, and the fault injector that makes exactly one labelled mistake.

The oracle follows the blueprint as its plan (which calls to make, for which intent), but only
as fast as the dialogue allows: it asks for what the user has not said yet, performs a call only
once the facts it depends on have been said, confirms every write in words, and reports after
the call that produced what it reports. What it says comes from what its tools returned in this
episode (``Domain.report_facts`` over its observations), never from the blueprint's outputs. It
is written as a generator that yields actions (say, call, end) and receives what came back (the
user's text or the tool message), so the dialogue logic reads top to bottom.

The fault injector is the same script with one deviation switched on (``Fault``): its kind names
the verifier check that must catch it (``FAULT_CHECKS``) and its form which of the kind's faces
it takes (``FAULT_FORMS``). Every form is built from the episode's own context and the domain's
declarations (tool names and schemas, ids the tools showed, the policy), never from a domain's
tool names or id formats written here.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import string
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajforge.environments.base import Domain, Environment, Observation, ToolKind
from trajforge.environments.dialogue import is_affirmative
from trajforge.environments.tasks import IntentSpec, SlotSpec
from trajforge.errors import PolicyViolation, ToolError
from trajforge.schemas.blueprint import GroundTruthCall, TaskBlueprint
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from trajforge.schemas.trajectory import Fault, FaultKind
from trajforge.simulation.runner import AgentReply
from trajforge.simulation.wording import Wording

# The verifier check that must catch each fault kind.
FAULT_CHECKS: dict[FaultKind, str] = {
    FaultKind.wrong_argument: "final_state",
    FaultKind.unconfirmed_write: "confirmation",
    FaultKind.hallucinated_id: "grounded_ids",
    FaultKind.skipped_authentication: "authentication",
    FaultKind.policy_violation: "policy",
    FaultKind.missing_output: "outputs",
    FaultKind.premature_end: "final_state",
    FaultKind.unknown_tool: "tool_schema",
    FaultKind.invalid_arguments: "tool_schema",
    FaultKind.repeated_call: "no_loops",
    FaultKind.misstatement: "grounded_claims",
}

# The faces each kind takes, in the order a fault without a form falls back on (the first that
# applies). A form's applicability is decided per blueprint and target (``fault_forms``).
FAULT_FORMS: dict[FaultKind, tuple[str, ...]] = {
    FaultKind.hallucinated_id: ("read_near_miss", "read_from_example", "write_near_miss",
                                "write_list_element", "misheard_user_id"),
    FaultKind.unknown_tool: ("verb_swapped", "suffix_dropped", "pluralised", "camel_case",
                             "borrowed_word"),
    FaultKind.invalid_arguments: ("missing_required", "misspelled_name", "wrong_type",
                                  "extra_parameter", "not_json_object"),
    FaultKind.repeated_call: ("immediate", "after_other_read", "keys_reordered", "compact_json",
                              "spacing_changed"),
    FaultKind.wrong_argument: ("other_entity_scalar", "other_entity_list", "other_allowed_value",
                               "near_miss_value", "list_changed"),
    FaultKind.unconfirmed_write: ("no_question", "announced", "other_question",
                                  "write_before_answer", "different_target"),
    FaultKind.skipped_authentication: ("never_asked", "asked_not_verified", "failed_lookup_ignored",
                                       "read_before_auth", "late_after_write"),
    FaultKind.policy_violation: ("disallowed_value", "ineligible_target", "other_scalar_id",
                                 "other_list_id", "combined"),
    FaultKind.missing_output: ("bare_report", "no_report", "vague_value", "delayed", "rounded"),
    FaultKind.premature_end: ("goodbye_before_write", "after_confirmation", "promise_then_end",
                              "transfer", "before_slots"),
    FaultKind.misstatement: ("wrong_value", "other_entity", "wrong_entity_named",
                             "omitted_unavailability", "stale_value"),
}

GREET = ("Hi! ", "Hello, ", "Thanks for reaching out. ", "Happy to help. ", "")
ASK_IDENTITY = ("Before I look at your account, could you give me your email address, or your full name and zip code?",
                ("I'll need to verify your identity first: what's your email, "
                 "or your first and last name plus zip code?"),
                "To get started, please share the email on your account (or your name and zip code).")
CONFIRM = ("I can {action}. Shall I go ahead?", "To confirm: I'll {action}. Do you want me to proceed?",
           "Just to be sure, you'd like me to {action}. Should I proceed?",
           "Here's the plan: {action}. Is it okay to proceed?")
ANYTHING_ELSE = ("Is there anything else I can help you with?", "Anything else I can do for you today?",
                 "Can I help with anything else?", "Is there anything else you need?")
APOLOGY = ("Sorry, I can't do that: {rule}", "My apologies, that is not allowed. Our policy: {rule}",
           "That didn't go through, because {rule_lower}")
GOODBYE = ("I think that covers it. Have a nice day!", "Alright, we're all done here. Goodbye!")
ACK = ("Thanks. ", "Got it. ", "Thank you. ", "Okay. ", "")
# the fault injector's own wording
ANNOUNCE = ("I'll go ahead and {action} now.", "Alright, I'm going to {action}.")
PROMISE = ("Great, I'll {action} right away. Goodbye!", "Perfect, consider it done. Have a great day!")
DONE_BYE = ("Great, that's all set then. Goodbye!", "Wonderful, thanks for confirming. Bye for now!")
HOLD = ("One moment while I pull that up.", "Give me a second to go over the details.")
TRANSFER_NOTE = "The customer asked for help with their request; handing over to a colleague."
OUTSIDE_VALUE = "changed my mind"
VAGUE_MONEY = "the amount shown on your account"
VAGUE_TEXT = "being handled"
VERBS = {"get": ("fetch", "retrieve", "lookup"), "find": ("search", "lookup", "locate"),
         "list": ("get", "show", "fetch"), "cancel": ("delete", "remove", "void"),
         "modify": ("update", "change", "edit"), "return": ("refund", "send_back"),
         "exchange": ("swap", "replace"), "transfer": ("escalate", "forward"),
         "update": ("modify", "set"), "create": ("add", "make")}

_MONEY = re.compile(r"^\d+\.\d{2}$")
_POLICY_RULE = re.compile(r"policy (\w+):")
_EXAMPLE = re.compile(r"e\.g\.\s*\"([^\"]+)\"")
_QUOTED = re.compile(r"\"([^\"]+)\"")


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]
    raw: str | None = None  # the arguments as written, when not the plain JSON of ``arguments``
    text: str | None = None  # words said in the same message as the call


@dataclass(frozen=True)
class End:
    text: str


Action = Say | Call | End
Script = Generator[Action, Message, None]


def _you(value: str) -> str:
    return re.sub(r"\bmy\b", "your", value)


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _render(templates: Sequence[str], values: dict[str, str], rng: random.Random,
            need: str | None = None, any_of: Sequence[str] = ()) -> str | None:
    """One of the templates whose placeholders are all known (that uses ``need``, and one of
    ``any_of`` when given)."""
    usable = [t for t in templates if _fields(t) <= values.keys() and (need is None or need in _fields(t))
              and (not any_of or _fields(t) & set(any_of))]
    return rng.choice(usable).format(**values) if usable else None


def _shape(value: str) -> re.Pattern[str] | None:
    """A regex for ids shaped like ``value`` (its digit runs as digit runs of the same length)."""
    if not re.search(r"\d{3,}", value):
        return None
    body = "".join(rf"\d{{{len(p)}}}" if p.isdigit() else re.escape(p)
                   for p in re.split(r"(\d+)", value) if p)
    return re.compile(rf"(?<![\w#]){body}(?!\w)")


def _like(value: str, texts: Sequence[str]) -> list[str]:
    """Other ids of ``value``'s shape in ``texts``, in order of appearance."""
    shape = _shape(value)
    if shape is None:
        return []
    return [v for v in dict.fromkeys(m for t in texts for m in shape.findall(t)) if v != value]


def _mutate(value: str, rng: random.Random, texts: Sequence[str], *, transpose: bool = False) -> str | None:
    """``value`` with digits changed (or two adjacent digits swapped), never seen in ``texts``."""
    positions = [i for i, c in enumerate(value) if c.isdigit()]
    if len(positions) < 3:
        return None
    seen = " ".join(texts)
    for _ in range(40):
        chars = list(value)
        if transpose:
            i = rng.choice(positions[:-1])
            if i + 1 not in positions or chars[i] == chars[i + 1]:
                continue
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        else:
            for i in rng.sample(positions[-4:], min(2, len(positions[-4:]))):
                chars[i] = rng.choice([d for d in "0123456789" if d != chars[i]])
        out = "".join(chars)
        if out != value and out not in seen:
            return out
    return None


def _leaves(value: Any) -> Iterator[tuple[str | None, Any, Any]]:
    """(key, value, container) for every leaf and dict key of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield None, k, value
            if isinstance(v, (dict, list)):
                yield from _leaves(v)
            else:
                yield k, v, value
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                yield from _leaves(v)
            else:
                yield None, v, value


def _siblings(value: str, observed: Sequence[Observation]) -> list[str]:
    """Other values in the role ``value`` has in the tool results: the other keys of the dict it
    is a key of, the other elements of its list, other values of the key it is the value of."""
    out: list[str] = []
    keys: set[str] = set()
    results = [o.result for o in observed if o.error is None]
    for result in results:
        for key, leaf, container in _leaves(result):
            if leaf != value:
                continue
            if key is None and isinstance(container, dict):
                out += [str(k) for k in container]
            elif key is None and isinstance(container, list):
                out += [str(v) for v in container if not isinstance(v, (dict, list))]
            elif key is not None:
                keys.add(key)
    for result in results:
        for key, leaf, _ in _leaves(result):
            if key in keys and isinstance(leaf, str):
                out.append(leaf)
    return [v for v in dict.fromkeys(out) if v != value]


def _error_rule(domain: Domain, error: str) -> str | None:
    match = _POLICY_RULE.search(error)
    return domain.policy_rules.get(match.group(1)) if match else None


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


# --- rehearsing the plan -------------------------------------------------------------------------

@dataclass
class _Rehearsal:
    """The blueprint's calls played on a fresh state up to a point: the state there, what the
    tools had shown (observations and texts) and who was authenticated."""

    env: Environment
    observed: list[Observation] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    authenticated: str | None = None


def _rehearse(bp: TaskBlueprint, domain: Domain, stop: int) -> _Rehearsal:
    out = _Rehearsal(domain.environment())
    for i, call in enumerate(bp.ground_truth.calls[:stop]):
        tool_call = ToolCall(id=f"r{i}", name=call.name, arguments=json.dumps(call.arguments))
        message = out.env.execute(tool_call)
        out.observed.append(Observation.of(tool_call, message))
        out.texts.append(message.content)
        if call.name in domain.auth_tools and not message.is_error:
            out.authenticated = message.content
    return out


def _attempt(domain: Domain, rehearsal: _Rehearsal, name: str, args: dict[str, Any]
             ) -> tuple[str, list[str], str | None]:
    """How a call would go on the rehearsal's state: ("ok" | "refused" | "error", the policy
    rules it breaks, the state hash after it when it went through)."""
    breaches = domain.policy_breaches(rehearsal.env.state, name, args, rehearsal.authenticated)
    trial = domain.environment(rehearsal.env.state.fresh_copy())
    try:
        trial.call(name, args)
    except PolicyViolation:
        return "refused", breaches, None
    except ToolError:
        return "error", breaches, None
    return "ok", breaches, trial.state_hash()


def _writes(bp: TaskBlueprint) -> list[int]:
    return [i for i, c in enumerate(bp.ground_truth.calls) if c.kind == "write"]


def _id_params(args: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(scalar, list) argument names whose values are ids."""
    scalar = [k for k, v in args.items() if isinstance(v, str) and (k.endswith("_id") or k == "id")]
    lists = [k for k, v in args.items() if isinstance(v, list) and v and k.endswith("_ids")]
    return scalar, lists


def _param_docs(domain: Domain, tool: str) -> dict[str, str]:
    props = domain.tools[tool].spec.function.parameters.get("properties", {})
    return {k: str(v.get("description", "")) for k, v in props.items()}


def _allowed_values(domain: Domain, tool: str, param: str) -> list[str]:
    """The values a parameter's description lists in quotes, when it lists several."""
    doc = _param_docs(domain, tool).get(param, "")
    quoted = _QUOTED.findall(doc)
    return quoted if len(quoted) >= 2 and "e.g." not in doc else []


def _variants(domain: Domain, rehearsal: _Rehearsal, call: GroundTruthCall, form: str,
              rng: random.Random, *, want: str) -> list[dict[str, Any]]:
    """Other arguments for a write in the way ``form`` says, that go as ``want`` says:
    "ok" (accepted, no rule broken, a different outcome) or "refused" (a rule broken)."""
    args = dict(call.arguments)
    texts = rehearsal.texts
    scalar, lists = _id_params(args)
    account = set(domain.tools[call.name].account_params)
    candidates: list[dict[str, Any]] = []
    if form in ("other_entity_scalar", "other_scalar_id", "ineligible_target", "combined"):
        keys = scalar
        if form == "ineligible_target":
            keys = [k for k in scalar if k in account]
        elif form == "other_scalar_id":
            keys = [k for k in scalar if k not in account]
        for key in keys:
            candidates += [{**args, key: other} for other in _like(args[key], texts)]
    if form in ("other_entity_list", "other_list_id", "combined"):
        for key in lists:
            used = set(args[key])
            for other in _like(args[key][0], texts):
                if other not in used:
                    candidates.append({**args, key: [other] + args[key][1:]})
    if form in ("other_allowed_value", "disallowed_value"):
        for key, value in args.items():
            allowed = _allowed_values(domain, call.name, key)
            if value in allowed:
                candidates += ([{**args, key: v} for v in allowed if v != value]
                               if form == "other_allowed_value" else [{**args, key: OUTSIDE_VALUE}])
    if form == "near_miss_value":
        for key, value in args.items():
            if isinstance(value, str) and key not in scalar and re.search(r"\d", value):
                digits = [i for i, c in enumerate(value) if c.isdigit()]
                chars = list(value)
                i = digits[-1]
                chars[i] = str((int(chars[i]) + 3) % 10)
                candidates.append({**args, key: "".join(chars)})
    if form == "list_changed":
        for key in lists:
            if len(args[key]) >= 2:
                candidates.append({**args, key: args[key][:-1]})
            for other in _like(args[key][0], texts):
                if other not in args[key]:
                    candidates.append({**args, key: args[key] + [other]})
                    break
    if form == "combined":  # two arguments changed at once
        pairs = [c for c in candidates if sum(c[k] != args[k] for k in args) == 1]
        candidates = []
        for a, b in itertools.combinations(pairs, 2):
            changed_a = {k for k in args if a[k] != args[k]}
            changed_b = {k for k in args if b[k] != args[k]}
            if changed_a != changed_b:
                candidates.append({**a, **{k: b[k] for k in changed_b}})
    if not candidates:
        return []
    expected = _attempt(domain, rehearsal, call.name, args)[2]
    out = []
    for candidate in candidates:
        outcome, breaches, after = _attempt(domain, rehearsal, call.name, candidate)
        if want == "ok" and outcome == "ok" and not breaches and after != expected:
            out.append(candidate)
        elif want == "refused" and outcome == "refused" and breaches:
            out.append(candidate)
        if len(out) >= 3:
            break
    return out


# --- which faults a blueprint admits -------------------------------------------------------------

def _is_plain(bp: TaskBlueprint, k: int) -> bool:
    """The intent is asked as itself and nothing is disclosed in answer to its confirmation."""
    return bp.user.intents[k].initial_kind is None and not any(
        d.intent == k and d.trigger == "on_confirmation" for d in bp.user.disclosure)


def _report_state(bp: TaskBlueprint, domain: Domain, k: int) -> tuple[_Rehearsal, int] | None:
    """The rehearsal after the intent's last call, and the index of its last write observation."""
    calls = bp.ground_truth.calls
    mine = [i for i, c in enumerate(calls) if c.intent == k]
    if not mine:
        return None
    rehearsal = _rehearse(bp, domain, mine[-1] + 1)
    writes = [i for i in mine if calls[i].kind == "write"]
    return rehearsal, (writes[-1] if writes else -1)


def _misstatements(domain: Domain, kind: str, spec: IntentSpec, slots: dict[str, str],
                   observed: Sequence[Observation], write_at: int) -> dict[str, tuple[str, str]]:
    """form -> (fact key, the wrong value) for each misstatement this report admits."""
    facts = domain.report_facts(kind, slots, tuple(observed))
    used = set().union(*(_fields(t) for t in spec.reports)) if spec.reports else set()
    entity = [k for k in facts.get("_entity", "").split(",") if k]
    values = [k for k in facts if not k.startswith("_") and k not in entity and k in used
              and k not in slots]
    out: dict[str, tuple[str, str]] = {}
    money = [k for k in values if _MONEY.match(facts[k])]
    if money:
        key = money[0]
        wrong = float(facts[key]) + (1.0 if float(facts[key]) < 5 else -1.0)
        out["wrong_value"] = (key, f"{wrong:.2f}")
    known = {**facts, **slots}
    if entity and _render(spec.reports, known, random.Random(0), need=entity[0], any_of=values):
        named = facts[entity[0]]
        others = [v for v in _siblings(named, observed) if v not in facts.values()]
        if others:  # the report must state a value, so that naming another entity misleads
            out["wrong_entity_named"] = (entity[0], others[0])
        for other in others:
            for slot in slots:
                alt = domain.report_facts(kind, {**slots, slot: other}, tuple(observed))
                if alt.get(entity[0]) != other:
                    continue
                diff = [k for k in values if k in alt and alt[k] != facts[k]]
                if diff:
                    out["other_entity"] = (diff[0], alt[diff[0]])
                    break
            if "other_entity" in out:
                break
    caveat = facts.get("_caveat")
    if caveat and caveat in facts and caveat in used:
        out["omitted_unavailability"] = (caveat, "")
    if write_at >= 0:
        before = domain.report_facts(kind, slots, tuple(observed[:write_at]))
        stale = [k for k in values if k in before and before[k] != facts[k]]
        if stale:
            out["stale_value"] = (stale[0], before[stale[0]])
    return out


def _tool_names(domain: Domain, name: str, form: str, rng: random.Random) -> str | None:
    """A plausible but wrong tool name made from ``name`` as ``form`` says."""
    parts = name.split("_")
    real = set(domain.tools)
    options: list[str] = []
    if form == "verb_swapped":
        options = ["_".join([v] + parts[1:]) for v in VERBS.get(parts[0], ("fetch", "lookup"))]
    elif form == "suffix_dropped" and len(parts) >= 3:
        options = ["_".join(parts[:-1]), "_".join(parts[:1] + parts[2:])]
    elif form == "pluralised" and len(parts) >= 2:
        options = ["_".join(parts[:i] + [p[:-1] if p.endswith("s") else p + "s"] + parts[i + 1:])
                   for i, p in enumerate(parts) if i > 0]
    elif form == "camel_case":
        options = [parts[0] + "".join(p.title() for p in parts[1:])]
    elif form == "borrowed_word" and len(parts) >= 2:
        words = sorted({w for t in real for w in t.split("_")} - set(parts))
        options = ["_".join(parts[:i] + [w] + parts[i + 1:]) for i in range(1, len(parts)) for w in words]
        rng.shuffle(options)
    options = [o for o in options if o not in real and o != name]
    return options[0] if options else None


def _bad_arguments(domain: Domain, call: GroundTruthCall, form: str) -> tuple[dict[str, Any], str] | None:
    """(arguments, as written) for a call the tool's schema rejects, as ``form`` says."""
    args = dict(call.arguments)
    schema = domain.tools[call.name].spec.function.parameters
    props: dict[str, Any] = schema.get("properties", {})
    required = [p for p in schema.get("required", []) if p in args]
    if form == "missing_required" and required:
        bad = {k: v for k, v in args.items() if k != required[-1]}
    elif form == "misspelled_name" and args:
        key = next(iter(args))
        name = key[:1] + key[2] + key[1] + key[3:] if len(key) > 3 and key[1] != key[2] else key + "_"
        if name in props:
            name = key + "_value"
        bad = {(name if k == key else k): v for k, v in args.items()}
    elif form == "wrong_type" and args:
        key, value = next(iter(args.items()))
        if isinstance(value, list):
            bad = {**args, key: value[0] if value else ""}
        elif isinstance(value, str) and value.isdigit():
            bad = {**args, key: int(value)}
        else:
            bad = {**args, key: [value]}
    elif form == "extra_parameter":
        others = sorted({p for t in domain.tools.values()
                         for p in t.spec.function.parameters.get("properties", {})
                         if p not in props and not p.endswith(("_id", "_ids"))})
        extra = others[0] if others else "note"
        bad = {**args, extra: "as discussed"}
    elif form == "not_json_object":
        values = list(args.values())
        return {}, json.dumps(values) if values else "null"
    else:
        return None
    return bad, json.dumps(bad)


def _call_forms(bp: TaskBlueprint, domain: Domain, kind: FaultKind, t: int,
                rng: random.Random) -> list[str]:
    calls = bp.ground_truth.calls
    call = calls[t]
    forms: list[str] = []
    if kind is FaultKind.unknown_tool:
        forms = [f for f in FAULT_FORMS[kind] if _tool_names(domain, call.name, f, rng) is not None]
    elif kind is FaultKind.invalid_arguments and call.kind == "read":
        forms = [f for f in FAULT_FORMS[kind] if _bad_arguments(domain, call, f) is not None]
    elif kind is FaultKind.repeated_call and call.kind == "read":
        forms = ["immediate"]
        following = calls[t + 1] if t + 1 < len(calls) else None
        if following is not None and following.kind == "read" and \
                (following.name, following.arguments) != (call.name, call.arguments):
            forms.append("after_other_read")
        if len(call.arguments) >= 2:
            forms.append("keys_reordered")
        if call.arguments:
            forms += ["compact_json", "spacing_changed"]
    elif kind is FaultKind.hallucinated_id:
        scalar, lists = _id_params(call.arguments)
        rehearsal = _rehearse(bp, domain, t)
        seen = rehearsal.texts + list(bp.user.known_facts.values()) + list(bp.user.hidden_facts.values())
        facts = {v for key, v in {**bp.user.known_facts, **bp.user.hidden_facts}.items()
                 if key.startswith(f"{call.intent}.")}  # what the user says for this call's intent
        if call.kind == "read":
            if any(_mutate(call.arguments[k], rng, seen) for k in scalar):
                forms.append("read_near_miss")
            if t == next((i for i, c in enumerate(calls) if c.kind == "read"
                          and c.name not in domain.auth_tools), -1) and _example_read(domain, rng, seen):
                forms.append("read_from_example")
            if any(call.arguments[k] in facts and _mutate(call.arguments[k], rng, seen, transpose=True)
                   for k in scalar):
                forms.append("misheard_user_id")
        else:
            account = set(domain.tools[call.name].account_params)
            for key in scalar:
                bad = _mutate(call.arguments[key], rng, seen)
                if key in account and bad and domain.account_owner(
                        rehearsal.env.state, {**call.arguments, key: bad}) is None:
                    forms.append("write_near_miss")
                    break
            for key in lists:
                bad = _mutate(call.arguments[key][0], rng, seen)
                if bad is None:
                    continue
                args = {**call.arguments, key: [bad] + call.arguments[key][1:]}
                outcome, breaches, _ = _attempt(domain, rehearsal, call.name, args)
                if outcome == "error" and not breaches:
                    forms.append("write_list_element")
                    break
    return forms


def _example_read(domain: Domain, rng: random.Random, seen: Sequence[str]) -> tuple[str, dict[str, str]] | None:
    """A read of an id shaped like its schema's example, never seen (the first such tool)."""
    for tool in domain.tools.values():
        if tool.kind is not ToolKind.read or tool.name in domain.auth_tools:
            continue
        props = tool.spec.function.parameters.get("properties", {})
        required = tool.spec.function.parameters.get("required", [])
        if len(required) != 1 or not required[0].endswith("_id"):
            continue
        example = _EXAMPLE.search(str(props[required[0]].get("description", "")))
        if example and _shape(example.group(1)):
            made = _mutate(example.group(1), rng, seen)
            if made:
                return tool.name, {required[0]: made}
    return None


def fault_forms(bp: TaskBlueprint, domain: Domain) -> dict[FaultKind, dict[int, list[str]]]:
    """For each fault kind, its targets (a write index; an intent index for outputs and
    statements; a call index for call-level kinds) and the forms each target admits."""
    rng = random.Random(0)  # only to find out whether a mutation exists; episodes draw their own
    calls = bp.ground_truth.calls
    writes = _writes(bp)
    intents = bp.user.intents
    out: dict[FaultKind, dict[int, list[str]]] = {}

    def add(kind: FaultKind, target: int, forms: list[str]) -> None:
        if forms:
            out.setdefault(kind, {})[target] = forms

    for t in range(len(calls)):
        for kind in (FaultKind.unknown_tool, FaultKind.invalid_arguments, FaultKind.repeated_call,
                     FaultKind.hallucinated_id):
            add(kind, t, _call_forms(bp, domain, kind, t, rng))
    for w, at in enumerate(writes):
        call = calls[at]
        k = call.intent
        rehearsal = _rehearse(bp, domain, at)
        add(FaultKind.wrong_argument, w, [f for f in FAULT_FORMS[FaultKind.wrong_argument]
                                          if _variants(domain, rehearsal, call, f, rng, want="ok")])
        add(FaultKind.policy_violation, w, [f for f in FAULT_FORMS[FaultKind.policy_violation]
                                            if _variants(domain, rehearsal, call, f, rng, want="refused")])
        ends = ["goodbye_before_write", "after_confirmation", "promise_then_end", "before_slots"]
        if domain.transfer_tool and _transfer_args(domain) is not None:
            ends.append("transfer")
        if not _is_plain(bp, k):
            ends.remove("after_confirmation")
        add(FaultKind.premature_end, w, ends)
        if _is_plain(bp, k):
            forms = ["no_question", "announced", "write_before_answer"]
            spec: IntentSpec = domain.intents[intents[k].kind]
            if any(s in domain.slots and (intents[k].slots.get(s) or bp.user.fact(f"{k}.{s}"))
                   for s in spec.slots):
                forms.insert(2, "other_question")
            facts = domain.report_facts(intents[k].kind, dict(intents[k].slots), tuple(rehearsal.observed))
            entity = [e for e in facts.get("_entity", "").split(",") if e]
            if entity and facts[entity[0]] in json.dumps(call.arguments) and \
                    _siblings(facts[entity[0]], rehearsal.observed):
                forms.append("different_target")
            add(FaultKind.unconfirmed_write, w, forms)
    for k in sorted({o.intent for o in bp.ground_truth.outputs}):
        forms = ["bare_report", "no_report", "vague_value", "delayed"]
        if any(o.intent == k and _MONEY.match(o.value) and not o.value.endswith(".00")
               for o in bp.ground_truth.outputs):
            forms.append("rounded")
        add(FaultKind.missing_output, k, forms)
    for k, intent in enumerate(intents):
        state = _report_state(bp, domain, k)
        if state is None:
            continue
        rehearsal, write_at = state
        found = _misstatements(domain, intent.kind, domain.intents[intent.kind], dict(intent.slots),
                               rehearsal.observed, write_at)
        add(FaultKind.misstatement, k, [f for f in FAULT_FORMS[FaultKind.misstatement] if f in found])
    first_order = intents[0].slots.get("order", "") if intents else ""
    if any(first_order and first_order in json.dumps(c.arguments) for c in calls):
        forms = ["never_asked", "asked_not_verified", "failed_lookup_ignored", "read_before_auth"]
        if any(c.intent == 0 and c.kind == "write" for c in calls):
            forms.append("late_after_write")
        if any(c.name in domain.auth_tools for c in calls):
            add(FaultKind.skipped_authentication, 0, forms)
    return out


def applicable_faults(bp: TaskBlueprint, domain: Domain) -> dict[FaultKind, list[int]]:
    """For each fault kind, the targets (write index, intent index for outputs and statements,
    call index for call-level kinds) it can hit."""
    return {kind: sorted(targets) for kind, targets in fault_forms(bp, domain).items()}


def choose_fault(bp: TaskBlueprint, domain: Domain, rng: random.Random,
                 kinds: Sequence[FaultKind]) -> Fault | None:
    """A fault of a kind (among ``kinds``) that this blueprint admits, uniformly; then a form
    among those the blueprint admits for it, uniformly; then a target admitting that form.
    None if no kind applies."""
    options = fault_forms(bp, domain)
    usable = [k for k in kinds if k in options]
    if not usable:
        return None
    kind = rng.choice(usable)
    forms = [f for f in FAULT_FORMS[kind] if any(f in fs for fs in options[kind].values())]
    form = rng.choice(forms)
    target = rng.choice(sorted(t for t, fs in options[kind].items() if form in fs))
    return Fault(kind=kind, target=target, form=form)


def _transfer_args(domain: Domain) -> dict[str, str] | None:
    tool = domain.tools.get(domain.transfer_tool or "")
    if tool is None:
        return None
    schema = tool.spec.function.parameters
    props = schema.get("properties", {})
    if any(props[p].get("type") != "string" for p in schema.get("required", [])):
        return None
    return dict.fromkeys(schema.get("required", []), TRANSFER_NOTE)


# --- the agent -----------------------------------------------------------------------------------

class ScriptedAgent:
    """The oracle (``fault=None``) or the fault injector. One instance per episode."""

    def __init__(self, blueprint: TaskBlueprint, domain: Domain, rng: random.Random,
                 fault: Fault | None = None, wording: Wording | None = None) -> None:
        self.bp = blueprint
        self.domain = domain
        self.rng = rng
        self.fault = fault
        chosen = wording or Wording()
        self._confirm = chosen.confirm or CONFIRM
        self._anything_else = chosen.anything_else or ANYTHING_ELSE
        self.name = f"scripted:{'faulty' if fault else 'oracle'}"
        self.heard: list[str] = []
        self._ids = itertools.count(1)
        self._script: Script | None = None
        self._writes_done = 0
        self._ended = False
        self._spent = False  # the one mistake has been made
        self._authed = False
        self._sent: dict[str, ToolCall] = {}
        self.observed: list[Observation] = []
        self._texts: list[str] = []  # what the user and the tools said, for grounding ids
        self._since: dict[int, int] = {}  # intent -> index in ``heard`` where it was stated
        self.form = self._pick_form(fault)
        self._pending: list[int] = list(range(len(blueprint.ground_truth.calls)))
        self._repeat_after: int | None = None
        self._skipping = False  # unauthenticated on purpose (the skipped_authentication fault)
        self._auth_later = False  # ... and authenticating later

    def _pick_form(self, fault: Fault | None) -> str | None:
        if fault is None:
            return None
        if fault.form is not None:
            return fault.form
        forms = fault_forms(self.bp, self.domain).get(fault.kind, {}).get(fault.target, [])
        return forms[0] if forms else None

    # --- the policy interface ----------------------------------------------------------------

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        last = messages[-1]
        if isinstance(last, UserMessage):
            self.heard.append(last.content.lower())
            self._texts.append(last.content)
        elif isinstance(last, ToolMessage):
            self._texts.append(last.content)
            sent = self._sent.get(last.tool_call_id)
            if sent is not None:
                self.observed.append(Observation.of(sent, last))
        if self._script is None:
            self._script = self._run()
            action = next(self._script)
        else:
            try:
                action = self._script.send(last)
            except StopIteration:
                action = Say(self.rng.choice(self._anything_else))
        if isinstance(action, Call):
            call = ToolCall(id=f"call_{next(self._ids):03d}", name=action.name,
                            arguments=action.raw if action.raw is not None else json.dumps(action.arguments))
            self._sent[call.id] = call
            return AgentReply(AssistantMessage(content=action.text, tool_calls=(call,)))
        return AgentReply(AssistantMessage(content=action.text), end=isinstance(action, End))

    # --- helpers -----------------------------------------------------------------------------

    def _has(self, value: str) -> bool:
        low = value.lower()
        return any(low in h for h in self.heard)

    def _current(self, k: int, slot: str) -> str | None:
        """The latest value the user gave for a slot (a revision overrides what came first)."""
        intent = self.bp.user.intents[k]
        options = {v for v in (intent.slots.get(slot), self.bp.user.fact(f"{k}.{slot}")) if v}
        for text in reversed(self.heard[self._since.get(k, 0):]):
            for value in options:
                if value.lower() in text:
                    return value
        return None

    def _identity_known(self) -> bool:
        facts = [self.bp.user.fact(k) for k in ("email", "name", "zip")]
        return all(self._has(f) for f in facts if f)

    def _is(self, kind: FaultKind, target: int | None = None, *forms: str) -> bool:
        """Whether the (unspent) fault is of this kind, target and (one of these) forms."""
        return (self.fault is not None and not self._spent and self.fault.kind is kind
                and (target is None or self.fault.target == target)
                and (not forms or self.form in forms))

    def _slots(self, k: int) -> dict[str, str]:
        """The intent's slots as the user last gave them."""
        intent = self.bp.user.intents[k]
        slots = {s: self._current(k, s) or v for s, v in intent.slots.items()}
        for slot in ("payment", "reason"):
            if slot not in slots and self._current(k, slot):
                slots[slot] = self._current(k, slot) or ""
        return slots

    def _facts(self, kind: str, slots: dict[str, str],
               observed: Sequence[Observation] | None = None) -> dict[str, str]:
        seen = tuple(self.observed if observed is None else observed)
        facts = self.domain.report_facts(kind, slots, seen)
        said = set(slots.values())
        return {k: (_you(v) if v in said else v) for k, v in facts.items()}

    # --- the script --------------------------------------------------------------------------

    def _call(self, t: int, arguments: dict[str, Any] | None = None, text: str | None = None) -> Script:
        """Ground-truth call ``t`` (with ``arguments`` instead of its own, when given), with
        whatever call-level fault is to hit it; ``text`` is said with the first attempt."""
        script = self._attempts(t, arguments)
        reply: Message | None = None
        action = next(script)
        while True:
            if text and isinstance(action, Call):
                action, text = Call(action.name, action.arguments, action.raw, text), None
            reply = yield action
            try:
                action = script.send(reply)
            except StopIteration:
                return

    def _attempts(self, t: int, arguments: dict[str, Any] | None) -> Script:
        call = self.bp.ground_truth.calls[t]
        if self._is(FaultKind.unknown_tool, t):
            self._spent = True
            yield Call(_tool_names(self.domain, call.name, self.form or "", self.rng) or call.name + "_v2",
                       call.arguments)
        if self._is(FaultKind.invalid_arguments, t):
            self._spent = True
            made = _bad_arguments(self.domain, call, self.form or "")
            if made is not None:
                yield Call(call.name, made[0], raw=made[1])
        if self._is(FaultKind.hallucinated_id, t, "read_near_miss", "misheard_user_id"):
            scalar, _ = _id_params(call.arguments)
            keys = [k for k in scalar if self.form != "misheard_user_id" or self._has(call.arguments[k])]
            for key in keys:
                bad = _mutate(call.arguments[key], self.rng, self._texts,
                              transpose=self.form == "misheard_user_id")
                if bad is not None:
                    self._spent = True
                    yield Call(call.name, {**call.arguments, key: bad})
                    break
        if self._is(FaultKind.hallucinated_id, t, "read_from_example"):
            example = _example_read(self.domain, self.rng, self._texts)
            if example is not None:
                self._spent = True
                yield Call(example[0], example[1])
        if self._is(FaultKind.hallucinated_id, t, "write_near_miss", "write_list_element"):
            scalar, lists = _id_params(call.arguments)
            account = set(self.domain.tools[call.name].account_params)
            keys = [k for k in scalar if k in account] if self.form == "write_near_miss" else lists
            for key in keys:
                value = call.arguments[key]
                bad = _mutate(value if isinstance(value, str) else value[0], self.rng, self._texts)
                if bad is not None:
                    self._spent = True
                    yield Call(call.name, {**call.arguments,
                                           key: bad if isinstance(value, str) else [bad] + value[1:]})
                    break
        result = yield Call(call.name, call.arguments if arguments is None else arguments)
        if call.name in self.domain.auth_tools and isinstance(result, ToolMessage) and not result.is_error:
            self._authed = True
        if self._is(FaultKind.repeated_call, t):
            self._spent = True
            args = call.arguments
            if self.form == "after_other_read":
                self._repeat_after = t
            elif self.form == "keys_reordered":
                yield Call(call.name, args, raw=json.dumps(dict(reversed(list(args.items())))))
            elif self.form == "compact_json":
                yield Call(call.name, args, raw=json.dumps(args, separators=(",", ":")))
            elif self.form == "spacing_changed":
                yield Call(call.name, args, raw=json.dumps(args, indent=1))
            else:
                yield Call(call.name, args)
        elif self._repeat_after is not None and self._repeat_after != t:
            earlier = self.bp.ground_truth.calls[self._repeat_after]
            self._repeat_after = None
            yield Call(earlier.name, earlier.arguments)

    def _authenticate(self, prefix: str, *, verify: bool = True) -> Script:
        while not self._identity_known():
            yield Say(prefix + self.rng.choice(ASK_IDENTITY))
            prefix = ""
        if not verify:
            return
        for t, call in enumerate(self.bp.ground_truth.calls):
            if call.name in self.domain.auth_tools and t in self._pending:
                self._pending.remove(t)
                yield from self._call(t)

    def _run(self) -> Script:
        skip = self._is(FaultKind.skipped_authentication)
        self._skipping = skip
        prefix = self.rng.choice(GREET)
        if skip:
            self._spent = True
            if self.form in ("asked_not_verified", "failed_lookup_ignored"):
                yield from self._authenticate(prefix, verify=False)
                if self.form == "failed_lookup_ignored":
                    yield from self._failed_lookup()
            self._auth_later = self.form in ("read_before_auth", "late_after_write")
        else:
            yield from self._authenticate(prefix)
        for k in range(len(self.bp.user.intents)):
            yield from self._intent(k)
            if self._ended:
                return
        while True:
            yield Say(self.rng.choice(self._anything_else))

    def _failed_lookup(self) -> Script:
        """An identity lookup with a factor slightly off; its error is then ignored."""
        for t, call in enumerate(self.bp.ground_truth.calls):
            if call.name not in self.domain.auth_tools:
                continue
            texts = [(k, v) for k, v in call.arguments.items() if isinstance(v, str) and v]
            if not texts:
                return
            key, value = next(((k, v) for k, v in texts if re.search(r"\d", v)), texts[0])
            i = max((j for j, c in enumerate(value) if c.isdigit()), default=0)
            wrong = (value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:] if value[i].isdigit()
                     else value[:1] + value[2:3] + value[1:2] + value[3:])
            self._pending.remove(t)
            yield Call(call.name, {**call.arguments, key: wrong if wrong != value else value + "x"})
            return

    def _late_auth(self) -> Script:
        self._auth_later = False
        self._skipping = False
        yield from self._authenticate("")

    def _reads(self, k: int, slots_ok: set[str]) -> Script:
        """Every pending read of intents up to ``k`` whose facts are known, in ground-truth order."""
        calls = self.bp.ground_truth.calls
        progressed = True
        while progressed:
            progressed = False
            for t in list(self._pending):
                call = calls[t]
                if call.kind != "read" or call.intent > k or call.name in self.domain.auth_tools:
                    continue
                needs = set(call.needs)
                if self._skipping and "identity" in needs:
                    # unauthenticated, the account is known only once a tool has shown its id
                    seen = " ".join(self._texts)
                    if not all(str(v) in seen for v in call.arguments.values()):
                        continue
                    needs.discard("identity")
                if needs <= slots_ok | ({"identity"} if self._authed else set()):
                    self._pending.remove(t)
                    progressed = True
                    yield from self._call(t)
                    if self._auth_later and self.form == "read_before_auth":
                        yield from self._late_auth()

    def _intent(self, k: int) -> Script:
        intent = self.bp.user.intents[k]
        calls = self.bp.ground_truth.calls
        self._since[k] = 0 if k == 0 else len(self.heard) - 1
        kind = intent.initial_kind or intent.kind
        redirected = intent.initial_kind is None
        write = next((t for t in self._pending if calls[t].intent == k and calls[t].kind == "write"), None)
        w = self._writes_done
        if k > 0 and self._auth_later and self.form == "late_after_write":
            yield from self._late_auth()
        if write is not None and self._is(FaultKind.premature_end, w, "before_slots"):
            self._spent = self._ended = True
            yield End(self.rng.choice(GOODBYE))
            return
        while True:
            spec: IntentSpec = self.domain.intents[kind]
            said = {s for s in spec.slots if self._current(k, s)} | set(spec.core_slots)
            yield from self._reads(k, said)
            missing = [s for s in spec.slots if s not in said]
            if missing:
                slot: SlotSpec = self.domain.slots[missing[0]]
                yield Say(self.rng.choice(ACK) + self.rng.choice(slot.questions))
                continue
            slots = self._slots(k)
            if write is None:
                yield from self._report(k, kind, spec, slots, -1)
                return
            if self._is(FaultKind.premature_end, w, "goodbye_before_write"):
                self._spent = self._ended = True
                yield End(self.rng.choice(GOODBYE))
                return
            if self._is(FaultKind.premature_end, w, "transfer"):
                self._spent = self._ended = True
                yield Call(self.domain.transfer_tool or "", _transfer_args(self.domain) or {})
                return
            action = self._action(kind, spec, slots)
            if self._is(FaultKind.unconfirmed_write, w):
                self._spent = True
                text = yield from self._unconfirmed(k, kind, spec, slots, action)
            else:
                text = None
                reply = yield Say(self.rng.choice(self._confirm).format(action=action))
                if not is_affirmative(getattr(reply, "content", "")):
                    if not redirected:
                        redirected, kind = True, intent.kind
                    continue
            if self._is(FaultKind.premature_end, w, "after_confirmation", "promise_then_end"):
                self._spent = self._ended = True
                bank = DONE_BYE if self.form == "after_confirmation" else PROMISE
                yield End(self.rng.choice(bank).format(action=action))
                return
            yield from self._write(k, w, write, kind, spec, slots, text)
            return

    def _action(self, kind: str, spec: IntentSpec, slots: dict[str, str],
                facts: dict[str, str] | None = None) -> str:
        """What the write will do, in words: the user's wishes over what the tools showed."""
        values = {**(facts if facts is not None else self._facts(kind, slots)),
                  **{s: _you(v) for s, v in slots.items()}}
        values.setdefault("reason", "")
        values.setdefault("payment", "")
        return _render(spec.actions, values, self.rng) or spec.actions[0].format_map(
            {k: values.get(k, "") for k in _fields(spec.actions[0])})

    def _unconfirmed(self, k: int, kind: str, spec: IntentSpec, slots: dict[str, str],
                     action: str) -> Generator[Action, Message, str | None]:
        """The unconfirmed write's lead-in; returns words to say with the write itself."""
        if self.form == "announced":
            return self.rng.choice(ANNOUNCE).format(action=action)
        if self.form == "write_before_answer":
            return self.rng.choice(self._confirm).format(action=action)
        if self.form == "other_question":
            intent = self.bp.user.intents[k]
            slot = next(s for s in spec.slots if s in self.domain.slots
                        and (intent.slots.get(s) or self.bp.user.fact(f"{k}.{s}")))
            yield Say(self.rng.choice(self.domain.slots[slot].questions))
        elif self.form == "different_target":
            facts = self._facts(kind, slots)
            entity = [e for e in facts.get("_entity", "").split(",") if e]
            others = _siblings(facts[entity[0]], self.observed) if entity else []
            if others:
                facts[entity[0]] = others[0]
            wrong = self._action(kind, spec, slots, facts)
            yield Say(self.rng.choice(self._confirm).format(action=wrong))
        return None

    def _write(self, k: int, w: int, t: int, kind: str, spec: IntentSpec, slots: dict[str, str],
               text: str | None) -> Script:
        call = self.bp.ground_truth.calls[t]
        if self._is(FaultKind.policy_violation, w):
            self._spent = True
            rehearsal = self._rehearsal(t)
            bad = _variants(self.domain, rehearsal, call, self.form or "", self.rng, want="refused")
            if bad:
                result = yield Call(call.name, bad[0], text=text)
                text = None
                error = getattr(result, "content", "")
                rule = _error_rule(self.domain, error) or "that is not something I can do."
                apology = self.rng.choice(APOLOGY).format(rule=rule, rule_lower=rule[:1].lower() + rule[1:])
                reply = yield Say(apology + " " + self.rng.choice(self._confirm).format(
                    action=self._action(kind, spec, slots)))
                del reply  # the user's answer to the re-confirmation: the oracle's write follows
        arguments = call.arguments
        if self._is(FaultKind.wrong_argument, w):
            self._spent = True
            wrong = _variants(self.domain, self._rehearsal(t), call, self.form or "", self.rng, want="ok")
            if wrong:
                arguments = wrong[0]
        self._pending.remove(t)
        self._writes_done += 1
        yield from self._call(t, arguments, text)
        yield from self._report(k, kind, spec, slots, len(self.observed) - 1)

    def _rehearsal(self, t: int) -> _Rehearsal:
        return _rehearse(self.bp, self.domain, t)

    def _report(self, k: int, kind: str, spec: IntentSpec, slots: dict[str, str], write_at: int) -> Script:
        facts = self._facts(kind, slots)
        values = {**{s: _you(v) for s, v in slots.items()}, **facts}
        values.setdefault("payment", "")
        anything = self.rng.choice(self._anything_else)
        text = _render(spec.reports, values, self.rng) or self.rng.choice(self.domain.bare_reports)
        if self._is(FaultKind.missing_output, k):
            self._spent = True
            outputs = [o.key for o in self.bp.ground_truth.outputs if o.intent == k]
            if self.form == "no_report":
                yield Say(anything)
                return
            if self.form == "delayed":
                yield Say(self.rng.choice(HOLD))
            elif self.form in ("vague_value", "rounded"):
                for key in outputs:
                    value = values.get(key, "")
                    if not value:
                        continue
                    if self.form == "rounded" and _MONEY.match(value):
                        text = text.replace("$" + value, f"about ${round(float(value))}")
                    elif self.form == "vague_value":
                        text = text.replace("$" + value, VAGUE_MONEY).replace(value, VAGUE_TEXT)
            else:
                text = self.rng.choice(self.domain.bare_reports)
        elif self._is(FaultKind.misstatement, k):
            self._spent = True
            text = self._misstated(kind, spec, slots, values, write_at) or text
        yield Say(text + " " + anything)

    def _misstated(self, kind: str, spec: IntentSpec, slots: dict[str, str], values: dict[str, str],
                   write_at: int) -> str | None:
        found = _misstatements(self.domain, kind, spec, slots, self.observed, write_at)
        if self.form not in found:
            return None
        key, wrong = found[self.form]
        if self.form == "omitted_unavailability":
            for _ in range(10):
                text = _render(spec.reports, values, self.rng, need=key) or ""
                kept = [s for s in _sentences(text) if values[key] not in s]
                if kept and len(kept) < len(_sentences(text)):
                    return " ".join(kept)
            return None
        value_keys = [k for k in values if k not in slots and not k.startswith("_")
                      and k not in values.get("_entity", "").split(",")]
        return _render(spec.reports, {**values, key: _you(wrong)}, self.rng, need=key,
                       any_of=value_keys if self.form == "wrong_entity_named" else ())
