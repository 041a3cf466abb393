"""User behaviours (issue 17, scope item 3): labelled on the blueprint, admitted only where the
scripted user can act them out, acted out by it, answered by the oracle, and every oracle
episode still verified correct; the faulty agent's mistakes are still caught."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from trajforge.environments.registry import domain_names, load_domain
from trajforge.generators.behaviours import admitted
from trajforge.generators.compose import generate_blueprints
from trajforge.schemas.arrow import blueprint_from_row, blueprint_to_row
from trajforge.schemas.blueprint import Behaviour, TaskBlueprint
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.trajectory import Fault, FaultKind
from trajforge.simulation.agents import NOT_FOUND, ON_BEHAVIOUR
from trajforge.simulation.episodes import EpisodeContext, EpisodeJob, EpisodePlayer, scripted_user
from trajforge.simulation.faults import FAULT_CHECKS, choose_fault
from trajforge.simulation.user import (
    ASK_HUMAN,
    IMPATIENT,
    OFF_TOPIC,
    PRICE,
    QUESTION_BACK,
    SORRY_WRONG,
    UNHAPPY,
    WITHHOLD,
    ScriptedUser,
)
from trajforge.verifiers import verify

N = 120


def _blueprints(name: str, n: int = N, **config: float) -> list[TaskBlueprint]:
    domain = load_domain(name, 200, 0)
    out = generate_blueprints(domain, GenerationConfig(n_blueprints=n, **config), "beh", 0, n)
    return [b for b in out if isinstance(b, TaskBlueprint)]


def _played(name: str, blueprints: list[TaskBlueprint], faults: dict[str, Fault] | None = None):
    domain = load_domain(name, 200, 0)
    users: dict[str, ScriptedUser] = {}

    def make_user(episode: EpisodeContext) -> ScriptedUser:
        user = scripted_user(episode.blueprint, episode.domain, episode.seed)
        users[episode.blueprint.id] = user
        return user

    player = EpisodePlayer(domain_of=lambda bp: domain, make_user=make_user)
    jobs = [EpisodeJob(bp, seed=11, fault=(faults or {}).get(bp.id)) for bp in blueprints]
    played = asyncio.run(player.play_all(jobs, lambda p: p))
    return domain, users, played


@pytest.mark.parametrize("name", domain_names())
def test_each_labelled_behaviour_is_acted_out_and_the_oracle_passes(name: str) -> None:
    blueprints = _blueprints(name)
    domain, users, played = _played(name, blueprints)
    labelled: Counter[Behaviour] = Counter()
    for episode in played:
        bp = episode.job.blueprint
        labelled.update(bp.user.behaviours)
        # every label is true of the episode, once, and nothing unlabelled happens
        assert sorted(users[bp.id].acted) == sorted(bp.user.behaviours), bp.id
        failed = [(v.check, v.reason) for v in verify(episode.trajectory, bp, domain) if not v.passed]
        assert not failed, (bp.id, bp.user.behaviours, failed)
    # every behaviour a domain admits in general shows up in a default sample
    for behaviour in (Behaviour.question_back, Behaviour.withholds_detail, Behaviour.off_topic,
                      Behaviour.impatient, Behaviour.corrects_detail, Behaviour.asks_human):
        assert labelled[behaviour] >= 3, (name, behaviour, labelled)
    assert sum(bool(b.user.behaviours) for b in blueprints) >= 0.4 * len(blueprints)


def test_labels_are_what_the_task_admits_and_exclusive_on_the_first_question() -> None:
    domain = load_domain("banking", 200, 0)
    for bp in _blueprints("banking"):
        user = bp.user
        drawn = set(user.behaviours) - {Behaviour.ends_unhappy}
        assert drawn <= set(admitted(domain, user.hidden_facts, user.intents, user.disclosure,
                                     {**user.known_facts, **user.hidden_facts}))
        assert not {Behaviour.question_back, Behaviour.withholds_detail} <= drawn
        assert not {Behaviour.corrects_detail, Behaviour.wrong_detail} <= drawn
        assert (Behaviour.wrong_detail in drawn) == any(d.action == "misstate" for d in user.disclosure)
        outcomes = {i.outcome for i in user.intents}
        assert (Behaviour.ends_unhappy in user.behaviours) == ("refused" in outcomes
                                                               and "transferred" not in outcomes)


def test_the_draw_leaves_the_rest_of_the_blueprint_as_it_was() -> None:
    with_them = _blueprints("retail", 60)
    without = _blueprints("retail", 60, p_behaviour=0.0)
    assert len(with_them) == len(without)
    for a, b in zip(with_them, without, strict=True):
        assert set(b.user.behaviours) <= {Behaviour.ends_unhappy}
        plan = tuple(d for d in a.user.disclosure if d.action != "misstate")  # wrong_detail's step
        assert a.user.model_copy(update={"behaviours": (), "disclosure": plan}) == \
            b.user.model_copy(update={"behaviours": ()})
        assert a.ground_truth == b.ground_truth
        assert (a.id == b.id) == (a.user.behaviours == b.user.behaviours)


def test_behaviours_survive_arrow_and_an_old_row_keeps_its_id() -> None:
    bp = next(b for b in _blueprints("airline", 40) if b.user.behaviours)
    row = blueprint_to_row(bp, "run")
    assert blueprint_from_row(row) == bp
    plain = next(b for b in _blueprints("airline", 40) if not b.user.behaviours)
    old = blueprint_to_row(plain, "run")
    del old["behaviours"]  # a row stored before behaviours
    back = blueprint_from_row(old)
    assert back.user.behaviours == () and back.id == plain.id
    assert TaskBlueprint.make_id(back.environment, back.user, back.ground_truth, back.policy_rules) == plain.id


def _one_digit_off(wrong: str, right: str) -> bool:
    diff = [(a, b) for a, b in zip(wrong, right, strict=True) if a != b]
    return len(wrong) == len(right) and len(diff) == 1 and diff[0][0].isdigit() and diff[0][1].isdigit()


def _corrected(text: str, value: str) -> bool:
    """``value`` is said in ``text`` after a slip: the same with one digit changed."""
    at = text.rfind(value)
    return at > 0 and any(_one_digit_off(text[j:j + len(value)], value) for j in range(at))


def test_the_user_says_it_where_planned_and_the_oracle_answers_it() -> None:
    """What the behaviours look like in the dialogue: the user's act in the message the
    Behaviour docstring names, the oracle's answer to it in its next message."""
    blueprints = [b for b in _blueprints("retail", 200) if b.user.behaviours]
    _, _, played = _played("retail", blueprints)
    seen: Counter[Behaviour] = Counter()
    for episode in played:
        bp = episode.job.blueprint
        said = [m for m in episode.trajectory.messages if m.role in ("user", "assistant") and m.content]
        users = [m.content for m in said if m.role == "user"]
        agents = [m.content for m in said if m.role == "assistant"]
        for behaviour in bp.user.behaviours:
            seen[behaviour] += 1
            if behaviour is Behaviour.wrong_detail:
                # the lookup with the detail a digit off finds nothing; the agent says so and
                # asks again; the user apologises and gives it right; the same lookup then works
                [step] = [d for d in bp.user.disclosure if d.action == "misstate"]
                right = bp.user.fact(step.fact)
                messages = episode.trajectory.messages
                failed = [i for i, m in enumerate(messages) if m.role == "tool" and m.is_error]
                assert len(failed) == 1, bp.id
                call = messages[failed[0] - 1].tool_calls[0]
                assert step.value in call.arguments and right not in call.arguments
                reply = messages[failed[0] + 1]
                assert reply.role == "assistant" and not reply.tool_calls
                assert any(t in reply.content for t in NOT_FOUND)
                assert any(step.value in m.content for m in messages[:failed[0]] if m.role == "user")
                again = next(m for m in messages[failed[0] + 1:] if m.role == "user")
                assert right in again.content and any(t.lower() in again.content.lower() for t in SORRY_WRONG)
                lookup = next(m for m in messages[failed[0] + 1:] if m.role == "assistant" and m.tool_calls)
                assert lookup.tool_calls[0].name == call.name and right in lookup.tool_calls[0].arguments
            elif behaviour is Behaviour.corrects_detail:
                # a hidden fact's value said right after one with a single digit changed
                values = [v for v in bp.user.hidden_facts.values() if any(c.isdigit() for c in v)]
                assert any(_corrected(text, v) for text in users for v in values), bp.id
            elif behaviour is Behaviour.ends_unhappy:
                assert said[-1].role == "user" and said[-1].content in UNHAPPY
            elif behaviour is Behaviour.asks_human:
                assert any(text in users[0] for text in ASK_HUMAN)
                assert any(text in agents[0] for text in ON_BEHAVIOUR[behaviour])
            elif behaviour in ON_BEHAVIOUR:
                bank = {Behaviour.question_back: QUESTION_BACK, Behaviour.withholds_detail: WITHHOLD,
                        Behaviour.off_topic: OFF_TOPIC, Behaviour.impatient: IMPATIENT}[behaviour]
                at = next(i for i, m in enumerate(said) if m.role == "user" and any(t in m.content for t in bank))
                reply = next(m.content for m in said[at + 1:] if m.role == "assistant")
                assert any(text in reply for text in ON_BEHAVIOUR[behaviour]), (behaviour, reply)
    assert min(seen[b] for b in Behaviour if b is not Behaviour.price_second_thoughts) >= 3, seen


@pytest.mark.parametrize("name", ["retail", "airline"])
def test_a_price_said_at_a_swap_or_a_flight_change_brings_second_thoughts(name: str) -> None:
    """Retail's item swaps and airline's flight changes confirm with what the new variant or
    flight costs, as the product read or the flight search showed it, so a user can balk at the
    price: the blueprints labelled so act it out at that confirmation, quoting the price the
    agent said, and the oracle still passes."""
    blueprints = [b for b in _blueprints(name, 300, p_revision=1.0)
                  if Behaviour.price_second_thoughts in b.user.behaviours]
    assert len(blueprints) >= 3, name
    domain, users, played = _played(name, blueprints)
    for episode in played:
        bp = episode.job.blueprint
        said = [m for m in episode.trajectory.messages if m.role in ("user", "assistant") and m.content]
        balked = [i for i, m in enumerate(said) if m.role == "user"
                  and any(m.content.startswith(t.split("{price}")[0]) and "$" in m.content for t in PRICE)]
        assert balked, bp.id
        price = said[balked[0]].content.split("$", 1)[1].split()[0].rstrip("?.,")
        assert said[balked[0] - 1].role == "assistant" and f"${price}" in said[balked[0] - 1].content
        assert Behaviour.price_second_thoughts in users[bp.id].acted
        failed = [(v.check, v.reason) for v in verify(episode.trajectory, bp, domain) if not v.passed]
        assert not failed, (bp.id, failed)


@pytest.mark.parametrize("name", ["retail", "telecom"])
def test_faults_are_still_caught_with_behaviours(name: str) -> None:
    """A fault chosen as the build chooses them, on blueprints with behaviours: the check the
    fault is meant for fails."""
    blueprints = [b for b in _blueprints(name) if set(b.user.behaviours) - {Behaviour.ends_unhappy}][:40]
    domain = load_domain(name, 200, 0)
    faults: dict[str, Fault] = {}
    for i, bp in enumerate(blueprints):
        fault = choose_fault(bp, domain, random.Random(i), list(FaultKind))
        if fault is not None:
            faults[bp.id] = fault
    _, _, played = _played(name, [b for b in blueprints if b.id in faults], faults)
    assert len(played) >= 20
    for episode in played:
        fault = episode.job.fault
        assert fault is not None
        verdicts = {v.check: v.passed for v in verify(episode.trajectory, episode.job.blueprint, domain)}
        assert not all(verdicts.values()), (fault, episode.job.blueprint.user.behaviours)
        assert not verdicts[FAULT_CHECKS[fault.kind]], (fault, verdicts)


def test_a_model_user_is_told_its_behaviours() -> None:
    """A model playing the user gets each labelled behaviour as an instruction, and none other."""
    from trajforge.simulation.llm_user import BEHAVIOUR_INSTRUCTIONS, user_instructions

    domain = load_domain("telecom", 200, 0)
    blueprints = _blueprints("telecom", 60)
    assert set(BEHAVIOUR_INSTRUCTIONS) == set(Behaviour)
    for bp in blueprints:
        prompt = user_instructions(bp, domain)
        for behaviour, text in BEHAVIOUR_INSTRUCTIONS.items():
            assert (text in prompt) == (behaviour in bp.user.behaviours), (bp.id, behaviour)
