"""Dual control: the user holds their own device state and tools (telecom's phones).

The user's calls run as the user; the agent never sees them or their results; the checks judge
only the agent's calls; the expected final state covers the device, and ``final_state`` says
which side differs."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence

import pytest

from trajforge.environments.telecom import TelecomDomain
from trajforge.generators import generate_blueprints
from trajforge.schemas import TaskBlueprint
from trajforge.schemas.arrow import message_from_row, message_to_row, trajectory_from_row, trajectory_to_row
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.messages import (
    MESSAGE_ADAPTER,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    agent_view,
)
from trajforge.schemas.trajectory import EpisodeSpec, TerminationReason, Trajectory
from trajforge.simulation.agents import Script, ScriptedAgent
from trajforge.simulation.runner import AgentReply, EpisodeLimits, run_episode
from trajforge.simulation.user import ScriptedUser
from trajforge.store.exports import openai_record, sft_record
from trajforge.verifiers import verify

RUN = "run_dual"


@pytest.fixture(scope="module")
def domain() -> TelecomDomain:
    return TelecomDomain(120, 0)


@pytest.fixture(scope="module")
def blueprints(domain: TelecomDomain) -> list[TaskBlueprint]:
    out = [b for b in generate_blueprints(domain, GenerationConfig(), RUN, 0, 80) if isinstance(b, TaskBlueprint)]
    assert len(out) >= 70
    return out


def _with_user_calls(blueprints: list[TaskBlueprint], kind: str) -> TaskBlueprint:
    """A blueprint of one intent of ``kind`` whose ground truth changes the phone."""
    return next(b for b in blueprints if [i.kind for i in b.user.intents] == [kind]
                and any(c.table == "devices" for c in b.ground_truth.final_state_diff))


def episode(bp: TaskBlueprint, domain: TelecomDomain, agent: object | None = None, seed: int = 0) -> Trajectory:
    spec = EpisodeSpec(agent="scripted:oracle", user="scripted", seed=seed, max_turns=40)
    rng = random.Random(seed)
    return asyncio.run(run_episode(
        bp.id, domain.environment(), agent if agent is not None else ScriptedAgent(bp, domain, rng),  # type: ignore[arg-type]
        ScriptedUser(bp, domain, random.Random(seed + 1)), EpisodeLimits(), run_id=RUN, episode=spec))


def _user_calls(t: Trajectory) -> list[ToolCall]:
    return [c for m in t.messages if isinstance(m, UserMessage) for c in m.tool_calls]


def _failed(t: Trajectory, bp: TaskBlueprint, domain: TelecomDomain) -> dict[str, str]:
    return {v.check: v.reason for v in verify(t, bp, domain) if not v.passed}


# --- the records --------------------------------------------------------------------------------

def test_a_user_message_without_calls_is_stored_as_before() -> None:
    plain = UserMessage(content="hi")
    assert plain.model_dump() == {"role": "user", "content": "hi"}
    assert plain.model_dump_json() == '{"role":"user","content":"hi"}'
    assert message_to_row(plain)["tool_calls"] is None
    assert message_from_row(message_to_row(plain)) == plain
    acting = UserMessage(content="", tool_calls=(ToolCall(id="ucall_001", name="check_status_bar",
                                                          arguments='{"number": "415-555-0100"}'),))
    row = message_to_row(acting)
    assert row["tool_calls"] == [{"id": "ucall_001", "name": "check_status_bar",
                                  "arguments": '{"number": "415-555-0100"}'}]
    assert message_from_row(row) == acting
    assert MESSAGE_ADAPTER.validate_json(acting.model_dump_json()) == acting


def test_the_agents_view_leaves_the_users_calls_out() -> None:
    call = ToolCall(id="ucall_001", name="toggle_airplane_mode", arguments="{}")
    messages: list[Message] = [
        UserMessage(content="no data"), AssistantMessage(content="check the status bar"),
        UserMessage(content="", tool_calls=(call,)),
        ToolMessage(content='{"signal": "x"}', tool_call_id="ucall_001", name="toggle_airplane_mode"),
        UserMessage(content="it shows x")]
    view = agent_view(messages)
    assert view == [messages[0], messages[1], messages[4]]
    seen: set[str] = set()  # read in pieces, as the LLM agent does
    assert agent_view(messages[:3], seen) + agent_view(messages[3:], seen) == view


# --- episodes -----------------------------------------------------------------------------------

def test_the_oracle_asks_and_the_user_acts_on_their_phone(domain: TelecomDomain,
                                                          blueprints: list[TaskBlueprint]) -> None:
    bp = _with_user_calls(blueprints, "no_data")
    t = episode(bp, domain)
    assert t.termination is TerminationReason.user_stop
    assert t.final_state_hash == bp.ground_truth.final_state_hash
    assert _failed(t, bp, domain) == {}
    made = _user_calls(t)
    expected = [c for c in bp.ground_truth.calls if c.kind == "user"]
    assert [(c.name, json.loads(c.arguments)) for c in made] == [(c.name, c.arguments) for c in expected]
    assert all(c.id.startswith("ucall_") for c in made)
    answered = {m.tool_call_id for m in t.messages if isinstance(m, ToolMessage)}
    assert {c.id for c in made} <= answered
    # the agent's tools are the trajectory's; the phone's are not among them
    assert not {s.function.name for s in t.tools} & set(domain.user_tools)
    assert not any(c.name in domain.user_tools for m in t.messages if isinstance(m, AssistantMessage)
                   for c in m.tool_calls)


def test_account_and_device_both_change_for_roaming(domain: TelecomDomain,
                                                    blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if [i.kind for i in b.user.intents] == ["roaming_abroad"]
              and {c.table for c in b.ground_truth.final_state_diff} == {"lines", "devices"})
    t = episode(bp, domain)
    assert _failed(t, bp, domain) == {}
    assert {c.table for c in t.final_state_diff} == {"lines", "devices"}


class _Observing(ScriptedAgent):
    """The oracle, recording every message it is handed."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.handed: list[Message] = []

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        self.handed = list(messages)
        return await super().respond(messages)


def test_the_agent_never_sees_the_users_calls(domain: TelecomDomain, blueprints: list[TaskBlueprint]) -> None:
    bp = _with_user_calls(blueprints, "no_data")
    agent = _Observing(bp, domain, random.Random(0))
    t = episode(bp, domain, agent)
    user_ids = {c.id for c in _user_calls(t)}
    assert user_ids
    assert all(o.tool in domain.agent_tools for o in agent.observed)
    assert not any(user_ids & set(agent._sent))
    # what an exported example or an LLM agent would be shown
    row = trajectory_to_row(t)
    assert trajectory_from_row(row).messages == t.messages  # stored and read back whole
    for record in (sft_record(row), openai_record(row)):
        assert record is not None
        text = json.dumps(record["messages"])
        assert "ucall_" not in text and "check_status_bar" not in text
        assert not any(m["role"] == "user" and m.get("tool_calls") for m in record["messages"])


# --- verification: the must-show ---------------------------------------------------------------

class _NeverAsks(ScriptedAgent):
    """The oracle, except that it never asks the user to do anything on the phone."""

    def _instruct(self, t: int) -> Script:
        self._pending.remove(t)
        yield from ()


class _AsksTheWrongSetting(ScriptedAgent):
    """The oracle, except that it asks for the wrong setting: airplane mode instead of the fix."""

    def _instruct(self, t: int) -> Script:
        call = self.bp.ground_truth.calls[t]
        if call.name == "check_status_bar":
            yield from super()._instruct(t)
            return
        self._pending.remove(t)
        yield from self._say("Please open your quick settings and switch airplane mode off.")

    def _say(self, text: str) -> Script:
        from trajforge.simulation.agents import Say

        yield Say(text)


def test_right_account_wrong_device_fails_final_state_on_the_device_side(
        domain: TelecomDomain, blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if [i.kind for i in b.user.intents] == ["roaming_abroad"]
              and {c.table for c in b.ground_truth.final_state_diff} == {"lines", "devices"})
    oracle = episode(bp, domain)
    assert "final_state" not in _failed(oracle, bp, domain)
    # the same account write, but the user never performs the instructed toggle
    lazy = episode(bp, domain, _NeverAsks(bp, domain, random.Random(0)))
    assert {c.table for c in lazy.final_state_diff} == {"lines"}  # the account side is right
    failed = _failed(lazy, bp, domain)
    assert "final_state" in failed
    assert failed["final_state"].startswith("the user's device state differs: devices.")
    assert "account state" not in failed["final_state"]
    assert "roaming" in failed["final_state"]


def test_asking_for_the_wrong_setting_fails_on_the_device_side(domain: TelecomDomain,
                                                               blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if [i.kind for i in b.user.intents] == ["no_data"]
              and all(c.name != "toggle_airplane_mode" for c in b.ground_truth.calls))
    t = episode(bp, domain, _AsksTheWrongSetting(bp, domain, random.Random(0)))
    failed = _failed(t, bp, domain)
    assert failed["final_state"].startswith("the user's device state differs: devices.")


def test_an_account_side_difference_is_named_as_such(domain: TelecomDomain,
                                                     blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if any(c.name == "pay_bill" for c in b.ground_truth.calls))
    t = episode(bp, domain)
    env = domain.environment()
    bill = next(c.arguments["bill_id"] for c in bp.ground_truth.calls if c.name == "pay_bill")
    untouched = t.model_copy(update={"final_state_hash": env.state_hash(), "final_state_diff": env.diff()})
    reason = _failed(untouched, bp, domain)["final_state"]
    assert reason.startswith(f"the account state differs: bills.{bill}.status")


def test_an_agent_calling_the_users_tool_breaks_the_tool_schema(domain: TelecomDomain,
                                                               blueprints: list[TaskBlueprint]) -> None:
    bp = _with_user_calls(blueprints, "no_data")
    t = episode(bp, domain)
    number = next(c.arguments["number"] for c in bp.ground_truth.calls if c.kind == "user")
    call = ToolCall(id="call_900", name="toggle_mobile_data", arguments=json.dumps({"number": number}))
    result = domain.environment().execute(call)
    assert result.is_error and "unknown tool" in result.content
    messages = list(t.messages[:-1]) + [AssistantMessage(tool_calls=(call,)), result, t.messages[-1]]
    failed = _failed(t.model_copy(update={"messages": tuple(messages)}), bp, domain)
    assert "tool_schema" in failed


# --- the LLM user is given the user's tools -----------------------------------------------------

class _FakeGateway:
    """Answers each user-model call with the next queued choice; records what it was sent."""

    def __init__(self, *choices: object) -> None:
        self.choices = list(choices)
        self.sent: list[tuple[list[dict[str, object]], list[dict[str, object]]]] = []

    async def complete(self, role: str, model: object, messages: list[dict[str, object]], **kw: object) -> object:
        from trajforge.simulation.llm import Completion

        self.sent.append((messages, kw["tools"]))  # type: ignore[arg-type]
        return Completion(choices=(self.choices.pop(0),), prompt_tokens=1, completion_tokens=1,  # type: ignore[arg-type]
                          cost_usd=0.0)


def test_the_llm_user_uses_its_own_tools(domain: TelecomDomain, blueprints: list[TaskBlueprint]) -> None:
    from trajforge.schemas.config import ModelConfig, UserSimulatorConfig
    from trajforge.simulation.llm import Choice, EpisodeLedger, RawToolCall
    from trajforge.simulation.llm_user import STOP_TOOL_NAME, LLMUser, user_instructions

    bp = _with_user_calls(blueprints, "no_data")
    number = next(c.arguments["number"] for c in bp.ground_truth.calls if c.kind == "user")
    check = RawToolCall(id="x1", name="check_status_bar", arguments=json.dumps({"number": number}))
    gateway = _FakeGateway(Choice(content=None, tool_calls=(check,), finish_reason="tool_calls"),
                           Choice(content="It says no data.", tool_calls=(), finish_reason="stop"))
    user = LLMUser(gateway, ModelConfig(model="openai/user"), bp, domain,  # type: ignore[arg-type]
                   EpisodeLedger.starting_now(60), UserSimulatorConfig())
    assert "check_status_bar" in user_instructions(bp, domain)
    env = domain.environment()
    messages: list[Message] = [AssistantMessage(content="What does your status bar show?")]
    first = asyncio.run(user.respond(messages))
    assert [c.name for c in first.message.tool_calls] == ["check_status_bar"]
    assert first.message.tool_calls[0].id == "ucall_001" and not first.stop
    messages += [first.message, env.execute(first.message.tool_calls[0], actor="user")]
    second = asyncio.run(user.respond(messages))
    assert second.message.content == "It says no data." and not second.message.tool_calls
    sent, tools = gateway.sent[-1]
    assert {t["function"]["name"] for t in tools} == {STOP_TOOL_NAME, *domain.user_tools}  # type: ignore[index]
    assert sent[-2]["tool_calls"][0]["id"] == "ucall_001"  # type: ignore[index]
    assert sent[-1]["role"] == "tool" and "signal" in str(sent[-1]["content"])
