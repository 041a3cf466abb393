"""Every built-in domain's scenario bank (``Domain.scenario``) keeps the rules
``environments.tasks.ScenarioSpec`` states, and the goal text says the drawn scenario in the
second person."""

from __future__ import annotations

import random
import re
import string

import pytest

from trajforge.environments.registry import load_domain
from trajforge.environments.tasks import DEFAULT_SCENARIO, ScenarioSpec
from trajforge.errors import TaskRejected
from trajforge.generators.scenario import goal_text, sample_scenario, second_person

BUILT_IN = ("retail", "airline", "banking", "telecom")
MIN_SITUATIONS = 12  # per intent kind
MIN_BACKGROUNDS = 100
MIN_CONSTRAINTS = 40
# words a first-person entry never uses: the user speaks of themselves, not of the agent or a "we"
NOT_FIRST_PERSON = re.compile(r"\b(you|your|yours|yourself|we|our|ours|us)\b", re.I)


def _fields(text: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]


def _sampled_values(name: str, n: int = 800) -> dict[str, dict[str, set[str]]]:
    """Per intent kind (as first asked), the values each slot took over ``n`` sampled tasks."""
    domain = load_domain(name, 200, 0)
    sampler = domain.task_sampler()
    seen: dict[str, dict[str, set[str]]] = {}
    for seed in range(n):
        rng = random.Random(seed)
        try:
            draft = sampler.sample(rng, rng.randint(1, 3), p_indirect=0.3, p_revision=0.3, p_redirect=0.3,
                                   p_read_only=0.3)
        except TaskRejected:  # the generator rejects it too
            continue
        for intent in draft.intents:
            kind = intent.initial_kind or intent.kind
            values = {**intent.slots, **intent.initial_slots} if intent.initial_kind else intent.slots
            for slot, value in values.items():
                seen.setdefault(kind, {}).setdefault(slot, set()).add(value)
    return seen


@pytest.fixture(scope="module", params=BUILT_IN)
def domain_spec(request: pytest.FixtureRequest) -> tuple[str, ScenarioSpec]:
    return request.param, load_domain(request.param, 50, 0).scenario


def _entry_problems(text: str, allowed: set[str]) -> list[str]:
    problems = []
    if NOT_FIRST_PERSON.search(text):
        problems.append(f"not first person: {text!r}")
    if re.search(r"\d", text):
        problems.append(f"a digit (a fact the task data decides?): {text!r}")
    for f in _fields(text):
        if f not in allowed:
            problems.append(f"placeholder {{{f}}} is not a core slot ({sorted(allowed)}): {text!r}")
    if re.match(r"\s*\{", text) or re.search(r"[.!?]\s+\{", text):
        problems.append(f"a placeholder starts a sentence: {text!r}")
    if not text[:1].isupper() or text.rstrip()[-1:] not in ".!?":
        problems.append(f"not a sentence: {text!r}")
    return problems


def test_a_built_in_domain_declares_its_own_bank(domain_spec: tuple[str, ScenarioSpec]) -> None:
    name, spec = domain_spec
    assert spec is not DEFAULT_SCENARIO
    assert len(set(spec.backgrounds)) >= MIN_BACKGROUNDS, name
    assert len(set(spec.constraints)) >= MIN_CONSTRAINTS, name
    domain = load_domain(name, 50, 0)
    assert set(spec.situations) == set(domain.intents), "a situation bank for every intent kind"
    for kind, options in spec.situations.items():
        assert len({s.text for s in options}) >= MIN_SITUATIONS, kind
    asks_write = {k for k, s in domain.intents.items() if s.writes or s.outcome == "refused"}
    assert set(spec.fallbacks) <= asks_write, "fallbacks only for intents that ask for a write"


def test_every_entry_keeps_the_rules(domain_spec: tuple[str, ScenarioSpec]) -> None:
    name, spec = domain_spec
    domain = load_domain(name, 50, 0)
    problems = []
    for text in (*spec.backgrounds, *spec.constraints):
        problems += _entry_problems(text, set())
    for kind, options in spec.situations.items():
        intent = domain.intents[kind]
        for s in options:
            problems += _entry_problems(s.text, set(intent.core_slots))
            problems += [f"{kind}: `when` on {slot!r}, not a slot of the kind" for slot, _ in s.when
                         if slot not in intent.slots]
    for kind, texts in spec.fallbacks.items():
        for text in texts:
            problems += _entry_problems(text, set(domain.intents[kind].core_slots))
    assert not problems, "\n".join(problems)


def test_every_conditional_situation_can_be_drawn(domain_spec: tuple[str, ScenarioSpec]) -> None:
    """A ``when`` names a value the domain's sampler produces, else the situation is dead text."""
    name, spec = domain_spec
    seen = _sampled_values(name)
    dead = [f"{kind}: {s.when}" for kind, options in spec.situations.items() for s in options
            if s.when and not all(v in seen.get(kind, {}).get(slot, set()) for slot, v in s.when)]
    assert not dead, "\n".join(dead)


@pytest.mark.parametrize(("first", "second"), [
    ("I lost my card.", "You lost your card."),
    ("My flight was moved, so I'm rebooking.", "Your flight was moved, so you're rebooking."),
    ("It was sent to me by mistake. I was away.", "It was sent to you by mistake. You were away."),
    ("The plan I've had is mine.", "The plan you've had is yours."),
    ("Call me Ismael", "Call you Ismael"),
    ("I'd rather not. I'll wait.", "You'd rather not. You'll wait."),
])
def test_second_person(first: str, second: str) -> None:
    assert second_person(first) == second


def test_the_goal_tells_the_drawn_scenario_in_the_second_person() -> None:
    domain = load_domain("banking", 200, 0)
    sampler = domain.task_sampler()
    backgrounds = 0
    for seed in range(60):
        rng = random.Random(seed)
        try:
            draft = sampler.sample(rng, 2, p_indirect=0.3, p_revision=0.3, p_redirect=0.3, p_read_only=0.3)
        except TaskRejected:
            continue
        scenario = sample_scenario(domain.scenario, domain, draft, rng)
        goal = goal_text(domain, draft, scenario, rng)
        assert goal.startswith(f"You are {domain.prose.role} (")
        assert len(scenario.situations) == len(scenario.fallbacks) == len(draft.intents)
        told = [t for t in (*scenario.situations, *scenario.fallbacks) if t]
        assert len(told) == len(set(told)), "two intents of one kind tell different entries"
        if scenario.background:
            assert second_person(scenario.background) in goal
            backgrounds += 1
        for text in (scenario.constraint, *scenario.fallbacks):
            if text:
                assert second_person(text) in goal
        for text in scenario.situations:
            if text:  # a second situation is joined on with a lower-case start
                rest = second_person(text)[1:]
                assert rest in goal
        assert not re.search(r"\b(I|my|me|I'm)\b", goal.split("(1)")[0].replace(domain.prose.role, ""))
    assert 30 < backgrounds < 60  # the background is drawn in most goals, not all


def test_situations_are_joined_each_with_its_own_connective_and_keep_an_acronym() -> None:
    from trajforge.generators.scenario import ALSO
    from trajforge.schemas import Scenario

    domain = load_domain("airline", 200, 0)
    sampler = domain.task_sampler()
    rng = random.Random(3)
    draft = sampler.sample(rng, 3, p_indirect=0.0, p_revision=0.0, p_redirect=0.0, p_read_only=0.0)
    texts = ("I need this sorted.", "ID checks worry me.", "My plans changed.")
    for seed in range(20):
        goal = goal_text(domain, draft, Scenario(situations=texts, fallbacks=("", "", "")), random.Random(seed))
        joins = [j for j in ALSO if f"{j} " in goal]
        assert len(joins) == 2, goal
        assert "ID checks worry you." in goal and "your plans changed." in goal, goal
