"""Explicit Arrow schemas of the stored records, and row conversion both ways.

Queryable parts are Arrow structs and lists (messages, tool calls, structure); irregular parts
(facts, tool arguments, state diffs, tool schemas) are JSON text. ``*_to_row`` gives a dict that
``pa.Table.from_pylist(rows, schema=...)`` accepts; ``*_from_row`` rebuilds the record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from trajforge.schemas.blueprint import (
    Behaviour,
    BlueprintRejection,
    DisclosureStep,
    EnvironmentRef,
    GroundTruth,
    GroundTruthCall,
    Intent,
    Persona,
    ProposalRecord,
    Provenance,
    RequiredOutput,
    Scenario,
    StateChange,
    StructuralDescriptors,
    TaskBlueprint,
    UserSpec,
)
from trajforge.schemas.messages import (
    MESSAGE_ADAPTER,
    AssistantMessage,
    Message,
    ToolMessage,
    UserMessage,
)
from trajforge.schemas.tools import ToolSpec
from trajforge.schemas.trajectory import EpisodeSpec, Fault, RoleUsage, Trajectory, TrajectoryFlag, Verdict

_json = json.dumps

TOOL_CALL_TYPE = pa.struct([("id", pa.string()), ("name", pa.string()), ("arguments", pa.string())])
MESSAGE_TYPE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL_TYPE)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
        ("is_error", pa.bool_()),
    ]
)

TRAJECTORY_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("blueprint_id", pa.string()),
        ("run_id", pa.string()),
        ("domain", pa.string()),
        ("agent", pa.string()),
        ("user", pa.string()),
        ("seed", pa.int64()),
        ("max_turns", pa.int32()),
        ("fault_kind", pa.string()),
        ("fault_target", pa.int32()),
        ("fault_form", pa.string()),
        ("messages", pa.list_(MESSAGE_TYPE)),
        ("n_messages", pa.int32()),
        ("tools", pa.string()),
        ("termination", pa.string()),
        ("final_state_hash", pa.string()),
        ("final_state_diff", pa.string()),
        ("usage", pa.list_(pa.struct([("role", pa.string()), ("calls", pa.int32()),
                                      ("prompt_tokens", pa.int64()),
                                      ("completion_tokens", pa.int64()),
                                      ("cost_usd", pa.float64()),
                                      ("retries", pa.int32())]))),
        ("cost_usd", pa.float64()),
        ("latency_s", pa.float64()),
        ("agent_entropy", pa.list_(pa.float64())),
        ("retries", pa.int32()),
        ("error", pa.string()),
        ("flags", pa.list_(pa.struct([("kind", pa.string()), ("message", pa.int32()), ("tool", pa.string()),
                                      ("cue", pa.string()), ("excerpt", pa.string())]))),
    ]
)

BLUEPRINT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("run_id", pa.string()),
        ("domain", pa.string()),
        ("env_size", pa.int64()),
        ("env_seed", pa.int64()),
        ("persona", pa.struct([("style", pa.string()), ("verbosity", pa.int8()),
                               ("patience", pa.int8()), ("volunteers", pa.string()),
                               ("traits", pa.list_(pa.string()))])),
        ("goal", pa.string()),
        ("scenario", pa.string()),  # JSON of schemas.blueprint.Scenario; null: stored before scenarios
        ("known_facts", pa.string()),
        ("hidden_facts", pa.string()),
        ("intents", pa.string()),
        ("disclosure", pa.string()),
        ("behaviours", pa.list_(pa.string())),  # null: stored before behaviours
        ("calls", pa.list_(pa.struct([("name", pa.string()), ("arguments", pa.string()),
                                      ("kind", pa.string()), ("intent", pa.int32()),
                                      ("needs", pa.list_(pa.string()))]))),
        ("initial_state_hash", pa.string()),
        ("final_state_hash", pa.string()),
        ("final_state_diff", pa.string()),
        ("outputs", pa.list_(pa.struct([("intent", pa.int32()), ("key", pa.string()),
                                        ("value", pa.string()), ("after_call", pa.int32())]))),
        ("refused", pa.string()),  # JSON of GroundTruth.refused; null: stored before refusals
        ("policy_rules", pa.list_(pa.string())),
        ("structure", pa.struct([("n_intents", pa.int32()), ("write_count", pa.int32()),
                                 ("read_count", pa.int32()),
                                 ("evidence_burden", pa.list_(pa.int32())),
                                 ("dependency_depth", pa.int32()), ("tool_topology", pa.string()),
                                 ("n_revisions", pa.int32()), ("n_redirects", pa.int32())])),
        ("generator", pa.string()),
        ("generator_version", pa.string()),
        ("gen_seed", pa.int64()),
        ("gen_index", pa.int64()),
        ("parent_id", pa.string()),
    ]
)

VERDICT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("trajectory_id", pa.string()),
        ("blueprint_id", pa.string()),
        ("run_id", pa.string()),
        ("check", pa.string()),
        ("passed", pa.bool_()),
        ("reason", pa.string()),
        ("evidence", pa.string()),
        ("trajectory_passed", pa.bool_()),
        ("reward", pa.float64()),
        ("verifier_version", pa.string()),  # absent from shards written before it (NULL)
    ]
)

REJECTION_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("run_id", pa.string()),
        ("domain", pa.string()),
        ("index", pa.int64()),
        ("seed", pa.int64()),
        ("generator", pa.string()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("blueprint_id", pa.string()),
    ]
)

PROPOSAL_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("run_id", pa.string()),
        ("index", pa.int64()),
        ("round", pa.int32()),
        ("model", pa.string()),
        ("accepted", pa.bool_()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("blueprint_id", pa.string()),
        ("votes", pa.string()),
    ]
)


# --- messages ---------------------------------------------------------------------------------

# --- stored messages in the chat-template shape (what exports write and local models read) ----

ChatMessage = dict[str, Any]


def decode_arguments(text: str | None) -> Any:
    """Stored argument text as a JSON object; anything that is not an object stays its text."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return text
    return value if isinstance(value, dict) else text


def drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def conversation(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    """Stored message rows in the OpenAI chat shape with ``arguments`` as JSON objects and no
    ``None`` keys (TRL / transformers chat-template input)."""
    out: list[ChatMessage] = []
    for m in messages:
        role = m["role"]
        if role == "assistant":
            msg: ChatMessage = drop_none({"role": role, "content": m.get("content")})
            calls = m.get("tool_calls") or []
            if calls:
                msg["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": decode_arguments(c["arguments"])}}
                    for c in calls]
        elif role == "tool":
            msg = drop_none({"role": role, "content": m.get("content") or "",
                              "tool_call_id": m.get("tool_call_id"), "name": m.get("name")})
        else:
            msg = {"role": role, "content": m.get("content") or ""}
        out.append(msg)
    return out


def message_to_row(message: Message) -> dict[str, Any]:
    row: dict[str, Any] = {"role": message.role, "content": message.content, "tool_calls": None,
                           "tool_call_id": None, "name": None, "is_error": None}
    if isinstance(message, AssistantMessage) or (isinstance(message, UserMessage)
                                                 and message.tool_calls):
        # a user message's calls (a user tool on their device) are stored only when it has any,
        # so every other user row is as it was (None)
        row["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments}
                             for c in message.tool_calls]
    elif isinstance(message, ToolMessage):
        row.update(tool_call_id=message.tool_call_id, name=message.name, is_error=message.is_error)
    return row


def message_from_row(row: dict[str, Any]) -> Message:
    data: dict[str, Any] = {"role": row["role"], "content": row["content"]}
    if row["role"] == "assistant" or (row["role"] == "user" and row.get("tool_calls")):
        data["tool_calls"] = row["tool_calls"] or []
    elif row["role"] == "tool":
        data.update(tool_call_id=row["tool_call_id"], name=row["name"], is_error=row["is_error"])
    return MESSAGE_ADAPTER.validate_python(data)


def _diff_json(diff: tuple[StateChange, ...]) -> str:
    return _json([c.model_dump(mode="json") for c in diff])


def _diff_from_json(text: str) -> tuple[StateChange, ...]:
    return tuple(StateChange(**c) for c in json.loads(text))


# --- trajectories -----------------------------------------------------------------------------

def trajectory_to_row(t: Trajectory) -> dict[str, Any]:
    fault = t.episode.fault
    return {
        "id": t.id,
        "blueprint_id": t.blueprint_id,
        "run_id": t.run_id,
        "domain": t.domain,
        "agent": t.episode.agent,
        "user": t.episode.user,
        "seed": t.episode.seed,
        "max_turns": t.episode.max_turns,
        "fault_kind": fault.kind.value if fault else None,
        "fault_target": fault.target if fault else None,
        "fault_form": fault.form if fault else None,
        "messages": [message_to_row(m) for m in t.messages],
        "n_messages": len(t.messages),
        "tools": _json([s.model_dump(mode="json") for s in t.tools]),
        "termination": t.termination.value,
        "final_state_hash": t.final_state_hash,
        "final_state_diff": _diff_json(t.final_state_diff),
        "usage": [u.model_dump() for u in t.usage],
        "cost_usd": t.cost_usd,
        "latency_s": t.latency_s,
        "agent_entropy": list(t.agent_entropy) if t.agent_entropy is not None else None,
        "retries": t.retries,
        "error": t.error,
        "flags": [f.model_dump(mode="json") for f in t.flags],
    }


def trajectory_from_row(row: dict[str, Any]) -> Trajectory:
    fault = (Fault(kind=row["fault_kind"], target=row["fault_target"], form=row.get("fault_form"))
             if row["fault_kind"] is not None else None)
    return Trajectory(
        id=row["id"],
        blueprint_id=row["blueprint_id"],
        run_id=row["run_id"],
        domain=row["domain"],
        episode=EpisodeSpec(agent=row["agent"], user=row["user"], seed=row["seed"],
                            max_turns=row["max_turns"], fault=fault),
        messages=tuple(message_from_row(m) for m in row["messages"]),
        tools=tuple(ToolSpec(**s) for s in json.loads(row["tools"])),
        termination=row["termination"],
        final_state_hash=row["final_state_hash"],
        final_state_diff=_diff_from_json(row["final_state_diff"]),
        usage=tuple(RoleUsage(**u) for u in row["usage"] or ()),
        cost_usd=row["cost_usd"],
        latency_s=row["latency_s"],
        agent_entropy=tuple(row["agent_entropy"]) if row["agent_entropy"] is not None else None,
        retries=row.get("retries") or 0,
        error=row.get("error"),
        flags=tuple(TrajectoryFlag(**f) for f in row.get("flags") or ()),  # None: stored before flags
    )


# --- blueprints -------------------------------------------------------------------------------

def blueprint_to_row(bp: TaskBlueprint, run_id: str) -> dict[str, Any]:
    u, gt, p = bp.user, bp.ground_truth, bp.provenance
    return {
        "id": bp.id,
        "run_id": run_id,
        "domain": bp.environment.domain,
        "env_size": bp.environment.size,
        "env_seed": bp.environment.seed,
        "persona": u.persona.model_dump(mode="json"),
        "goal": u.goal,
        "scenario": _json(u.scenario.model_dump(mode="json")),
        "known_facts": _json(u.known_facts),
        "hidden_facts": _json(u.hidden_facts),
        "intents": _json([i.model_dump(mode="json") for i in u.intents]),
        "disclosure": _json([d.model_dump(mode="json") for d in u.disclosure]),
        "behaviours": [str(b) for b in u.behaviours],
        "calls": [{"name": c.name, "arguments": _json(c.arguments), "kind": c.kind,
                   "intent": c.intent, "needs": list(c.needs)} for c in gt.calls],
        "initial_state_hash": gt.initial_state_hash,
        "final_state_hash": gt.final_state_hash,
        "final_state_diff": _diff_json(gt.final_state_diff),
        "outputs": [o.model_dump() for o in gt.outputs],
        "refused": _json([c.model_dump(mode="json") for c in gt.refused]),
        "policy_rules": list(bp.policy_rules),
        "structure": bp.structure.model_dump(mode="json"),
        "generator": p.generator,
        "generator_version": p.version,
        "gen_seed": p.seed,
        "gen_index": p.index,
        "parent_id": p.parent_id,
    }


def blueprint_from_row(row: dict[str, Any]) -> TaskBlueprint:
    user = UserSpec(
        persona=Persona(**row["persona"]),
        goal=row["goal"],
        scenario=Scenario(**json.loads(row["scenario"])) if row.get("scenario") else Scenario(),
        known_facts=json.loads(row["known_facts"]),
        hidden_facts=json.loads(row["hidden_facts"]),
        intents=tuple(Intent(**i) for i in json.loads(row["intents"])),
        disclosure=tuple(DisclosureStep(**d) for d in json.loads(row["disclosure"])),
        behaviours=tuple(Behaviour(b) for b in row.get("behaviours") or ()),
    )
    ground_truth = GroundTruth(
        calls=tuple(GroundTruthCall(name=c["name"], arguments=json.loads(c["arguments"]),
                                    kind=c["kind"], intent=c["intent"], needs=tuple(c["needs"] or ()))
              for c in row["calls"]),
        initial_state_hash=row["initial_state_hash"],
        final_state_hash=row["final_state_hash"],
        final_state_diff=_diff_from_json(row["final_state_diff"]),
        outputs=tuple(RequiredOutput(**o) for o in row["outputs"]),
        refused=tuple(GroundTruthCall(**c) for c in json.loads(row["refused"])) if row.get("refused") else (),
    )
    return TaskBlueprint(
        id=row["id"],
        environment=EnvironmentRef(domain=row["domain"], size=row["env_size"], seed=row["env_seed"]),
        user=user,
        ground_truth=ground_truth,
        policy_rules=tuple(row["policy_rules"]),
        structure=StructuralDescriptors(**row["structure"]),
        provenance=Provenance(generator=row["generator"], version=row["generator_version"],
                              seed=row["gen_seed"], index=row["gen_index"],
                              parent_id=row["parent_id"]),
    )


# --- verdicts and rejections ------------------------------------------------------------------

def verdict_to_row(v: Verdict) -> dict[str, Any]:
    return v.model_dump()


def verdict_from_row(row: dict[str, Any]) -> Verdict:
    """A verdict from its row; a row from before ``verifier_version`` existed has none."""
    return Verdict(**row)


def rejection_to_row(r: BlueprintRejection) -> dict[str, Any]:
    return r.model_dump()


def rejection_from_row(row: dict[str, Any]) -> BlueprintRejection:
    return BlueprintRejection(**row)


def proposal_to_row(p: ProposalRecord) -> dict[str, Any]:
    return p.model_dump()


# --- diversity: embeddings, per-trajectory scores, selection decisions ------------------------
# Written once per run and embedder/selection by the diversity stage (not per shard); the
# vector is a variable list so embedders of any dimension share one schema.

EMBEDDING_SCHEMA = pa.schema(
    [
        ("trajectory_id", pa.string()),
        ("run_id", pa.string()),
        ("embedder", pa.string()),   # the embedder's key (model and settings)
        ("view", pa.string()),       # what was embedded: goal, dialogue, user, agent, calls, structure
        ("vector", pa.list_(pa.float32())),
    ]
)

SCORE_SCHEMA = pa.schema(
    [
        ("trajectory_id", pa.string()),
        ("blueprint_id", pa.string()),
        ("run_id", pa.string()),
        ("selection_id", pa.string()),
        ("domain", pa.string()),
        ("intent", pa.string()),      # the blueprint's first intent
        ("complexity", pa.string()),  # low / mid / high (see curation.complexity_bucket)
        ("stratum", pa.string()),
        ("quality", pa.float64()),    # the verdicts' reward
        ("nn_similarity", pa.float64()),   # cosine to the nearest other candidate
        ("nn_trajectory_id", pa.string()),
        ("loo_contribution", pa.float64()),  # VS2(pool) - VS2(pool without this one)
        ("selection_gain", pa.float64()),    # objective gain when picked / if added at the end
        ("duplicate_similarity", pa.float64()),
    ]
)

SELECTION_SCHEMA = pa.schema(
    [
        ("trajectory_id", pa.string()),
        ("run_id", pa.string()),
        ("selection_id", pa.string()),
        ("stratum", pa.string()),
        ("decision", pa.string()),    # selected, not_selected, duplicate, kept (dedup only)
        ("selected", pa.bool_()),
        ("rank", pa.int32()),         # order of selection (0-based), None if not selected
        ("duplicate_of", pa.string()),
        ("reason", pa.string()),
    ]
)

DIVERSITY_TABLES: dict[str, pa.Schema] = {
    "embeddings": EMBEDDING_SCHEMA,
    "scores": SCORE_SCHEMA,
    "selection": SELECTION_SCHEMA,
}
