"""The episode runner: user <-> agent <-> tools inside one environment, until a termination.

Policies are async so that model-backed ones (litellm, vLLM) plug in unchanged; scripted ones
return at once. Layer 1 in tau2-bench's terms: no registry, no config parsing, no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from trajforge.environments.base import Environment
from trajforge.environments.injection import flag_tool_outputs
from trajforge.errors import PolicyFailure, ToolCrash  # policies import PolicyFailure from here too
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from trajforge.schemas.trajectory import EpisodeSpec, RoleUsage, TerminationReason, Trajectory

if TYPE_CHECKING:
    from trajforge.simulation.llm import EpisodeLedger


@dataclass(frozen=True)
class AgentReply:
    message: AssistantMessage
    end: bool = False  # the agent closes the conversation after this message
    # calls the policy already knows are malformed (e.g. written into text): the runner answers
    # each with this error instead of executing it, so the model can recover
    rejected: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class UserReply:
    """The user's turn. A message with ``tool_calls`` uses the user's own tools (dual control):
    the runner executes them as the user, appends their results and asks the user again; the
    turn ends with a message without calls (its ``stop`` is the one that counts)."""

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
                      limits: EpisodeLimits, *, run_id: str, episode: EpisodeSpec,
                      ledger: EpisodeLedger | None = None) -> Trajectory:
    """One episode. ``ledger`` carries the model calls' usage, cost and entropy when a policy is
    model-backed (it is filled by the policies, read here)."""
    started = time.perf_counter()
    messages: list[Message] = [SystemMessage(content=env.domain.policy)]
    usage = {"agent": 0, "user": 0}
    termination: TerminationReason | None = None
    error: str | None = None
    try:
        reply = await _user_turn(env, user, messages, usage, limits)
    except PolicyFailure as failure:
        return _trajectory(blueprint_id, env, run_id, episode, messages, failure.termination,
                           usage, ledger, started, failure.detail)
    except ToolCrash:
        return _trajectory(blueprint_id, env, run_id, episode, messages,
                           TerminationReason.tool_crash, usage, ledger, started, None)
    turns = 1
    while termination is None:
        for _ in range(limits.max_steps_per_turn):
            try:
                answer = await agent.respond(messages)
            except PolicyFailure as failure:
                termination, error = failure.termination, failure.detail
                break
            usage["agent"] += 1
            messages.append(answer.message)
            if not answer.message.tool_calls:
                break
            for call in answer.message.tool_calls:
                if call.id in answer.rejected:
                    messages.append(ToolMessage(content=f"Error: {answer.rejected[call.id]}",
                                                tool_call_id=call.id, name=call.name, is_error=True))
                    continue
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
        try:
            reply = await _user_turn(env, user, messages, usage, limits)
        except PolicyFailure as failure:
            termination, error = failure.termination, failure.detail
            break
        except ToolCrash:
            termination = TerminationReason.tool_crash
            break
        turns += 1
        if reply.stop:
            termination = (TerminationReason.user_gave_up if reply.gave_up
                           else TerminationReason.user_stop)
    return _trajectory(blueprint_id, env, run_id, episode, messages, termination, usage, ledger,
                       started, error)


async def _user_turn(env: Environment, user: UserPolicy, messages: list[Message],
                     usage: dict[str, int], limits: EpisodeLimits) -> UserReply:
    """One user turn: the user's replies until one without tool calls, each call executed as
    the user (its result appended for the user to read), at most ``max_steps_per_turn`` rounds
    of calls. Raises ``PolicyFailure`` (user_error) when the user never says anything."""
    for _ in range(limits.max_steps_per_turn + 1):
        reply = await user.respond(messages)
        usage["user"] += 1
        messages.append(reply.message)
        if not reply.message.tool_calls:
            return reply
        for call in reply.message.tool_calls:
            messages.append(env.execute(call, actor="user"))
    raise PolicyFailure(TerminationReason.user_error, "the user made tool calls without ever answering")


def _trajectory(blueprint_id: str, env: Environment, run_id: str, episode: EpisodeSpec,
                messages: list[Message], termination: TerminationReason, usage: dict[str, int],
                ledger: EpisodeLedger | None, started: float, error: str | None) -> Trajectory:
    roles = []
    for role, calls in usage.items():
        if ledger is not None and role in ledger.roles:
            roles.append(ledger.roles[role].usage(role))
        else:
            roles.append(RoleUsage(role=role, calls=calls))
    if ledger is not None:  # roles outside the dialogue (e.g. a judge) are billed too
        roles += [book.usage(role) for role, book in ledger.roles.items() if role not in usage]
    costs = [r.cost_usd for r in roles]
    entropy = tuple(ledger.entropy) if ledger and any(e is not None for e in ledger.entropy) else None
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
        usage=tuple(roles),
        cost_usd=None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 10),
        latency_s=round(time.perf_counter() - started, 6),
        agent_entropy=entropy,
        retries=sum(r.retries for r in roles),
        error=error,
        flags=flag_tool_outputs(messages),
    )
