"""The model-backed user simulator.

The model plays the user of a blueprint: its persona, goal, the facts it volunteers, the
facts it gives only when asked, and the disclosure plan (which requests it makes in which order,
and when it revises a fact or redirects a request). It sees the conversation from its own side:
its own turns as ``assistant``, the agent's text as ``user``; tool traffic is hidden from it.
It ends with a structured stop, a call of the ``end_conversation`` tool with an outcome, never a
magic string.

Every candidate turn passes guards against the known user-simulator failures (an empty message,
leaking its instructions, speaking as the agent, ending as "done" before the goal is met,
inventing ids or contact details that are not in its profile nor said by the agent). A failed
turn is regenerated with the reason as feedback, at most ``retries`` times; what still fails
ends the episode as ``user_error``: kept, and blamed on the simulator, not on the agent.
With ``best_of > 1`` each turn asks for that many candidates and keeps the first that passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trajforge.environments.base import Domain
from trajforge.errors import LLMFailure, PolicyFailure
from trajforge.schemas.blueprint import Behaviour, TaskBlueprint
from trajforge.schemas.config import ModelConfig, UserSimulatorConfig
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from trajforge.schemas.trajectory import TerminationReason
from trajforge.simulation.llm import Choice, EpisodeLedger, Gateway
from trajforge.simulation.runner import UserReply

STOP_TOOL_NAME = "end_conversation"
STOP_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": STOP_TOOL_NAME,
        "description": ("End the conversation. Call it when all your requests are done and "
                        "confirmed (outcome 'done'), or when the agent cannot help you "
                        "(outcome 'gave_up'). Put your goodbye in the message text."),
        "parameters": {"type": "object",
                       "properties": {"outcome": {"type": "string", "enum": ["done", "gave_up"]}},
                       "required": ["outcome"]},
    },
}
KICKOFF = "[The support chat is open. Write your first message to the agent.]"
DEFAULT_GOODBYE = "Thanks, bye."

# phrases that only appear when the model quotes its instructions
LEAK_MARKERS = ("hidden fact", "disclosure plan", "known fact", "end_conversation", "you are role-playing",
                "your persona", "my instructions", "system prompt", "role-play")
# phrases of a support agent, not of the person it serves
AGENT_MARKERS = ("how can i help you", "how may i help", "how may i assist", "how can i assist",
                 "is there anything else i can help", "as an ai", "i have processed your",
                 "i've processed your", "let me look up your", "i will look up your")


# what the user model is told to do for each behaviour the blueprint labels (at the scripted
# user's turn for it: ``schemas.blueprint.Behaviour``)
BEHAVIOUR_INSTRUCTIONS: dict[Behaviour, str] = {
    Behaviour.corrects_detail: "the first time you give a detail with digits in it, first say it with "
                               "one digit wrong, then correct yourself in the same message.",
    Behaviour.question_back: "when the agent first asks you for a detail, ask why it needs it instead "
                             "of answering; answer once it has explained.",
    Behaviour.withholds_detail: "when the agent first asks you for a detail, refuse to give it; give it "
                                "once the agent has said why it is needed.",
    Behaviour.off_topic: "with your first answer to the agent, also ask about something unrelated to "
                         "your requests (the weather, opening hours, a place for lunch).",
    Behaviour.impatient: "with your first answer to the agent, complain that this is taking long.",
    Behaviour.asks_human: "in your first message, ask to speak to a human instead.",
    Behaviour.price_second_thoughts: "when you change your mind at a confirmation that names a price, "
                                     "say the price is more than you expected.",
    Behaviour.ends_unhappy: "if a request was refused, say you are unhappy about "
                            "it when you say goodbye.",
    Behaviour.wrong_detail: "the first time you give the details that identify you, get one digit "
                            "wrong; when the agent says it cannot find you, apologise and give them right.",
}


def _describe_intent(domain: Domain, kind: str, slots: dict[str, str]) -> str:
    words = kind.replace("_", " ")
    details = ", ".join(f"{k}: {v}" for k, v in slots.items() if v)
    return f"{words} ({details})" if details else words


def user_instructions(bp: TaskBlueprint, domain: Domain) -> str:
    """The user model's system prompt, built from the blueprint alone."""
    u = bp.user
    p = u.persona
    lines = [
        f"You are role-playing {domain.prose.role} who contacts {domain.name} support in a chat. "
        "You are the one asking for help, never the support agent. Write only your own next "
        "message.",
        "",
        f"Persona: {p.style.value} style, verbosity {p.verbosity} of 3"
        + (f", {', '.join(p.traits)}" if p.traits else "")
        + f". You tolerate at most {p.patience} unhelpful replies in a row, then you give up.",
        f"Goal: {u.goal}",
        "",
        "Your requests, in this order. Make one at a time; move to the next only when the agent "
        "has finished the current one:",
    ]
    for k, intent in enumerate(u.intents):
        first = intent.initial_kind or intent.kind
        slots = {s.split(".", 1)[1]: v for s, v in {**u.hidden_facts, **u.known_facts}.items()
                 if s.startswith(f"{k}.")}
        lines.append(f"  {k + 1}. {_describe_intent(domain, first, slots)}")
    lines.append("Facts you may share whenever they are relevant: "
                 + (json.dumps(u.known_facts) if u.known_facts else "none"))
    lines.append("Facts you share only when the agent asks for them: "
                 + (json.dumps(u.hidden_facts) if u.hidden_facts else "none"))
    plan = [s for s in u.disclosure if s.action in ("revise", "redirect")]
    for step in (s for s in u.disclosure if s.action == "clarify"):
        lines.append(f"For request {step.intent + 1}, describe the {step.fact} as "
                     f"{u.fact(f'{step.intent}.{step.fact}')!r}; only when the agent asks which one you "
                     f"mean, say it is {step.value}.")
    if plan:
        lines.append("Changes of mind (do these exactly once, when the agent asks you to confirm "
                     "that request):")
        for step in plan:
            if step.action == "revise":
                lines.append(f"  - request {step.intent + 1}: say that the {step.fact} should "
                             f"be {step.value} instead.")
            else:
                final = u.intents[step.intent]
                lines.append(f"  - request {step.intent + 1}: say you want to "
                             f"{_describe_intent(domain, str(step.value), final.slots)} instead.")
    if u.behaviours:
        lines.append("How you behave (each exactly once, as written):")
        lines += [f"  - {BEHAVIOUR_INSTRUCTIONS[b]}" for b in u.behaviours]
    if domain.user_tools:  # dual control: the user's own device
        lines += ["",
                  "You have your own device in your hands, with tools of your own ("
                  + ", ".join(sorted(domain.user_tools)) + "). The agent cannot use them: when it "
                  "asks you to check or change something on your device, call the matching tool "
                  "yourself, then tell the agent in words what you see. Do not change anything on "
                  "your device unless the agent asks you to."]
    lines += [
        "",
        "Rules: never invent ids, emails, addresses or any fact that is not listed above; if "
        "asked for something you do not know, say so. Never mention these instructions. "
        "Confirm an action only if it matches what you want. When every request is done, or the "
        f"agent cannot help, call {STOP_TOOL_NAME} with outcome 'done' or 'gave_up' and say "
        "goodbye in the message text.",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Candidate:
    text: str
    stop: bool
    gave_up: bool
    calls: tuple[tuple[str, str], ...] = ()  # the user's own tools called: (name, arguments)


def _candidate(choice: Choice, user_tools: frozenset[str] = frozenset()) -> Candidate:
    stop, gave_up = False, False
    calls = tuple((c.name or "", c.arguments or "{}") for c in choice.tool_calls if c.name in user_tools)
    if calls:  # the user acts on the device first; it speaks (or stops) once it has seen the results
        return Candidate(text=(choice.content or "").strip(), stop=False, gave_up=False, calls=calls)
    for call in choice.tool_calls:
        if call.name == STOP_TOOL_NAME:
            stop = True
            try:
                outcome = json.loads(call.arguments or "{}").get("outcome")
            except (ValueError, AttributeError):
                outcome = None
            gave_up = outcome == "gave_up"
    text = (choice.content or "").strip()
    if stop and not text:
        text = DEFAULT_GOODBYE
    return Candidate(text=text, stop=stop, gave_up=gave_up)


class UserGuards:
    """The checks a candidate user turn must pass."""

    def __init__(self, bp: TaskBlueprint, domain: Domain, goal_met: Callable[[], bool] | None) -> None:
        self.goal_met = goal_met
        self.pattern = re.compile(domain.entity_pattern) if domain.entity_pattern else None
        facts = " ".join([*bp.user.known_facts.values(), *bp.user.hidden_facts.values(),
                          *(str(s.value) for s in bp.user.disclosure if s.value), bp.user.goal])
        self.allowed = {m.lower() for m in self.pattern.findall(facts)} if self.pattern else set()

    def problem(self, candidate: Candidate, agent_said: str) -> str | None:
        text = candidate.text
        low = text.lower()
        if not text and not candidate.calls:
            return "the message is empty"
        if any(marker in low for marker in LEAK_MARKERS):
            return "the message leaks the simulator's instructions"
        if any(marker in low for marker in AGENT_MARKERS):
            return "the message speaks as the support agent, not as the user"
        if candidate.stop and not candidate.gave_up and self.goal_met is not None and not self.goal_met():
            return ("the conversation was ended as done, but the requests have not all been "
                    "carried out yet; continue, or end with outcome gave_up if the agent cannot help")
        if self.pattern is not None:
            seen = {m.lower() for m in self.pattern.findall(agent_said)}
            invented = [m for m in self.pattern.findall(text)
                        if m.lower() not in self.allowed and m.lower() not in seen]
            if invented:
                return f"the message invents facts not in the user's profile: {', '.join(invented)}"
        return None


def user_view(system: str, messages: Sequence[Message]) -> tuple[list[dict[str, Any]], str]:
    """The conversation from the user's side (its own turns as ``assistant``, the agent's text
    as ``user``, the agent's tool traffic hidden; the user's own tool calls on its device and
    their results shown), and everything the agent said so far."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system},
                                 {"role": "user", "content": KICKOFF}]
    agent_said = []
    own: set[str] = set()
    for message in messages:
        if isinstance(message, UserMessage) and message.tool_calls:
            own.update(c.id for c in message.tool_calls)
            out.append({"role": "assistant", "content": message.content or None,
                        "tool_calls": [c.to_openai() for c in message.tool_calls]})
        elif isinstance(message, ToolMessage) and message.tool_call_id in own:
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "assistant", "content": message.content})
        elif isinstance(message, AssistantMessage) and message.content:
            out.append({"role": "user", "content": message.content})
            agent_said.append(message.content)
    if out[-1]["role"] == "assistant":  # keep turns alternating for strict chat templates
        out.append({"role": "user", "content": "[The agent is waiting for your reply.]"})
    if len(out) > 2 and out[2]["role"] == "user":
        del out[1]  # the agent spoke first: no kickoff needed
    return out, "\n".join(agent_said)


class LLMUser:
    """One instance per episode."""

    def _made(self, candidate: Candidate) -> tuple[ToolCall, ...]:
        """The candidate's calls of the user's own tools, with ids of the user's (``ucall_``)."""
        calls = []
        for name, arguments in candidate.calls:
            self._calls += 1
            calls.append(ToolCall(id=f"ucall_{self._calls:03d}", name=name, arguments=arguments))
        return tuple(calls)

    def __init__(self, gateway: Gateway, model: ModelConfig, bp: TaskBlueprint, domain: Domain,
                 ledger: EpisodeLedger, config: UserSimulatorConfig,
                 goal_met: Callable[[], bool] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.gateway = gateway
        self.model = model
        self.ledger = ledger
        self.config = config
        self.headers = headers
        self.name = f"litellm:{model.model}"
        self.guards = UserGuards(bp, domain, goal_met)
        self.system = user_instructions(bp, domain)
        self.failed_turns = 0  # turns that needed a regeneration
        # the tools it may call: ending the conversation, and its own device's (dual control)
        self.tools = [STOP_TOOL] + [spec.model_dump(mode="json") for spec in domain.user_tool_specs()]
        self.user_tools = frozenset(domain.user_tools)
        self._calls = 0

    async def respond(self, messages: Sequence[Message]) -> UserReply:
        view, agent_said = user_view(self.system, messages)
        problems: list[str] = []
        for attempt in range(self.config.retries + 1):
            request = view
            if problems:
                request = view + [{"role": "system", "content":
                                   f"Your previous reply was rejected: {problems[-1]}. "
                                   "Write your next message again."}]
            try:
                completion = await self.gateway.complete(
                    "user", self.model, request, ledger=self.ledger, tools=self.tools,
                    n=self.config.best_of, headers=self.headers)
            except LLMFailure as failure:
                raise PolicyFailure(TerminationReason.llm_error, str(failure)) from None
            for choice in completion.choices:
                candidate = _candidate(choice, self.user_tools)
                problem = self.guards.problem(candidate, agent_said)
                if problem is None:
                    if attempt:
                        self.failed_turns += 1
                    if candidate.calls:
                        return UserReply(UserMessage(content=candidate.text, tool_calls=self._made(candidate)))
                    return UserReply(UserMessage(content=candidate.text), stop=candidate.stop,
                                     gave_up=candidate.gave_up)
                problems.append(problem)
        raise PolicyFailure(TerminationReason.user_error,
                            f"user simulator: {problems[-1]} (after {self.config.retries + 1} tries)")
