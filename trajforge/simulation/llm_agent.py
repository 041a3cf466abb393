"""The model-backed agent: the domain policy as system prompt, the domain's tools, native tool
calling, through the gateway.

Malformed tool calls are data, not crashes. Arguments that are not JSON, that fail the schema, or
name an unknown tool go to the environment, which answers each with an error tool message (the
model sees what was wrong and can try again). A call the model wrote into its text instead of
the tool-calling interface (``<tool_call>{...}</tool_call>`` or a bare ``{"name": ...,
"arguments": ...}`` object naming a tool) is recorded as a call with id ``text_call_N`` and
answered with an error that says how to call tools, never executed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from trajforge.environments.base import Domain
from trajforge.errors import LLMFailure, PolicyFailure
from trajforge.schemas.config import ModelConfig
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    agent_view,
    message_to_openai,
)
from trajforge.schemas.trajectory import TerminationReason
from trajforge.simulation.llm import EpisodeLedger, Gateway
from trajforge.simulation.runner import AgentReply

EPISODE_HEADER = "X-Trajforge-Episode"
TEXT_CALL_ERROR = ("this tool call was written as text and was not executed; call tools through "
                   "the tool-calling interface")
_TAGGED = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


def episode_tag(blueprint_id: str, seed: int) -> dict[str, str]:
    """The header every request of an episode carries, so servers and proxies can correlate the
    requests of one conversation (the scripted endpoint needs it to know which task it plays)."""
    return {EPISODE_HEADER: f"{blueprint_id};{seed}"}


def text_tool_calls(text: str, tool_names: set[str]) -> list[tuple[str, str]]:
    """(name, raw arguments) of the tool calls written into a text answer."""
    found: list[tuple[str, str]] = []
    candidates = _TAGGED.findall(text)
    stripped = text.strip()
    if not candidates and stripped.startswith("{") and stripped.endswith("}"):
        candidates = [stripped]
    for raw in candidates:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("name") in tool_names:
            arguments = value.get("arguments", value.get("parameters", {}))
            found.append((str(value["name"]),
                          arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return found


class LLMAgent:
    """One instance per episode."""

    def __init__(self, gateway: Gateway, model: ModelConfig, domain: Domain, ledger: EpisodeLedger,
                 headers: dict[str, str] | None = None) -> None:
        self.gateway = gateway
        self.model = model
        self.ledger = ledger
        self.headers = headers
        self.name = f"litellm:{model.model}"
        self.tools = [spec.model_dump(mode="json") for spec in domain.tool_specs()]
        self._tool_names = {t["function"]["name"] for t in self.tools}
        self._payload: list[dict[str, Any]] = []  # the messages converted so far
        self._seen = 0  # how many of the episode's messages those came from
        self._user_calls: set[str] = set()  # the user's own tool calls, which the agent never sees
        self._text_calls = 0

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        # the conversation only grows: convert what is new, not the whole history each turn
        # the user's own tool calls and their results (dual control) are not the agent's to see
        for message in agent_view(messages[self._seen:], self._user_calls):
            self._payload.append(message_to_openai(message))
        self._seen = len(messages)
        try:
            completion = await self.gateway.complete(
                "agent", self.model, list(self._payload), ledger=self.ledger, tools=self.tools,
                headers=self.headers)
        except LLMFailure as failure:
            raise PolicyFailure(TerminationReason.llm_error, str(failure)) from None
        choice = completion.first
        self.ledger.entropy.append(choice.entropy)
        calls = tuple(ToolCall(id=c.id or f"call_{len(messages)}_{k}", name=c.name or "",
                               arguments=c.arguments if c.arguments is not None else "")
                      for k, c in enumerate(choice.tool_calls))
        content = choice.content if choice.content else None
        rejected: dict[str, str] = {}
        if not calls and content:
            written = text_tool_calls(content, self._tool_names)
            if written:
                text_calls = []
                for name, arguments in written:
                    self._text_calls += 1
                    call = ToolCall(id=f"text_call_{self._text_calls}", name=name,
                                    arguments=arguments)
                    rejected[call.id] = TEXT_CALL_ERROR
                    text_calls.append(call)
                calls = tuple(text_calls)
        return AgentReply(AssistantMessage(content=content, tool_calls=calls), rejected=rejected)
