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
import re
import string
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.dialogue import asks_anything_else, is_confirmation_request
from trajforge.environments.tasks import IntentSpec, SlotSpec
from trajforge.generators.behaviours import misstated
from trajforge.schemas.blueprint import Behaviour, Style, TaskBlueprint
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from trajforge.simulation.realise import Part, compose, realise
from trajforge.simulation.runner import UserReply
from trajforge.simulation.wording import Wording
from trajforge.text import closing_question

# One voice per style, kept for the whole dialogue: how the user greets, leads into an answer,
# thanks, consents and says goodbye. ``simulation.realise`` composes the parts, so a lead ending
# in a comma runs on into the sentence after it ("Oh sure, it's the second one").
GREETINGS = {Style.terse: ("", "Hi."), Style.polite: ("Hi there!", "Hello,", "Good morning to you!"),
             Style.chatty: ("Hey, hope your day is going well!", "Hi! So,", "Hiya! Okay, so"),
             Style.formal: ("Good afternoon.", "Hello.", "Good day."),
             Style.non_native: ("Hello, good day.", "Hello, I have a question.", "Hi, please,"),
             Style.frustrated: ("Hi. I've been trying to sort this out for a while.",
                                "Hello. This is my second time asking.", "Hi."),
             Style.elderly: ("Hello, dear.", "Good morning, I hope you can help me.",
                             "Oh, hello. I'm not very good with these things, but"),
             Style.hurried: ("Hi, quick one.", "Hi, I'm in a rush, so", "Hi, real quick:")}
LEADS = {Style.terse: ("",), Style.polite: ("", "Of course.", "Sure, let me see."),
         Style.chatty: ("Oh sure,", "Right,", "Ah, yes,"), Style.formal: ("Certainly.", ""),
         Style.non_native: ("Yes,", "Okay,", ""), Style.frustrated: ("Fine, here you go.", "Look,", "Okay, once more:"),
         Style.elderly: ("Oh, yes,", "Let me see,", "Now then,"), Style.hurried: ("", "Yep, quickly:")}
THANKS = {Style.terse: ("",), Style.polite: ("Thank you!", "Thanks."),
          Style.chatty: ("Thanks a bunch!", "You're a lifesaver."), Style.formal: ("Thank you.", ""),
          Style.non_native: ("Thank you very much.", "Thanks."), Style.frustrated: ("", "Can we hurry this up?"),
          Style.elderly: ("Thank you, dear.", "Take your time."), Style.hurried: ("", "Thanks.")}
FILLER = {Style.chatty: ("It's been a hectic week.", "I hope this is quick.", "I've been meaning to sort this out."),
          Style.elderly: ("My grandson usually helps me with this.", "I don't use the computer much."),
          Style.frustrated: ("This is the second time I've had to call.", "I really hope this gets fixed."),
          Style.non_native: ("Sorry for my English.",)}
# how a detail the user volunteers joins the request before it
CONNECTIVES = ("", "Also,", "And", "Oh, and", "By the way,")
YES = {Style.terse: ("Yes.", "Yep, go ahead.", "Yes, do it."),
       Style.polite: ("Yes, please go ahead.", "Yes please, thank you!", "Yes, that's right, please proceed."),
       Style.chatty: ("Yes, that sounds great, go for it!", "Yep, that's exactly it, go ahead."),
       Style.formal: ("Yes, please proceed.", "Confirmed, please proceed."),
       Style.non_native: ("Yes, please do it now.", "Yes, this is correct. Please proceed."),
       Style.frustrated: ("Yes. Please just get it done.", "Fine, yes, go ahead."),
       Style.elderly: ("Oh yes, please do that, dear.", "Yes, that's right. Go ahead, please."),
       Style.hurried: ("Yes, go ahead, quickly please.", "Yep, do it, thanks.")}
REVISE = ("Actually, wait: {answer}", "Hmm, actually, I changed my mind. {answer}",
          "Sorry, actually: {answer}")
REDIRECT = ("Actually, I changed my mind. {request}", "Hold on, actually, instead of that: {request}",
            "Wait, on second thought, {request}")
NEXT = ("Yes, actually. {request}", "Actually, there's one more thing. {request}",
        "Yes, one more thing: {request}", "There is. {request}")
# closings composed from an opener, what the user says is done, and a sign-off, per style
CLOSING_PARTS: dict[Style, tuple[tuple[str, ...], ...]] = {
    Style.terse: (("No,", "Nope,", "No thanks,"), ("that's all.", "all set.", "nothing else.", "that's it."),
                  ("Done here.", "Thanks, done.", "That'll do.")),
    Style.polite: (("No,", "No, thank you,", "Nothing more,"),
                   ("that's everything I needed.", "that covers it.", "I think that's all for now.",
                    "that was all."), ("Thanks!", "Thank you so much.", "Have a nice day!", "Bye!")),
    Style.chatty: (("Nope,", "Oh, nope,", "Nah,"),
                   ("that's everything, honestly.", "I think you've sorted me out.",
                    "that's all I had on my list.", "that was the last thing."),
                   ("Thanks a bunch!", "You've been awesome!", "Have a lovely day!", "Take care!")),
    Style.formal: (("No, thank you.", "No, that is quite all right."),
                   ("That will be all.", "That is everything I required.", "Nothing further.",
                    "I have no further questions."),
                   ("Good day.", "Thank you for your assistance.", "Goodbye.", "Much obliged.")),
    Style.non_native: (("No,", "No, thank you,"),
                       ("this is all.", "is everything for today.", "I have nothing more.", "that is all I need."),
                       ("Thank you very much.", "Many thanks.", "Bye bye.", "Thank you for help.")),
    Style.frustrated: (("No,", "Nope,"),
                       ("that's all.", "that's everything.", "nothing else."),
                       ("Hope it sticks this time.", "Bye, then.", "Let's hope that's the end of it.",
                        "Took long enough.")),
    Style.elderly: (("Oh, no,", "No, dear,", "No, I don't think so,"),
                    ("that's everything.", "that was all I needed.", "I think that's all for today.",
                     "that's all I called about."),
                    ("Thank you so much, dear.", "You've been very kind.", "Goodbye now.",
                     "Thank you for your patience.")),
    Style.hurried: (("No,", "Nope,", "Nah,"), ("that's it.", "all good.", "that's all.", "all set."),
                    ("Gotta run.", "Thanks, I have to dash.", "Thanks, got to go.", "Off I go.")),
}
CLOSINGS = {style: compose(*parts) for style, parts in CLOSING_PARTS.items()}
BYE = tuple(text for texts in CLOSINGS.values() for text in texts)
# how often the user tells part of their scenario (``UserSpec.scenario``), by verbosity; a terse
# or hurried user tells half as often. The situation goes with its request (before it, mostly),
# the background after the greeting, the constraint at the end of the opening.
TELLS = {1: 0.35, 2: 0.65, 3: 0.9}
QUIET = (Style.terse, Style.hurried)
P_BACKGROUND_TOLD = 0.6
P_CONSTRAINT_TOLD = 0.4
P_SITUATION_FIRST = 0.65
# what the user says acting out a behaviour (``schemas.blueprint.Behaviour``), in any domain
ASK_HUMAN = ("Can I talk to a real person about this?", "Is there a human I could speak to instead?",
             "Honestly, I'd rather deal with a person. Can you put me through to one?",
             "Could I speak to someone from your team instead of a bot?",
             "Before we start: am I talking to a machine? I'd prefer a human.")
QUESTION_BACK = ("Why do you need that?", "What do you need that for?", "Is that really necessary?",
                 "Hm, do you really need that?", "How come you need that?",
                 "Why would you need that for this?")
WITHHOLD = ("I'd rather not give that out.", "I'm not comfortable sharing that.",
            "I don't really want to share that, to be honest.", "I'd prefer to keep that to myself.",
            "No, I'd rather not say.")
OFF_TOPIC = ("By the way, totally unrelated, but is it supposed to rain this afternoon?",
             "Random question: are you people open on public holidays?",
             "Unrelated, but do you happen to know a good place for lunch around here?",
             "Also, silly question, but what time is it where you are?",
             "Oh, and is this chat being recorded, by the way?",
             "Side note: my neighbour says your prices went up. Is that true?")
IMPATIENT = ("How much longer will this take?", "Can we speed this up a bit?", "I don't have all day, please.",
             "Is this going to take long?", "Please be quick, I have somewhere to be.",
             "This is taking longer than I hoped.")
# a wrong detail, corrected in the same breath: over the right ``{value}`` and the ``{wrong}`` one
CORRECTION = ("Sorry, I got that wrong: it's {value}, not {wrong}.", "Wait, no, that's not right. It's {value}.",
              "Oops, typo: I meant {value}.", "Sorry, scratch that: {value}.",
              "Hang on, I misread it. It's {value}.")
# before giving an identity detail again, right this time, after the agent found nothing (wrong_detail)
SORRY_WRONG = ("Sorry, I must have got it wrong.", "Oh, my mistake.", "Sorry about that, let me try again.",
               "Hmm, I may have mistyped it.", "Ah, sorry, wrong one.", "Let me look at that again, sorry.")
# second thoughts when a confirmation names a price: over the ``{price}`` it named
PRICE = ("Hmm, {price} is more than I expected.", "{price}? That's more than I wanted to spend.",
         "Oh, at {price} I'd think twice.", "Wait, {price}? Let me reconsider.")
# the closing of a user whose goal was not (all) met: an intent refused or handed over
UNHAPPY = compose(("I'm not happy with how this went.", "Well, that's disappointing.", "Honestly, that's frustrating.",
                   "This didn't really solve my problem.", "It's not the answer I wanted."),
                  ("That's all, bye.", "Nothing else. Goodbye.", "That's everything, thanks anyway.",
                   "That's all for today.", "No, that's it. Bye."))
_PRICE = re.compile(r"\$\d[\d,]*(?:\.\d+)?")
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
        # facts first described in words that fit several entities: exact once asked which one
        self.clarify = {(d.intent, d.fact or ""): d for d in blueprint.user.disclosure if d.action == "clarify"}
        self._said = ""  # everything this user has said so far, lower case
        self._read = 0  # messages of the conversation already taken into _said
        self.kinds = [i.initial_kind or i.kind for i in blueprint.user.intents]
        self.lost = 0
        # dual control: the user tools the blueprint expects the user to use when asked, in order
        self.expected = [t for t, c in enumerate(blueprint.ground_truth.calls) if c.kind == "user"]
        self._ucalls = itertools.count(1)
        self._made: dict[str, ToolCall] = {}  # the user's calls awaiting their results
        persona = blueprint.user.persona
        self.tells = TELLS[persona.verbosity] * (0.5 if persona.style in QUIET else 1.0)
        self._told: set[int] = set()  # the intents whose situation has been offered
        self._todo = set(blueprint.user.behaviours)
        self._misstate = blueprint.user.misstate
        self.acted: list[Behaviour] = []  # the behaviours acted out so far, in order

    def _act(self, behaviour: Behaviour) -> bool:
        """Whether to act ``behaviour`` out now: labelled and not yet acted (then it is)."""
        if behaviour not in self._todo:
            return False
        self._todo.discard(behaviour)
        self.acted.append(behaviour)
        return True

    # --- phrasing ----------------------------------------------------------------------------

    def _wrap(self, parts: Sequence[Part | str], *, lead: bool = True) -> str:
        """The user's parts in their voice: a lead-in, a thank-you, a chatty aside."""
        out: list[Part | str] = [self.rng.choice(LEADS[self.style])] if lead else []
        out += [*parts, self.rng.choice(THANKS[self.style])]
        filler = FILLER.get(self.style)
        if filler and self.bp.user.persona.verbosity == 3 and self.rng.random() < 0.3:
            out.append(self.rng.choice(filler))
        return realise(out)

    def _identity(self) -> Part:
        """The first factor set the user has all of (the last one otherwise), in words."""
        identity, facts = self.domain.identity, self.bp.user
        k = identity.given(facts.fact)
        return Part(self.rng.choice(identity.answers[k]), {f: facts.fact(f) or "" for f in identity.factors[k]})

    def _as_said(self, part: Part) -> Part:
        """``part`` as the user says it: under ``wrong_detail``, the identity detail the first
        time with the ``misstate`` step's value, the next time right after a word of apology."""
        step = self._misstate
        if step is None or not step.value or step.fact not in part.values:
            return part
        if self._act(Behaviour.wrong_detail):
            return Part(part.template, {**part.values, step.fact or "": step.value})
        self._misstate = None
        return Part(f"{self.rng.choice(SORRY_WRONG)} {part.template}", part.values)

    def _answer(self, k: int, slot: str) -> Part | None:
        step = self.clarify.get((k, slot))
        value = self.values.get(f"{k}.{slot}")
        if step is not None and step.value and value and value.lower() in self._said:
            # asked again after describing it: which one, so the exact value from now on
            del self.clarify[(k, slot)]
            value = self.values[f"{k}.{slot}"] = step.value
        if value is None:
            return None
        spec: SlotSpec = self.domain.slots[slot]
        return Part(self.rng.choice(spec.answers), {"value": value})

    def _volunteered(self, k: int, slot: str) -> Part:
        """A detail given unasked, in a sentence of its own where the slot has one (not a bare
        value, nor a correction, which only read right as an answer to a question)."""
        spec: SlotSpec = self.domain.slots[slot]
        sentences = tuple(a for a in spec.answers if not a.startswith(("{", "I mean"))) or spec.answers
        return Part(self.rng.choice(sentences), {"value": self.values[f"{k}.{slot}"]})

    def _request(self, k: int, kind: str, *, volunteer: bool) -> list[Part | str]:
        """The request, with the details the persona volunteers joined on by connectives."""
        spec: IntentSpec = self.domain.intents[kind]
        slots = {s: self.values.get(f"{k}.{s}", "") for s in spec.core_slots}
        parts: list[Part | str] = [Part(self.rng.choice(spec.requests), slots)]
        why = self._situation(k, kind)
        if why:
            parts.insert(0 if self.rng.random() < P_SITUATION_FIRST else 1, why)
        if volunteer:
            known = self.bp.user.known_facts
            given = [s for s in spec.slots if s not in spec.core_slots and f"{k}.{s}" in known]
            # each connective at most once in a message; the rest of the details stand alone
            joins = self.rng.sample(CONNECTIVES[1:], min(len(given), len(CONNECTIVES) - 1))
            for slot in given:
                join = joins.pop() if joins and self.rng.random() < 0.6 else ""
                parts += [join, self._volunteered(k, slot)]
        return parts

    def _situation(self, k: int, kind: str) -> str:
        """Why the user wants intent ``k`` (its scenario's situation), offered once, with the
        request it was written for (not a redirected one), as often as the persona tells."""
        intent = self.bp.user.intents[k]
        situations = self.bp.user.scenario.situations
        if k in self._told or kind != (intent.initial_kind or intent.kind) or k >= len(situations):
            return ""
        self._told.add(k)
        return situations[k] if self.rng.random() < self.tells else ""

    def _told_maybe(self, text: str, share: float) -> list[Part | str]:
        return [text] if text and self.rng.random() < self.tells * share else []

    # --- turns -------------------------------------------------------------------------------

    async def respond(self, messages: Sequence[Message]) -> UserReply:
        new = [m.content.lower() for m in messages[self._read:] if isinstance(m, UserMessage)]
        self._said, self._read = " ".join([self._said, *new] if self._said else new), len(messages)
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
        # the request as the checks read it (a found line, then a question for a detail, is not one)
        # a bank's frame ("May I {action}?") also fits the domain's own questions for a detail
        # ("May I ask the reason ...?"), which the agent asks in every wording: those are questions
        asked = closing_question(text)
        bank_request = self.wording.asks_confirmation(asked) and asked not in self._slot_questions
        if not offer and (is_confirmation_request(text) or bank_request):
            self.lost = 0
            return UserReply(UserMessage(content=self._confirm(text)))
        if offer or asks_anything_else(text):
            self.lost = 0
            if self.current + 1 < len(self.kinds):
                self.current += 1
                request = self._request(self.current, self.kinds[self.current], volunteer=True)
                return UserReply(UserMessage(content=self._framed(NEXT, "request", request)))
            closings = self.wording.closing or CLOSINGS[self.style]
            if self._act(Behaviour.ends_unhappy):
                closings = UNHAPPY
            return UserReply(UserMessage(content=self.rng.choice(closings)), stop=True)
        answers = self._answers(text.lower())
        if answers:
            self.lost = 0
            return UserReply(UserMessage(content=self._answered(answers)))
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
        return self._wrap([p for p in parts if p])

    def _reply(self, name: str, message: ToolMessage) -> str:
        if message.is_error:
            return "That didn't work on my phone."
        try:
            result: Any = json.loads(message.content)
        except ValueError:
            result = {}
        values = {k: str(v) for k, v in result.items()} if isinstance(result, dict) else {}
        spec = self.domain.instructions.get(name)
        if spec is not None and spec.describe is not None:
            return spec.describe(values, self.rng)
        options = tuple(r for r in (spec.replies if spec else ())
                        if all(f in values for _, f, _, _ in string.Formatter().parse(r) if f))
        return self.rng.choice(options).format(**values) if options else "Okay, done."

    def _opening(self) -> str:
        scenario = self.bp.user.scenario
        parts = [self.rng.choice(GREETINGS[self.style]), *self._told_maybe(scenario.background, P_BACKGROUND_TOLD),
                 *self._request(0, self.kinds[0], volunteer=True)]
        known = self.bp.user.known_facts
        if any(group[0] in known for group in self.domain.identity.factors):
            parts.append(self._as_said(self._identity()))
        parts += self._told_maybe(scenario.constraint, P_CONSTRAINT_TOLD)
        if self._act(Behaviour.asks_human):
            parts.append(self.rng.choice(ASK_HUMAN))
        return self._wrap(parts, lead=False)

    def _framed(self, frames: tuple[str, ...], slot: str, parts: Sequence[Part | str]) -> str:
        """``parts`` said inside one of ``frames`` (templates over ``{slot}``), realised as one text."""
        head, _, tail = self.rng.choice(frames).partition("{" + slot + "}")
        return realise([head, *parts, tail])

    def _answers(self, low: str) -> list[Part]:
        out: list[Part] = []
        if any(m in low for m in self.domain.identity.keywords):
            out.append(self._identity())
        for key, spec in self.domain.slots.items():
            if any(kw in low for kw in spec.keywords):
                answer = self._answer(self.current, key)
                if answer:
                    out.append(answer)
        return out

    def _answered(self, answers: list[Part]) -> str:
        """The answer to the agent's question, with what the user's behaviours add to it (or,
        for the first question asked, instead of it)."""
        if self._act(Behaviour.withholds_detail):
            return self.rng.choice(WITHHOLD)
        if self._act(Behaviour.question_back):
            return self.rng.choice(QUESTION_BACK)
        answers = [self._as_said(part) for part in answers]
        parts: list[Part | str] = list(answers)
        for i, part in enumerate(answers):
            right = next((v for v in part.values.values() if any(c.isdigit() for c in v)), None)
            if right is not None and self._act(Behaviour.corrects_detail):
                wrong = misstated(right, self.rng)
                values = {k: (wrong if v == right else v) for k, v in part.values.items()}
                parts[i:i + 1] = [Part(part.template, values),
                                  Part(self.rng.choice(CORRECTION), {"value": right, "wrong": wrong})]
                break
        asides = [self.rng.choice(bank) for behaviour, bank in ((Behaviour.off_topic, OFF_TOPIC),
                                                               (Behaviour.impatient, IMPATIENT))
                  if self._act(behaviour)]
        return realise([self._wrap(parts), *asides])

    def _second_thoughts(self, text: str) -> list[str]:
        """What the user says first when changing their mind at a confirmation that names a
        price, if the blueprint says they do."""
        price = _PRICE.search(text)
        if price is None or not self._act(Behaviour.price_second_thoughts):
            return []
        return [self.rng.choice(PRICE).format(price=price.group())]

    @cached_property
    def _slot_questions(self) -> frozenset[str]:
        return frozenset(q for spec in self.domain.slots.values() for q in spec.questions)

    def _change_of_mind(self, text: str, frames: tuple[str, ...], slot: str, parts: Sequence[Part | str]) -> str:
        """The reply to the confirmation request ``text`` that changes what was asked for:
        ``parts`` said in one of the scripted ``frames`` ("Actually, make it {answer}."), or, when
        the wording has withdrawn yeses (the evaluation bank's), opened by one of those and said
        bare, after any second thoughts about the price."""
        thoughts = self._second_thoughts(text)
        withdrawn = [self.rng.choice(self.wording.withdrawal)] if self.wording.withdrawal else []
        if withdrawn:
            frames = ("{" + slot + "}",)
        return realise([*thoughts, *withdrawn, self._framed(frames, slot, parts)])

    def _confirm(self, text: str) -> str:
        k = self.current
        step = self.pending.pop((k, "revise"), None)
        if step is not None and step.fact is not None and step.value is not None:
            self.values[f"{k}.{step.fact}"] = step.value
            answer = self._answer(k, step.fact) or Part(step.value)
            return self._change_of_mind(text, REVISE, "answer", [answer])
        step = self.pending.pop((k, "redirect"), None)
        if step is not None and step.value:
            self.kinds[k] = step.value
            intent = self.bp.user.intents[k]
            first: IntentSpec = self.domain.intents[intent.initial_kind or intent.kind]
            final: IntentSpec = self.domain.intents[step.value]
            request = self._request(k, step.value, volunteer=False)
            extra = [self._answer(k, s) for s in final.slots
                     if s not in first.slots and s not in final.core_slots]
            return self._change_of_mind(text, REDIRECT, "request", [*request, *(e for e in extra if e)])
        return self.rng.choice(self.wording.consent or YES[self.style])


