"""Chat messages in the OpenAI chat shape, discriminated on ``role``.

Tool-call arguments are kept as the raw JSON text the model produced (as the OpenAI API does),
so a malformed call is data rather than a crash; ``ToolCall.parsed_arguments`` decodes it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


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
    role: Literal["user"] = "user"
    content: str


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
