"""An agent that asks which one is meant, in banking (issue 17, scope item 4): a customer says "my
savings account" where another savings account the same request could act on is theirs too; the
oracle lists the accounts, names the ones the tools showed of that type, asks which one; the
customer gives the account id; the episode is verified correct, and the faulty agent's mistakes
are still caught."""

from __future__ import annotations

import asyncio
import functools
import random
import re

from trajforge.environments.banking.data import BankingState
from trajforge.environments.base import Observation
from trajforge.environments.registry import load_domain
from trajforge.errors import TaskRejected
from trajforge.generators.compose import compose_blueprint, generate_blueprints
from trajforge.schemas.blueprint import DisclosureStep, TaskBlueprint
from trajforge.schemas.config import GenerationConfig, ModelConfig, UserSimulatorConfig
from trajforge.schemas.messages import AssistantMessage, ToolMessage, UserMessage
from trajforge.schemas.trajectory import FaultKind
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer
from trajforge.simulation.faults import FAULT_CHECKS, choose_fault
from trajforge.simulation.llm_user import LLMUser
from trajforge.verifiers import verify

DOMAIN = load_domain("banking", 300, 0)
ACCOUNT = re.compile(r"\bACC-\d{6}\b")
SLOTS = ("account", "from_account", "to_account")


@functools.cache
def _clarified(n: int = 1000) -> tuple[TaskBlueprint, ...]:
    out = generate_blueprints(DOMAIN, GenerationConfig(n_blueprints=n), "clarify", 0, n)
    return tuple(b for b in out if isinstance(b, TaskBlueprint)
                 and any(d.action == "clarify" for d in b.user.disclosure))


def _step(bp: TaskBlueprint) -> DisclosureStep:
    return next(d for d in bp.user.disclosure if d.action == "clarify")


def test_blueprints_plan_a_clarification_where_a_type_fits_two_accounts() -> None:
    blueprints = _clarified()
    assert len(blueprints) >= 20, len(blueprints)  # 29 of 1,000 when measured
    state = DOMAIN.template
    assert isinstance(state, BankingState)
    for bp in blueprints:
        for step in (d for d in bp.user.disclosure if d.action == "clarify"):
            assert step.trigger == "on_question" and step.fact in SLOTS
            described = bp.user.fact(f"{step.intent}.{step.fact}")
            assert described in ("my checking account", "my savings account")
            assert bp.user.intents[step.intent].slots[step.fact] == step.value  # the id, hidden till asked
            assert ACCOUNT.fullmatch(step.value or "")
            account = state.accounts[step.value or ""]
            assert described == f"my {account.type} account"
            # another account of the customer's fits the words, in the same status
            rivals = [a for a in state.accounts.values() if a.customer_id == account.customer_id
                      and a.id != account.id and a.type == account.type and a.status == account.status]
            assert rivals, bp.id


def test_the_oracle_asks_which_one_naming_what_the_tools_showed_and_passes() -> None:
    blueprints = _clarified()[:20]
    player = EpisodePlayer(domain_of=lambda bp: DOMAIN)
    played = asyncio.run(player.play_all([EpisodeJob(bp, seed=5) for bp in blueprints], lambda p: p))
    asked = 0
    for p in played:
        bp, t = p.job.blueprint, p.trajectory
        assert all(v.passed for v in verify(t, bp, DOMAIN)), t.id
        step = _step(bp)
        words = bp.user.fact(f"{step.intent}.{step.fact}") or ""
        kind = words.split()[1]  # "my savings account"
        messages = list(t.messages)
        # the user's exact answer once they have described it (an earlier request may have named
        # the same account by id), and the agent message it answers
        said = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage) and words in m.content.lower())
        answer = next((i for i, m in enumerate(messages) if i > said
                       and isinstance(m, UserMessage) and (step.value or "") in m.content), None)
        assert answer is not None, t.id
        question = next(m for m in reversed(messages[:answer]) if isinstance(m, AssistantMessage) and m.content)
        named = ACCOUNT.findall(question.content or "")
        if not named:
            continue  # asked for the account before the user had described it: no clarification needed
        asked += 1
        assert len(named) >= 2 and step.value in named
        # every account it names, a tool showed of that type, before it asked
        shown: dict[str, str] = {}
        calls = {c.id: c for m in messages[:answer] if isinstance(m, AssistantMessage) for c in m.tool_calls}
        for m in messages[:answer]:
            if isinstance(m, ToolMessage) and m.tool_call_id in calls:
                obs = Observation.of(calls[m.tool_call_id], m)
                records = obs.result if isinstance(obs.result, list) else [obs.result]
                shown |= {r["id"]: r["type"] for r in records if isinstance(r, dict) and "balance" in r}
        assert all(shown.get(a) == kind for a in named), (named, kind, shown)
        # and the clarified intent's write comes after the answer
        write_call = next(c for c in bp.ground_truth.calls if c.intent == step.intent and c.kind == "write")
        write = next(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)
                     and any(c.name == write_call.name and c.parsed_arguments() == write_call.arguments
                             for c in m.tool_calls))
        assert write > answer
    assert asked >= 15, asked


def test_faults_are_still_caught_where_the_agent_asks_which_one() -> None:
    jobs = []
    for i, bp in enumerate(_clarified()):
        fault = choose_fault(bp, DOMAIN, random.Random(i), tuple(FaultKind))
        if fault is not None:
            jobs.append(EpisodeJob(bp, seed=5, fault=fault))
    player = EpisodePlayer(domain_of=lambda bp: DOMAIN)
    played = asyncio.run(player.play_all(jobs, lambda p: p))
    assert len(played) >= 20, len(played)
    for p in played:
        fault = p.trajectory.episode.fault
        assert fault is not None
        verdicts = {v.check: v for v in verify(p.trajectory, p.job.blueprint, DOMAIN)}
        assert not verdicts[FAULT_CHECKS[fault.kind]].passed, (fault.kind, fault.form)


def test_a_model_user_is_told_to_describe_first_and_give_the_id_when_asked() -> None:
    bp = _clarified()[0]
    step = _step(bp)
    user = LLMUser(None, ModelConfig(model="openai/x"), bp, DOMAIN, None, UserSimulatorConfig())  # type: ignore[arg-type]
    assert f"say it is {step.value}" in user.system
    assert repr(bp.user.fact(f"{step.intent}.{step.fact}")) in user.system


def test_the_questions_ask_for_their_own_slot_only() -> None:
    """Each "which one" question names the candidates and carries one of its slot's keywords and
    none of another slot's (nor an identity keyword), so the scripted user answers that slot."""
    for name in SLOTS:
        spec = DOMAIN.slots[name]
        others = [kw for s, o in DOMAIN.slots.items() if s != name for kw in o.keywords
                  if not any(kw in own for own in spec.keywords)]  # "which account" in "from which account"
        assert len(spec.clarify) == 5
        for question in spec.clarify:
            low = question.lower()
            assert "{candidates}" in question
            assert any(kw in low for kw in spec.keywords), question
            assert not [kw for kw in [*others, *DOMAIN.identity.keywords] if kw in low], question


def test_a_variant_of_a_clarified_task_asks_which_one_too() -> None:
    """plan_of reads the clarify step back (IntentPlan.clarify), and sample_planned draws a task
    whose same intent is described in words that fit two accounts."""
    sampler = DOMAIN.task_sampler()
    checked = 0
    for parent in _clarified()[:15]:
        plan = sampler.plan_of(parent)
        described = {d.intent for d in parent.user.disclosure if d.action == "clarify"}
        assert [k for k, i in enumerate(plan.intents) if i.clarify] == sorted(described)
        for seed in range(100):  # a plan with a clarify step is rarer to meet
            rng = random.Random(seed)
            try:
                draft = sampler.sample_planned(rng, plan)
            except TaskRejected:
                continue
            assert [k for k, i in enumerate(draft.intents) if i.clarify] == sorted(described)
            child = compose_blueprint(DOMAIN, draft, rng, seed=0, index=0)
            again = sampler.plan_of(child).intents
            assert [(i.kind, i.clarify) for i in again] == [(i.kind, i.clarify) for i in plan.intents]
            checked += 1
            break
    assert checked >= 10, checked
