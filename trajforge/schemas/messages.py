"""Chat messages in the OpenAI chat shape, discriminated on ``role``.

Tool-call arguments are kept as the raw JSON text the model produced (as the OpenAI API does),
so a malformed call is data rather than a crash; ``ToolCall.parsed_arguments`` decodes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCall(_Frozen):
    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a dict, or ``None`` if they are not a JSON object."""
        try:
            value = json.loads(self.arguments)
        except (ValueError, TypeError):
            return None
        return value if isinstance(value, dict) else None

    def to_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


class SystemMessage(_Frozen):
    role: Literal["system"] = "system"
    content: str


class UserMessage(_Frozen):
    """What the user says, and the tools they use on their own device (``tool_calls``: a user
    tool, answered by ``ToolMessage``s; the agent sees neither, only ``content``)."""

    role: Literal["user"] = "user"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()

    @model_serializer(mode="wrap")
    def _without_empty_calls(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a user message without calls dumps as it did before user tools existed
        data: dict[str, Any] = handler(self)
        if not self.tool_calls:
            data.pop("tool_calls", None)
        return data


class AssistantMessage(_Frozen):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class ToolMessage(_Frozen):
    role: Literal["tool"] = "tool"
    content: str
    tool_call_id: str
    name: str
    is_error: bool = False


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)


def message_to_openai(message: Message) -> dict[str, Any]:
    """The OpenAI chat-completions dict of a message (``None`` fields dropped)."""
    out: dict[str, Any] = {"role": message.role}
    if isinstance(message, AssistantMessage):
        out["content"] = message.content
        if message.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in message.tool_calls]
    elif isinstance(message, ToolMessage):
        out.update(content=message.content, tool_call_id=message.tool_call_id, name=message.name)
    else:
        out["content"] = message.content
    return out


def message_from_openai(data: dict[str, Any]) -> Message:
    """The inverse of ``message_to_openai`` (unknown keys, such as provider extras, dropped)."""
    role = data.get("role")
    content = data.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    if role == "assistant":
        calls = tuple(ToolCall(id=str(c.get("id") or ""), name=str(c["function"].get("name") or ""),
                               arguments=c["function"].get("arguments") or "")
                      for c in data.get("tool_calls") or ())
        return AssistantMessage(content=content, tool_calls=calls)
    if role == "tool":
        return ToolMessage(content=content or "", tool_call_id=str(data.get("tool_call_id") or ""),
                           name=str(data.get("name") or ""),
                           is_error=str(content or "").startswith("Error:"))
    if role == "system":
        return SystemMessage(content=content or "")
    if role == "user":
        return UserMessage(content=content or "")
    raise ValueError(f"unknown message role {role!r}")


def agent_view(messages: Sequence[Message], user_calls: set[str] | None = None) -> list[Message]:
    """The messages as the agent sees them: the user's own tool calls and their results left
    out (a user message keeps its text; one that only holds calls is dropped). ``user_calls``:
    the ids of user calls seen so far, updated (to read a growing conversation in pieces)."""
    ids = user_calls if user_calls is not None else set()
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.tool_calls:
            ids.update(call.id for call in message.tool_calls)
            if message.content:
                out.append(UserMessage(content=message.content))
        elif isinstance(message, ToolMessage) and message.tool_call_id in ids:
            continue
        else:
            out.append(message)
    return out
