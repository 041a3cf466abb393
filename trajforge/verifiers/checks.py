"""Deterministic checks of a trajectory against its blueprint and domain.

Each check is a plain function of a ``Context`` (the trajectory, the blueprint, the domain and
the tool calls parsed once) that returns a ``CheckResult`` with a reason and JSON evidence.
The checks read only the recorded dialogue and a replay of its tool calls on a fresh state;
they never trust the agent's own account of what it did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from trajforge.environments.base import Domain, ToolDef, ToolKind
from trajforge.environments.dialogue import is_affirmative, is_confirmation_request
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.ids import canonical_json
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    agent_view,
)
from trajforge.schemas.trajectory import TerminationReason, Trajectory, Verdict
from trajforge.verifiers.claims import claim_problems


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    reason: str = "ok"
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    index: int  # position of the assistant message in the trajectory
    call: ToolCall
    arguments: dict[str, Any] | None
    result: ToolMessage | None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.is_error


@dataclass
class Context:
    trajectory: Trajectory
    blueprint: TaskBlueprint
    domain: Domain

    @cached_property
    def messages(self) -> list[Message]:
        """The dialogue as the agent saw it: the user's own tool calls (on their device) and
        their results left out, so every check judges only what the agent did and saw."""
        return agent_view(self.trajectory.messages)

    @cached_property
    def user_calls(self) -> list[tuple[int, ToolCall]]:
        """The user's tool calls (dual control), each with the index in ``messages`` of the
        first agent-visible message after it (the calls happened before that message)."""
        out: list[tuple[int, ToolCall]] = []
        seen = 0
        for message in self.trajectory.messages:
            if isinstance(message, UserMessage) and message.tool_calls:
                out += [(seen, call) for call in message.tool_calls]
                seen += bool(message.content)  # its text, if any, the agent sees
            elif not (isinstance(message, ToolMessage) and message.tool_call_id in self._user_call_ids):
                seen += 1
        return out

    @cached_property
    def _user_call_ids(self) -> set[str]:
        return {c.id for m in self.trajectory.messages if isinstance(m, UserMessage) for c in m.tool_calls}

    @cached_property
    def calls(self) -> list[CallRecord]:
        results = {m.tool_call_id: m for m in self.messages if isinstance(m, ToolMessage)}
        out = []
        for i, message in enumerate(self.messages):
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    out.append(CallRecord(i, call, call.parsed_arguments(), results.get(call.id)))
        return out

    def is_write(self, record: CallRecord) -> bool:
        tool = self.domain.tools.get(record.call.name)
        return tool is not None and tool.kind is ToolKind.write


# a number standing alone: not part of an id ("HA482"), a date ("2024-05-23"), a time ("15:00")
_NUMBER = re.compile(r"(?<![\w.#/:-])-?\d[\d,]*(?:\.\d+)?(?![\w/:-]|\.\d)")
_MONTH_BEFORE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+$",
                           re.IGNORECASE)


def _says(value: str, text: str, domain: Domain) -> bool:
    """Whether ``text`` states ``value``: a number as a number standing alone in it (``12.00``
    is not in ``$112.00``, ``23`` not in "May 23", "HA023" or "2024-05-23"), anything else as
    a phrase, ids compared after the domain's normalisation."""
    try:
        wanted = float(value)
    except ValueError:
        said, want = domain.canonical_ids(text).lower(), domain.canonical_ids(value).lower()
        return re.search(r"(?<![\w])" + re.escape(want) + r"(?![\w])", said) is not None
    return any(abs(float(m.group().replace(",", "")) - wanted) < 0.005 for m in _NUMBER.finditer(text)
               if not _MONTH_BEFORE.search(text[max(0, m.start() - 12):m.start()]))


# --- the checks -------------------------------------------------------------------------------

def check_final_state(ctx: Context) -> CheckResult:
    """The final state (account and, under dual control, the user's device) is the expected
    one; a failure says which side differs (``Domain.user_tables`` are the device's)."""
    expected = ctx.blueprint.ground_truth
    if ctx.trajectory.final_state_hash == expected.final_state_hash:
        return CheckResult(True)
    want = {canonical_json(c.model_dump(mode="json")): c for c in expected.final_state_diff}
    got = {canonical_json(c.model_dump(mode="json")): c for c in ctx.trajectory.final_state_diff}
    evidence = {"missing": sorted(want.keys() - got.keys())[:20],
                "unexpected": sorted(got.keys() - want.keys())[:20]}
    if not ctx.domain.user_tables:
        return CheckResult(False, "final state differs from the expected state", evidence)
    device = ctx.domain.user_tables
    changes = [want[k] for k in want.keys() - got.keys()] + [got[k] for k in got.keys() - want.keys()]
    sides = []
    for side, on_device in (("the account state", False), ("the user's device state", True)):
        places = sorted({f"{c.table}.{c.key}.{c.path}" if c.path else f"{c.table}.{c.key}"
                         for c in changes if (c.table in device) is on_device})
        if places:
            sides.append(f"{side} differs: {', '.join(places[:5])}")
    return CheckResult(False, "; ".join(sides) or "final state differs from the expected state", evidence)


def check_outputs(ctx: Context) -> CheckResult:
    """Each required output is said in the agent's first text message after the (n-th)
    ground-truth call that produced it: when it learned it, not somewhere later by chance."""
    missing = []
    messages = ctx.messages
    for out in ctx.blueprint.ground_truth.outputs:
        calls = ctx.blueprint.ground_truth.calls
        source = calls[out.after_call]
        want = canonical_json(source.arguments)
        # the n-th time the ground truth makes this call is the n-th time the agent must
        nth = sum(c.name == source.name and canonical_json(c.arguments) == want
                  for c in calls[:out.after_call + 1])
        matches = [r for r in ctx.calls if r.ok and r.call.name == source.name
                   and r.arguments is not None and canonical_json(r.arguments) == want]
        made = matches[nth - 1] if len(matches) >= nth else None
        if made is None:
            missing.append({"key": out.key, "value": out.value, "why": f"{source.name} never succeeded"})
            continue
        # the agent must say it in the turn where it learned it: its next text message
        reply = next((m.content for m in messages[made.index + 1:]
                      if isinstance(m, AssistantMessage) and m.content), None)
        if reply is None or not _says(out.value, reply, ctx.domain):
            missing.append({"key": out.key, "value": out.value,
                            "why": "not said in the agent's next message after the call"})
    if missing:
        return CheckResult(False, f"{len(missing)} required output(s) not communicated",
                           {"missing": missing})
    return CheckResult(True)


def check_confirmation(ctx: Context) -> CheckResult:
    messages = ctx.messages
    problems = []
    last_write_at = -1
    for record in ctx.calls:
        if not ctx.is_write(record):
            continue
        users = [i for i in range(record.index) if isinstance(messages[i], UserMessage)]
        u = users[-1] if users else -1
        problem = None
        if u < 0 or u < last_write_at:
            problem = "no user turn since the previous write"
        elif not is_affirmative(messages[u].content):
            problem = "the last user turn is not an explicit yes"
        else:
            asks = [i for i in range(u) if isinstance(messages[i], AssistantMessage)
                    and messages[i].content]
            ask = messages[asks[-1]].content if asks else ""
            if not is_confirmation_request(ask):
                problem = "the yes did not answer a confirmation request"
            elif not ctx.domain.names_target(ctx.domain.template, record.call.name,
                                             record.arguments or {}, ask or ""):
                problem = "the confirmation request did not name what the write acts on"
        if problem:
            problems.append({"call": record.call.name, "message": record.index, "why": problem})
        if record.ok:  # a refused attempt changed nothing, so the yes still covers its retry
            last_write_at = record.index
    if problems:
        return CheckResult(False, f"{len(problems)} write(s) without explicit confirmation",
                           {"writes": problems})
    return CheckResult(True)


def authenticated_calls(ctx: Context, outcome: Callable[[CallRecord], ToolMessage | None]
                        ) -> Iterator[tuple[CallRecord, ToolDef, dict[str, Any], str | None]]:
    """The tool calls of known tools with parsed arguments, in order, each with its tool, its
    arguments and who is authenticated when it is made: a successful call of an auth tool
    authenticates the user its result names, from the next call on. ``outcome`` gives a call's
    result and is asked once per call, after the consumer has seen it: the recorded result, or
    a replay's (so the consumer sees the replayed state just before each call)."""
    authenticated: str | None = None
    for record in ctx.calls:
        tool = ctx.domain.agent_tools.get(record.call.name)
        if tool is None or record.arguments is None:
            continue
        yield record, tool, record.arguments, authenticated
        result = outcome(record)
        if record.call.name in ctx.domain.auth_tools and result is not None and not result.is_error:
            authenticated = result.content


def _valid(tool: ToolDef, arguments: dict[str, Any]) -> bool:
    try:
        tool.args_model.model_validate(arguments)
    except ValidationError:
        return False
    return True


def check_authentication(ctx: Context) -> CheckResult:
    problems: list[dict[str, Any]] = []
    for record, tool, arguments, authenticated in authenticated_calls(ctx, lambda r: r.result):
        if record.call.name in ctx.domain.auth_tools:
            continue
        if not tool.account_params or not any(p in arguments for p in tool.account_params):
            continue
        if not _valid(tool, arguments):  # refused by the schema, it touched nothing (tool_schema's)
            continue
        owner = ctx.domain.account_owner(ctx.domain.template, arguments)
        if authenticated is None:
            problems.append({"call": record.call.name, "message": record.index,
                             "why": "account data touched before authentication"})
        elif owner is not None and owner != authenticated:
            problems.append({"call": record.call.name, "message": record.index,
                             "why": f"touches {owner}'s account, not {authenticated}'s"})
    if problems:
        return CheckResult(False, problems[0]["why"], {"calls": problems})
    return CheckResult(True)


def check_tool_schema(ctx: Context) -> CheckResult:
    problems = []
    for record in ctx.calls:
        tool = ctx.domain.agent_tools.get(record.call.name)  # a user tool is not the agent's
        if tool is None:
            problems.append({"call": record.call.name, "why": "no such tool"})
        elif record.arguments is None:
            problems.append({"call": record.call.name, "why": "arguments are not a JSON object"})
        else:
            try:
                tool.args_model.model_validate(record.arguments)
            except ValidationError as exc:
                problems.append({"call": record.call.name,
                                 "why": "; ".join(e["msg"] for e in exc.errors())[:300]})
    if problems:
        return CheckResult(False, f"{len(problems)} call(s) do not match a tool schema",
                           {"calls": problems})
    return CheckResult(True)


def _id_values(domain: Domain, arguments: dict[str, Any]) -> list[str]:
    """The values of the arguments that reference entities, as the domain declares them."""
    out = []
    for key, value in arguments.items():
        if domain.references_entity(key):
            out += [str(v) for v in (value if isinstance(value, list) else [value])]
    return out


def check_grounded_ids(ctx: Context) -> CheckResult:
    messages = ctx.messages
    problems = []
    for record in ctx.calls:
        if record.arguments is None:
            continue
        seen = ctx.domain.canonical_ids(" ".join(m.content for m in messages[:record.index]
                                                 if isinstance(m, (UserMessage, ToolMessage))))
        for value in _id_values(ctx.domain, record.arguments):
            if ctx.domain.canonical_ids(value) not in seen:
                problems.append({"call": record.call.name, "id": value})
    if problems:
        return CheckResult(False, f"{len(problems)} id(s) used before they appeared", {"ids": problems})
    return CheckResult(True)


def check_grounded_claims(ctx: Context) -> CheckResult:
    """Every status, amount or availability the agent states agrees with the most recent tool
    output about the entity it names (``verifiers.claims`` says how claims are found)."""
    problems = claim_problems(ctx.domain, ctx.messages)
    if problems:
        return CheckResult(False, problems[0]["why"], {"claims": problems[:20]})
    return CheckResult(True)


def check_policy(ctx: Context) -> CheckResult:
    """Each write against the policy, on a replay of the calls on a fresh state: a rule reads
    the state just before the write, and who is authenticated comes from the replay too."""
    env = ctx.domain.environment()
    breaches: list[dict[str, Any]] = []
    replay = authenticated_calls(ctx, lambda r: env.execute(r.call))
    user_calls = list(ctx.user_calls)  # the user's own calls change the state too, in order
    for record, tool, arguments, authenticated in replay:
        while user_calls and user_calls[0][0] <= record.index:
            env.execute(user_calls.pop(0)[1], actor="user")
        if tool.kind is ToolKind.write:
            rules = ctx.domain.policy_breaches(env.state, record.call.name, arguments, authenticated)
            if rules:
                breaches.append({"call": record.call.name, "message": record.index, "rules": rules})
    if breaches:
        rules = sorted({r for b in breaches for r in b["rules"]})
        return CheckResult(False, f"policy rule(s) broken: {', '.join(rules)}", {"breaches": breaches})
    return CheckResult(True)


def check_turn_limit(ctx: Context) -> CheckResult:
    if ctx.trajectory.termination is TerminationReason.max_turns:
        return CheckResult(False, f"hit the limit of {ctx.trajectory.episode.max_turns} turns")
    return CheckResult(True)


def check_no_loops(ctx: Context) -> CheckResult:
    seen: dict[str, int] = {}
    for record in ctx.calls:
        if ctx.is_write(record) and record.ok:
            seen.clear()
            continue
        # the same call, however its JSON is written (key order, spacing): parsed and canonical;
        # arguments that are not a JSON object compare as written
        written = canonical_json(record.arguments) if record.arguments is not None else record.call.arguments
        key = f"{record.call.name}:{written}"
        if key in seen:
            return CheckResult(False, f"{record.call.name} repeated with the same arguments",
                               {"first": seen[key], "again": record.index})
        seen[key] = record.index
    texts = [m.content for m in ctx.messages if isinstance(m, AssistantMessage) and m.content]
    for a, b, c in zip(texts, texts[1:], texts[2:], strict=False):  # a window of three: shorter by design
        if a == b == c:
            return CheckResult(False, "the agent said the same thing three times in a row", {"text": a})
    return CheckResult(True)


def check_termination(ctx: Context) -> CheckResult:
    """The episode ends with a satisfied user, or with a hand-over when the task's correct
    outcome is one (its ground truth ends with the domain's ``transfer_tool``), and only then."""
    reason = ctx.trajectory.termination
    calls = ctx.blueprint.ground_truth.calls
    transfer = ctx.domain.transfer_tool
    expects_transfer = bool(calls) and transfer is not None and calls[-1].name == transfer
    if expects_transfer:
        if reason is TerminationReason.transfer:
            return CheckResult(True)
        return CheckResult(False, f"episode ended by {reason.value}; the task's outcome is a "
                                  f"hand-over ({transfer})")
    if reason is TerminationReason.user_stop:
        return CheckResult(True)
    return CheckResult(False, f"episode ended by {reason.value}, not by a satisfied user")


CHECKS: dict[str, Callable[[Context], CheckResult]] = {
    "final_state": check_final_state,
    "outputs": check_outputs,
    "confirmation": check_confirmation,
    "authentication": check_authentication,
    "tool_schema": check_tool_schema,
    "grounded_ids": check_grounded_ids,
    "grounded_claims": check_grounded_claims,
    "policy": check_policy,
    "turn_limit": check_turn_limit,
    "no_loops": check_no_loops,
    "termination": check_termination,
}


def verify(trajectory: Trajectory, blueprint: TaskBlueprint, domain: Domain,
           checks: Sequence[str] | None = None) -> list[Verdict]:
    """Run the named checks (all by default); the verdicts carry the overall pass and reward."""
    names = list(checks) if checks is not None else list(CHECKS)
    ctx = Context(trajectory, blueprint, domain)
    results = [(name, CHECKS[name](ctx)) for name in names]
    passed = all(r.passed for _, r in results)
    reward = sum(r.passed for _, r in results) / len(results) if results else 0.0
    return [
        Verdict(id=Verdict.make_id(trajectory.id, name), trajectory_id=trajectory.id,
                blueprint_id=blueprint.id, run_id=trajectory.run_id, check=name, passed=r.passed,
                reason=r.reason, evidence=json.dumps(r.evidence, default=str), trajectory_passed=passed,
                reward=round(reward, 6))
        for name, r in results
    ]
