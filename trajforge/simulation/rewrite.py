"""A model re-words the scripted agent's turns; what it may change is checked before a turn is kept.

With ``simulation.rewrite`` set, every text the scripted agent (the oracle, or the faulty agent)
says is sent to the model with the conversation so far, to be said again in its own words. The
agent's tool calls, their arguments and the order of everything are the scripted agent's; only
the text changes, and only when the new text passes every guard (``rewrite_problem``):

- **the same facts**: every value the original states (ids, amounts, numbers, dates, e-mail
  addresses: a token with a digit or an ``@``) is in the rewrite, and the rewrite states no value
  the original did not;
- **the same act**: the dialogue-act recogniser reads both the same (a confirmation request stays
  one, an offer of more help stays one, anything else stays ``other``), so a request is not
  dropped, nor one invented;
- **the same questions**: the rewrite asks for the same details, identity and user-side actions
  as the original, by the keywords the domain declares for them (``Domain.slots``,
  ``Domain.identity``, ``Domain.instructions``), so whoever plays the user (the scripted user
  reads those keywords) is asked what the plan needs;
- not empty, not the original's prefix of a longer speech (at most three times its length plus
  200 characters), and not written as the user or as the tool.

A rejected rewrite is asked for again with the reason (``retries`` times); what still fails
keeps the original text, so a turn is never lost and the episode stays correct. The checks then
verify the episode as played, like any other. The calls are billed to the episode's ``rewriter``
role (``trajectories.usage``); the agent's name in the trajectory gains ``+rewrite:<model>``.

Twins (the oracle and the faulty episode of one blueprint) are re-worded independently, so
their messages may differ before the fault; a preference pair from them still contrasts a
correct and a faulty episode of one blueprint and one user.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from trajforge.environments.base import Domain
from trajforge.environments.dialogue import classify_agent
from trajforge.errors import LLMFailure, PolicyFailure
from trajforge.schemas.config import RewriteConfig
from trajforge.schemas.messages import AssistantMessage, Message, ToolMessage, UserMessage
from trajforge.schemas.trajectory import TerminationReason
from trajforge.simulation.llm import EpisodeLedger, Gateway
from trajforge.simulation.runner import AgentPolicy, AgentReply

ROLE = "rewriter"
INSTRUCTIONS = (
    "You re-word the messages of a support agent so they read as a real, careful person "
    "wrote them. You get the conversation so far and the agent's next message. Reply with that "
    "message said again in your own words, and nothing else: no quotes, no preamble. Keep its "
    "meaning exactly: every id, amount, number, date, name and e-mail address exactly as written; "
    "the same questions (use the same key words for what is asked); a "
    "request for permission stays a request for permission, an offer of more help stays one. Add "
    "no fact, promise, value or question of your own. Vary the wording; be natural and concise.")
# a value: a token with a digit, or an e-mail address (ids, amounts, dates, numbers, contacts)
_VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[#$]?\w*\d[\w.,:/-]*")
_SPEAKER = re.compile(r"^\s*(?:user|assistant|agent|tool|system)\s*:", re.I)


def _values(text: str) -> set[str]:
    return {m.group().rstrip(".,:/-").lstrip("#").lower() for m in _VALUE.finditer(text)}


def _asks(text: str, domain: Domain) -> frozenset[str]:
    """What a message asks the user for, by the domain's declared keywords."""
    low = text.lower()
    asked = {f"slot:{name}" for name, spec in domain.slots.items() if any(k in low for k in spec.keywords)}
    asked |= {f"do:{name}" for name, spec in domain.instructions.items() if any(k in low for k in spec.keywords)}
    if any(k in low for k in domain.identity.keywords):
        asked.add("identity")
    return frozenset(asked)


def rewrite_problem(original: str, candidate: str, domain: Domain) -> str | None:
    """Why ``candidate`` may not replace ``original`` (None: it may)."""
    text = candidate.strip()
    if not text:
        return "the rewrite is empty"
    if len(text) > 3 * len(original) + 200:
        return "the rewrite is much longer than the message"
    if _SPEAKER.match(text):
        return "the rewrite is labelled with a speaker; write only the agent's words"
    lost, added = _values(original) - _values(text), _values(text) - _values(original)
    if lost:
        return f"the rewrite drops {', '.join(sorted(lost)[:5])}; keep every value exactly as written"
    if added:
        return f"the rewrite adds {', '.join(sorted(added)[:5])}; add no value of your own"
    before, after = classify_agent(original).label, classify_agent(text).label
    if before != after:
        return {"confirm_request": "the message asks for permission; the rewrite must ask for it too",
                "anything_else": "the message offers more help; the rewrite must offer it too",
                }.get(before, "the rewrite changes what the message does (it must not ask for "
                              "permission or offer more help when the message does not)")
    if _asks(original, domain) != _asks(text, domain):
        return "the rewrite asks for different details; ask for exactly what the message asks for, with its key words"
    return None


def _view(messages: Sequence[Message]) -> str:
    """The conversation so far, as the rewriter reads it: what was said and what tools returned."""
    lines = []
    for m in messages:
        if isinstance(m, UserMessage) and m.content:
            lines.append(f"User: {m.content}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                lines.append(f"Agent: {m.content}")
            lines += [f"Agent calls {c.name}({c.arguments})" for c in m.tool_calls]
        elif isinstance(m, ToolMessage):
            lines.append(f"Tool {m.name} returned: {m.content[:600]}")
    return "\n".join(lines[-30:])


@dataclass
class RewriteTally:
    """What the rewriter did in one episode."""

    rewritten: int = 0
    kept: int = 0  # turns whose every rewrite failed a guard: the original text was kept


class RewritingAgent:
    """Wraps an agent policy: its text turns are re-worded by a model under the guards above."""

    def __init__(self, inner: AgentPolicy, gateway: Gateway, config: RewriteConfig, domain: Domain,
                 ledger: EpisodeLedger, headers: dict[str, str] | None = None) -> None:
        self.inner, self.gateway, self.config, self.domain = inner, gateway, config, domain
        self.ledger, self.headers = ledger, headers
        self.tally = RewriteTally()
        self.name = f"{getattr(inner, 'name', 'agent')}+rewrite:{config.model.model}"

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        reply = await self.inner.respond(messages)
        original = reply.message.content
        if not original or not original.strip():
            return reply
        text = await self._rewrite(messages, original)
        if text == original:
            return reply
        return replace(reply, message=reply.message.model_copy(update={"content": text}))

    async def _rewrite(self, messages: Sequence[Message], original: str) -> str:
        request = [{"role": "system", "content": INSTRUCTIONS},
                   {"role": "user", "content": f"Conversation so far:\n{_view(messages)}\n\n"
                                               f"The agent's next message:\n{original}"}]
        for _ in range(self.config.retries + 1):
            try:
                completion = await self.gateway.complete(ROLE, self.config.model, request, ledger=self.ledger,
                                                         headers=self.headers)
            except LLMFailure as failure:
                raise PolicyFailure(TerminationReason.llm_error, f"rewriter: {failure}") from None
            candidate = (completion.first.content or "").strip()
            problem = rewrite_problem(original, candidate, self.domain)
            if problem is None:
                self.tally.rewritten += 1
                return candidate
            request = request + [{"role": "assistant", "content": candidate},
                                 {"role": "user", "content": f"Rejected: {problem}. Write it again."}]
        self.tally.kept += 1
        return original
