"""The LLM agent and user simulator through the gateway, against a loopback server."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from tests.llm.conftest import ScriptServer, call, ok
from trajforge.environments.registry import load_domain
from trajforge.generators import generate_blueprints
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import GatewayConfig, GenerationConfig, ModelConfig, UserSimulatorConfig
from trajforge.schemas.trajectory import EpisodeSpec, TerminationReason
from trajforge.simulation import EpisodeLimits, ScriptedUser, run_episode
from trajforge.simulation.llm import Budget, EpisodeLedger, Gateway
from trajforge.simulation.llm_agent import TEXT_CALL_ERROR, LLMAgent, text_tool_calls
from trajforge.simulation.llm_user import (
    STOP_TOOL_NAME,
    Candidate,
    LLMUser,
    UserGuards,
    user_instructions,
)

FAST = GatewayConfig(call_timeout_s=5, episode_timeout_s=30, max_retries=2, backoff_initial_s=0.01)


@pytest.fixture(scope="module")
def domain():
    return load_domain("retail", 60, 0)


@pytest.fixture(scope="module")
def blueprint(domain) -> TaskBlueprint:
    return next(b for b in generate_blueprints(domain, GenerationConfig(seed=1), "t", 0, 20)
                if isinstance(b, TaskBlueprint) and b.structure.write_count >= 1)


def stop(outcome: str, text: str = "Thanks, bye!") -> dict:
    return ok(content=text, tool_calls=[call(STOP_TOOL_NAME, json.dumps({"outcome": outcome}))])


def episode(server: ScriptServer, domain, bp: TaskBlueprint, *, llm_user: bool, user_retries: int = 2):
    async def run():
        gateway = Gateway(FAST, Budget(None))
        ledger = EpisodeLedger.starting_now(FAST.episode_timeout_s)
        env = domain.environment()
        agent = LLMAgent(gateway, ModelConfig(model="openai/agent", api_base=server.url), domain, ledger)
        if llm_user:
            user = LLMUser(gateway, ModelConfig(model="openai/user", api_base=server.url), bp, domain,
                           ledger, UserSimulatorConfig(retries=user_retries),
                           goal_met=lambda: env.state_hash() == bp.ground_truth.final_state_hash)
        else:
            user = ScriptedUser(bp, domain, random.Random(1))
        try:
            return await run_episode(bp.id, env, agent, user, EpisodeLimits(max_turns=6), run_id="t",
                                     episode=EpisodeSpec(agent="a", user="u", seed=0, max_turns=6),
                                     ledger=ledger)
        finally:
            await gateway.aclose()

    return asyncio.run(run())


def test_text_tool_calls_are_found() -> None:
    names = {"get_order_details"}
    assert text_tool_calls('<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W1"}}'
                           '</tool_call>', names) == [("get_order_details", '{"order_id": "#W1"}')]
    assert text_tool_calls('{"name": "get_order_details", "parameters": {}}', names) == [
        ("get_order_details", "{}")]
    assert text_tool_calls("Your order {is} on its way", names) == []
    assert text_tool_calls('{"name": "not_a_tool", "arguments": {}}', names) == []


def test_malformed_calls_are_recorded_and_answered_with_errors(script_server, domain, blueprint) -> None:
    script_server.queue(
        "agent",
        ok(content=None, tool_calls=[call("get_order_details", '{"order_id": "#W1', "c1")]),  # cut JSON
        ok(content=None, tool_calls=[call("no_such_tool", "{}", "c2")]),
        ok(content=None, tool_calls=[call("get_order_details", '{"order": 5}', "c3")]),  # schema
        ok(content='<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W1"}}</tool_call>'),
        ok(content="Sorry, I could not find that."),
    )
    traj = episode(script_server, domain, blueprint, llm_user=False)
    errors = [m for m in traj.messages if m.role == "tool" and m.is_error]
    assert [e.tool_call_id for e in errors] == ["c1", "c2", "c3", "text_call_1"]
    assert "not a JSON object" in errors[0].content
    assert "unknown tool" in errors[1].content
    assert "invalid arguments" in errors[2].content
    assert TEXT_CALL_ERROR in errors[3].content
    # the text call is kept as the model wrote it, and recorded as a call
    text_turn = next(m for m in traj.messages if m.role == "assistant" and m.content and "<tool_call>" in m.content)
    assert text_turn.tool_calls[0].id == "text_call_1"
    assert traj.termination is not TerminationReason.llm_error


def test_an_agent_model_that_keeps_failing_ends_the_episode_as_llm_error(script_server, domain, blueprint) -> None:
    script_server.queue("agent", *[{"status": 500, "body": {"error": {"message": "down"}}}] * 5)
    traj = episode(script_server, domain, blueprint, llm_user=False)
    assert traj.termination is TerminationReason.llm_error
    assert "server_error" in (traj.error or "")
    assert traj.retries == FAST.max_retries


def test_user_prompt_carries_the_plan_and_no_ground_truth(domain, blueprint) -> None:
    text = user_instructions(blueprint, domain)
    for value in blueprint.user.hidden_facts.values():
        assert value in text
    assert "only when the agent asks" in text
    assert blueprint.ground_truth.final_state_hash not in text
    assert all(c.name not in text for c in blueprint.ground_truth.calls)


def test_user_guards(domain, blueprint) -> None:
    met = {"value": False}
    guards = UserGuards(blueprint, domain, lambda: met["value"])
    fact = next(iter(blueprint.user.known_facts.values()))
    assert guards.problem(Candidate(f"Hi, it's {fact}.", False, False), "") is None
    assert "empty" in guards.problem(Candidate("", False, False), "")
    assert "leaks" in guards.problem(Candidate("My hidden facts say #W0000001", False, False), "")
    assert "agent" in guards.problem(Candidate("How can I help you today?", False, False), "")
    assert "not all been carried out" in guards.problem(Candidate("Bye", True, False), "")
    assert guards.problem(Candidate("This is useless, bye", True, True), "") is None  # giving up is fine
    assert "invents" in guards.problem(Candidate("My order is #W9999999.", False, False), "")
    # an id the agent said is not invented
    assert guards.problem(Candidate("Yes, #W9999999.", False, False), "I found #W9999999.") is None
    met["value"] = True
    assert guards.problem(Candidate("Bye", True, False), "") is None


def test_a_bad_user_turn_is_regenerated_with_feedback(script_server, domain, blueprint) -> None:
    script_server.queue("user", ok(content="How can I help you today?"), ok(content="Hi, I need help."),
                        stop("gave_up", "Never mind."))
    script_server.queue("agent", ok(content="What do you need?"))
    traj = episode(script_server, domain, blueprint, llm_user=True)
    assert traj.messages[1].content == "Hi, I need help."
    assert traj.termination is TerminationReason.user_gave_up
    retry = script_server.requests[1]
    assert retry["model"] == "user" and "rejected" in retry["messages"][-1]["content"]
    assert script_server.requests[0]["tools"][0]["function"]["name"] == STOP_TOOL_NAME


def test_a_user_that_keeps_failing_is_a_simulator_failure(script_server, domain, blueprint) -> None:
    script_server.queue("user", *[ok(content="As an AI, how can I help you?")] * 3)
    traj = episode(script_server, domain, blueprint, llm_user=True, user_retries=2)
    assert traj.termination is TerminationReason.user_error
    assert traj.error and "user simulator" in traj.error
    assert script_server.count("user") == 3 and script_server.count("agent") == 0


def test_premature_done_is_refused_until_the_goal_is_met(script_server, domain, blueprint) -> None:
    script_server.queue("user", ok(content="Hi, please help with my order."), stop("done"), stop("done"),
                        stop("done"))
    script_server.queue("agent", ok(content="Sure, which order?"))
    traj = episode(script_server, domain, blueprint, llm_user=True, user_retries=2)
    assert traj.termination is TerminationReason.user_error
    assert "not all been carried out" in (traj.error or "")
