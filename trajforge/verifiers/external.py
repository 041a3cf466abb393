"""Conversations produced elsewhere, as trajectories the checks can judge.

A row is one conversation in the openai export's shape (``store/exports.openai_record``):
``messages`` (OpenAI chat messages; tool-call ``arguments`` as JSON text, or an object) and
``tools``, plus the ids that tie it to a dataset. ``blueprint_id`` is required; ``trajectory_id``
(or ``id``), ``run_id``, ``termination``, ``max_turns`` and ``agent`` are optional. Each may be a
top-level key or a key of the row's ``metadata`` object (where the export puts them); when both
are given they must agree.

What the row claims about the world is not trusted. Every tool call is replayed, in order, on a
fresh environment of the blueprint's domain, and the replay decides:

- each call's result: the tool messages are rebuilt from the replay (content, tool name,
  ``is_error``) and placed right after their assistant message, in call order, as the episode
  runner records them; a call the row leaves unanswered (a truncated conversation: the openai
  export cuts trailing tool and user messages) is answered by the replay too;
- except a call the row answers with an error (content starting ``Error:``, or ``is_error``)
  that the environment would have run: the harness refused it (as the runner refuses calls an
  agent wrote into text), so it changed nothing, and the row's error text stays;
- the final state hash and diff, from the replayed state;
- a tool that crashes ends the episode there as ``tool_crash``, as it does in the runner (the
  row's later messages are not judged).

Termination: the row's ``termination`` when given (a ``TerminationReason`` value); else
``tool_crash`` on a crash, ``transfer`` after a successful transfer call, ``max_turns`` when the
user spoke ``max_turns`` times, and otherwise ``user_stop``: a conversation handed over as
finished is taken to have ended normally, and ``termination_assumed`` says so.

Malformed rows (``MalformedRow``, one line of reason each) are those the checks cannot read: no
``blueprint_id``, ``messages`` not a list, a message of unknown role or wrong shape, a tool
result that answers no earlier call. A tool call whose arguments are not JSON is not malformed:
it is the agent's mistake, and the checks judge it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.injection import flag_tool_outputs
from trajforge.errors import ToolCrash
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.ids import content_id
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from trajforge.schemas.trajectory import EpisodeSpec, TerminationReason, Trajectory

EXTERNAL = "external"
_FIELDS = {"trajectory_id": ("trajectory_id", "id"), "blueprint_id": ("blueprint_id",),
           "run_id": ("run_id",), "termination": ("termination",), "max_turns": ("max_turns",),
           "agent": ("agent",)}


class MalformedRow(ValueError):
    """A row the checks cannot read; the message is its one-line reason."""


@dataclass(frozen=True)
class ExternalEpisode:
    trajectory: Trajectory
    termination_assumed: bool  # the row did not say how it ended (see the module docstring)


def row_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's ids and episode facts, from its top level or its ``metadata``."""
    metadata = row.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise MalformedRow("metadata is not an object")
    found: dict[str, Any] = {}
    for name, keys in _FIELDS.items():
        values = {json.dumps(source[k], sort_keys=True): source[k]
                  for source in (row, metadata or {}) for k in keys if source.get(k) is not None}
        if len(values) > 1:
            raise MalformedRow(f"{name} differs between the row and its metadata")
        if values:
            found[name] = next(iter(values.values()))
    blueprint_id = found.get("blueprint_id")
    if not isinstance(blueprint_id, str) or not blueprint_id:
        raise MalformedRow("no blueprint_id")
    for name in ("trajectory_id", "run_id", "agent"):
        if name in found and not isinstance(found[name], str):
            raise MalformedRow(f"{name} is not a string")
    if "termination" in found and found["termination"] not in TerminationReason.__members__:
        raise MalformedRow(f"termination {found['termination']!r} is not one of "
                           f"{', '.join(TerminationReason.__members__)}")
    max_turns = found.get("max_turns")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool)
                                  or max_turns < 1):
        raise MalformedRow("max_turns is not a positive integer")
    return found


def _text(value: Any, where: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        if all(isinstance(p, Mapping) and isinstance(p.get("text", ""), str) for p in value):
            return "".join(str(p.get("text") or "") for p in value)
    raise MalformedRow(f"{where}: content is not text")


def _call(data: Any, where: str, k: int) -> ToolCall:
    if not isinstance(data, Mapping):
        raise MalformedRow(f"{where}: tool call {k} is not an object")
    function = data.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise MalformedRow(f"{where}: tool call {k} has no function name")
    call_id = data.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise MalformedRow(f"{where}: tool call {k} has no id")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):  # the sft export's object arguments: any JSON value
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id, name=function["name"], arguments=arguments)


def _message(data: Any, i: int) -> Message | tuple[str, str, bool]:
    """A parsed message; a tool result as ``(tool_call_id, content, is_error)`` (rebuilt later)."""
    where = f"message {i}"
    if not isinstance(data, Mapping):
        raise MalformedRow(f"{where} is not an object")
    role = data.get("role")
    if role == "system":
        return SystemMessage(content=_text(data.get("content"), where) or "")
    if role == "user":
        return UserMessage(content=_text(data.get("content"), where) or "")
    if role == "assistant":
        calls = data.get("tool_calls") or []
        if not isinstance(calls, list):
            raise MalformedRow(f"{where}: tool_calls is not a list")
        return AssistantMessage(content=_text(data.get("content"), where, optional=True),
                                tool_calls=tuple(_call(c, where, k) for k, c in enumerate(calls)))
    if role == "tool":
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise MalformedRow(f"{where}: tool result has no tool_call_id")
        content = _text(data.get("content"), where) or ""
        return call_id, content, bool(data.get("is_error")) or content.startswith("Error:")
    raise MalformedRow(f"{where}: unknown role {role!r}")


def _parse(messages: Any) -> tuple[list[Message], dict[tuple[int, int], tuple[str, bool]]]:
    """The row's messages without tool results, and each answered call's result from the row,
    keyed by (assistant message position, call position): a result answers the earliest
    unanswered call with its id."""
    if not isinstance(messages, list):
        raise MalformedRow("messages is not a list")
    if not messages:
        raise MalformedRow("messages is empty")
    out: list[Message] = []
    pending: list[tuple[int, int, str]] = []
    answers: dict[tuple[int, int], tuple[str, bool]] = {}
    for i, data in enumerate(messages):
        parsed = _message(data, i)
        if isinstance(parsed, tuple):
            call_id, content, is_error = parsed
            match = next((p for p in pending if p[2] == call_id), None)
            if match is None:
                raise MalformedRow(f"message {i}: tool result answers no earlier call {call_id!r}")
            pending.remove(match)
            answers[match[0], match[1]] = (content, is_error)
            continue
        if isinstance(parsed, AssistantMessage):
            pending.extend((len(out), k, c.id) for k, c in enumerate(parsed.tool_calls))
        out.append(parsed)
    return out, answers


def rebuild(row: Mapping[str, Any], blueprint: TaskBlueprint, domain: Domain,
            default_max_turns: int) -> ExternalEpisode:
    """The trajectory a row records, its tool results and final state from a replay (see the
    module docstring). Raises ``MalformedRow``."""
    fields = row_fields(row)
    parsed, answers = _parse(row.get("messages"))
    env = domain.environment()
    messages: list[Message] = []
    crashed = transferred = False
    for position, message in enumerate(parsed):
        messages.append(message)
        if not isinstance(message, AssistantMessage):
            continue
        for k, call in enumerate(message.tool_calls):
            answer = answers.get((position, k))
            result: ToolMessage | None
            try:
                if answer is not None and answer[1]:
                    # the row says it failed: run it on a copy, and keep the copy only if it fails too
                    probe = domain.environment(env.state.model_copy(deep=True))
                    result = probe.execute(call)
                    if not result.is_error:  # the harness refused a call the tools would run
                        result = ToolMessage(content=answer[0], tool_call_id=call.id, name=call.name,
                                             is_error=True)
                else:
                    result = env.execute(call)
            except ToolCrash:
                crashed = True
                break
            messages.append(result)
            if call.name == domain.transfer_tool and not result.is_error:
                transferred = True
        if crashed:
            break  # the runner ends the episode here
    max_turns = fields.get("max_turns") or default_max_turns
    given = fields.get("termination")
    if crashed:
        termination = TerminationReason.tool_crash
    elif given is not None:
        termination = TerminationReason(given)
    elif transferred:
        termination = TerminationReason.transfer
    elif sum(isinstance(m, UserMessage) for m in messages) >= max_turns:
        termination = TerminationReason.max_turns
    else:
        termination = TerminationReason.user_stop
    episode = EpisodeSpec(agent=fields.get("agent") or EXTERNAL, user=EXTERNAL, seed=0,
                          max_turns=max_turns)
    trajectory_id = fields.get("trajectory_id") or content_id(
        {"blueprint_id": blueprint.id, "messages": row.get("messages")}, prefix="tr_")
    trajectory = Trajectory(
        id=trajectory_id, blueprint_id=blueprint.id, run_id=fields.get("run_id") or EXTERNAL,
        domain=domain.name, episode=episode, messages=tuple(messages), tools=domain.tool_specs(),
        termination=termination, final_state_hash=env.state_hash(), final_state_diff=env.diff(),
        flags=flag_tool_outputs(messages))
    return ExternalEpisode(trajectory, termination_assumed=given is None and not crashed)
