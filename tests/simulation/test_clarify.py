"""An agent that asks which one is meant (issue 17, scope item 4), in every domain: the user
describes the target in words that fit more than one entity the same request could act on (retail
"the order with the <item>", another order of the same status holding it too; airline "my trip to
<city>"; banking "my savings account"; telecom "my line on the <plan> plan", for a plan change);
the oracle reads the candidates, names the ones the tools showed fitting the words, asks which
one, and reads nothing only the one meant needs until told; the user gives the id; the episode is
verified correct, and the faulty agent's mistakes are still caught.

One table row (``Case``) per domain holds what differs: the world, how many blueprints to draw
to meet enough clarify steps (telecom's are rarest: only a plan change takes one, and few
customers have two lines on one plan; 22 of 3,000 when measured), the floors measured there, and
how the words, the ids and the tools' results read. Blueprints and played episodes are made once
per domain."""

from __future__ import annotations

import asyncio
import functools
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from trajforge.environments.airline.data import AIRPORTS
from trajforge.environments.banking.data import BankingState
from trajforge.environments.base import Domain, Observation
from trajforge.environments.registry import load_domain
from trajforge.environments.telecom.data import PLANS, TelecomState
from trajforge.errors import TaskRejected
from trajforge.generators.compose import compose_blueprint, generate_blueprints
from trajforge.schemas.blueprint import DisclosureStep, TaskBlueprint
from trajforge.schemas.config import GenerationConfig, ModelConfig, UserSimulatorConfig
from trajforge.schemas.messages import AssistantMessage, ToolMessage, UserMessage
from trajforge.schemas.trajectory import FaultKind
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer, PlayedEpisode
from trajforge.simulation.faults import FAULT_CHECKS, choose_fault
from trajforge.simulation.llm_user import LLMUser
from trajforge.verifiers import verify

CITY_CODES = {city: code for code, (city, _) in AIRPORTS.items()}


# what a tool result shows of the entities it returns: id -> the values the words could name

def _order_items(result: object) -> dict[str, frozenset[str]]:
    if isinstance(result, dict) and "items" in result:
        return {result["id"]: frozenset(i["name"] for i in result["items"])}
    return {}


def _reservation_destination(result: object) -> dict[str, frozenset[str]]:
    if isinstance(result, dict) and {"legs", "destination"} <= result.keys():
        return {result["id"]: frozenset({result["destination"]})}
    return {}


def _account_type(result: object) -> dict[str, frozenset[str]]:
    records = result if isinstance(result, list) else [result]
    return {r["id"]: frozenset({r["type"]}) for r in records if isinstance(r, dict) and "balance" in r}


def _line_plan(result: object) -> dict[str, frozenset[str]]:
    lines = result.get("lines", [result]) if isinstance(result, dict) else []
    return {x["number"]: frozenset({x["plan_name"]}) for x in lines if isinstance(x, dict) and "plan_name" in x}


# the world behind the words: the one meant fits them, and another the request could act on does too

def _banking_target(domain: Domain, bp: TaskBlueprint, step: DisclosureStep, kind: str) -> None:
    state = domain.template
    assert isinstance(state, BankingState)
    account = state.accounts[step.value or ""]
    assert account.type == kind
    rivals = [a for a in state.accounts.values() if a.customer_id == account.customer_id
              and a.id != account.id and a.type == account.type and a.status == account.status]
    assert rivals, bp.id


def _telecom_target(domain: Domain, bp: TaskBlueprint, step: DisclosureStep, plan: str) -> None:
    assert bp.user.intents[step.intent].kind == "change_plan"
    assert [c.name for c in bp.ground_truth.calls if c.intent == step.intent and c.kind == "write"] == ["change_plan"]
    state = domain.template
    assert isinstance(state, TelecomState)
    line = state.lines[step.value or ""]
    assert state.plans[line.plan_id].name == plan
    # another line of the customer's is on that plan, active (or resumed by an earlier request),
    # its plan not changed this cycle
    customer = state.customers[line.customer_id]
    resumed = {i.slots["line"] for i in bp.user.intents[:step.intent] if i.kind == "resume_line"}
    assert any(x.plan_id == line.plan_id and x.number != line.number and not x.plan_changed_this_cycle
               and (x.status == "active" or x.number in resumed)
               for x in (state.lines[n] for n in customer.line_numbers)), bp.id


@dataclass(frozen=True)
class Case:
    """One domain's clarify steps, and the floors measured on them."""

    domain: str
    size: int  # the world's
    n_blueprints: int  # drawn, to meet enough clarify steps
    slots: tuple[str, ...]  # the facts a clarify step can hide
    words: re.Pattern[str]  # the user's description; group 1 is what the tools show of each candidate
    ids: re.Pattern[str]  # the id the user gives when asked
    shows: Callable[[object], dict[str, frozenset[str]]]  # a tool result: id -> what it shows
    id_argument: str | None  # the clarified write's argument that is the id (banking's dispute has none)
    planned: int  # floor: blueprints with a clarify step
    asked: int  # floor: of the first 20 oracle episodes, those that ask which one
    faulted: int  # floor: faulty episodes played
    fault_pool: int | None = None  # faults drawn on the first this many (None: all)
    names: frozenset[str] | None = None  # what group 1 of the words can be
    shown_as: Callable[[str], str] = str  # group 1 of the words as a tool shows it
    target: Callable[[Domain, TaskBlueprint, DisclosureStep, str], None] | None = None
    variants: int | None = None  # floor: parents of the first 15 whose plan draws a variant
    variants_direct: bool = False  # the clarified intents plan direct (banking's transfers can plan indirect)


CASES = (
    Case("retail", 200, 600, ("order",), re.compile(r"the order with the (.+)"), re.compile(r"#W\d{7}"),
         _order_items, "order_id", planned=15, asked=10, faulted=30, fault_pool=40),
    Case("airline", 300, 1000, ("reservation",), re.compile(r"my trip to (.+)"),
         re.compile(r"\b[A-Z]{2}\d{3}[A-Z]\b"), _reservation_destination, "reservation_id",
         planned=25, asked=15, faulted=25,  # 35 and 35 of 1,000 when measured
         names=frozenset(CITY_CODES), shown_as=CITY_CODES.__getitem__,
         variants=8, variants_direct=True),  # 11 of 15 when measured
    Case("banking", 300, 1000, ("account", "from_account", "to_account"), re.compile(r"my (.+) account"),
         re.compile(r"\bACC-\d{6}\b"), _account_type, None,
         planned=20, asked=15, faulted=20,  # 29 of 1,000 when measured
         names=frozenset({"checking", "savings"}), target=_banking_target, variants=10),
    Case("telecom", 300, 3000, ("line",), re.compile(r"my line on the (.+) plan"),
         re.compile(r"\b\d{3}-555-\d{4}\b"), _line_plan, "phone_number",
         planned=15, asked=14, faulted=15,  # 22 of 3,000 when measured (4 of the first 1,000)
         names=frozenset(p.name for p in PLANS), target=_telecom_target),
)
BY_NAME = {c.domain: c for c in CASES}
each_domain = pytest.mark.parametrize("case", CASES, ids=lambda c: c.domain)


@functools.cache
def _domain(name: str) -> Domain:
    case = BY_NAME[name]
    return load_domain(name, case.size, 0)


@functools.cache
def _clarified(name: str) -> tuple[TaskBlueprint, ...]:
    n = BY_NAME[name].n_blueprints
    out = generate_blueprints(_domain(name), GenerationConfig(n_blueprints=n), "clarify", 0, n)
    return tuple(b for b in out if isinstance(b, TaskBlueprint)
                 and any(d.action == "clarify" for d in b.user.disclosure))


def _play(name: str, jobs: Sequence[EpisodeJob[Any]]) -> tuple[PlayedEpisode[Any], ...]:
    domain = _domain(name)
    player = EpisodePlayer(domain_of=lambda bp: domain)
    return tuple(p for p in asyncio.run(player.play_all(jobs, lambda p: p)) if p is not None)


@functools.cache
def _played(name: str) -> tuple[PlayedEpisode[Any], ...]:
    """The oracle on every clarified blueprint, in their order."""
    return _play(name, [EpisodeJob(bp, seed=5) for bp in _clarified(name)])


@functools.cache
def _faulted(name: str) -> tuple[PlayedEpisode[Any], ...]:
    jobs = []
    for i, bp in enumerate(_clarified(name)[:BY_NAME[name].fault_pool]):
        fault = choose_fault(bp, _domain(name), random.Random(i), tuple(FaultKind))
        if fault is not None:
            jobs.append(EpisodeJob(bp, seed=5, fault=fault))
    return _play(name, jobs)


def _step(bp: TaskBlueprint) -> DisclosureStep:
    return next(d for d in bp.user.disclosure if d.action == "clarify")


def _words(bp: TaskBlueprint, step: DisclosureStep) -> str:
    return bp.user.fact(f"{step.intent}.{step.fact}") or ""


def _answer(bp: TaskBlueprint, messages: list[Any]) -> int | None:
    """Where the user gives the id, once they have described the target (an earlier request may
    have named the same one by id)."""
    step = _step(bp)
    words = _words(bp, step).lower()
    said = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage) and words in m.content.lower())
    return next((i for i, m in enumerate(messages) if i > said
                 and isinstance(m, UserMessage) and (step.value or "") in m.content), None)


@each_domain
def test_blueprints_plan_a_clarification_where_the_words_fit_two(case: Case) -> None:
    blueprints = _clarified(case.domain)
    assert len(blueprints) >= case.planned, len(blueprints)
    for bp in blueprints:
        for step in (d for d in bp.user.disclosure if d.action == "clarify"):
            assert step.trigger == "on_question" and step.fact in case.slots
            described = _words(bp, step)
            words = case.words.fullmatch(described)
            assert words, described
            assert case.names is None or words[1] in case.names, described
            assert bp.user.intents[step.intent].slots[step.fact] == step.value  # the exact id, hidden till asked
            assert case.ids.fullmatch(step.value or "")
            if case.target is not None:
                case.target(_domain(case.domain), bp, step, words[1])


@each_domain
def test_the_oracle_asks_which_one_naming_what_the_tools_showed_and_passes(case: Case) -> None:
    domain = _domain(case.domain)
    asked = 0
    for p in _played(case.domain)[:20]:
        bp, t = p.job.blueprint, p.trajectory
        assert all(v.passed for v in verify(t, bp, domain)), t.id
        step = _step(bp)
        words = case.words.fullmatch(_words(bp, step))
        assert words
        messages = list(t.messages)
        # the user's exact answer, and the agent message it answers
        answer = _answer(bp, messages)
        assert answer is not None, t.id
        question = next(m for m in reversed(messages[:answer]) if isinstance(m, AssistantMessage) and m.content)
        named = case.ids.findall(question.content or "")
        if not named:
            continue  # asked for the id before the user had described it: no clarification needed
        asked += 1
        assert len(set(named)) >= 2 and step.value in named
        # every candidate it names, a tool showed fitting the words, before it asked
        shown: dict[str, frozenset[str]] = {}
        calls = {c.id: c for m in messages[:answer] if isinstance(m, AssistantMessage) for c in m.tool_calls}
        for m in messages[:answer]:
            if isinstance(m, ToolMessage) and m.tool_call_id in calls:
                shown |= case.shows(Observation.of(calls[m.tool_call_id], m).result)
        meant = case.shown_as(words[1])
        assert all(meant in shown.get(x, ()) for x in named), (named, meant, shown)
        # and the clarified intent's write (on the exact one meant) comes after the answer
        write_call = next(c for c in bp.ground_truth.calls if c.intent == step.intent and c.kind == "write")
        if case.id_argument is not None:
            assert write_call.arguments[case.id_argument] == step.value
        write = next(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)
                     and any(c.name == write_call.name and c.parsed_arguments() == write_call.arguments
                             for c in m.tool_calls))
        assert write > answer
    assert asked >= case.asked, asked


@each_domain
def test_before_asking_which_one_the_agent_reads_only_the_candidates(case: Case) -> None:
    """Until the user says which one, the agent runs the read that resolves the words on every
    candidate and nothing only the one meant needs (its flights, its products)."""
    played = _played(case.domain)
    assert len(played) >= case.planned, len(played)
    for p in played:
        bp, messages = p.job.blueprint, list(p.trajectory.messages)
        step = _step(bp)
        answer = _answer(bp, messages)
        assert answer is not None, bp.id
        reads = [c for c in bp.ground_truth.calls if c.kind == "read"]
        mine = [c for c in reads if c.intent == step.intent and step.fact in c.needs]
        resolving = mine[0].name if mine else None
        earlier = [(c.name, c.arguments) for c in reads if c.intent < step.intent]
        held = [(c.name, c.arguments) for c in mine if c.name != resolving and (c.name, c.arguments) not in earlier]
        made = [(c.name, json.loads(c.arguments)) for m in messages[:answer] if isinstance(m, AssistantMessage)
                for c in m.tool_calls]
        assert not [h for h in held if h in made], (bp.id, held)


def test_before_asking_which_line_the_agent_has_nothing_done_on_its_phone() -> None:
    """Telecom's dual control: nor does the agent ask the customer to do anything on the phone of
    the line in question before they say which line."""
    for p in _played("telecom"):
        bp, messages = p.job.blueprint, list(p.trajectory.messages)
        step = _step(bp)
        answer = _answer(bp, messages)
        assert answer is not None, bp.id
        phone = [c for m in messages[:answer] if isinstance(m, UserMessage) for c in m.tool_calls
                 if json.loads(c.arguments).get("number") == step.value]
        assert not [c for c in phone if any(g.intent == step.intent and g.kind == "user" and g.name == c.name
                                            for g in bp.ground_truth.calls)], bp.id


@each_domain
def test_faults_are_still_caught_where_the_agent_asks_which_one(case: Case) -> None:
    played = _faulted(case.domain)
    assert len(played) >= case.faulted, len(played)
    for p in played:
        fault = p.trajectory.episode.fault
        assert fault is not None
        verdicts = {v.check: v for v in verify(p.trajectory, p.job.blueprint, _domain(case.domain))}
        assert not verdicts[FAULT_CHECKS[fault.kind]].passed, (fault.kind, fault.form)


@each_domain
def test_a_model_user_is_told_to_describe_first_and_give_the_id_when_asked(case: Case) -> None:
    bp = _clarified(case.domain)[0]
    step = _step(bp)
    user = LLMUser(None, ModelConfig(model="openai/x"), bp, _domain(case.domain), None,  # type: ignore[arg-type]
                   UserSimulatorConfig())
    assert f"say it is {step.value}" in user.system
    assert repr(_words(bp, step)) in user.system


@each_domain
def test_the_questions_ask_for_their_own_slot_only(case: Case) -> None:
    """Each "which one" question names the candidates and carries one of its slot's keywords and
    none of another slot's (one inside its own aside: "which account" in "from which account"),
    an identity keyword or a user tool's (the user would act on it)."""
    domain = _domain(case.domain)
    for name in case.slots:
        spec = domain.slots[name]
        others = [kw for s, o in domain.slots.items() if s != name for kw in o.keywords
                  if not any(kw in own for own in spec.keywords)]
        others += [*domain.identity.keywords, *(kw for i in domain.instructions.values() for kw in i.keywords)]
        assert len(spec.clarify) == 5
        for question in spec.clarify:
            low = question.lower()
            assert "{candidates}" in question
            assert any(kw in low for kw in spec.keywords), question
            assert not [kw for kw in others if kw in low], question


def test_a_line_answer_reads_right_after_a_description() -> None:
    """Telecom's line answers read right with the words too."""
    for answer in _domain("telecom").slots["line"].answers:
        assert answer.format(value="my line on the Plus 15GB plan").count("line") == 1, answer


@pytest.mark.parametrize("case", [c for c in CASES if c.variants is not None], ids=lambda c: c.domain)
def test_a_variant_of_a_clarified_task_asks_which_one_too(case: Case) -> None:
    """plan_of reads the clarify step back (IntentPlan.clarify), and sample_planned draws a task
    whose same intent is described in words that fit several."""
    domain = _domain(case.domain)
    sampler = domain.task_sampler()
    checked = 0
    for parent in _clarified(case.domain)[:15]:
        plan = sampler.plan_of(parent)
        described = {d.intent for d in parent.user.disclosure if d.action == "clarify"}
        assert [k for k, i in enumerate(plan.intents) if i.clarify] == sorted(described)
        if case.variants_direct:
            assert not any(plan.intents[k].indirect for k in described)  # named by its id in the end
        for seed in range(100):  # a plan with a clarify step is rarer to meet
            rng = random.Random(seed)
            try:
                draft = sampler.sample_planned(rng, plan)
            except TaskRejected:
                continue
            assert [k for k, i in enumerate(draft.intents) if i.clarify] == sorted(described)
            child = compose_blueprint(domain, draft, rng, seed=0, index=0)
            again = sampler.plan_of(child).intents  # (a described target can come out direct)
            assert [(i.kind, i.clarify) for i in again] == [(i.kind, i.clarify) for i in plan.intents]
            checked += 1
            break
    assert checked >= (case.variants or 0), checked
