"""Training-ready exports: pure functions from catalog rows to records, one per format.

Inputs are rows as the catalog returns them (``trajectories`` rows, with stored messages whose
tool-call ``arguments`` are the raw JSON text the agent produced; ``blueprints`` rows), plus what
the verifiers decided. Outputs are plain dicts typed by ``trajforge.store.features``.

- ``sft_record``: TRL's conversational format, ``messages`` + ``tools``. Arguments become JSON
  objects (what chat templates expect); keys whose value is ``None`` are left out.
- ``preference_records``: for each failing trajectory, the passing trajectory of the same
  blueprint that shares the longest message prefix with it (the oracle twin of a fault-injected
  episode shares everything up to the fault). The pair is split at the first divergent
  assistant message: ``prompt`` is the shared prefix, ``chosen`` / ``rejected`` the two agent
  turns from there up to the next user message (the turn that holds the difference), and the
  failing checks are named.
- ``sharegpt_record``: ``conversations`` with human / gpt / function_call / observation, for
  LLaMA-Factory-style trainers: consecutive calls and results are merged so human/observation
  and gpt/function_call alternate, and the conversation ends on a gpt turn.
- ``openai_record``: the chat fine-tuning JSONL shape: ``arguments`` as JSON text, an id on
  every call and every tool result, and a ``metadata`` object (trajectory, blueprint and run
  ids, termination) so ``trajforge verify --input`` can re-check the row against its dataset.
- ``rl_task_record``: one row per blueprint: environment, initial prompt, tools, and what the
  verifiers need (expected final state, required outputs, policy rules, ground truth).

A call whose stored arguments are not a JSON object (a malformed call is data) keeps its raw
text as a JSON string value in the formats that want objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trajforge.schemas.arrow import ChatMessage as Message
from trajforge.schemas.arrow import conversation as _stored_conversation
from trajforge.schemas.arrow import decode_arguments, drop_none

Row = Mapping[str, Any]

ORACLE_PREFIX = "scripted:oracle"


# --- messages ---------------------------------------------------------------------------------

def agent_rows(messages: Sequence[Row]) -> list[Row]:
    """Stored message rows as the agent saw them: the user's own tool calls (dual control: a
    user row with ``tool_calls``) and their results left out; such a user row keeps its text,
    or is dropped when it has none. Rows of other trajectories come back unchanged."""
    ids: set[str] = set()
    out: list[Row] = []
    for m in messages:
        if m["role"] == "user" and m.get("tool_calls"):
            ids.update(c["id"] for c in m["tool_calls"])
            if m.get("content"):
                out.append({**m, "tool_calls": None})
        elif not (m["role"] == "tool" and m.get("tool_call_id") in ids):
            out.append(m)
    return out


def conversation(messages: Sequence[Row]) -> list[Message]:
    """``schemas.arrow.conversation`` of what the agent saw (``agent_rows``)."""
    return _stored_conversation(agent_rows(messages))


def tool_schemas(tools: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The trajectory's tool schemas (stored as JSON text) as a list of objects. Already
    parsed schemas are shared, not copied: exports never modify them."""
    return list(json.loads(tools)) if isinstance(tools, str) else list(tools)  # type: ignore[arg-type]


# --- sft --------------------------------------------------------------------------------------

def sft_record(trajectory: Row) -> dict[str, Any]:
    """One TRL conversational row for a trajectory (the caller keeps only passing ones)."""
    return {"id": trajectory["id"], "blueprint_id": trajectory["blueprint_id"],
            "domain": trajectory["domain"], "messages": conversation(trajectory["messages"]),
            "tools": tool_schemas(trajectory["tools"])}


# --- preferences ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Judged:
    """A trajectory row with its verification outcome."""

    row: Row
    passed: bool
    failed_checks: tuple[str, ...] = ()


def common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def agent_turn(messages: Sequence[Message], start: int) -> list[Message]:
    """The agent's turn from ``start``: assistant messages and tool results up to the next user
    message (or the end)."""
    end = start
    while end < len(messages) and messages[end]["role"] in ("assistant", "tool"):
        end += 1
    return list(messages[start:end])


def preference_pair(chosen: Judged, rejected: Judged) -> dict[str, Any] | None:
    """The pair split at the first divergent message, or ``None`` when the two do not diverge
    at an assistant message (then they share no prompt a policy could answer both ways)."""
    a, b = conversation(chosen.row["messages"]), conversation(rejected.row["messages"])
    split = common_prefix(a, b)
    if split >= len(a) or split >= len(b):
        return None
    if a[split]["role"] != "assistant" or b[split]["role"] != "assistant":
        return None
    good, bad = agent_turn(a, split), agent_turn(b, split)
    row = rejected.row
    return {
        "id": f"pf_{chosen.row['id'].removeprefix('tr_')}_{row['id'].removeprefix('tr_')}",
        "blueprint_id": row["blueprint_id"],
        "domain": row["domain"],
        "prompt": a[:split],
        "chosen": good,
        "rejected": bad,
        "tools": tool_schemas(chosen.row["tools"]),
        "chosen_trajectory_id": chosen.row["id"],
        "rejected_trajectory_id": row["id"],
        "failed_checks": list(rejected.failed_checks),
        "fault_kind": row.get("fault_kind"),
    }


def preference_records(judged: Iterable[Judged]) -> list[dict[str, Any]]:
    """Pairs within each blueprint: every failing trajectory against the passing one sharing
    the longest prefix with it (ties: the oracle, then the smaller id). Deterministic order."""
    by_blueprint: dict[str, list[Judged]] = {}
    for j in judged:
        by_blueprint.setdefault(j.row["blueprint_id"], []).append(j)
    pairs: list[dict[str, Any]] = []
    for blueprint_id in sorted(by_blueprint):
        group = sorted(by_blueprint[blueprint_id], key=lambda j: j.row["id"])
        good = [j for j in group if j.passed]
        if not good:
            continue
        for bad in (j for j in group if not j.passed):
            bad_messages = conversation(bad.row["messages"])

            def rank(j: Judged, bad_messages: list[Message] = bad_messages) -> tuple[int, int]:
                shared = common_prefix(conversation(j.row["messages"]), bad_messages)
                return (-shared, 0 if str(j.row.get("agent", "")).startswith(ORACLE_PREFIX) else 1)

            best = min(good, key=rank)  # min is stable: ties keep the smaller id
            pair = preference_pair(best, bad)
            if pair is not None:
                pairs.append(pair)
    return pairs


# --- sharegpt ---------------------------------------------------------------------------------

_ROLE_TO_FROM = {"user": "human", "tool": "observation"}
_ODD = ("human", "observation")  # positions 0, 2, 4, ...
_EVEN = ("gpt", "function_call")


def _merge(kind: str, values: list[Any]) -> str:
    if kind == "function_call":
        return json.dumps(values[0] if len(values) == 1 else values, ensure_ascii=False)
    if kind == "observation":
        return values[0] if len(values) == 1 else json.dumps(values, ensure_ascii=False)
    return "\n\n".join(values)


def sharegpt_record(trajectory: Row) -> dict[str, Any] | None:
    """LLaMA-Factory ``sharegpt`` row, or ``None`` if the dialogue cannot be made to alternate
    (it then has no turn a trainer could use).

    Text an assistant sends alongside tool calls is dropped here: the format has no slot for
    it between the gpt and function_call positions (the scripted agents never do this)."""
    messages = conversation(trajectory["messages"])
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    runs: list[tuple[str, list[Any]]] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "assistant" and m.get("tool_calls"):
            kind = "function_call"
            items: list[Any] = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                                for c in m["tool_calls"]]
        elif m["role"] == "assistant":
            kind, items = "gpt", [m.get("content") or ""]
        else:
            kind, items = _ROLE_TO_FROM[m["role"]], [m.get("content") or ""]
        if runs and runs[-1][0] == kind:
            runs[-1][1].extend(items)
        elif runs and runs[-1][0] == "gpt" and kind == "function_call":
            runs[-1] = (kind, items)  # see the docstring
        else:
            runs.append((kind, items))
    while runs and runs[-1][0] != "gpt":
        runs.pop()
    conversations = [{"from": kind, "value": _merge(kind, items)} for kind, items in runs]
    if not conversations or conversations[0]["from"] != "human":
        return None
    for i, c in enumerate(conversations):
        if c["from"] not in (_ODD if i % 2 == 0 else _EVEN):
            return None
    # tools as APIGen-MT and LLaMA-Factory write them: the function objects, as JSON text
    functions = [t.get("function", t) for t in tool_schemas(trajectory["tools"])]
    return {"id": trajectory["id"], "conversations": conversations, "system": system,
            "tools": json.dumps(functions, ensure_ascii=False)}


# --- openai -----------------------------------------------------------------------------------

def openai_record(trajectory: Row) -> dict[str, Any] | None:
    """An OpenAI chat fine-tuning line: ``messages`` (arguments as JSON text, ids on every call
    and result), ``tools``, ``parallel_tool_calls``. Trailing non-assistant messages are cut
    (they teach nothing); ``None`` when no assistant message is left."""
    out: list[Message] = []
    parallel = False
    pending_ids: list[str] = []
    counter = 0
    for m in agent_rows(trajectory["messages"]):
        role = m["role"]
        if role == "assistant":
            msg: Message = drop_none({"role": role, "content": m.get("content")})
            calls = m.get("tool_calls") or []
            if calls:
                parallel = parallel or len(calls) > 1
                msg["tool_calls"] = []
                for c in calls:
                    counter += 1
                    call_id = c.get("id") or f"call_{counter:03d}"
                    pending_ids.append(call_id)
                    msg["tool_calls"].append({"id": call_id, "type": "function",
                                              "function": {"name": c["name"],
                                                           "arguments": c["arguments"] or "{}"}})
            if "content" not in msg and "tool_calls" not in msg:
                msg["content"] = ""
        elif role == "tool":
            call_id = m.get("tool_call_id") or (pending_ids[0] if pending_ids else "")
            msg = {"role": role, "tool_call_id": call_id, "content": m.get("content") or ""}
        else:
            msg = {"role": role, "content": m.get("content") or ""}
        if role == "tool" and msg["tool_call_id"] in pending_ids:
            pending_ids.remove(msg["tool_call_id"])
        out.append(msg)
    while out and out[-1]["role"] != "assistant":
        out.pop()
    if not out:
        return None
    return {"messages": out, "tools": tool_schemas(trajectory["tools"]),
            "parallel_tool_calls": parallel, "metadata": openai_metadata(trajectory)}



def openai_metadata(trajectory: Row) -> dict[str, str | None]:
    """What ``trajforge verify --input`` needs to check an openai row against its dataset and
    that the conversation cannot say: which trajectory, blueprint, run and domain it is, and how
    the episode ended. One ``metadata`` object of strings (the shape OpenAI's own ``metadata``
    fields take), so the line stays a chat fine-tuning example that trainers read as before."""
    keys = {"trajectory_id": "id", "blueprint_id": "blueprint_id", "run_id": "run_id",
            "domain": "domain", "termination": "termination"}
    return {name: (None if trajectory.get(key) is None else str(trajectory[key]))
            for name, key in keys.items()}


# --- rl tasks ---------------------------------------------------------------------------------

def opening_prompt(messages: Sequence[Row]) -> list[Message]:
    """The system prompt and the user's first message: what an RL rollout starts from."""
    conv = conversation(messages)
    first_user = next((i for i, m in enumerate(conv) if m["role"] == "user"), None)
    return conv[: first_user + 1] if first_user is not None else [m for m in conv if m["role"] == "system"]


def rl_task_record(blueprint: Row, reference: Row, family: str) -> dict[str, Any]:
    """One RL task: a blueprint with the opening of a reference episode (its oracle when there
    is one), the tools, and everything the verifiers check against."""
    return {
        "id": blueprint["id"],
        "environment": blueprint["domain"],
        "environment_config": {"domain": blueprint["domain"], "size": blueprint["env_size"],
                               "seed": blueprint["env_seed"]},
        "prompt": opening_prompt(reference["messages"]),
        "tools": tool_schemas(reference["tools"]),
        "verification": {
            "initial_state_hash": blueprint["initial_state_hash"],
            "final_state_hash": blueprint["final_state_hash"],
            "final_state_diff": json.loads(blueprint["final_state_diff"]),
            "ground_truth_calls": [
                {"name": c["name"], "arguments": decode_arguments(c["arguments"]), "kind": c["kind"],
                 "intent": c["intent"], "needs": list(c["needs"] or [])}
                for c in blueprint["calls"]],
            "required_outputs": [dict(o) for o in blueprint["outputs"]],
            "policy_rules": list(blueprint["policy_rules"]),
            "max_turns": reference.get("max_turns"),
        },
        "user": {
            "persona": dict(blueprint["persona"]),
            "goal": blueprint["goal"],
            "known_facts": json.loads(blueprint["known_facts"]),
            "hidden_facts": json.loads(blueprint["hidden_facts"]),
            "intents": json.loads(blueprint["intents"]),
            "disclosure": json.loads(blueprint["disclosure"]),
            "behaviours": list(blueprint.get("behaviours") or ()),
        },
        "structure": dict(blueprint["structure"]),
        "family": family,
    }


def reference_trajectory(candidates: Sequence[Row]) -> Row | None:
    """The episode whose opening an RL task uses: an oracle one if any, else the first by id."""
    if not candidates:
        return None
    ordered = sorted(candidates, key=lambda t: (not str(t.get("agent", "")).startswith(ORACLE_PREFIX),
                                                t["id"]))
    return ordered[0]
