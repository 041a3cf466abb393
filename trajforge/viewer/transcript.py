"""A stored trajectory as something to read: chat bubbles with their tool calls and results,
the failing checks' evidence placed at the messages it points to, the state diff against the
blueprint's, and where a failing episode first departs from its passing twin."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Flag:
    """A failing check's evidence item that points at a message (or at a call in it)."""

    check: str
    why: str


@dataclass
class CallView:
    id: str
    name: str
    arguments: str  # pretty JSON when it parses, else the stored text
    short: str  # the arguments on one line, cut for the summary
    result: str | None = None  # the tool message answering it, pretty JSON when it parses
    result_index: int | None = None
    result_error: bool = False
    flags: list[Flag] = field(default_factory=list)


@dataclass
class MessageView:
    index: int
    role: str
    content: str
    calls: list[CallView] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    is_error: bool = False
    name: str | None = None  # a tool message's tool (only when no call of this transcript asked for it)


@dataclass
class VerdictView:
    check: str
    passed: bool
    reason: str
    evidence: str  # pretty JSON
    messages: list[int]  # the messages its evidence points at


def pretty_json(text: str | None) -> str:
    """Stored JSON text indented for reading; anything else unchanged."""
    if text is None:
        return ""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return text
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, ensure_ascii=False)
    return text


def _one_line(text: str | None, width: int = 90) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= width else line[:width - 1] + "…"


def _evidence_items(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every object inside an evidence value that names a message or a call."""
    if isinstance(value, Mapping):
        if "message" in value or "call" in value:
            yield value
        for inner in value.values():
            yield from _evidence_items(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _evidence_items(inner)


def _why(item: Mapping[str, Any], reason: str) -> str:
    why = item.get("why")
    if isinstance(why, str) and why:
        return why
    rules = item.get("rules")
    if isinstance(rules, list) and rules:
        return "rule(s) broken: " + ", ".join(map(str, rules))
    return reason


def message_views(messages: Sequence[Mapping[str, Any]], verdicts: Sequence[Mapping[str, Any]]
                  ) -> tuple[list[MessageView], list[VerdictView]]:
    """Bubbles for the messages (system prompt first, tool results inside the call that asked for
    them) and the verdicts with the message indices their evidence names.

    Evidence points at a message by index (``"message": 14``); an item that names only a call
    (``"call": "get_order_details"``) flags every call of that name."""
    by_message: dict[int, list[Flag]] = defaultdict(list)
    by_call: dict[str, list[Flag]] = defaultdict(list)
    verdict_views: list[VerdictView] = []
    for v in verdicts:
        try:
            evidence = json.loads(v["evidence"] or "{}")
        except ValueError:
            evidence = v["evidence"]
        pointed: list[int] = []
        if not v["passed"]:
            for item in _evidence_items(evidence):
                flag = Flag(v["check"], _why(item, v["reason"] or ""))
                index = item.get("message")
                if isinstance(index, int) and 0 <= index < len(messages):
                    by_message[index].append(flag)
                    pointed.append(index)
                elif isinstance(item.get("call"), str):
                    by_call[item["call"]].append(flag)
        verdict_views.append(VerdictView(
            check=v["check"], passed=bool(v["passed"]), reason=v["reason"] or "",
            evidence=json.dumps(evidence, indent=2, ensure_ascii=False) if not isinstance(evidence, str)
            else evidence, messages=sorted(set(pointed))))
    views: list[MessageView] = []
    calls: dict[str, CallView] = {}
    for index, m in enumerate(messages):
        role = m["role"]
        if role == "tool" and m.get("tool_call_id") in calls:
            call = calls[m["tool_call_id"]]
            call.result, call.result_index = pretty_json(m.get("content")), index
            call.result_error = bool(m.get("is_error"))
            call.flags.extend(by_message.get(index, []))
            continue
        view = MessageView(index=index, role=role, content=m.get("content") or "",
                           flags=list(by_message.get(index, [])), is_error=bool(m.get("is_error")),
                           name=m.get("name") if role == "tool" else None)
        for c in m.get("tool_calls") or []:
            call = CallView(id=c["id"], name=c["name"], arguments=pretty_json(c["arguments"]),
                            short=_one_line(c["arguments"]),
                            flags=list(by_call.get(c["name"], [])))
            calls[c["id"]] = call
            view.calls.append(call)
        views.append(view)
    return views, verdict_views


def _message_key(m: Mapping[str, Any]) -> tuple[Any, ...]:
    calls = tuple((c["name"], c["arguments"]) for c in m.get("tool_calls") or [])
    return m["role"], m.get("content") or "", calls, bool(m.get("is_error"))


def first_divergence(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> int:
    """The index of the first message where two transcripts differ (role, text, calls and their
    arguments; call ids are ignored); ``min(len)`` when one is a prefix of the other."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if _message_key(x) != _message_key(y):
            return index
    return min(len(a), len(b))


@dataclass
class DiffRow:
    table: str
    key: str
    path: str
    before: str
    after: str
    status: str  # "both", "expected only" (missing from the episode), "episode only" (unexpected)


def _change_key(c: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    dump = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)  # noqa: E731
    return str(c.get("table")), str(c.get("key")), str(c.get("path")), dump(c.get("before")), dump(c.get("after"))


def diff_rows(actual_json: str | None, expected_json: str | None) -> list[DiffRow]:
    """The episode's state changes beside the blueprint's expected ones."""
    actual = json.loads(actual_json or "[]")
    expected = json.loads(expected_json or "[]") if expected_json is not None else None
    actual_keys = {_change_key(c) for c in actual}
    expected_keys = {_change_key(c) for c in expected} if expected is not None else actual_keys
    rows: list[DiffRow] = []
    for c in actual:
        k = _change_key(c)
        rows.append(DiffRow(*k, status="both" if k in expected_keys else "episode only"))
    for c in expected or []:
        k = _change_key(c)
        if k not in actual_keys:
            rows.append(DiffRow(*k, status="expected only"))
    return rows
