"""Scenarios with reasons: what a blueprint's user brings with them, drawn from the domain's
:class:`~trajforge.environments.tasks.ScenarioSpec`, and the goal text composed from it.

A scenario is a background (who the user is, what is going on in their life), per intent why
they want it (a :class:`~trajforge.environments.tasks.Situation` that fits the intent's slots),
a constraint or preference that leaves the ground truth as it is, and per writing intent (or a
refused one: the user asked for a write) what they would accept if it cannot be done. The domain
writes every entry in the user's own words (first person), so the scripted user can say them;
the goal text puts them in the second person (``second_person``), in a varied order and frame,
before the requests. Nothing here knows a domain: an entry's placeholders are the intent's core
slots.

Not every part is drawn every time (a goal with everything in it reads like a form): the
background in 85% of goals, a situation per intent in 90%, a constraint in 60%, a fallback per
writing or refused intent in 35%. The shares are here, once.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection

from trajforge.environments.base import Domain
from trajforge.environments.tasks import DraftIntent, DraftTask, IntentSpec, ScenarioSpec
from trajforge.schemas.blueprint import Scenario

P_BACKGROUND = 0.85
P_SITUATION = 0.9
P_CONSTRAINT = 0.6
P_FALLBACK = 0.35

# first person -> second person, longest first; "I was" before "I"
_PRONOUNS = (("I am", "you are"), ("I was", "you were"), ("am I", "are you"), ("was I", "were you"),
             ("I'm", "you're"), ("I've", "you've"), ("I'd", "you'd"), ("I'll", "you'll"),
             ("myself", "yourself"), ("mine", "yours"), ("my", "your"), ("me", "you"), ("I", "you"))
_PRONOUN = re.compile(r"\b(" + "|".join(re.escape(a) for a, _ in _PRONOUNS) + r")\b(?!')", re.I)
_SECOND = {a.lower(): b for a, b in _PRONOUNS}


def second_person(text: str) -> str:
    """``text`` (the user's words, first person) as the goal says it to the user: "I", "my",
    "me" become "you", "your", "you", with a capital where a sentence starts."""

    def swap(m: re.Match[str]) -> str:
        out = _SECOND[m.group(0).lower()]
        start = m.start() == 0 or re.search(r"[.!?]\s+$", text[:m.start()]) is not None
        return out[0].upper() + out[1:] if start else out

    return _PRONOUN.sub(swap, text)


def _slots(intent: DraftIntent) -> dict[str, str]:
    """The values a situation of the intent's first kind is filled with, and matched on."""
    return {**intent.slots, **intent.initial_slots} if intent.initial_kind else dict(intent.slots)


def sample_scenario(scenario: ScenarioSpec, domain: Domain, draft: DraftTask, rng: random.Random,
                    hidden: Collection[str] = ()) -> Scenario:
    """One scenario for ``draft``: each part drawn as the module docstring says. ``hidden``: the
    fact keys (``"<intent>.<slot>"``) the user holds back until asked; a situation that fits on a
    slot's value (``Situation.when``) says that value, so it is drawn only when the user does not
    hold the fact back (the agent would otherwise hear it before it asks)."""
    situations: list[str] = []
    fallbacks: list[str] = []
    used: set[str] = set()
    for k, intent in enumerate(draft.intents):
        kind = intent.initial_kind or intent.kind
        spec: IntentSpec = domain.intents[kind]
        values = _slots(intent)
        fitting = [s for s in scenario.situations.get(kind, ()) if s.fits(values) and s.text not in used
                   and not any(f"{k}.{slot}" in hidden for slot, _ in s.when)]
        core = {s: values.get(s, "") for s in spec.core_slots}
        situation = rng.choice(fitting).text if fitting and rng.random() < P_SITUATION else ""
        situations.append(situation.format_map(core))
        final_spec: IntentSpec = domain.intents[intent.kind]
        options = [t for t in scenario.fallbacks.get(intent.kind, ()) if t not in used]
        final = {s: intent.slots.get(s, "") for s in final_spec.core_slots}
        asks_write = final_spec.writes or final_spec.outcome == "refused"  # a refusal: a write asked for
        fallback = rng.choice(options) if options and asks_write and rng.random() < P_FALLBACK else ""
        fallbacks.append(fallback.format_map(final))
        used.update((situation, fallback))  # two intents of one kind never tell the same entry
    background = rng.choice(scenario.backgrounds) if scenario.backgrounds and rng.random() < P_BACKGROUND else ""
    constraint = rng.choice(scenario.constraints) if scenario.constraints and rng.random() < P_CONSTRAINT else ""
    return Scenario(background=background, situations=tuple(situations), constraint=constraint,
                    fallbacks=tuple(fallbacks))


# how the narrative leads into the list of requests
REQUEST_OPENERS = ("You want:", "Your requests:", "What you need:", "You are hoping to:", "Your goal:",
                   "What you will ask for:", "So you are getting in touch to ask:")
# how a second intent's situation joins the story
ALSO = ("Also,", "On top of that,", "Separately,", "Besides that,", "And", "There is something else too:")


def goal_text(domain: Domain, draft: DraftTask, scenario: Scenario, rng: random.Random) -> str:
    """The goal: who the user is, their story in the second person (background, situations,
    then the constraint and fallbacks in a random order), then the numbered requests (each in
    one of its kind's wordings) with their details:
    ``You are <role> (<who>). <story> <opener> (1) <request> [<details>] (2) ...``,
    the opener one of ``REQUEST_OPENERS`` (``generators.paraphrase`` reads this shape)."""
    story: list[str] = []
    if scenario.background:
        story.append(second_person(scenario.background))
    said = 0
    joins = rng.sample(ALSO, len(ALSO))  # no join twice in one goal
    for text in scenario.situations:
        if not text:
            continue
        sentence = second_person(text)
        if said:
            join = joins[(said - 1) % len(joins)]
            first = sentence.split(" ", 1)[0]
            if first[1:] == first[1:].lower():  # a word, never a value; "ID" keeps its capitals
                sentence = sentence[0].lower() + sentence[1:]
            sentence = f"{join} {sentence}"
        story.append(sentence)
        said += 1
    tail = [second_person(t) for t in (scenario.constraint, *scenario.fallbacks) if t]
    rng.shuffle(tail)
    story += tail
    lines = []
    for k, intent in enumerate(draft.intents):
        spec: IntentSpec = domain.intents[intent.kind]
        request = rng.choice(spec.requests).format(**intent.slots)
        details = ", ".join(f"{s}: {intent.slots[s]}" for s in spec.slots if s in intent.slots)
        lines.append(f"({k + 1}) {request}" + (f" [{details}]" if details else ""))
    who = ", ".join(f"{k}: {v}" for k, v in draft.identity.items())
    head = f"You are {domain.prose.role} ({who})."
    requests = f"{rng.choice(REQUEST_OPENERS)} " + " ".join(lines)
    return " ".join([head, *story, requests])
