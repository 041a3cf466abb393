"""The scripted user: follows the blueprint's disclosure plan in the persona's style.

It states one intent at a time, volunteers what the persona volunteers, answers the agent's
questions from its facts (recognised by each slot's keywords), confirms, revises or redirects
when asked to confirm (as the plan says), and stops when it has nothing more to ask. It gives
up after ``patience`` agent turns in a row that it cannot make sense of. Under dual control it
uses its own tools (on its device) when the agent asks for one the blueprint expects, recognised
by the tool's declared keywords (``Domain.instructions``), then says what it sees.
"""

from __future__ import annotations

import itertools
import json
import random
import string
from collections.abc import Sequence
from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.dialogue import asks_anything_else, is_confirmation_request
from trajforge.environments.tasks import IntentSpec, SlotSpec
from trajforge.schemas.blueprint import Style, TaskBlueprint
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from trajforge.simulation.runner import UserReply
from trajforge.simulation.wording import Wording

GREETINGS = {Style.terse: ("", "Hi. "), Style.polite: ("Hi there! ", "Hello, "),
             Style.chatty: ("Hey, hope your day is going well! ", "Hi! So, "),
             Style.formal: ("Good afternoon. ", "Hello. ")}
LEADS = {Style.terse: ("",), Style.polite: ("", "Of course. "), Style.chatty: ("Oh sure, ", "Right, "),
         Style.formal: ("Certainly. ", "")}
THANKS = {Style.terse: ("",), Style.polite: (" Thank you!", " Thanks."),
          Style.chatty: (" Thanks a bunch!", " You're a lifesaver."), Style.formal: (" Thank you.", "")}
FILLER = ("It's been a hectic week.", "I hope this is quick.", "I've been meaning to sort this out.")
YES = {Style.terse: ("Yes.", "Yep, go ahead.", "Yes, do it."),
       Style.polite: ("Yes, please go ahead.", "Yes please, thank you!", "Yes, that's right, please proceed."),
       Style.chatty: ("Yes, that sounds great, go for it!", "Yep, that's exactly it, go ahead."),
       Style.formal: ("Yes, please proceed.", "Confirmed, please proceed.")}
REVISE = ("Actually, wait: {answer}", "Hmm, actually, I changed my mind. {answer}",
          "Sorry, actually: {answer}")
REDIRECT = ("Actually, I changed my mind. {request}", "Hold on, actually, instead of that: {request}",
            "Wait, on second thought, {request}")
NEXT = ("Yes, actually. {request}", "Actually, there's one more thing. {request}",
        "Yes, one more thing: {request}", "There is. {request}")
BYE = ("No, that's all. Thanks!", "That's everything, bye.", "Nope, all good. Thank you!",
       "No thanks, that covers it.")
LOST = ("Sorry, I'm not sure what you need from me.", "I don't follow, can you help with my request?",
        "Hello? Are you still there?")


class ScriptedUser:
    name = "scripted"

    def __init__(self, blueprint: TaskBlueprint, domain: Domain, rng: random.Random,
                 wording: Wording | None = None) -> None:
        self.bp = blueprint
        self.wording = wording or Wording()
        self.domain = domain
        self.rng = rng
        self.style = blueprint.user.persona.style
        self.current = 0
        self.values: dict[str, str] = {**blueprint.user.hidden_facts, **blueprint.user.known_facts}
        self.pending = {(d.intent, d.action): d for d in blueprint.user.disclosure
                        if d.trigger == "on_confirmation"}
        self.kinds = [i.initial_kind or i.kind for i in blueprint.user.intents]
        self.lost = 0
        # dual control: the user tools the blueprint expects the user to use when asked, in order
        self.expected = [t for t, c in enumerate(blueprint.ground_truth.calls) if c.kind == "user"]
        self._ucalls = itertools.count(1)
        self._made: dict[str, ToolCall] = {}  # the user's calls awaiting their results

    # --- phrasing ----------------------------------------------------------------------------

    def _wrap(self, text: str, *, lead: bool = True) -> str:
        out = (self.rng.choice(LEADS[self.style]) if lead else "") + text
        out += self.rng.choice(THANKS[self.style])
        if self.style is Style.chatty and self.bp.user.persona.verbosity == 3 and self.rng.random() < 0.3:
            out += " " + self.rng.choice(FILLER)
        return out

    def _identity(self) -> str:
        """The first factor set the user has all of (the last one otherwise), in words."""
        identity, facts = self.domain.identity, self.bp.user
        k = next((i for i, group in enumerate(identity.factors)
                  if all(facts.fact(f) for f in group)), len(identity.factors) - 1)
        values = {f: facts.fact(f) or "" for f in identity.factors[k]}
        return self.rng.choice(identity.answers[k]).format(**values)

    def _answer(self, k: int, slot: str) -> str | None:
        value = self.values.get(f"{k}.{slot}")
        if value is None:
            return None
        spec: SlotSpec = self.domain.slots[slot]
        return self.rng.choice(spec.answers).format(value=value)

    def _request(self, k: int, kind: str, *, volunteer: bool) -> str:
        spec: IntentSpec = self.domain.intents[kind]
        slots = {s: self.values.get(f"{k}.{s}", "") for s in spec.core_slots}
        parts = [self.rng.choice(spec.requests).format(**slots)]
        if volunteer:
            known = self.bp.user.known_facts
            for slot in spec.slots:
                if slot not in spec.core_slots and f"{k}.{slot}" in known:
                    parts.append(self._answer(k, slot) or "")
        return " ".join(p for p in parts if p)

    # --- turns -------------------------------------------------------------------------------

    async def respond(self, messages: Sequence[Message]) -> UserReply:
        if messages and isinstance(messages[-1], ToolMessage) and messages[-1].tool_call_id in self._made:
            return UserReply(UserMessage(content=self._seen(messages)))
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        if last is None:
            return UserReply(UserMessage(content=self._opening()))
        text = last.content or ""
        calls = self._instructed(text.lower())
        if calls:
            self.lost = 0
            return UserReply(UserMessage(content="", tool_calls=calls))
        offer = self.wording.offers_more_help(text)
        if not offer and (is_confirmation_request(text) or self.wording.asks_confirmation(text)):
            self.lost = 0
            return UserReply(UserMessage(content=self._confirm()))
        if offer or asks_anything_else(text):
            self.lost = 0
            if self.current + 1 < len(self.kinds):
                self.current += 1
                request = self._request(self.current, self.kinds[self.current], volunteer=True)
                return UserReply(UserMessage(content=self.rng.choice(NEXT).format(request=request)))
            return UserReply(UserMessage(content=self.rng.choice(self.wording.closing or BYE)), stop=True)
        answers = self._answers(text.lower())
        if answers:
            self.lost = 0
            return UserReply(UserMessage(content=self._wrap(" ".join(answers))))
        self.lost += 1
        gave_up = self.lost > self.bp.user.persona.patience
        content = "I'll try again later. Bye." if gave_up else self.rng.choice(LOST)
        return UserReply(UserMessage(content=content), stop=gave_up, gave_up=gave_up)

    # --- dual control: the user's own tools -------------------------------------------------

    def _instructed(self, low: str) -> tuple[ToolCall, ...]:
        """The expected user calls the agent's message asks for (recognised by each user tool's
        declared keywords), as this user's tool calls; the calls of intents not yet stated wait."""
        asked = {name for name, spec in self.domain.instructions.items()
                 if any(kw in low for kw in spec.keywords)}
        calls = []
        for t in list(self.expected):
            call = self.bp.ground_truth.calls[t]
            if call.name in asked and call.intent <= self.current:
                asked.discard(call.name)  # one call per tool per ask
                self.expected.remove(t)
                made = ToolCall(id=f"ucall_{next(self._ucalls):03d}", name=call.name,
                                arguments=json.dumps(call.arguments))
                self._made[made.id] = made
                calls.append(made)
        return tuple(calls)

    def _seen(self, messages: Sequence[Message]) -> str:
        """What the user tells the agent after using their tools: each result in the tool's
        declared replies (over the result's fields)."""
        parts = []
        for message in messages:
            if not isinstance(message, ToolMessage) or message.tool_call_id not in self._made:
                continue
            call = self._made.pop(message.tool_call_id)
            parts.append(self._reply(call.name, message))
        return self._wrap(" ".join(p for p in parts if p))

    def _reply(self, name: str, message: ToolMessage) -> str:
        if message.is_error:
            return "That didn't work on my phone."
        try:
            result: Any = json.loads(message.content)
        except ValueError:
            result = {}
        values = {k: str(v) for k, v in result.items()} if isinstance(result, dict) else {}
        spec = self.domain.instructions.get(name)
        options = tuple(r for r in (spec.replies if spec else ())
                        if all(f in values for _, f, _, _ in string.Formatter().parse(r) if f))
        return self.rng.choice(options).format(**values) if options else "Okay, done."

    def _opening(self) -> str:
        parts = [self.rng.choice(GREETINGS[self.style]) + self._request(0, self.kinds[0], volunteer=True)]
        known = self.bp.user.known_facts
        if any(group[0] in known for group in self.domain.identity.factors):
            parts.append(self._identity())
        return self._wrap(" ".join(parts), lead=False)

    def _answers(self, low: str) -> list[str]:
        out: list[str] = []
        if any(m in low for m in self.domain.identity.keywords):
            out.append(self._identity())
        for key, spec in self.domain.slots.items():
            if any(kw in low for kw in spec.keywords):
                answer = self._answer(self.current, key)
                if answer:
                    out.append(answer)
        return out

    def _confirm(self) -> str:
        k = self.current
        step = self.pending.pop((k, "revise"), None)
        if step is not None and step.fact is not None and step.value is not None:
            self.values[f"{k}.{step.fact}"] = step.value
            answer = self._answer(k, step.fact) or step.value
            return self.rng.choice(REVISE).format(answer=answer)
        step = self.pending.pop((k, "redirect"), None)
        if step is not None and step.value:
            self.kinds[k] = step.value
            intent = self.bp.user.intents[k]
            first: IntentSpec = self.domain.intents[intent.initial_kind or intent.kind]
            final: IntentSpec = self.domain.intents[step.value]
            request = self._request(k, step.value, volunteer=False)
            extra = [self._answer(k, s) for s in final.slots
                     if s not in first.slots and s not in final.core_slots]
            request = " ".join([request] + [e for e in extra if e])
            return self.rng.choice(REDIRECT).format(request=request)
        return self.rng.choice(self.wording.consent or YES[self.style])
