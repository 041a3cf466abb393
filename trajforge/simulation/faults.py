"""Faults with many faces: which labelled mistakes a blueprint admits, in which forms, and how.

Each ``FaultKind`` names the verifier check that must catch it (``FAULT_CHECKS``) and comes in
several forms (``FAULT_FORMS``), each built from the episode's own context and the domain's
declarations (tool names and schemas, ids the tools showed, the policy, the facts a report
states), never from a domain's tool names or id formats written here. ``fault_forms`` rehearses
a blueprint's plan on a fresh environment to find which forms of which kinds it admits, and
``choose_fault`` draws one: a kind uniformly, then a form, then a target. The scripted agent
(``simulation.agents``) realises the drawn fault in its dialogue.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajforge.environments.base import Domain, Environment, Observation, ToolKind
from trajforge.environments.tasks import IntentSpec
from trajforge.errors import PolicyViolation, ToolError
from trajforge.schemas.blueprint import GroundTruthCall, TaskBlueprint
from trajforge.schemas.messages import ToolCall
from trajforge.schemas.trajectory import Fault, FaultKind

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
                                  "write_before_answer", "different_target", "after_change_of_mind"),
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

ANNOUNCE = ("I'll go ahead and {action} now.", "Alright, I'm going to {action}.")
PROMISE = ("Great, I'll {action} right away. Goodbye!", "Perfect, consider it done. Have a great day!")
DONE_BYE = ("Great, that's all set then. Goodbye!", "Wonderful, thanks for confirming. Bye for now!")
HOLD = ("One moment while I pull that up.", "Give me a second to go over the details.")
TRANSFER_NOTE = "The user asked for help with their request; handing over to a colleague."
OUTSIDE_VALUE = "changed my mind"
VAGUE_MONEY = "the amount shown on your account"
VAGUE_TEXT = "being handled"
VERBS = {"get": ("fetch", "retrieve", "lookup"), "find": ("search", "lookup", "locate"),
         "list": ("get", "show", "fetch"), "cancel": ("delete", "remove", "void"),
         "modify": ("update", "change", "edit"), "return": ("refund", "send_back"),
         "exchange": ("swap", "replace"), "transfer": ("escalate", "forward"),
         "update": ("modify", "set"), "create": ("add", "make")}

MONEY = re.compile(r"^\d+\.\d{2}$")
_POLICY_RULE = re.compile(r"policy (\w+):")
_EXAMPLE = re.compile(r"e\.g\.\s*\"([^\"]+)\"")
_QUOTED = re.compile(r"\"([^\"]+)\"")


def second_person(value: str) -> str:
    return re.sub(r"\bmy\b", "your", value)


def fields_of(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def render(templates: Sequence[str], values: dict[str, str], rng: random.Random | None,
            need: str | None = None, any_of: Sequence[str] = ()) -> str | None:
    """One of the templates whose placeholders are all known (that uses ``need``, and one of
    ``any_of`` when given): drawn with ``rng``, or without one the first."""
    usable = [t for t in templates if fields_of(t) <= values.keys() and (need is None or need in fields_of(t))
              and (not any_of or fields_of(t) & set(any_of))]
    if not usable:
        return None
    return (rng.choice(usable) if rng is not None else usable[0]).format(**values)


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


def _same_kind(char: str) -> str:
    if char.isdigit():
        return string.digits
    return string.ascii_uppercase if char.isupper() else string.ascii_lowercase


def mutate_id(value: str, rng: random.Random, texts: Sequence[str], *, transpose: bool = False) -> str | None:
    """``value`` with digits changed (or two adjacent digits swapped), never seen in ``texts``;
    an id with fewer than three digits (a booking code "K4Q9ZT") has its letters and digits
    changed instead, each for one of its own kind (a letter of the same case, a digit)."""
    positions = [i for i, c in enumerate(value) if c.isdigit()]
    if len(positions) < 3:
        positions = [i for i, c in enumerate(value) if c.isascii() and c.isalnum()]
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
                chars[i] = rng.choice([d for d in _same_kind(chars[i]) if d != chars[i]])
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


def siblings(value: str, observed: Sequence[Observation]) -> list[str]:
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
    kind = _kind_of(value)  # an id's siblings are ids of its kind: another record of the same table
    return [v for v in dict.fromkeys(out) if v != value and (kind is None or kind.fullmatch(v))]


def _kind_of(value: str) -> re.Pattern[str] | None:
    """A regex for ids of ``value``'s kind: its digit runs as digit runs of the same length, its
    letter runs as any letters (``#A1234567``, ``ava_smith_1234``); ``None`` for a non-id."""
    if not re.search(r"\d{3,}", value):
        return None
    body = "".join(rf"\d{{{len(p)}}}" if p.isdigit() else "[A-Za-z]+" if p.isalpha() else re.escape(p)
                   for p in re.split(r"(\d+|[A-Za-z]+)", value) if p)
    return re.compile(body)


def error_rule(domain: Domain, error: str) -> str | None:
    match = _POLICY_RULE.search(error)
    return domain.policy_rules.get(match.group(1)) if match else None


# --- rehearsing the plan -------------------------------------------------------------------------

@dataclass
class Rehearsal:
    """The blueprint's calls played on a fresh state up to a point: the state there, what the
    tools had shown (observations and texts) and who was authenticated."""

    env: Environment
    observed: list[Observation] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    authenticated: str | None = None


# what a rehearsal records for a ground-truth call the user makes (kept, so indices stay the
# calls', as an error, so no report reads its result)
USER_ACT = "performed by the user on their own device; not seen by the agent"


def rehearse(bp: TaskBlueprint, domain: Domain, stop: int) -> Rehearsal:
    out = Rehearsal(domain.environment())
    for i, call in enumerate(bp.ground_truth.calls[:stop]):
        tool_call = ToolCall(id=f"r{i}", name=call.name, arguments=json.dumps(call.arguments))
        if call.kind == "user":  # the user's own act: its effect counts, the agent never sees it
            out.env.execute(tool_call, actor="user")
            out.observed.append(Observation(call.name, dict(call.arguments), error=USER_ACT))
            out.texts.append("")
            continue
        message = out.env.execute(tool_call)
        out.observed.append(Observation.of(tool_call, message))
        out.texts.append(message.content)
        if call.name in domain.auth_tools and not message.is_error:
            out.authenticated = message.content
    return out


def _attempt(domain: Domain, rehearsal: Rehearsal, name: str, args: dict[str, Any]
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


def id_params(domain: Domain, args: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(scalar, list) argument names whose values reference entities (``references_entity``)."""
    scalar = [k for k, v in args.items() if isinstance(v, str) and (domain.references_entity(k) or k == "id")]
    lists = [k for k, v in args.items() if isinstance(v, list) and v and domain.references_entity(k)]
    return scalar, lists


def _param_docs(domain: Domain, tool: str) -> dict[str, str]:
    props = domain.tools[tool].spec.function.parameters.get("properties", {})
    return {k: str(v.get("description", "")) for k, v in props.items()}


def _allowed_values(domain: Domain, tool: str, param: str) -> list[str]:
    """The values a parameter's description lists in quotes, when it lists several."""
    doc = _param_docs(domain, tool).get(param, "")
    quoted = _QUOTED.findall(doc)
    return quoted if len(quoted) >= 2 and "e.g." not in doc else []


def call_variants(domain: Domain, rehearsal: Rehearsal, call: GroundTruthCall, form: str,
              rng: random.Random, *, want: str, limit: int = 3) -> list[dict[str, Any]]:
    """Up to ``limit`` other arguments for a write in the way ``form`` says, that go as ``want``
    says: "ok" (accepted, no rule broken, a different outcome) or "refused" (a rule broken)."""
    args = dict(call.arguments)
    texts = rehearsal.texts
    scalar, lists = id_params(domain, args)
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
        if len(out) >= limit:
            break
    return out


# --- which faults a blueprint admits -------------------------------------------------------------

def _is_plain(bp: TaskBlueprint, k: int) -> bool:
    """The intent is asked as itself and nothing is disclosed in answer to its confirmation."""
    return bp.user.intents[k].initial_kind is None and not any(
        d.intent == k and d.trigger == "on_confirmation" for d in bp.user.disclosure)


def _changes_mind(bp: TaskBlueprint, k: int) -> bool:
    """The user answers the intent's first confirmation request with a change of mind (a revised
    detail or another request), not a yes."""
    return any(d.intent == k and d.trigger == "on_confirmation" and d.action in ("revise", "redirect")
               for d in bp.user.disclosure)


def _report_state(bp: TaskBlueprint, k: int, rehearsal_at: Callable[[int], Rehearsal]
                  ) -> tuple[Rehearsal, int] | None:
    """The rehearsal after the intent's last call, and the index of its last write observation."""
    calls = bp.ground_truth.calls
    mine = [i for i, c in enumerate(calls) if c.intent == k]
    if not mine:
        return None
    rehearsal = rehearsal_at(mine[-1] + 1)
    writes = [i for i in mine if calls[i].kind == "write"]
    return rehearsal, (writes[-1] if writes else -1)


def misstatements(domain: Domain, kind: str, spec: IntentSpec, slots: dict[str, str],
                   observed: Sequence[Observation], write_at: int) -> dict[str, tuple[str, str]]:
    """form -> (fact key, the wrong value) for each misstatement this report admits."""
    reported = domain.report_facts(kind, slots, tuple(observed))
    facts = reported.values
    used = set().union(*(fields_of(t) for t in spec.reports)) if spec.reports else set()
    entity = list(reported.entity)
    values = [k for k in facts if k not in entity and k in used
              and k not in slots]
    out: dict[str, tuple[str, str]] = {}
    money = [k for k in values if MONEY.match(facts[k])]
    if money:
        key = money[0]
        wrong = float(facts[key]) + (1.0 if float(facts[key]) < 5 else -1.0)
        out["wrong_value"] = (key, f"{wrong:.2f}")
    known = {**facts, **slots}
    if entity and render(spec.reports, known, random.Random(0), need=entity[0], any_of=values):
        named = facts[entity[0]]
        others = [v for v in siblings(named, observed) if v not in facts.values()]
        stated = [str(facts[k]) for k in values]
        misleading = [v for v in others if not _true_of(domain, v, stated, observed)]
        if misleading:  # the report states values, so naming another entity misleads
            out["wrong_entity_named"] = (entity[0], misleading[0])
        for other in others:
            for slot in slots:
                alt = domain.report_facts(kind, {**slots, slot: other}, tuple(observed)).values
                if alt.get(entity[0]) != other:
                    continue
                diff = [k for k in values if k in alt and alt[k] != facts[k]]
                if diff:
                    out["other_entity"] = (diff[0], alt[diff[0]])
                    break
            if "other_entity" in out:
                break
    for caveat in reported.must_say:
        if caveat in facts and caveat in used:
            out["omitted_unavailability"] = (caveat, "")
    if write_at >= 0:
        before = domain.report_facts(kind, slots, tuple(observed[:write_at])).values
        stale = [k for k in values if k in before and before[k] != facts[k]]
        if stale:
            out["stale_value"] = (stale[0], before[stale[0]])
    return out


def _true_of(domain: Domain, key: str, stated: Sequence[str], observed: Sequence[Observation]) -> bool:
    """Whether every stated value is also what the tools last showed for the entity ``key``
    (then a report naming it instead states nothing false about it: no misstatement)."""
    shown: set[str] = set()
    for obs in observed:
        for record in domain.claim_records(obs):
            if any(key in name for name in record.names) or record.key == key:
                shown = {_plain(v) for vs in record.values.values() for v in vs}
    return bool(shown) and all(_plain(v) in shown for v in stated)


def _plain(value: object) -> str:
    text = str(value).strip().lower()
    try:
        return f"{float(text):.2f}"
    except ValueError:
        return text


def wrong_tool_name(domain: Domain, name: str, form: str, rng: random.Random) -> str | None:
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


def bad_arguments(domain: Domain, call: GroundTruthCall, form: str) -> tuple[dict[str, Any], str] | None:
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
                         if p not in props and not domain.references_entity(p)})
        extra = others[0] if others else "note"
        bad = {**args, extra: "as discussed"}
    elif form == "not_json_object":
        values = list(args.values())
        return {}, json.dumps(values) if values else "null"
    else:
        return None
    return bad, json.dumps(bad)


def _call_forms(bp: TaskBlueprint, domain: Domain, kind: FaultKind, t: int,
                rng: random.Random, rehearsal_at: Callable[[int], Rehearsal]) -> list[str]:
    calls = bp.ground_truth.calls
    call = calls[t]
    forms: list[str] = []
    if kind is FaultKind.unknown_tool:
        forms = [f for f in FAULT_FORMS[kind] if wrong_tool_name(domain, call.name, f, rng) is not None]
    elif kind is FaultKind.invalid_arguments and call.kind == "read":
        forms = [f for f in FAULT_FORMS[kind] if bad_arguments(domain, call, f) is not None]
    elif kind is FaultKind.repeated_call and call.kind == "read" and call.name != domain.transfer_tool:
        forms = ["immediate"]  # (a hand-over ends the episode: it cannot be repeated)
        following = calls[t + 1] if t + 1 < len(calls) else None
        if following is not None and following.kind == "read" and following.name != domain.transfer_tool and \
                (following.name, following.arguments) != (call.name, call.arguments):
            forms.append("after_other_read")
        if len(call.arguments) >= 2:
            forms.append("keys_reordered")
        if call.arguments:
            forms += ["compact_json", "spacing_changed"]
    elif kind is FaultKind.hallucinated_id and call.kind != "user":
        scalar, lists = id_params(domain, call.arguments)
        rehearsal = rehearsal_at(t)
        seen = rehearsal.texts + list(bp.user.known_facts.values()) + list(bp.user.hidden_facts.values())
        facts = {v for key, v in {**bp.user.known_facts, **bp.user.hidden_facts}.items()
                 if key.startswith(f"{call.intent}.")}  # what the user says for this call's intent
        if call.kind == "read":
            if any(mutate_id(call.arguments[k], rng, seen) for k in scalar):
                forms.append("read_near_miss")
            if t == next((i for i, c in enumerate(calls) if c.kind == "read"
                          and c.name not in domain.auth_tools), -1) and example_read(domain, rng, seen):
                forms.append("read_from_example")
            if any(call.arguments[k] in facts and mutate_id(call.arguments[k], rng, seen, transpose=True)
                   for k in scalar):
                forms.append("misheard_user_id")
        else:
            account = set(domain.tools[call.name].account_params)
            for key in scalar:
                bad = mutate_id(call.arguments[key], rng, seen)
                if key in account and bad and domain.account_owner(
                        rehearsal.env.state, {**call.arguments, key: bad}) is None:
                    forms.append("write_near_miss")
                    break
            for key in lists:
                bad = mutate_id(call.arguments[key][0], rng, seen)
                if bad is None:
                    continue
                args = {**call.arguments, key: [bad] + call.arguments[key][1:]}
                outcome, breaches, _ = _attempt(domain, rehearsal, call.name, args)
                if outcome == "error" and not breaches:
                    forms.append("write_list_element")
                    break
    return forms


def example_read(domain: Domain, rng: random.Random, seen: Sequence[str]) -> tuple[str, dict[str, str]] | None:
    """A read of an id shaped like its schema's example, never seen (the first such tool)."""
    for tool in domain.tools.values():
        if tool.kind is not ToolKind.read or tool.name in domain.auth_tools:
            continue
        props = tool.spec.function.parameters.get("properties", {})
        required = tool.spec.function.parameters.get("required", [])
        if len(required) != 1 or not domain.references_entity(required[0]):
            continue
        example = _EXAMPLE.search(str(props[required[0]].get("description", "")))
        if example and _shape(example.group(1)):
            made = mutate_id(example.group(1), rng, seen)
            if made:
                return tool.name, {required[0]: made}
    return None


# kinds whose forms are found by trying candidate arguments on a rehearsed state (costly), and
# the outcome such a candidate must have
_VARIANT_KINDS = {FaultKind.wrong_argument: "ok", FaultKind.policy_violation: "refused"}


def _memo_rehearsals(bp: TaskBlueprint, domain: Domain) -> Callable[[int], Rehearsal]:
    """``rehearse(bp, domain, stop)``, each ``stop`` played once (the search reads them only)."""
    memo: dict[int, Rehearsal] = {}

    def at(stop: int) -> Rehearsal:
        if stop not in memo:
            memo[stop] = rehearse(bp, domain, stop)
        return memo[stop]

    return at


def _variant_forms(bp: TaskBlueprint, domain: Domain, kind: FaultKind,
                   rehearsal_at: Callable[[int], Rehearsal], *, settle: bool
                   ) -> dict[int, list[str]]:
    """Write index -> the forms of ``kind`` (a key of ``_VARIANT_KINDS``) that write admits.
    With ``settle``, only whether the kind applies at all: the first form found, at the first
    write admitting one."""
    rng = random.Random(0)  # unused by the variants; the signature is shared with the episodes'
    calls = bp.ground_truth.calls
    out: dict[int, list[str]] = {}
    for w, at in enumerate(_writes(bp)):
        forms: list[str] = []
        for form in FAULT_FORMS[kind]:
            if call_variants(domain, rehearsal_at(at), calls[at], form, rng, want=_VARIANT_KINDS[kind],
                             limit=1):
                forms.append(form)
                if settle:
                    return {w: forms}
        if forms:
            out[w] = forms
    return out


def fault_forms(bp: TaskBlueprint, domain: Domain) -> dict[FaultKind, dict[int, list[str]]]:
    """For each fault kind, its targets (a write index; an intent index for outputs and
    statements; a call index for call-level kinds) and the forms each target admits."""
    rehearsal_at = _memo_rehearsals(bp, domain)
    return {kind: forms for kind in FaultKind if (forms := kind_forms(bp, domain, kind, rehearsal_at))}


def kind_forms(bp: TaskBlueprint, domain: Domain, kind: FaultKind,
               rehearsal_at: Callable[[int], Rehearsal] | None = None, *, settle: bool = False
               ) -> dict[int, list[str]]:
    """``fault_forms`` of one kind: target -> the forms it admits. With ``settle``, only whether
    the kind applies at all: the first target admitting a form (for the kinds of
    ``_VARIANT_KINDS``, its first form). Each kind searches with its own ``random.Random(0)``
    (only to find out whether a mutation exists; episodes draw their own), so a kind's forms do
    not depend on which other kinds were looked at first."""
    rehearsal_at = rehearsal_at or _memo_rehearsals(bp, domain)
    if kind in _VARIANT_KINDS:
        return _variant_forms(bp, domain, kind, rehearsal_at, settle=settle)
    out: dict[int, list[str]] = {}
    for target, forms in _targets(bp, domain, kind, random.Random(0), rehearsal_at):
        if forms:
            out[target] = forms
            if settle:
                break
    return out


def _targets(bp: TaskBlueprint, domain: Domain, kind: FaultKind, rng: random.Random,
             rehearsal_at: Callable[[int], Rehearsal]) -> Iterator[tuple[int, list[str]]]:
    """Each target of ``kind`` (not a kind of ``_VARIANT_KINDS``) with the forms it admits,
    found one target at a time."""
    calls = bp.ground_truth.calls
    intents = bp.user.intents
    if kind in (FaultKind.unknown_tool, FaultKind.invalid_arguments, FaultKind.repeated_call,
                FaultKind.hallucinated_id):
        for t in range(len(calls)):
            yield t, _call_forms(bp, domain, kind, t, rng, rehearsal_at)
    elif kind is FaultKind.premature_end:
        for w, at in enumerate(_writes(bp)):
            ends = ["goodbye_before_write", "after_confirmation", "promise_then_end", "before_slots"]
            if domain.transfer_tool and transfer_arguments(domain) is not None:
                ends.append("transfer")
            if not _is_plain(bp, calls[at].intent):
                ends.remove("after_confirmation")
            yield w, ends
    elif kind is FaultKind.unconfirmed_write:
        for w, at in enumerate(_writes(bp)):
            call = calls[at]
            k = call.intent
            if not _is_plain(bp, k):
                # the one form for a change of mind: the agent writes on the changed wish unasked
                if _changes_mind(bp, k):
                    yield w, ["after_change_of_mind"]
                continue
            rehearsal = rehearsal_at(at)
            forms = ["no_question", "announced", "write_before_answer"]
            spec: IntentSpec = domain.intents[intents[k].kind]
            if any(s in domain.slots and (intents[k].slots.get(s) or bp.user.fact(f"{k}.{s}"))
                   for s in spec.slots):
                forms.insert(2, "other_question")
            reported = domain.report_facts(intents[k].kind, dict(intents[k].slots), tuple(rehearsal.observed))
            named = reported.values.get(reported.entity[0], "") if reported.entity else ""
            if named and named in json.dumps(call.arguments) and siblings(named, rehearsal.observed):
                forms.append("different_target")
            yield w, forms
    elif kind is FaultKind.missing_output:
        for k in sorted({o.intent for o in bp.ground_truth.outputs}):
            forms = ["bare_report", "no_report", "vague_value", "delayed"]
            if any(o.intent == k and MONEY.match(o.value) and not o.value.endswith(".00")
                   for o in bp.ground_truth.outputs):
                forms.append("rounded")
            yield k, forms
    elif kind is FaultKind.misstatement:
        for k, intent in enumerate(intents):
            state = _report_state(bp, k, rehearsal_at)
            if state is None:
                continue
            rehearsal, write_at = state
            found = misstatements(domain, intent.kind, domain.intents[intent.kind], dict(intent.slots),
                                  rehearsal.observed, write_at)
            yield k, [f for f in FAULT_FORMS[kind] if f in found]
    elif kind is FaultKind.skipped_authentication:
        if intents and _names_account_entity(domain, intents[0].slots, calls) \
                and any(c.name in domain.auth_tools for c in calls):
            forms = ["never_asked", "asked_not_verified", "failed_lookup_ignored", "read_before_auth"]
            if any(c.intent == 0 and c.kind == "write" for c in calls):
                forms.append("late_after_write")
            yield 0, forms


def _names_account_entity(domain: Domain, slots: dict[str, str], calls: Sequence[GroundTruthCall]) -> bool:
    """Whether the user's request names an entity that scopes a call to an account (a value of
    one of ``domain.account_params``), so an agent could act on it without identifying them."""
    said = {domain.canonical_ids(v) for v in slots.values() if v}
    return any(domain.canonical_ids(str(v)) in said for c in calls for p, v in c.arguments.items()
               if p in domain.account_params and not isinstance(v, list))


def applicable_faults(bp: TaskBlueprint, domain: Domain) -> dict[FaultKind, list[int]]:
    """For each fault kind, the targets (write index, intent index for outputs and statements,
    call index for call-level kinds) it can hit."""
    return {kind: sorted(targets) for kind, targets in fault_forms(bp, domain).items()}


def choose_fault(bp: TaskBlueprint, domain: Domain, rng: random.Random,
                 kinds: Sequence[FaultKind]) -> Fault | None:
    """A fault of a kind (among ``kinds``) that this blueprint admits, uniformly; then a form
    among those the blueprint admits for it, uniformly; then a target admitting that form.
    None if no kind applies."""
    rehearsal_at = _memo_rehearsals(bp, domain)
    # the first kind that applies, in a uniformly random order: each applicable kind equally
    # likely, and the kinds after it never searched
    kind = next((k for k in rng.sample(list(kinds), len(kinds))
                 if kind_forms(bp, domain, k, rehearsal_at, settle=True)), None)
    if kind is None:
        return None
    options = kind_forms(bp, domain, kind, rehearsal_at)  # now its every target and form
    forms = [f for f in FAULT_FORMS[kind] if any(f in fs for fs in options.values())]
    form = rng.choice(forms)
    target = rng.choice(sorted(t for t, fs in options.items() if form in fs))
    return Fault(kind=kind, target=target, form=form)


def transfer_arguments(domain: Domain) -> dict[str, str] | None:
    tool = domain.tools.get(domain.transfer_tool or "")
    if tool is None:
        return None
    schema = tool.spec.function.parameters
    props = schema.get("properties", {})
    if any(props[p].get("type") != "string" for p in schema.get("required", [])):
        return None
    return dict.fromkeys(schema.get("required", []), TRANSFER_NOTE)
