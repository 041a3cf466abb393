"""Scripted agents: the oracle, and the fault injector that makes exactly one labelled mistake.

The oracle follows the blueprint's ground truth, but only as fast as the dialogue allows: it
asks for what the user has not said yet, performs a call only once the facts it depends on have
been said, confirms every write in words, and reports the required outputs after the call that
produced them. It is written as a generator that yields actions (say, call, end) and receives
what came back (the user's text or the tool message), so the dialogue logic reads top to bottom.

The fault injector is the same script with one deviation switched on (``Fault``); its kind
names the verifier check that must catch it (``FAULT_CHECKS``).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.dialogue import is_affirmative
from trajforge.environments.tasks import IntentSpec, SlotSpec
from trajforge.schemas.blueprint import GroundTruthCall, TaskBlueprint
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from trajforge.schemas.trajectory import Fault, FaultKind
from trajforge.simulation.runner import AgentReply

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
APOLOGY = ("Sorry, that didn't go through: {error}. Let me do it correctly.",
           "My apologies, that was not allowed ({error}).")
GOODBYE = ("I think that covers it. Have a nice day!", "Alright, we're all done here. Goodbye!")
ACK = ("Thanks. ", "Got it. ", "Thank you. ", "Okay. ", "")

_ID = re.compile(r"#W\d{7}|\b\d{10}\b|\b(?:credit_card|paypal|gift_card)_\d{7}\b")


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class End:
    text: str


Action = Say | Call | End
Script = Generator[Action, Message, None]


def _you(value: str) -> str:
    return re.sub(r"\bmy\b", "your", value)


def _write_intents(bp: TaskBlueprint) -> list[int]:
    return [c.intent for c in bp.ground_truth.calls if c.kind == "write"]


def applicable_faults(bp: TaskBlueprint, domain: Domain) -> dict[FaultKind, list[int]]:
    """For each fault kind, the targets (write index, or intent index for outputs) it can hit."""
    calls = bp.ground_truth.calls
    writes = [i for i, c in enumerate(calls) if c.kind == "write"]
    intents = bp.user.intents
    plain = [w for w, i in enumerate(writes) if intents[calls[i].intent].initial_kind is None
             and not any(d.intent == calls[i].intent and d.trigger == "on_confirmation"
                         for d in bp.user.disclosure)]
    out: dict[FaultKind, list[int]] = {
        FaultKind.hallucinated_id: [0], FaultKind.unknown_tool: [0], FaultKind.invalid_arguments: [0],
        FaultKind.repeated_call: [0],
    }
    if writes:
        out[FaultKind.wrong_argument] = list(range(len(writes)))
        out[FaultKind.premature_end] = list(range(len(writes)))
    if plain:
        out[FaultKind.unconfirmed_write] = plain
    with_outputs = sorted({o.intent for o in bp.ground_truth.outputs})
    if with_outputs:
        out[FaultKind.missing_output] = with_outputs
    first_order = bp.user.intents[0].slots.get("order", "") if intents else ""
    if any(first_order and first_order in json.dumps(c.arguments) for c in calls):
        out[FaultKind.skipped_authentication] = [0]
    violations = [w for w in range(len(writes)) if _violation(bp, domain, w) is not None]
    if violations:
        out[FaultKind.policy_violation] = violations
    return out


def choose_fault(bp: TaskBlueprint, domain: Domain, rng: random.Random,
                 kinds: Sequence[FaultKind]) -> Fault | None:
    """A fault of a kind (among ``kinds``) that this blueprint admits, uniformly; None if none."""
    options = applicable_faults(bp, domain)
    usable = [k for k in kinds if k in options]
    if not usable:
        return None
    kind = rng.choice(usable)
    return Fault(kind=kind, target=rng.choice(options[kind]))


def _state_before_write(bp: TaskBlueprint, domain: Domain, w: int) -> Any:
    env = domain.environment()
    seen = 0
    for call in bp.ground_truth.calls:
        if call.kind == "write":
            if seen == w:
                return env, call
            seen += 1
        env.call(call.name, call.arguments)
    raise ValueError(f"no write {w}")


def _violation(bp: TaskBlueprint, domain: Domain, w: int) -> dict[str, Any] | None:
    """Arguments for write ``w`` that the policy forbids, built from values seen in the state."""
    env, call = _state_before_write(bp, domain, w)
    fresh = domain.environment()
    authenticated = next((str(fresh.call(c.name, c.arguments)) for c in bp.ground_truth.calls
                          if c.name in domain.auth_tools), None)
    args = dict(call.arguments)
    candidates: list[dict[str, Any]] = []
    if "reason" in args:
        candidates.append({**args, "reason": "found it cheaper elsewhere"})
    if "payment_method_id" in args and authenticated:
        customer = env.call("get_customer_details", {"customer_id": authenticated})
        for method in getattr(customer, "payment_methods", ()):
            candidates.append({**args, "payment_method_id": method.id})
        if "order_id" in args:
            for order_id in getattr(customer, "order_ids", ()):
                candidates.append({**args, "order_id": order_id})
    elif "order_id" in args and authenticated:
        customer = env.call("get_customer_details", {"customer_id": authenticated})
        for order_id in getattr(customer, "order_ids", ()):
            candidates.append({**args, "order_id": order_id})
    for candidate in candidates:
        if candidate != args and domain.policy_breaches(env.state, call.name, candidate, authenticated):
            return candidate
    return None


class ScriptedAgent:
    """The oracle (``fault=None``) or the fault injector. One instance per episode."""

    def __init__(self, blueprint: TaskBlueprint, domain: Domain, rng: random.Random,
                 fault: Fault | None = None) -> None:
        self.bp = blueprint
        self.domain = domain
        self.rng = rng
        self.fault = fault
        self.name = f"scripted:{'faulty' if fault else 'oracle'}"
        self.heard: list[str] = []
        self._ids = itertools.count(1)
        self._script: Script | None = None
        self._writes_done = 0
        self._ended = False
        self._repeated = False
        self._tool_texts: list[str] = []
        self._since: dict[int, int] = {}  # intent -> index in ``heard`` where it was stated

    # --- the policy interface ----------------------------------------------------------------

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        last = messages[-1]
        if isinstance(last, UserMessage):
            self.heard.append(last.content.lower())
        elif isinstance(last, ToolMessage):
            self._tool_texts.append(last.content)
        if self._script is None:
            self._script = self._run()
            action = next(self._script)
        else:
            try:
                action = self._script.send(last)
            except StopIteration:
                action = Say(self.rng.choice(ANYTHING_ELSE))
        if isinstance(action, Call):
            call = ToolCall(id=f"call_{next(self._ids):03d}", name=action.name,
                            arguments=json.dumps(action.arguments))
            return AgentReply(AssistantMessage(content=None, tool_calls=(call,)))
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

    def _fault(self, kind: FaultKind, target: int | None = None) -> bool:
        return (self.fault is not None and self.fault.kind is kind
                and (target is None or self.fault.target == target))

    # --- the script --------------------------------------------------------------------------

    def _run(self) -> Script:
        calls = list(self.bp.ground_truth.calls)
        auth = [c for c in calls if c.name in self.domain.auth_tools]
        skip_auth = self._fault(FaultKind.skipped_authentication)
        pending: list[GroundTruthCall] = [c for c in calls if c not in auth]
        prefix = self.rng.choice(GREET)
        if not skip_auth:
            while not self._identity_known():
                yield Say(prefix + self.rng.choice(ASK_IDENTITY))
                prefix = ""
            for call in auth:
                yield Call(call.name, call.arguments)
        yield from self._early_faults(pending)
        for k in range(len(self.bp.user.intents)):
            yield from self._intent(k, pending, skip_auth)
            if self._ended:
                return
        while True:
            yield Say(self.rng.choice(ANYTHING_ELSE))

    def _early_faults(self, pending: list[GroundTruthCall]) -> Script:
        if self._fault(FaultKind.hallucinated_id):
            yield Call("get_order_details", {"order_id": f"#W{self.rng.randint(0, 9_999_999):07d}"})
        if self._fault(FaultKind.unknown_tool):
            yield Call("lookup_account_history", {"query": "recent activity"})
        if self._fault(FaultKind.invalid_arguments):
            target = next((c for c in pending if c.kind == "read" and c.arguments), None)
            if target is not None:
                yield Call(target.name, {f"{k}_value": v for k, v in target.arguments.items()})
            else:
                yield Call("get_order_details", {"order_id": 1234567})

    def _reads(self, k: int, pending: list[GroundTruthCall], skip_auth: bool,
               slots_ok: set[str]) -> Script:
        """Every pending read of intents up to ``k`` whose facts are known, in ground-truth order."""
        progressed = True
        while progressed:
            progressed = False
            for call in list(pending):
                if call.kind != "read" or call.intent > k:
                    continue
                needs = set(call.needs)
                if skip_auth and "identity" in needs:
                    # unauthenticated, the customer is known only once an order has been read
                    if not any(c.name == "get_order_details" and c not in pending
                               for c in self.bp.ground_truth.calls):
                        continue
                    needs.discard("identity")
                if needs <= slots_ok | ({"identity"} if not skip_auth else set()):
                    pending.remove(call)
                    progressed = True
                    yield Call(call.name, call.arguments)
                    if self._fault(FaultKind.repeated_call) and not self._repeated:
                        self._repeated = True
                        yield Call(call.name, call.arguments)

    def _intent(self, k: int, pending: list[GroundTruthCall], skip_auth: bool) -> Script:
        intent = self.bp.user.intents[k]
        self._since[k] = 0 if k == 0 else len(self.heard) - 1
        kind = intent.initial_kind or intent.kind
        redirected = intent.initial_kind is None
        write = next((c for c in pending if c.intent == k and c.kind == "write"), None)
        while True:
            spec: IntentSpec = self.domain.intents[kind]
            said = {s for s in spec.slots if self._current(k, s)} | set(spec.core_slots)
            yield from self._reads(k, pending, skip_auth, said)
            missing = [s for s in spec.slots if s not in said]
            if missing:
                slot: SlotSpec = self.domain.slots[missing[0]]
                yield Say(self.rng.choice(ACK) + self.rng.choice(slot.questions))
                continue
            values = self._values(k, write)
            if write is None:
                yield from self._report(k, spec, values)
                return
            w = self._writes_done
            if self._fault(FaultKind.premature_end, w):
                self._ended = True
                yield End(self.rng.choice(GOODBYE))
                return
            if not self._fault(FaultKind.unconfirmed_write, w):
                action = self.rng.choice(spec.actions).format(**values)
                reply = yield Say(self.rng.choice(CONFIRM).format(action=action))
                if not is_affirmative(getattr(reply, "content", "")):
                    if not redirected:
                        redirected, kind = True, intent.kind
                    continue
            if self._fault(FaultKind.policy_violation, w):
                bad = _violation(self.bp, self.domain, w)
                if bad is not None:
                    result = yield Call(write.name, bad)
                    error = getattr(result, "content", "error")
                    self._fault_done()
                    text = self.rng.choice(APOLOGY).format(error=error.removeprefix("Error: "))
                    action = self.rng.choice(spec.actions).format(**values)
                    reply = yield Say(text + " " + self.rng.choice(CONFIRM).format(action=action))
            arguments = write.arguments
            if self._fault(FaultKind.wrong_argument, w):
                arguments = self._wrong(arguments)
            pending.remove(write)
            self._writes_done += 1
            yield Call(write.name, arguments)
            yield from self._report(k, spec, values)
            return

    def _fault_done(self) -> None:
        self.fault = None

    def _values(self, k: int, write: GroundTruthCall | None) -> dict[str, str]:
        intent = self.bp.user.intents[k]
        values = {s: _you(self._current(k, s) or v) for s, v in intent.slots.items()}
        for slot in ("payment", "reason"):
            if slot not in values and self._current(k, slot):
                values[slot] = _you(self._current(k, slot) or "")
        values.setdefault("reason", "")
        values.setdefault("payment", "")
        order_id = (write.arguments.get("order_id") if write else None) or next(
            (c.arguments.get("order_id") for c in self.bp.ground_truth.calls
             if c.intent == k and "order_id" in c.arguments), "")
        values["order_id"] = str(order_id)
        for out in self.bp.ground_truth.outputs:
            if out.intent == k:
                values[out.key] = out.value
        if "order" in intent.slots and intent.slots["order"].startswith("#"):
            values["order_id"] = intent.slots["order"]
        return values

    def _report(self, k: int, spec: IntentSpec, values: dict[str, str]) -> Script:
        if self._fault(FaultKind.missing_output, k):
            text = self.rng.choice(self.domain.bare_reports)
        else:
            text = self.rng.choice(spec.reports).format(**values)
        yield Say(text + " " + self.rng.choice(ANYTHING_ELSE))

    def _wrong(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """One argument changed to a plausible but wrong value, taken from what tools showed."""
        args = dict(arguments)
        seen = list(dict.fromkeys(_ID.findall(" ".join(self._tool_texts))))
        if "zip" in args:
            args["zip"] = f"{(int(args['zip']) + 7) % 100000:05d}"
        elif "reason" in args:
            other = [r for r in ("no longer needed", "ordered by mistake") if r != args["reason"]]
            args["reason"] = other[0]
        elif "item_ids" in args:
            used = set(args["item_ids"]) | set(args.get("new_item_ids", []))
            others = [i for i in seen if len(i) == 10 and i.isdigit() and i not in used]
            args["item_ids"] = [others[0] if others else args["item_ids"][0][::-1]] + args["item_ids"][1:]
        elif "payment_method_id" in args:
            others = [i for i in seen if "_" in i and i != args["payment_method_id"]]
            args["payment_method_id"] = others[0] if others else args["payment_method_id"] + "0"
        else:
            key = next(k for k in args if k != "order_id")
            args[key] = f"{args[key]}0"
        return args
