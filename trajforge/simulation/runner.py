"""The episode runner: user <-> agent <-> tools inside one environment, until a termination.

Policies are async so that model-backed ones (litellm, vLLM) plug in unchanged; scripted ones
return at once. Layer 1 in tau2-bench's terms: no registry, no config parsing, no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from trajforge.environments.base import Environment
from trajforge.errors import ToolCrash
from trajforge.schemas.messages import AssistantMessage, Message, SystemMessage, UserMessage
from trajforge.schemas.trajectory import EpisodeSpec, RoleUsage, TerminationReason, Trajectory


@dataclass(frozen=True)
class AgentReply:
    message: AssistantMessage
    end: bool = False  # the agent closes the conversation after this message


@dataclass(frozen=True)
class UserReply:
    message: UserMessage
    stop: bool = False
    gave_up: bool = False


class AgentPolicy(Protocol):
    async def respond(self, messages: Sequence[Message]) -> AgentReply: ...


class UserPolicy(Protocol):
    async def respond(self, messages: Sequence[Message]) -> UserReply: ...


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int = 40
    max_steps_per_turn: int = 12


async def run_episode(blueprint_id: str, env: Environment, agent: AgentPolicy, user: UserPolicy,
                      limits: EpisodeLimits, *, run_id: str, episode: EpisodeSpec) -> Trajectory:
    started = time.perf_counter()
    messages: list[Message] = [SystemMessage(content=env.domain.policy)]
    usage = {"agent": 0, "user": 0}
    termination: TerminationReason | None = None
    reply = await user.respond(messages)
    usage["user"] += 1
    messages.append(reply.message)
    turns = 1
    while termination is None:
        for _ in range(limits.max_steps_per_turn):
            answer = await agent.respond(messages)
            usage["agent"] += 1
            messages.append(answer.message)
            if not answer.message.tool_calls:
                break
            for call in answer.message.tool_calls:
                try:
                    messages.append(env.execute(call))
                except ToolCrash:
                    termination = TerminationReason.tool_crash
                    break
                if call.name == env.domain.transfer_tool and not messages[-1].is_error:  # type: ignore[union-attr]
                    termination = TerminationReason.transfer
            if termination is not None:
                break
        else:
            termination = TerminationReason.agent_error  # tool calls without ever answering
        if termination is not None:
            break
        if answer.end:
            termination = TerminationReason.agent_stop
            break
        if turns >= limits.max_turns:
            termination = TerminationReason.max_turns
            break
        reply = await user.respond(messages)
        usage["user"] += 1
        messages.append(reply.message)
        turns += 1
        if reply.stop:
            termination = (TerminationReason.user_gave_up if reply.gave_up
                           else TerminationReason.user_stop)
    return Trajectory(
        id=Trajectory.make_id(blueprint_id, episode),
        blueprint_id=blueprint_id,
        run_id=run_id,
        domain=env.domain.name,
        episode=episode,
        messages=tuple(messages),
        tools=env.domain.tool_specs(),
        termination=termination,
        final_state_hash=env.state_hash(),
        final_state_diff=env.diff(),
        usage=tuple(RoleUsage(role=r, calls=n) for r, n in usage.items()),
        cost_usd=0.0,
        latency_s=round(time.perf_counter() - started, 6),
    )
