"""Scripted agents: the oracle, and the fault injector that makes exactly one labelled mistake.

The oracle follows the blueprint as its plan (which calls to make, for which intent), but only
as fast as the dialogue allows: it asks for what the user has not said yet, performs a call only
once the facts it depends on have been said, confirms every write in words, and reports after
the call that produced what it reports. What it says comes from what its tools returned in this
episode (``Domain.report_facts`` over its observations), never from the blueprint's outputs. It
is written as a generator that yields actions (say, call, end) and receives what came back (the
user's text or the tool message), so the dialogue logic reads top to bottom. A ground-truth call
of kind ``user`` (dual control: a tool the user performs on their own device) is not the
oracle's to make: it asks the user in the domain's words (``Domain.instructions``) and waits for
what the user says they see; it never sees the user's calls or their results.

The fault injector is the same script with one deviation switched on (``Fault``); which kinds
and forms a blueprint admits, and what each form changes, is ``simulation.faults``.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from trajforge.environments.base import Domain, Observation, ReportFacts, ToolKind
from trajforge.environments.dialogue import is_affirmative
from trajforge.environments.tasks import IntentSpec, SlotSpec
from trajforge.generators.behaviours import misstated_lookups
from trajforge.schemas.blueprint import Behaviour, DisclosureStep, TaskBlueprint
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    agent_view,
)
from trajforge.schemas.trajectory import Fault, FaultKind
from trajforge.simulation.faults import (
    ANNOUNCE,
    DONE_BYE,
    HOLD,
    MONEY,
    PROMISE,
    VAGUE_MONEY,
    VAGUE_TEXT,
    Rehearsal,
    bad_arguments,
    call_variants,
    error_rule,
    example_read,
    fields_of,
    id_params,
    kind_forms,
    misstatements,
    mutate_id,
    rehearse,
    render,
    second_person,
    siblings,
    transfer_arguments,
    wrong_tool_name,
)
from trajforge.simulation.realise import compose, realise
from trajforge.simulation.runner import AgentReply
from trajforge.simulation.wording import Wording
from trajforge.text import sentences

GREET = ("Hi! ", "Hello, ", "Thanks for reaching out. ", "Happy to help. ", "")
# a confirmation request composed from parts: what the agent has (optional), what it will do
# (an ``{action}``: a bare infinitive clause), and the question that asks permission
CONFIRM_OPENERS = ("", "Okay.", "Alright.", "Thanks, I have everything I need.", "Great.")
CONFIRM_STATEMENTS = ("I can {action}.", "To confirm: I'll {action}.", "Just to be sure, you'd like me to {action}.",
                      "Here's the plan: {action}.", "I'm going to {action}.", "What I can do is {action}.")
CONFIRM_QUESTIONS = ("Shall I go ahead?", "Do you want me to proceed?", "Should I proceed?",
                     "Is it okay to proceed?", "Shall I proceed with that?", "Shall I go ahead and do that?",
                     "May I go ahead?", "Should I do that for you?",
                     "Okay to go ahead?")
CONFIRM = compose(CONFIRM_OPENERS, CONFIRM_STATEMENTS, CONFIRM_QUESTIONS)
CONFIRM_AFTER_FOUND = compose(CONFIRM_STATEMENTS, CONFIRM_QUESTIONS)  # what it found is the opener
ANYTHING_ELSE = ("Is there anything else I can help you with?", "Anything else I can do for you today?",
                 "Can I help with anything else?", "Is there anything else you need?")
APOLOGY = ("Sorry, I can't do that: {rule}", "My apologies, that is not allowed. Our policy: {rule}",
           "That didn't go through, because {rule_lower}")
# an identity lookup with what the user said found nothing (wrong_detail); the question follows
NOT_FOUND = ("I couldn't find an account with those details.", "Hmm, nothing comes up for that.",
             "I'm not finding a match for what you gave me.", "That doesn't match anything on our side.",
             "I wasn't able to find you with that.", "The lookup came back empty, I'm afraid.")
GOODBYE = ("I think that covers it. Have a nice day!", "Alright, we're all done here. Goodbye!")
ACK = ("Thanks. ", "Got it. ", "Thank you. ", "Okay. ", "")
# what the agent says first, before going on, to a user's behaviour (``schemas.blueprint.Behaviour``)
ON_BEHAVIOUR: dict[Behaviour, tuple[str, ...]] = {
    Behaviour.asks_human: compose(("I understand.", "", "Of course, I hear you."),
                                  ("I can take care of this for you right here, though.",
                                   "I can sort this out for you myself, and it shouldn't take long.",
                                   "This is something I can handle directly, so there's no need to wait for someone.")),
    Behaviour.question_back: compose(("Fair question.", "Good question.", "Sure."),
                                     ("I need it to make sure I'm working on the right account and record.",
                                      "Without it I can't find the right record or make any change.",
                                      "It's how I make sure I act on exactly what you asked for.")),
    Behaviour.withholds_detail: compose(("I understand.", "That's understandable.", "I understand your concern."),
                                        ("I only use it for this request, but I can't go on without it.",
                                         "Without it I can't find the right record or make any change.",
                                         "I do need it to make sure I'm working on the right account.")),
    Behaviour.off_topic: ("I'm afraid I can't help with that one here.", "That's outside what I can help with, sorry.",
                          "I'm not able to answer that, unfortunately.", "I can't speak to that, I'm afraid."),
    Behaviour.impatient: ("Sorry for the wait; we're nearly done.",
                          "Thanks for your patience, this won't take much longer.", "I'll be as quick as I can.",
                          "Sorry this is taking a while. Almost there."),
}
# the fault injector's own wording
@dataclass(frozen=True)
class Say:
    text: str
    asks: bool = False  # asks the user for a fact (identity or a slot)


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


# --- the agent -----------------------------------------------------------------------------------

class ScriptedAgent:
    """The oracle (``fault=None``) or the fault injector. One instance per episode."""

    def __init__(self, blueprint: TaskBlueprint, domain: Domain, rng: random.Random,
                 fault: Fault | None = None, wording: Wording | None = None, plain: bool = False) -> None:
        self.bp = blueprint
        self.domain = domain
        self.rng = rng
        # plain phrasing (``simulation.agent_phrasing``): the first phrasing of every bank
        self._words: random.Random | None = None if plain else rng
        self.fault = fault
        self.wording = wording or Wording()
        self._confirm = self.wording.confirm or CONFIRM
        self._anything_else = self.wording.anything_else or ANYTHING_ELSE
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
        self._expected = set(blueprint.user.behaviours)  # the user's behaviours not yet answered
        self._asked = False  # the last message asked the user for a fact
        self._aside = ""  # what to say first in the next message (``ON_BEHAVIOUR``)
        self._taking = ""  # the request taken up (``IntentSpec.takes``), said in the next message
        self._progressed: set[int] = set()  # intents whose work has been announced (``progress``)
        self._told: set[tuple[int, str, tuple[str, ...]]] = set()  # found lines said (``_found``)
        # intent -> its clarify step: the user's words fit several entities; ask which one
        self._clarify = {d.intent: d for d in blueprint.user.disclosure if d.action == "clarify"}
        # the identity detail the user will first give wrong (wrong_detail), until it is looked up
        self._misstate = blueprint.user.misstate

    def _pick(self, bank: Sequence[str]) -> str:
        """One phrasing of ``bank``: drawn, or with plain phrasing always the first."""
        return self._words.choice(bank) if self._words is not None else bank[0]

    def _pick_form(self, fault: Fault | None) -> str | None:
        if fault is None:
            return None
        if fault.form is not None:
            return fault.form
        forms = kind_forms(self.bp, self.domain, fault.kind).get(fault.target, [])
        return forms[0] if forms else None

    # --- the policy interface ----------------------------------------------------------------

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        # the user's own tool calls and their results (dual control) are not the agent's to see
        last = agent_view(messages)[-1]
        if isinstance(last, UserMessage):
            self.heard.append(last.content.lower())
            self._texts.append(last.content)
            self._aside = realise([self._aside, *(self._pick(ON_BEHAVIOUR[b])
                                                  for b in self._behaviours_in_reply())])
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
                action = Say(self._pick(self._anything_else))
        self._asked = isinstance(action, Say) and action.asks
        if isinstance(action, Call):
            # an answer to the user's behaviour waits for the next words: some chat templates
            # (Llama 3.1's) drop the text of a message that makes a call
            call = ToolCall(id=f"call_{next(self._ids):03d}", name=action.name,
                            arguments=action.raw if action.raw is not None else json.dumps(action.arguments))
            self._sent[call.id] = call
            # the request is taken up in words said with a read; a write is confirmed (or, faulty,
            # not) in words of its own, and an end says goodbye: neither takes anything up. While
            # an answer to the user's behaviour waits, a read is made without words (what it is
            # for is not said), so that answer comes first, in a message without a call
            tool = self.domain.tools.get(call.name)
            text = action.text
            if tool is not None and tool.kind is ToolKind.write:
                self._taking = ""
            elif self._aside:
                text = None
            elif self._taking:
                text, self._taking = realise([self._taking, action.text or ""]), ""
            return AgentReply(AssistantMessage(content=text, tool_calls=(call,)))
        taking = "" if isinstance(action, End) else self._taking
        text = realise([self._aside, taking, action.text]) if self._aside or taking else action.text
        self._aside = self._taking = ""
        return AgentReply(AssistantMessage(content=text), end=isinstance(action, End))

    def _behaviours_in_reply(self) -> list[Behaviour]:
        """The user's behaviours the message just heard acts out, by the blueprint's plan (the
        turn ``Behaviour`` names for each): asking for a person in the opening; on the first
        question, a question back or a refusal; with the first answer, an aside or impatience."""
        turns: tuple[Behaviour, ...] = ()
        if len(self.heard) == 1:
            turns = (Behaviour.asks_human,)
        elif self._asked:
            first = [b for b in (Behaviour.question_back, Behaviour.withholds_detail) if b in self._expected]
            turns = tuple(first) or (Behaviour.off_topic, Behaviour.impatient)
        found = [b for b in turns if b in self._expected]
        self._expected.difference_update(found)
        return found

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
        facts = [self.bp.user.fact(k) for k in self.domain.identity.facts]
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
        for slot in self.domain.slots:  # a fact given for this intent beyond its own slots
            if slot not in slots and self._current(k, slot):
                slots[slot] = self._current(k, slot) or ""
        return slots

    def _facts(self, kind: str, slots: dict[str, str],
               observed: Sequence[Observation] | None = None) -> ReportFacts:
        """``Domain.report_facts``, with what the user said put in the second person."""
        seen = tuple(self.observed if observed is None else observed)
        facts = self.domain.report_facts(kind, slots, seen)
        said = set(slots.values())
        values = {k: (second_person(v) if v in said else v) for k, v in facts.values.items()}
        return ReportFacts(values, facts.entity, facts.must_say)

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
            yield Call(wrong_tool_name(self.domain, call.name, self.form or "", self.rng) or call.name + "_v2",
                       call.arguments)
        if self._is(FaultKind.invalid_arguments, t):
            self._spent = True
            made = bad_arguments(self.domain, call, self.form or "")
            if made is not None:
                yield Call(call.name, made[0], raw=made[1])
        if self._is(FaultKind.hallucinated_id, t, "read_near_miss", "misheard_user_id"):
            scalar, _ = id_params(self.domain, call.arguments)
            keys = [k for k in scalar if self.form != "misheard_user_id" or self._has(call.arguments[k])]
            for key in keys:
                bad = mutate_id(call.arguments[key], self.rng, self._texts,
                              transpose=self.form == "misheard_user_id")
                if bad is not None:
                    self._spent = True
                    yield Call(call.name, {**call.arguments, key: bad})
                    break
        if self._is(FaultKind.hallucinated_id, t, "read_from_example"):
            example = example_read(self.domain, self.rng, self._texts)
            if example is not None:
                self._spent = True
                yield Call(example[0], example[1])
        if self._is(FaultKind.hallucinated_id, t, "write_near_miss", "write_list_element"):
            scalar, lists = id_params(self.domain, call.arguments)
            account = set(self.domain.tools[call.name].account_params)
            keys = [k for k in scalar if k in account] if self.form == "write_near_miss" else lists
            for key in keys:
                value = call.arguments[key]
                bad = mutate_id(value if isinstance(value, str) else value[0], self.rng, self._texts)
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
            else:
                yield Call(call.name, args, raw=self._repeat_raw(args))
        elif self._repeat_after is not None and self._repeat_after != t:
            earlier = self.bp.ground_truth.calls[self._repeat_after]
            self._repeat_after = None
            yield Call(earlier.name, earlier.arguments)

    def _repeat_raw(self, args: dict[str, Any]) -> str:
        """A repeated call's arguments, written as the repeated_call fault's form says."""
        if self.form == "keys_reordered":
            return json.dumps(dict(reversed(list(args.items()))))
        if self.form == "compact_json":
            return json.dumps(args, separators=(",", ":"))
        if self.form == "spacing_changed":
            return json.dumps(args, indent=1)
        return json.dumps(args)

    def _authenticate(self, prefix: str, *, verify: bool = True) -> Script:
        while not self._identity_known():
            # the greeting, then what answers the user's opening, then the question
            found_nothing = ""
            if verify and self._misstate is not None and self._has(self._misstate.value or ""):
                yield from self._wrong_lookup(self._misstate)
                found_nothing = self._pick(NOT_FOUND)
            aside, taking, self._aside, self._taking = self._aside, self._taking, "", ""
            yield Say(realise([prefix, aside, taking, found_nothing, self._pick(self.domain.identity.asks)]),
                      asks=True)
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
        prefix = self._pick(GREET)
        self._take(0)
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
            yield Say(self._pick(self._anything_else))

    def _kind_asked(self, k: int) -> str:
        """The kind intent ``k`` is first asked as (before a redirect, if any)."""
        intent = self.bp.user.intents[k]
        return intent.initial_kind or intent.kind

    def _take(self, k: int) -> None:
        """Intent ``k`` is taken up as the kind the user asked for: said in the next message."""
        takes = self.domain.intents[self._kind_asked(k)].takes
        self._taking = self._pick(takes) if takes else ""

    def _progress(self, t: int) -> str | None:
        """What to say with read ``t``: the work its intent is for, with the intent's first read
        (``IntentSpec.progress``), the account read included, so the act that follows a read
        always has the request restated just before it."""
        call = self.bp.ground_truth.calls[t]
        if call.intent in self._progressed:
            return None
        self._progressed.add(call.intent)
        progress = self.domain.intents[self._kind_asked(call.intent)].progress
        return self._pick(progress) if progress else None

    def _wrong_lookup(self, step: DisclosureStep) -> Script:
        """The identity lookup with the detail as the user said it (``wrong_detail``): it finds
        nothing (the generator checked that on the initial state), and the agent asks again."""
        self._misstate = None
        right, wrong = self.bp.user.fact(step.fact or "") or "", step.value or ""
        for call, arguments in misstated_lookups(self.domain, self.bp.ground_truth.calls, right, wrong)[:1]:
            yield Call(call.name, arguments)

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

    def _resolving(self, k: int, slot: str) -> str | None:
        """The tool of intent ``k``'s first ground-truth read that needs ``slot`` (the read that
        resolves it: run on every candidate when the user's words fit several)."""
        return next((c.name for c in self.bp.ground_truth.calls
                     if c.intent == k and c.kind == "read" and slot in c.needs), None)

    def _reads(self, k: int, slots_ok: set[str], hold: tuple[str, str | None] | None = None) -> Script:
        """Every pending read of intents up to ``k`` whose facts are known, in ground-truth order.
        ``hold`` (slot, tool): intent ``k``'s reads that need the slot wait, except the tool's."""
        calls = self.bp.ground_truth.calls
        progressed = True
        while progressed:
            progressed = False
            for t in list(self._pending):
                call = calls[t]
                if call.kind == "user" and call.intent <= k and self._next_in_line(t):
                    progressed = True
                    yield from self._instruct(t)
                    continue
                if call.kind != "read" or call.intent > k or call.name in self.domain.auth_tools:
                    continue
                if hold is not None and call.intent == k and hold[0] in call.needs and call.name != hold[1]:
                    continue  # it needs the one entity meant, not yet known
                if any(p < t and calls[p].kind == "user" for p in self._pending):
                    continue  # what the user is to do first comes first
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
                    yield from self._call(t, text=self._progress(t))
                    if self._auth_later and self.form == "read_before_auth":
                        yield from self._late_auth()

    def _next_in_line(self, t: int) -> bool:
        """Whether every call the ground truth makes before ``t`` (a user call) has been made:
        the user is asked to act once the agent has done what comes first."""
        return all(p >= t or self.bp.ground_truth.calls[p].name in self.domain.auth_tools
                   for p in self._pending)

    def _instruct(self, t: int) -> Script:
        """Ground-truth user call ``t``: ask the user to use the tool on their device (in the
        domain's words for it) and wait for what they say they see."""
        call = self.bp.ground_truth.calls[t]
        self._pending.remove(t)
        if self._is(FaultKind.unknown_tool, t):  # the agent makes the user's call itself
            self._spent = True
            yield Call(call.name, call.arguments)
        spec = self.domain.instructions.get(call.name)
        args = {k: str(v) for k, v in call.arguments.items()}
        text = (render(spec.asks, args, self._words) if spec else None) or \
            f"Could you please use {call.name.replace('_', ' ')} on your device?"
        yield Say(text)

    def _followups(self, k: int) -> Script:
        """The user calls of intent ``k`` that come after its write, once it is made."""
        calls = self.bp.ground_truth.calls
        for t in list(self._pending):
            if calls[t].kind == "user" and calls[t].intent == k and self._next_in_line(t):
                yield from self._instruct(t)

    def _intent(self, k: int) -> Script:
        intent = self.bp.user.intents[k]
        calls = self.bp.ground_truth.calls
        self._since[k] = 0 if k == 0 else len(self.heard) - 1
        if k > 0:
            self._take(k)
        kind = self._kind_asked(k)
        redirected = intent.initial_kind is None
        write = next((t for t in self._pending if calls[t].intent == k and calls[t].kind == "write"), None)
        w = self._writes_done
        if k > 0 and self._auth_later and self.form == "late_after_write":
            yield from self._late_auth()
        unasked = False  # the fault after_change_of_mind is under way
        if write is not None and self._is(FaultKind.premature_end, w, "before_slots"):
            self._spent = self._ended = True
            yield End(self._pick(GOODBYE))
            return
        while True:
            spec: IntentSpec = self.domain.intents[kind]
            said = {s for s in spec.slots if self._current(k, s)} | set(spec.core_slots)
            step = self._clarify.get(k)
            described = self.bp.user.fact(f"{k}.{step.fact}") if step is not None and step.fact else None
            if step is not None and step.fact and described and self._current(k, step.fact) == described:
                # the words fit several: read the candidates (the intent's first read of the slot's
                # tool, on each), nothing that only the one meant needs, then ask which one
                yield from self._reads(k, said, hold=(step.fact, self._resolving(k, step.fact)))
                yield Say(self._clarifying(step.fact, described), asks=True)
                continue
            yield from self._reads(k, said)
            missing = [s for s in spec.slots if s not in said]
            if missing:
                slot: SlotSpec = self.domain.slots[missing[0]]
                ack = "" if self._aside or self._taking else self._pick(ACK)
                # what the tools showed of the target so far, from what the user has said only
                found = self._found(k, kind, spec, {s: v for s, v in self._slots(k).items() if s in said},
                                    named=True)
                yield Say(realise([ack, found, self._pick(slot.questions)]), asks=True)
                continue
            slots = self._slots(k)
            if write is None:
                yield from self._report(k, kind, spec, slots, -1)
                return
            if self._is(FaultKind.premature_end, w, "goodbye_before_write"):
                self._spent = self._ended = True
                yield End(self._pick(GOODBYE))
                return
            if self._is(FaultKind.premature_end, w, "transfer"):
                self._spent = self._ended = True
                yield Call(self.domain.transfer_tool or "", transfer_arguments(self.domain) or {})
                return
            action = self._action(kind, spec, slots)
            if unasked:
                self._spent = True
                text = None
            elif self._is(FaultKind.unconfirmed_write, w) and self.form != "after_change_of_mind":
                self._spent = True
                text = yield from self._unconfirmed(k, kind, spec, slots, action)
            else:
                text = None
                reply = yield Say(self._confirmation(self._found(k, kind, spec, slots), action))
                answer = getattr(reply, "content", "") or ""
                if self.wording.withdraws(answer) or not (is_affirmative(answer) or self.wording.consents(answer)):
                    # the fault after_change_of_mind: the changed wish is read up and written
                    # like the first, but never asked about
                    unasked = self._is(FaultKind.unconfirmed_write, w, "after_change_of_mind")
                    if not redirected:
                        redirected, kind = True, intent.kind
                    continue
            if self._is(FaultKind.premature_end, w, "after_confirmation", "promise_then_end"):
                self._spent = self._ended = True
                bank = DONE_BYE if self.form == "after_confirmation" else PROMISE
                yield End(self._pick(bank).format(action=action))
                return
            yield from self._write(k, w, write, kind, spec, slots, text)
            return

    def _clarifying(self, slot: str, words: str) -> str:
        """Which one: the user's ``words`` for ``slot`` fit several entities; the ones the tools
        showed are named (``Domain.candidates``) in the domain's words (``SlotSpec.clarify``)."""
        shown = self.domain.candidates(slot, words, tuple(self.observed))
        spec: SlotSpec = self.domain.slots[slot]
        ack = "" if self._aside or self._taking else self._pick(ACK)
        if spec.clarify and len(shown) > 1:
            names = ", ".join(shown[:-1]) + f" and {shown[-1]}"
            return realise([ack, self._pick(spec.clarify).format(candidates=names)])
        return realise([ack, "More than one could be the one you mean.", self._pick(spec.questions)])

    def _action(self, kind: str, spec: IntentSpec, slots: dict[str, str],
                facts: dict[str, str] | None = None, *, fullest: bool = True) -> str:
        """What the write will do, in words: the user's wishes over what the tools showed, in
        one of the templates that say the most of what is known (a domain may declare an action
        with what it will cost or refund beside one without, for when the tools have not shown it),
        or with ``fullest=False`` the least (an action about another target than the tools'
        facts are about)."""
        values = {**(facts if facts is not None else self._facts(kind, slots).values),
                  **{s: second_person(v) for s, v in slots.items()}}
        for slot in spec.slots:  # a slot the user left out (an optional reason) reads as nothing
            values.setdefault(slot, "")
        known = [t for t in spec.actions if fields_of(t) <= values.keys()]
        pick = max if fullest else min
        size = pick((len(fields_of(t)) for t in known), default=0)
        return render([t for t in known if len(fields_of(t)) == size], values, self._words) \
            or spec.actions[0].format_map({k: values.get(k, "") for k in fields_of(spec.actions[0])})

    def _found(self, k: int, kind: str, spec: IntentSpec, slots: dict[str, str], named: bool = False) -> str:
        """What the tools showed about the write's target (``IntentSpec.found``), said the first
        time the agent speaks after seeing it: before its question for a missing detail, else
        before the confirmation. Empty when the domain declares nothing, a value is unknown, or
        it was said already for this intent, kind and target (a careful agent says what it
        found once, then acts on it). With ``named``, only a line that names its target (a
        value of ``ReportFacts.entity``): before a question nothing else in the message says
        what "your profile's address" belongs to, where a confirmation's action line does."""
        if not spec.found:
            return ""
        facts = self._facts(kind, slots)
        # a value the tools showed wins over the user's words under the same name: what is found
        # is the profile's address now, not the new one the user asked for
        values = {**{s: second_person(v) for s, v in slots.items()}, **facts.values}
        text = render(spec.found, values, self._words) or ""
        told = (k, kind, tuple(values.get(e, "") for e in facts.entity))
        if not text or told in self._told or (named and not any(v and v in text for v in told[2])):
            return ""
        self._told.add(told)
        return text

    def _confirmation(self, found: str, action: str) -> str:
        """The confirmation request of ``action``, after what the agent ``found`` if anything
        (then without an opener of its own, unless the wording is not the agent's own)."""
        bank = CONFIRM_AFTER_FOUND if found and self._confirm is CONFIRM else self._confirm
        return f"{found} {self._pick(bank).format(action=action)}".lstrip()

    def _unconfirmed(self, k: int, kind: str, spec: IntentSpec, slots: dict[str, str],
                     action: str) -> Generator[Action, Message, str | None]:
        """The unconfirmed write's lead-in; returns words to say with the write itself."""
        if self.form == "announced":
            return self._pick(ANNOUNCE).format(action=action)
        if self.form == "write_before_answer":
            return self._pick(self._confirm).format(action=action)
        if self.form == "other_question":
            intent = self.bp.user.intents[k]
            slot = next(s for s in spec.slots if s in self.domain.slots
                        and (intent.slots.get(s) or self.bp.user.fact(f"{k}.{s}")))
            yield Say(self._pick(self.domain.slots[slot].questions))
        elif self.form == "different_target":
            facts = self._facts(kind, slots)
            values = dict(facts.values)
            others = siblings(values[facts.entity[0]], self.observed) if facts.entity else []
            if others:
                values[facts.entity[0]] = others[0]
            wrong = self._action(kind, spec, slots, values, fullest=False)
            # nothing found said, and the plainest action (no amount the right target's facts
            # give): a true sentence about the right target would name it, and one about the
            # other target would be a second mistake (a false claim)
            yield Say(self._confirmation("", wrong))
        return None

    def _write(self, k: int, w: int, t: int, kind: str, spec: IntentSpec, slots: dict[str, str],
               text: str | None) -> Script:
        call = self.bp.ground_truth.calls[t]
        if self._is(FaultKind.policy_violation, w):
            self._spent = True
            rehearsal = self._rehearsal(t)
            bad = call_variants(self.domain, rehearsal, call, self.form or "", self.rng, want="refused")
            if bad:
                result = yield Call(call.name, bad[0], text=text)
                text = None
                error = getattr(result, "content", "")
                rule = error_rule(self.domain, error) or "that is not something I can do."
                apology = self._pick(APOLOGY).format(rule=rule, rule_lower=rule[:1].lower() + rule[1:])
                reply = yield Say(apology + " " + self._pick(self._confirm).format(
                    action=self._action(kind, spec, slots)))
                del reply  # the user's answer to the re-confirmation: the oracle's write follows
        arguments = call.arguments
        if self._is(FaultKind.wrong_argument, w):
            self._spent = True
            wrong = call_variants(self.domain, self._rehearsal(t), call, self.form or "", self.rng, want="ok")
            if wrong:
                arguments = wrong[0]
        self._pending.remove(t)
        self._writes_done += 1
        yield from self._call(t, arguments, text)
        at = len(self.observed) - 1
        yield from self._followups(k)
        yield from self._report(k, kind, spec, slots, at)

    def _rehearsal(self, t: int) -> Rehearsal:
        return rehearse(self.bp, self.domain, t)

    def _report(self, k: int, kind: str, spec: IntentSpec, slots: dict[str, str], write_at: int) -> Script:
        facts = self._facts(kind, slots)
        values = {**{s: second_person(v) for s, v in slots.items()}, **facts.values}
        for slot in spec.slots:
            values.setdefault(slot, "")
        anything = self._pick(self._anything_else)
        text = render(spec.reports, values, self._words) or self._pick(self.domain.bare_reports)
        if self._is(FaultKind.missing_output, k):
            self._spent = True
            outputs = [o.key for o in self.bp.ground_truth.outputs if o.intent == k]
            if self.form == "no_report":
                yield Say(anything)
                return
            if self.form == "delayed":
                yield Say(self._pick(HOLD))
            elif self.form in ("vague_value", "rounded"):
                for key in outputs:
                    value = values.get(key, "")
                    if not value:
                        continue
                    if self.form == "rounded" and MONEY.match(value):
                        text = text.replace("$" + value, f"about ${round(float(value))}")
                    elif self.form == "vague_value":
                        text = text.replace("$" + value, VAGUE_MONEY).replace(value, VAGUE_TEXT)
            else:
                text = self._pick(self.domain.bare_reports)
        elif self._is(FaultKind.misstatement, k):
            self._spent = True
            text = self._misstated(kind, spec, slots, values, facts.entity, write_at) or text
        yield Say(realise([text, anything]))

    def _misstated(self, kind: str, spec: IntentSpec, slots: dict[str, str], values: dict[str, str],
                   entity: tuple[str, ...], write_at: int) -> str | None:
        found = misstatements(self.domain, kind, spec, slots, self.observed, write_at)
        if self.form not in found:
            return None
        key, wrong = found[self.form]
        if self.form == "omitted_unavailability":
            for _ in range(10):
                text = render(spec.reports, values, self._words, need=key) or ""
                parts = sentences(text)
                kept = [s for s in parts if values[key] not in s]
                if kept and len(kept) < len(parts):
                    return " ".join(kept)
            return None
        value_keys = [k for k in values if k not in slots and k not in entity]
        return render(spec.reports, {**values, key: second_person(wrong)}, self.rng, need=key,
                       any_of=value_keys if self.form == "wrong_entity_named" else ())
