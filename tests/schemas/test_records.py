"""Records: content ids, the message union, and JSON / Arrow round trips of real records.

The records come from the real pipeline (retail domain, programmatic generator, scripted
episodes, verifier), so the round trips cover what a run actually stores.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pyarrow as pa
import pytest
from pydantic import ValidationError

from trajforge.environments.retail import RetailDomain
from trajforge.errors import TaskRejected
from trajforge.generators import generate_blueprints
from trajforge.schemas import (
    AssistantMessage,
    BlueprintRejection,
    EpisodeSpec,
    Fault,
    FaultKind,
    RunConfig,
    Scenario,
    SystemMessage,
    TaskBlueprint,
    ToolCall,
    ToolMessage,
    Trajectory,
    UserMessage,
    Verdict,
    canonical_json,
    content_id,
)
from trajforge.schemas.arrow import (
    BLUEPRINT_SCHEMA,
    REJECTION_SCHEMA,
    TRAJECTORY_SCHEMA,
    VERDICT_SCHEMA,
    blueprint_from_row,
    blueprint_to_row,
    rejection_from_row,
    rejection_to_row,
    trajectory_from_row,
    trajectory_to_row,
    verdict_from_row,
    verdict_to_row,
)
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.messages import MESSAGE_ADAPTER
from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, run_episode
from trajforge.simulation.faults import applicable_faults
from trajforge.verifiers import verify

RUN = "run_records"


# --- real records, built once -----------------------------------------------------------------

@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(60, 3)


@pytest.fixture(scope="module")
def blueprints(domain: RetailDomain) -> list[TaskBlueprint]:
    out = [b for b in generate_blueprints(domain, GenerationConfig(), RUN, 0, 40)
           if isinstance(b, TaskBlueprint)]
    assert len(out) >= 30
    return out


def _episode(bp: TaskBlueprint, domain: RetailDomain, seed: int, fault: Fault | None) -> Trajectory:
    rng = random.Random(seed)
    spec = EpisodeSpec(agent=f"scripted:{'faulty' if fault else 'oracle'}", user="scripted",
                       seed=seed, max_turns=40, fault=fault)
    return asyncio.run(run_episode(bp.id, domain.environment(), ScriptedAgent(bp, domain, rng, fault),
                                   ScriptedUser(bp, domain, rng), EpisodeLimits(), run_id=RUN,
                                   episode=spec))


@pytest.fixture(scope="module")
def trajectories(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> list[Trajectory]:
    """An oracle episode per blueprint, plus one faulty episode of every applicable kind."""
    out = [_episode(bp, domain, i, None) for i, bp in enumerate(blueprints[:10])]
    done: set[FaultKind] = set()
    for i, bp in enumerate(blueprints):
        for kind, targets in applicable_faults(bp, domain).items():
            if kind not in done:
                done.add(kind)
                out.append(_episode(bp, domain, 1000 + i, Fault(kind=kind, target=targets[0])))
    assert done == set(FaultKind), f"fault kinds never applicable: {set(FaultKind) - done}"
    return out


@pytest.fixture(scope="module")
def verdicts(domain: RetailDomain, blueprints: list[TaskBlueprint],
             trajectories: list[Trajectory]) -> list[Verdict]:
    by_id = {b.id: b for b in blueprints}
    return [v for t in trajectories for v in verify(t, by_id[t.blueprint_id], domain)]


class _RejectingDomain(RetailDomain):
    """Retail whose policy hook flags every write: the generator must reject those blueprints."""

    def policy_breaches(self, state: Any, tool_name: str, args: dict[str, Any],
                        authenticated: str | None) -> list[str]:
        return ["test_rule"]


class _NoTaskSampler:
    def sample(self, rng: random.Random, n_intents: int, **axes: Any) -> Any:
        raise TaskRejected("no_feasible_intent", "nothing to do")


class _NoTaskDomain(RetailDomain):
    def task_sampler(self) -> Any:
        return _NoTaskSampler()


@pytest.fixture(scope="module")
def rejections() -> list[BlueprintRejection]:
    """Real rejections from ``generate_blueprints``: a validation failure (with a blueprint id)
    and a sampling failure (without one)."""
    cfg = GenerationConfig(p_read_only_intent=0.0)
    validated = list(generate_blueprints(_RejectingDomain(20, 0), cfg, RUN, 0, 5))
    sampled = list(generate_blueprints(_NoTaskDomain(20, 0), cfg, RUN, 0, 3))
    out = [r for r in validated + sampled if isinstance(r, BlueprintRejection)]
    assert len(out) == 8
    assert {r.reason for r in validated} == {"policy_breach"}
    assert all(r.blueprint_id and r.blueprint_id.startswith("bp_") for r in validated)
    assert {(r.reason, r.blueprint_id) for r in sampled} == {("no_feasible_intent", None)}
    return out


# --- content ids ------------------------------------------------------------------------------

def test_content_id_ignores_key_order_and_integral_float_spelling() -> None:
    a = {"b": [1, {"y": 2.0, "x": "s"}], "a": 1, "c": {"z": None, "k": True}}
    b = {"c": {"k": True, "z": None}, "a": 1.0, "b": [1.0, {"x": "s", "y": 2}]}
    assert canonical_json(a) == canonical_json(b)
    assert content_id(a) == content_id(b)
    assert content_id(a, prefix="bp_").startswith("bp_")
    assert len(content_id(a)) == 24 and len(content_id(a, length=16)) == 16


def test_content_id_changes_with_values_order_of_lists_and_types() -> None:
    base = content_id({"a": 1, "b": [1, 2]})
    assert content_id({"a": 2, "b": [1, 2]}) != base
    assert content_id({"a": 1, "b": [2, 1]}) != base  # lists are ordered
    assert content_id({"a": "1", "b": [1, 2]}) != base  # a string is not a number
    assert content_id({"a": 1.5}) != content_id({"a": 1})
    assert content_id({"a": True}) != content_id({"a": 1})


def test_content_id_rejects_values_that_are_not_json() -> None:
    with pytest.raises(TypeError):
        content_id({"a": object()})


def test_record_ids_are_content_addressed(blueprints: list[TaskBlueprint]) -> None:
    bp = blueprints[0]
    assert bp.id == TaskBlueprint.make_id(bp.environment, bp.user, bp.ground_truth, bp.policy_rules)
    assert len({b.id for b in blueprints}) == len(blueprints)
    spec = EpisodeSpec(agent="scripted:oracle", user="scripted", seed=1, max_turns=40)
    same = EpisodeSpec(agent="scripted:oracle", user="scripted", seed=1, max_turns=40)
    assert Trajectory.make_id(bp.id, spec) == Trajectory.make_id(bp.id, same)
    assert Trajectory.make_id(bp.id, spec) != Trajectory.make_id(
        bp.id, spec.model_copy(update={"seed": 2}))
    assert Verdict.make_id("tr_x", "policy") != Verdict.make_id("tr_x", "outputs")


# --- messages ---------------------------------------------------------------------------------

@pytest.mark.parametrize("data, cls", [
    ({"role": "system", "content": "policy"}, SystemMessage),
    ({"role": "user", "content": "hi"}, UserMessage),
    ({"role": "assistant", "content": "hello"}, AssistantMessage),
    ({"role": "assistant", "tool_calls": [{"id": "c1", "name": "get_order_details",
                                           "arguments": '{"order_id": "#W1"}'}]}, AssistantMessage),
    ({"role": "tool", "content": "{}", "tool_call_id": "c1", "name": "get_order_details",
      "is_error": True}, ToolMessage),
])
def test_message_union_parses_each_role(data: dict[str, Any], cls: type) -> None:
    message = MESSAGE_ADAPTER.validate_python(data)
    assert type(message) is cls
    assert message.role == data["role"]
    assert MESSAGE_ADAPTER.validate_json(MESSAGE_ADAPTER.dump_json(message)) == message


def test_message_union_parses_tool_calls_and_defaults() -> None:
    message = MESSAGE_ADAPTER.validate_python(
        {"role": "assistant", "tool_calls": [{"id": "c1", "name": "f"}]})
    assert isinstance(message, AssistantMessage)
    assert message.content is None
    assert message.tool_calls == (ToolCall(id="c1", name="f", arguments="{}"),)
    tool = MESSAGE_ADAPTER.validate_python({"role": "tool", "content": "x", "tool_call_id": "c1",
                                            "name": "f"})
    assert isinstance(tool, ToolMessage) and tool.is_error is False


@pytest.mark.parametrize("data", [
    {"role": "robot", "content": "hi"},  # unknown role
    {"content": "hi"},  # no discriminator
    {"role": "user"},  # missing content
    {"role": "tool", "content": "x", "name": "f"},  # missing tool_call_id
    {"role": "user", "content": "hi", "tool_call_id": "c1"},  # a user answers no tool call
    {"role": "user", "content": "hi", "tool_calls": [{"id": "u1"}]},  # a user call needs a name
    {"role": "system", "content": "p", "name": "x"},  # unknown field
])
def test_message_union_rejects_malformed_messages(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        MESSAGE_ADAPTER.validate_python(data)


@pytest.mark.parametrize("arguments, expected", [
    ('{"order_id": "#W1", "item_ids": ["1", "2"]}', {"order_id": "#W1", "item_ids": ["1", "2"]}),
    ("{}", {}),
    ("{'order_id': 1}", None),  # python repr, not JSON
    ('{"order_id": ', None),  # truncated
    ("[1, 2]", None),  # JSON, but not an object
    ('"text"', None),
    ("null", None),
    ("", None),
])
def test_tool_call_parsed_arguments(arguments: str, expected: dict[str, Any] | None) -> None:
    assert ToolCall(id="c", name="f", arguments=arguments).parsed_arguments() == expected


def test_records_are_frozen() -> None:
    message = UserMessage(content="hi")
    with pytest.raises(ValidationError):
        message.content = "changed"  # type: ignore[misc]


# --- round trips of real records --------------------------------------------------------------

def _arrow_round_trip(rows: list[dict[str, Any]], schema: pa.Schema) -> list[dict[str, Any]]:
    table = pa.Table.from_pylist(rows, schema=schema)
    assert table.schema.equals(schema)
    assert table.num_rows == len(rows)
    return table.to_pylist()


def test_blueprints_round_trip_through_json_and_arrow(blueprints: list[TaskBlueprint]) -> None:
    assert {b.structure.n_revisions > 0 for b in blueprints} == {True, False}
    for bp in blueprints:
        assert TaskBlueprint.model_validate_json(bp.model_dump_json()) == bp
    back = [blueprint_from_row(r) for r in
            _arrow_round_trip([blueprint_to_row(b, RUN) for b in blueprints], BLUEPRINT_SCHEMA)]
    assert back == blueprints
    assert [b.id for b in back] == [b.id for b in blueprints]
    assert back[0].ground_truth.calls[0].arguments == blueprints[0].ground_truth.calls[0].arguments
    assert any(b.user.scenario.background for b in back)  # the scenario travels in its own column


def test_a_blueprint_row_stored_before_scenarios_loads_with_an_empty_one_and_keeps_its_id(
        blueprints: list[TaskBlueprint]) -> None:
    """A Parquet file written before the ``scenario`` column: the catalog reads it with
    ``union_by_name`` (a null), a row from the file itself has no such key."""
    bp = blueprints[0]
    old = blueprint_to_row(bp.model_copy(update={"user": bp.user.model_copy(update={"scenario": Scenario()})}), RUN)
    for row in ({k: v for k, v in old.items() if k != "scenario"}, {**old, "scenario": None}):
        back = blueprint_from_row(row)
        assert back.user.scenario == Scenario()
        assert back.id == bp.id == TaskBlueprint.make_id(back.environment, back.user, back.ground_truth,
                                                         back.policy_rules)


def test_trajectories_round_trip_through_json_and_arrow(trajectories: list[Trajectory]) -> None:
    faulty = [t for t in trajectories if t.episode.fault is not None]
    assert {t.episode.fault.kind for t in faulty} == set(FaultKind)  # type: ignore[union-attr]
    assert any(m.is_error for t in faulty for m in t.messages if isinstance(m, ToolMessage))
    # optional fields filled the way model backends fill them
    extra = trajectories[0].model_copy(update={"agent_entropy": (0.25, None, 1.5), "cost_usd": None})
    records = [*trajectories, extra]
    for t in records:
        assert Trajectory.model_validate_json(t.model_dump_json()) == t
    rows = _arrow_round_trip([trajectory_to_row(t) for t in records], TRAJECTORY_SCHEMA)
    assert [r["fault_kind"] for r in rows] == [t.episode.fault.kind.value if t.episode.fault else None
                                                for t in records]
    assert [r["n_messages"] for r in rows] == [len(t.messages) for t in records]
    back = [trajectory_from_row(r) for r in rows]
    assert back == records
    assert back[-1].agent_entropy == (0.25, None, 1.5) and back[-1].cost_usd is None


def test_verdicts_round_trip_through_json_and_arrow(verdicts: list[Verdict]) -> None:
    assert {v.passed for v in verdicts} == {True, False}
    for v in verdicts:
        assert Verdict.model_validate_json(v.model_dump_json()) == v
        json.loads(v.evidence)
    back = [verdict_from_row(r) for r in
            _arrow_round_trip([verdict_to_row(v) for v in verdicts], VERDICT_SCHEMA)]
    assert back == verdicts


def test_rejections_round_trip_through_json_and_arrow(rejections: list[BlueprintRejection]) -> None:
    for r in rejections:
        assert BlueprintRejection.model_validate_json(r.model_dump_json()) == r
    back = [rejection_from_row(r) for r in
            _arrow_round_trip([rejection_to_row(r) for r in rejections], REJECTION_SCHEMA)]
    assert back == rejections
    # a rejection's id is keyed by (run, index): unique within a run, stable across reruns
    assert len({(r.run_id, r.index) for r in rejections[:5]}) == len({r.id for r in rejections[:5]}) == 5
    assert {r.id: (r.run_id, r.index) for r in rejections[5:]} == \
        {r.id: (r.run_id, r.index) for r in rejections[:3]}


# --- strictness -------------------------------------------------------------------------------

def test_extra_fields_are_forbidden_everywhere(blueprints: list[TaskBlueprint],
                                               trajectories: list[Trajectory],
                                               verdicts: list[Verdict],
                                               rejections: list[BlueprintRejection]) -> None:
    for record in (blueprints[0], trajectories[0], verdicts[0], rejections[0]):
        data = record.model_dump(mode="json")
        type(record).model_validate(data)  # the untouched dump is valid
        with pytest.raises(ValidationError, match="extra"):
            type(record).model_validate({**data, "surprise": 1})
    nested = blueprints[0].model_dump(mode="json")
    nested["user"]["persona"]["mood"] = "grumpy"
    with pytest.raises(ValidationError, match="mood"):
        TaskBlueprint.model_validate(nested)
    with pytest.raises(ValidationError):
        ToolCall(id="c", name="f", arguments="{}", type="function")  # type: ignore[call-arg]


def test_field_constraints_are_validated(blueprints: list[TaskBlueprint]) -> None:
    data = blueprints[0].model_dump(mode="json")
    data["user"]["persona"]["patience"] = 0
    with pytest.raises(ValidationError, match="patience"):
        TaskBlueprint.model_validate(data)
    with pytest.raises(ValidationError):
        Fault(kind="typo_kind")  # type: ignore[arg-type]


# --- RunConfig --------------------------------------------------------------------------------

@pytest.mark.parametrize("data, field", [
    ({"generation": {"min_intents": 3, "max_intents": 2}}, "min_intents"),
    ({"generation": {"max_intents": 5}}, "max_intents"),
    ({"generation": {"p_revision": 1.5}}, "p_revision"),
    ({"domain": {"size": 5}}, "size"),
    ({"simulation": {"agents": []}}, "agents"),
    ({"simulation": {"fault_kinds": ["not_a_fault"]}}, "fault_kinds"),
    ({"simulation": {"max_turns": 1}}, "max_turns"),
    ({"store": {"shard_size": 0}}, "shard_size"),
    ({"generaton": {}}, "generaton"),  # a typo in a section name
])
def test_run_config_rejects_bad_values(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        RunConfig.model_validate(data)


def test_run_config_defaults_are_valid() -> None:
    config = RunConfig()
    assert config.domain.name == "retail"
    assert RunConfig.model_validate(config.model_dump(mode="json")) == config
    assert RunConfig.model_validate_json(config.model_dump_json()) == config


def test_run_id_ignores_count_and_storage_but_not_the_work() -> None:
    base = RunConfig()
    rid = base.run_id()
    assert rid.startswith("run_") and rid == RunConfig().run_id()
    same_work = RunConfig.model_validate({
        "generation": {"n_blueprints": 5000},
        "store": {"out": "/elsewhere", "shard_size": 7, "workers": 4},
        "simulation": {"concurrency": 3},
        "name": base.name,
    })
    assert same_work.run_id() == rid
    for changed in ({"generation": {"seed": 1}}, {"domain": {"seed": 1}}, {"domain": {"size": 301}},
                    {"generation": {"p_revision": 0.5}}, {"simulation": {"max_turns": 10}},
                    {"simulation": {"agents": ["oracle"]}},
                    {"verification": {"checks": ["policy"]}}):
        assert RunConfig.model_validate(changed).run_id() != rid, changed
    seeds = {RunConfig.model_validate({"generation": {"seed": s}}).run_id() for s in range(20)}
    assert len(seeds) == 20

