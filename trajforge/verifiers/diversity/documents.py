"""What gets embedded: a trajectory (with its blueprint) as one text per view.

Views (``TextView``):
- ``goal``: the blueprint's user goal;
- ``dialogue``: the whole conversation (user and agent text, tool calls with arguments, tool
  results), system prompt left out (it is the same for every episode of a domain);
- ``user`` / ``agent``: only that side's turns (the agent's include its tool calls);
- ``calls``: what the episode *did*: the agent's tool calls with their arguments, and the final
  state diff with the new values. Wording-free, so it is the dedup view: a reworded copy of a
  task makes the same calls on the same records, while two different tasks differ in them;
- ``structure``: tokens for the tool-call sequence (1- to 3-grams of tool names), the shape of
  the final state diff (table and field changed, no values) and the blueprint's structural
  descriptors (intent kinds, counts, depth, topology). Embedded by the hashed embedder.

Rows are the dicts the catalog query in the diversity stage returns: ``messages`` (list of
message structs), ``goal``, ``structure`` (struct), ``intents`` and ``final_state_diff`` (JSON).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

TextView = Literal["goal", "dialogue", "user", "agent", "calls", "structure"]
TEXT_VIEWS: tuple[str, ...] = ("goal", "dialogue", "user", "agent", "calls", "structure")


def _message_lines(messages: list[Mapping[str, Any]], roles: set[str]) -> list[str]:
    lines: list[str] = []
    for m in messages:
        role = m["role"]
        if role not in roles:
            continue
        if m.get("content"):
            lines.append(f"{role}: {m['content']}")
        if role == "assistant":
            for call in m.get("tool_calls") or ():
                lines.append(f"call {call['name']} {call['arguments']}")
    return lines


def tool_names(messages: list[Mapping[str, Any]]) -> list[str]:
    return [call["name"] for m in messages if m["role"] == "assistant"
            for call in m.get("tool_calls") or ()]


def structure_tokens(row: Mapping[str, Any]) -> list[str]:
    names = tool_names(row["messages"])
    tokens = [f"call:{n}" for n in names]
    for width in (2, 3):
        tokens += ["seq:" + ">".join(names[i:i + width]) for i in range(len(names) - width + 1)]
    diff = json.loads(row["final_state_diff"] or "[]")
    tokens += [f"diff:{c['table']}.{c['path'].split('.')[0].split('[')[0]}" for c in diff]
    tokens.append(f"diff_size:{min(len(diff), 10)}")
    s = row.get("structure") or {}
    for key in ("n_intents", "write_count", "read_count", "dependency_depth", "n_revisions",
                "n_redirects"):
        if key in s:
            tokens.append(f"{key}:{s[key]}")
    if s.get("tool_topology"):
        tokens.append("topology:" + s["tool_topology"])
    intents = json.loads(row.get("intents") or "[]")
    tokens += [f"intent:{i['kind']}" for i in intents]
    tokens += [f"redirect:{i['initial_kind']}>{i['kind']}" for i in intents if i.get("initial_kind")]
    return tokens


def document(row: Mapping[str, Any], view: str) -> str:
    """The text of one trajectory row under ``view``."""
    if view == "goal":
        return row["goal"] or ""
    if view == "dialogue":
        return "\n".join(_message_lines(row["messages"], {"user", "assistant", "tool"}))
    if view == "user":
        return "\n".join(_message_lines(row["messages"], {"user"}))
    if view == "agent":
        return "\n".join(_message_lines(row["messages"], {"assistant"}))
    if view == "calls":
        lines = [f"call {call['name']} {call['arguments']}" for m in row["messages"]
                 if m["role"] == "assistant" for call in m.get("tool_calls") or ()]
        lines += [f"changed {c['table']} {c['key']} {c['path']} {json.dumps(c.get('after'))}"
                  for c in json.loads(row["final_state_diff"] or "[]")]
        return "\n".join(lines)
    if view == "structure":
        return " ".join(structure_tokens(row))
    raise ValueError(f"unknown view {view!r}; expected one of {TEXT_VIEWS}")
