"""Scripted episodes: oracle outcomes, wording variety, the user's disclosure plan and patience,
turn limits, and every fault kind leaving its mark in the trajectory."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Sequence

import pytest

from trajforge.environments.dialogue import (
    asks_anything_else,
    is_affirmative,
    is_confirmation_request,
)
from trajforge.environments.retail import RetailDomain
from trajforge.generators import generate_blueprints
from trajforge.schemas import (
    AssistantMessage,
    EpisodeSpec,
    Fault,
    FaultKind,
    Message,
    SystemMessage,
    TaskBlueprint,
    TerminationReason,
    ToolMessage,
    Trajectory,
    UserMessage,
)
from trajforge.schemas.arrow import trajectory_to_row
from trajforge.schemas.blueprint import Style
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation import (
    AgentReply,
    EpisodeLimits,
    ScriptedAgent,
    ScriptedUser,
    choose_fault,
    run_episode,
)
from trajforge.simulation.agents import CONFIRM
from trajforge.simulation.faults import applicable_faults
from trajforge.verifiers import verify

RUN = "run_episodes"


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture(scope="module")
def blueprints(domain: RetailDomain) -> list[TaskBlueprint]:
    out = [b for b in generate_blueprints(domain, GenerationConfig(), RUN, 0, 300)
           if isinstance(b, TaskBlueprint)]
    assert len(out) >= 270
    return out


def episode(bp: TaskBlueprint, domain: RetailDomain, seed: int, *, fault: Fault | None = None,
            agent: object | None = None, limits: EpisodeLimits | None = None) -> Trajectory:
    limits = limits or EpisodeLimits()
    rng = random.Random(seed)
    spec = EpisodeSpec(agent=f"scripted:{'faulty' if fault else 'oracle'}", user="scripted",
                       seed=seed, max_turns=limits.max_turns, fault=fault)
    return asyncio.run(run_episode(
        bp.id, domain.environment(),
        agent if agent is not None else ScriptedAgent(bp, domain, rng, fault),  # type: ignore[arg-type]
        ScriptedUser(bp, domain, rng), limits, run_id=RUN, episode=spec))


@pytest.fixture(scope="module")
def applicable(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> list[dict[FaultKind, list[int]]]:
    """``applicable_faults`` of each blueprint, in order: computed once for the two tests that
    read it (it replays the ground truth per fault form, the costly part of both)."""
    return [applicable_faults(bp, domain) for bp in blueprints]


@pytest.fixture(scope="module")
def oracle(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> list[tuple[TaskBlueprint, Trajectory]]:
    return [(bp, episode(bp, domain, i)) for i, bp in enumerate(blueprints)]


def _writes(domain: RetailDomain, t: Trajectory) -> list[tuple[int, dict]]:
    """(message index, arguments) of each write call the agent made."""
    out = []
    for i, m in enumerate(t.messages):
        if isinstance(m, AssistantMessage):
            for c in m.tool_calls:
                tool = domain.tools.get(c.name)
                if tool is not None and tool.kind.value == "write":
                    out.append((i, {"name": c.name, **(c.parsed_arguments() or {})}))
    return out


# --- the oracle -------------------------------------------------------------------------------

def test_oracle_episodes_reach_the_expected_state(domain: RetailDomain,
                                                  oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    for bp, t in oracle:
        assert t.termination is TerminationReason.user_stop, (bp.provenance.index, t.termination)
        assert t.final_state_hash == bp.ground_truth.final_state_hash, bp.provenance.index
        assert t.final_state_diff == bp.ground_truth.final_state_diff
        assert isinstance(t.messages[0], SystemMessage) and t.messages[0].content == domain.policy
        assert isinstance(t.messages[1], UserMessage) and isinstance(t.messages[-1], UserMessage)
        # no tool error, but for the wrong_detail behaviour's one lookup with a detail a digit off
        failed = {m.tool_call_id for m in t.messages if isinstance(m, ToolMessage) and m.is_error}
        assert len(failed) == sum(d.action == "misstate" for d in bp.user.disclosure)
        made = [(c.name, c.parsed_arguments()) for m in t.messages if isinstance(m, AssistantMessage)
                for c in m.tool_calls if c.id not in failed]
        assert made == [(c.name, c.arguments) for c in bp.ground_truth.calls]
        assert t.tools == domain.tool_specs()
        assert t.id == Trajectory.make_id(bp.id, t.episode) and t.blueprint_id == bp.id
        usage = {u.role: u.calls for u in t.usage}
        assert usage["user"] == sum(isinstance(m, UserMessage) for m in t.messages)
        assert usage["agent"] == sum(isinstance(m, AssistantMessage) for m in t.messages)


def test_every_tool_call_is_answered_in_order(oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    for _, t in oracle[:50]:
        for i, m in enumerate(t.messages):
            if isinstance(m, AssistantMessage) and m.tool_calls:
                answers = t.messages[i + 1:i + 1 + len(m.tool_calls)]
                assert [a.tool_call_id for a in answers] == [c.id for c in m.tool_calls]  # type: ignore[union-attr]
        ids = [c.id for m in t.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
        assert len(ids) == len(set(ids))


def test_episodes_are_deterministic_for_a_seed(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if b.structure.n_intents >= 3)
    a, b = episode(bp, domain, 7), episode(bp, domain, 7)
    assert a.messages == b.messages and a.id == b.id
    c = episode(bp, domain, 8)
    assert c.messages != a.messages
    assert c.final_state_hash == a.final_state_hash  # other words, same outcome


def test_wording_varies(domain: RetailDomain, oracle: list[tuple[TaskBlueprint, Trajectory]],
                        blueprints: list[TaskBlueprint]) -> None:
    confirmations: list[str] = []
    openings: list[str] = []
    for _, t in oracle[:100]:
        openings.append(t.messages[1].content)  # type: ignore[union-attr]
        confirmations += [m.content for m in t.messages
                          if isinstance(m, AssistantMessage) and is_confirmation_request(m.content)]
    assert len(confirmations) >= 100
    assert len(set(confirmations)) >= 0.9 * len(confirmations)
    assert len(set(openings)) >= 90
    # the same blueprint, replayed with other seeds, is phrased differently too
    bp = next(b for b in blueprints if b.structure.write_count >= 2)
    frames = Counter()
    texts = set()
    for seed in range(30):
        for m in episode(bp, domain, seed).messages:
            if isinstance(m, AssistantMessage) and is_confirmation_request(m.content):
                texts.add(m.content)
                # which of the agent's confirmation frames it is: the words around ``{action}``
                frames[next(f for f in CONFIRM if all(part in m.content for part in f.split("{action}")))] += 1
    assert len(texts) >= 10
    assert len(frames) >= 3


def test_user_style_follows_the_persona(oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    yes_by_style: dict[str, set[str]] = {}
    for bp, t in oracle:
        for prev, m in zip(t.messages, t.messages[1:], strict=False):
            if isinstance(m, UserMessage) and is_affirmative(m.content) and \
                    isinstance(prev, AssistantMessage) and is_confirmation_request(prev.content):
                yes_by_style.setdefault(bp.user.persona.style.value, set()).add(m.content)
    assert set(yes_by_style) == {s.value for s in Style}
    # each voice is its own: a terse customer never says the chatty ones, nor any other style's
    for a, b in itertools.combinations(yes_by_style, 2):
        assert not yes_by_style[a] & yes_by_style[b], (a, b)


# --- the scripted user ------------------------------------------------------------------------

def _asked(domain: RetailDomain, key: str, text: str) -> bool:
    """Whether an assistant message asks for the fact ``key`` (``email``, ``2.order``, ...)."""
    low = text.lower()
    slot = key.split(".", 1)[-1]
    if slot in domain.identity.facts:
        return any(m in low for m in domain.identity.keywords)
    if slot not in domain.slots:  # part of a request (``option_name``): never asked for alone
        return False
    return any(kw in low for kw in domain.slots[slot].keywords)


def test_hidden_facts_are_revealed_only_after_being_asked(
        domain: RetailDomain, oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    checked = Counter()
    for bp, t in oracle:
        known = {v.lower() for v in bp.user.known_facts.values()}
        for key, value in bp.user.hidden_facts.items():
            if any(value.lower() in k for k in known) or len(value) < 4:
                continue  # the same words are also (in) a volunteered fact: "size" in "size M"
            said = re.compile(r"\b" + re.escape(value.lower()) + r"\b")  # "size", not in "downsized"
            first = next((i for i, m in enumerate(t.messages)
                          if isinstance(m, UserMessage) and said.search(m.content.lower())), None)
            if first is None:
                continue  # never needed
            before = next(m for m in reversed(t.messages[:first]) if isinstance(m, AssistantMessage))
            assert _asked(domain, key, before.content or "") or is_confirmation_request(before.content), (
                bp.provenance.index, key, value, before.content, t.messages[first].content)
            assert first > 1, "a hidden fact is not in the opening message"
            checked[key.split(".", 1)[-1]] += 1
    assert checked["email"] >= 20 and checked["order"] >= 20 and checked["reason"] >= 5, checked


def test_volunteering_personas_say_more_up_front(oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    seen = Counter()
    for bp, t in oracle:
        opening = t.messages[1].content.lower()  # type: ignore[union-attr]
        email = bp.user.fact("email")
        # a user with the wrong_detail behaviour says it a digit off at first
        email = next((d.value for d in bp.user.disclosure if d.action == "misstate" and d.fact == "email"), email)
        if email and bp.user.persona.volunteers.value == "high":
            assert email.lower() in opening
            seen["volunteered"] += 1
        if email and "email" in bp.user.hidden_facts:
            assert email.lower() not in opening
            seen["held back"] += 1
    assert seen["volunteered"] >= 20 and seen["held back"] >= 20, seen


def _final_write_index(domain: RetailDomain, t: Trajectory, bp: TaskBlueprint, k: int) -> int:
    """Message index of the write that fulfils intent ``k``."""
    want = next(c for c in bp.ground_truth.calls if c.intent == k and c.kind == "write")
    return next(i for i, args in _writes(domain, t)
                if args == {"name": want.name, **want.arguments})


def test_revisions_reach_the_agent_before_the_write(domain: RetailDomain,
                                                    oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    seen = 0
    for bp, t in oracle:
        for step in bp.user.disclosure:
            if step.action != "revise":
                continue
            seen += 1
            assert step.value and step.fact
            first = bp.user.fact(f"{step.intent}.{step.fact}")  # what the user says first
            assert first and first != step.value and bp.user.intents[step.intent].slots[step.fact] == step.value
            at = _final_write_index(domain, t, bp, step.intent)
            users = [(i, m.content) for i, m in enumerate(t.messages[:at]) if isinstance(m, UserMessage)]
            revised = [i for i, text in users if step.value.lower() in text.lower()]
            assert revised, (bp.provenance.index, step)
            i = revised[-1]
            # it is said as a revision, in answer to a confirmation request ...
            assert re.search(r"actually", t.messages[i].content, re.IGNORECASE)  # type: ignore[union-attr]
            asks = [m for m in t.messages[:i] if isinstance(m, AssistantMessage) and m.content]
            assert is_confirmation_request(asks[-1].content)
            # ... after the user had first given the other value
            assert any(first.lower() in text.lower() for j, text in users if j < i)
            # the agent confirms again before writing, and the write uses the revised value
            asks_after = [m for m in t.messages[i:at] if isinstance(m, AssistantMessage)
                          and is_confirmation_request(m.content)]
            assert asks_after
            assert t.final_state_hash == bp.ground_truth.final_state_hash
    assert seen >= 10


def test_redirects_reach_the_agent_before_the_write(domain: RetailDomain,
                                                    oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    seen = 0
    for bp, t in oracle:
        for step in bp.user.disclosure:
            if step.action != "redirect":
                continue
            seen += 1
            intent = bp.user.intents[step.intent]
            assert step.value == intent.kind and intent.initial_kind not in (None, intent.kind)
            final = domain.intents[intent.kind]
            requests = [r.format(**{s: intent.slots.get(s, "") for s in final.core_slots}).lower()
                        for r in final.requests]
            at = _final_write_index(domain, t, bp, step.intent)
            said = [i for i, m in enumerate(t.messages[:at])
                    if isinstance(m, UserMessage) and any(r in m.content.lower() for r in requests)]
            assert said, (bp.provenance.index, step)
            asks = [m for m in t.messages[:said[-1]] if isinstance(m, AssistantMessage) and m.content]
            assert is_confirmation_request(asks[-1].content)
            # the write the agent makes is the final kind's, not the first kind's
            writes = [args["name"] for _, args in _writes(domain, t)]
            final_tool = next(c.name for c in bp.ground_truth.calls if c.intent == step.intent
                              and c.kind == "write")
            assert final_tool in writes
    assert seen >= 5


class Mumbler:
    """An agent that never helps: it only says vague things."""

    def __init__(self) -> None:
        self.turns = 0

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        self.turns += 1
        return AgentReply(AssistantMessage(content=random.Random(self.turns).choice(
            ("Hmm, let me see.", "Interesting.", "One moment, I'm thinking.", "I see."))))


@pytest.mark.parametrize("patience", [1, 2, 5])
def test_an_impatient_user_gives_up_on_an_unhelpful_agent(domain: RetailDomain,
                                                          blueprints: list[TaskBlueprint],
                                                          patience: int) -> None:
    bp = blueprints[0]
    persona = bp.user.persona.model_copy(update={"patience": patience})
    bp = bp.model_copy(update={"user": bp.user.model_copy(update={"persona": persona})})
    agent = Mumbler()
    t = episode(bp, domain, 3, agent=agent)
    assert t.termination is TerminationReason.user_gave_up
    assert agent.turns == patience + 1  # ``patience`` unproductive turns are tolerated, not more
    users = [m.content for m in t.messages if isinstance(m, UserMessage)]
    assert len(users) == patience + 2  # the opening, the complaints, the goodbye
    assert t.final_state_hash == domain.hasher.hash(domain.template)
    verdicts = {v.check: v for v in verify(t, bp, domain)}
    assert not verdicts["termination"].passed
    assert not verdicts["final_state"].passed or bp.structure.write_count == 0


def test_max_turns_ends_a_long_episode(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if b.structure.n_intents >= 2)
    t = episode(bp, domain, 5, limits=EpisodeLimits(max_turns=2))
    assert t.termination is TerminationReason.max_turns
    assert sum(isinstance(m, UserMessage) for m in t.messages) == 2
    assert isinstance(t.messages[-1], AssistantMessage)
    verdicts = {v.check: v for v in verify(t, bp, domain)}
    assert not verdicts["turn_limit"].passed and not verdicts["termination"].passed
    assert "2 turns" in verdicts["turn_limit"].reason
    full = episode(bp, domain, 5)
    assert full.termination is TerminationReason.user_stop
    assert len(full.messages) > len(t.messages)


def test_an_agent_that_never_stops_calling_tools_is_an_agent_error(domain: RetailDomain,
                                                                   blueprints: list[TaskBlueprint]) -> None:
    from trajforge.schemas import ToolCall

    class Looper:
        async def respond(self, messages: Sequence[Message]) -> AgentReply:
            call = ToolCall(id=f"c{len(messages)}", name="list_product_types", arguments="{}")
            return AgentReply(AssistantMessage(content=None, tool_calls=(call,)))

    t = episode(blueprints[0], domain, 1, agent=Looper(), limits=EpisodeLimits(max_steps_per_turn=4))
    assert t.termination is TerminationReason.agent_error
    assert sum(isinstance(m, ToolMessage) for m in t.messages) == 4


# --- faults -----------------------------------------------------------------------------------

def _oracle_twin(domain: RetailDomain, bp: TaskBlueprint, t: Trajectory) -> Trajectory:
    return episode(bp, domain, t.episode.seed)


def _trace(kind: FaultKind, domain: RetailDomain, bp: TaskBlueprint, t: Trajectory) -> bool:
    """Whether the trajectory shows the mistake of ``kind``."""
    tool_msgs = [m for m in t.messages if isinstance(m, ToolMessage)]
    calls = [c for m in t.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    texts = [m.content or "" for m in t.messages if isinstance(m, AssistantMessage)]
    writes = _writes(domain, t)
    truth_writes = [{"name": c.name, **c.arguments} for c in bp.ground_truth.calls if c.kind == "write"]
    if kind is FaultKind.wrong_argument:
        return len(writes) == len(truth_writes) and [a for _, a in writes] != truth_writes
    if kind is FaultKind.unconfirmed_write:
        # a write with no confirmation request since the last one, or after a request the user
        # answered with something else than a yes (a change of mind)
        asked = False
        for m in t.messages:
            if isinstance(m, UserMessage) and asked and not is_affirmative(m.content or ""):
                asked = False
            if isinstance(m, AssistantMessage):
                asked = asked or is_confirmation_request(m.content or "")
                for c in m.tool_calls:
                    if c.name in domain.tools and domain.tools[c.name].kind.value == "write":
                        if not asked:
                            return True
                        asked = False
        return False
    if kind is FaultKind.hallucinated_id:
        return any(m.is_error and ("not found" in m.content or "is not in order" in m.content)
                   for m in tool_msgs)
    if kind is FaultKind.skipped_authentication:
        return not any(c.name in domain.auth_tools for c in calls)
    if kind is FaultKind.policy_violation:
        # a write the policy forbids, which the tool refused (as a policy violation, or earlier
        # for another reason: the forbidden arguments may also be wrong in other ways)
        refused = {m.tool_call_id for m in tool_msgs if m.is_error}
        return any(c.id in refused and domain.tools[c.name].kind.value == "write" for c in calls)
    if kind is FaultKind.missing_output:
        said = " ".join(texts)
        return any(x.startswith(domain.bare_reports) for x in texts) or \
            not all(o.value in said for o in bp.ground_truth.outputs)
    if kind is FaultKind.misstatement:
        return texts != [m.content or "" for m in _oracle_twin(domain, bp, t).messages
                         if isinstance(m, AssistantMessage)]
    if kind is FaultKind.premature_end:
        return t.termination in (TerminationReason.agent_stop, TerminationReason.transfer) \
            and len([w for w in writes if w[1]["name"] != domain.transfer_tool]) < len(truth_writes)
    if kind is FaultKind.unknown_tool:
        return any(m.is_error and m.name not in domain.tools for m in tool_msgs)
    if kind is FaultKind.invalid_arguments:
        return any(m.is_error and ("invalid arguments" in m.content or "not a JSON object" in m.content)
                   for m in tool_msgs)
    if kind is FaultKind.repeated_call:
        seen: set[tuple[str, str]] = set()
        for c in calls:  # the same call, however written, with no write in between
            if c.name in domain.tools and domain.tools[c.name].kind.value == "write":
                seen.clear()
                continue
            made = (c.name, json.dumps(c.parsed_arguments(), sort_keys=True))
            if made in seen:
                return True
            seen.add(made)
        return False
    raise AssertionError(kind)


def test_every_fault_kind_is_applicable_and_leaves_its_mark(
        domain: RetailDomain, applicable: list[dict[FaultKind, list[int]]],
        oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    counts: Counter[FaultKind] = Counter()
    runs: Counter[FaultKind] = Counter()
    for i, ((bp, clean), options) in enumerate(zip(oracle, applicable, strict=True)):
        for kind, targets in options.items():
            assert targets, kind
            counts[kind] += 1
            if runs[kind] >= 5:
                continue
            runs[kind] += 1
            fault = Fault(kind=kind, target=targets[-1])
            t = episode(bp, domain, 10_000 + i, fault=fault)
            assert t.episode.fault == fault
            assert t.episode.agent == "scripted:faulty"
            assert trajectory_to_row(t)["fault_kind"] == kind.value
            assert t.id != clean.id
            assert _trace(kind, domain, bp, t), (kind, bp.provenance.index)
            assert not _trace(kind, domain, bp, clean), (kind, bp.provenance.index)
    assert set(counts) == set(FaultKind)
    assert min(counts.values()) >= 10, counts
    assert set(runs) == set(FaultKind)


def test_choose_fault_picks_only_applicable_kinds(domain: RetailDomain, blueprints: list[TaskBlueprint],
                                                  applicable: list[dict[FaultKind, list[int]]]) -> None:
    rng = random.Random(0)
    chosen: Counter[FaultKind] = Counter()
    for bp, options in zip(blueprints[:150], applicable, strict=False):
        fault = choose_fault(bp, domain, rng, list(FaultKind))
        assert fault is not None and fault.target in options[fault.kind]
        chosen[fault.kind] += 1
        only = choose_fault(bp, domain, rng, [FaultKind.premature_end])
        if FaultKind.premature_end in options:
            assert only is not None and only.kind is FaultKind.premature_end
        else:
            assert only is None
    assert len(chosen) == len(FaultKind)


def test_scripted_agent_reports_required_outputs(domain: RetailDomain,
                                                 oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    for bp, t in oracle[:100]:
        texts = " ".join(m.content or "" for m in t.messages if isinstance(m, AssistantMessage))
        for out in bp.ground_truth.outputs:
            assert out.value in texts, (bp.provenance.index, out)
        asks = [m.content for m in t.messages if isinstance(m, AssistantMessage)
                and asks_anything_else(m.content)]
        assert len(asks) >= bp.structure.n_intents
        json.dumps([m.model_dump() for m in t.messages])
