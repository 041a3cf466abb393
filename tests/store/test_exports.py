"""The export functions on the rows of a real default build, and on hand-made edge cases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from trajforge.schemas.trajectory import FaultKind
from trajforge.simulation.faults import FAULT_CHECKS
from trajforge.store import connect
from trajforge.store.export_writer import _judged_by_blueprint, resolve_runs
from trajforge.store.exports import (
    Judged,
    conversation,
    openai_record,
    preference_records,
    rl_task_record,
    sft_record,
    sharegpt_record,
)


@pytest.fixture(scope="module")
def groups(default_build) -> list[list[Judged]]:
    con = connect(default_build)
    try:
        runs = resolve_runs(con, None)
        return [g for _, g in _judged_by_blueprint(con, runs)]
    finally:
        con.close()


@pytest.fixture(scope="module")
def blueprint_rows(default_build) -> dict[str, dict[str, Any]]:
    con = connect(default_build)
    try:
        cursor = con.execute("SELECT * FROM blueprints")
        cols = [d[0] for d in cursor.description]
        return {r[0]: dict(zip(cols, r)) for r in cursor.fetchall()}
    finally:
        con.close()


def _no_none(value: Any) -> bool:
    if isinstance(value, dict):
        return all(v is not None and _no_none(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_none(v) for v in value)
    return True


def test_sft_messages_are_openai_shaped_with_object_arguments(groups) -> None:
    passing = [j for g in groups for j in g if j.passed]
    assert len(passing) >= 250  # the default build: every oracle episode passes
    for j in passing:
        record = sft_record(j.row)
        messages = record["messages"]
        assert messages[0]["role"] == "system" and "policy" in messages[0]["content"].lower()
        assert _no_none(messages), "None keys must be dropped"
        stored_calls = [c for m in j.row["messages"] for c in (m["tool_calls"] or [])]
        calls = [c for m in messages for c in m.get("tool_calls", [])]
        assert len(calls) == len(stored_calls)
        for call, stored in zip(calls, stored_calls):
            assert isinstance(call["function"]["arguments"], dict)
            assert call["function"]["arguments"] == json.loads(stored["arguments"])
            assert call["type"] == "function" and call["id"] == stored["id"]
        assert {t["function"]["name"] for t in record["tools"]} >= {c["function"]["name"] for c in calls}
        assert "is_error" not in json.dumps(messages)


def test_preferences_split_at_the_fault(groups) -> None:
    pairs = preference_records(j for g in groups for j in g)
    failing = [j for g in groups for j in g if not j.passed]
    assert len(pairs) == len(failing) > 0  # every faulty twin pairs with its oracle
    by_id = {j.row["id"]: j for g in groups for j in g}
    for pair in pairs:
        good = conversation(by_id[pair["chosen_trajectory_id"]].row["messages"])
        bad_judged = by_id[pair["rejected_trajectory_id"]]
        bad = conversation(bad_judged.row["messages"])
        k = len(pair["prompt"])
        assert good[:k] == bad[:k] == pair["prompt"]
        assert pair["prompt"][-1]["role"] in ("user", "tool")
        assert pair["chosen"][0]["role"] == pair["rejected"][0]["role"] == "assistant"
        assert pair["chosen"][0] != pair["rejected"][0]
        assert pair["chosen"] == good[k:k + len(pair["chosen"])]
        assert pair["rejected"] == bad[k:k + len(pair["rejected"])]
        assert all(m["role"] in ("assistant", "tool") for m in pair["chosen"] + pair["rejected"])
        assert pair["failed_checks"] == list(bad_judged.failed_checks) != []
        # the check that must catch the injected fault is named
        assert FAULT_CHECKS[FaultKind(pair["fault_kind"])] in pair["failed_checks"]
        assert by_id[pair["chosen_trajectory_id"]].passed


def test_preferences_skip_pairs_without_an_assistant_divergence() -> None:
    def traj(tid: str, passed: bool, user_text: str) -> Judged:
        row = {"id": tid, "blueprint_id": "bp_1", "domain": "retail", "agent": "x", "fault_kind": None,
               "tools": "[]", "messages": [
                   {"role": "system", "content": "s", "tool_calls": None},
                   {"role": "user", "content": user_text, "tool_calls": None},
                   {"role": "assistant", "content": "hi", "tool_calls": None}]}
        return Judged(row, passed, () if passed else ("termination",))

    assert preference_records([traj("tr_a", True, "hello"), traj("tr_b", False, "hey")]) == []
    assert preference_records([traj("tr_a", False, "hello"), traj("tr_b", False, "hello")]) == []


def _row(messages: list[dict[str, Any]]) -> dict[str, Any]:
    full = []
    for m in messages:
        full.append({"role": m["role"], "content": m.get("content"), "tool_calls": m.get("tool_calls"),
                     "tool_call_id": m.get("tool_call_id"), "name": m.get("name"), "is_error": None})
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]
    return {"id": "tr_x", "blueprint_id": "bp_x", "domain": "retail", "messages": full,
            "tools": json.dumps(tools)}


PARALLEL = _row([
    {"role": "system", "content": "policy"},
    {"role": "user", "content": "two things"},
    {"role": "assistant", "tool_calls": [{"id": "a", "name": "f", "arguments": '{"x": 1}'},
                                         {"id": "b", "name": "f", "arguments": "not json"}]},
    {"role": "tool", "content": "r1", "tool_call_id": "a", "name": "f"},
    {"role": "tool", "content": "r2", "tool_call_id": "b", "name": "f"},
    {"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}]},
    {"role": "tool", "content": "r3", "tool_call_id": "c", "name": "f"},
    {"role": "assistant", "content": "done"},
    {"role": "assistant", "content": "anything else?"},
    {"role": "user", "content": "bye"},
])


def test_sharegpt_merges_calls_and_results_and_alternates() -> None:
    record = sharegpt_record(PARALLEL)
    assert record is not None
    conv = record["conversations"]
    assert [c["from"] for c in conv] == ["human", "function_call", "observation", "function_call",
                                         "observation", "gpt"]
    assert json.loads(conv[1]["value"]) == [{"name": "f", "arguments": {"x": 1}},
                                            {"name": "f", "arguments": "not json"}]
    assert json.loads(conv[2]["value"]) == ["r1", "r2"]
    assert json.loads(conv[3]["value"]) == {"name": "f", "arguments": {}}
    assert conv[-1]["value"] == "done\n\nanything else?"  # trailing user turn cut, texts merged
    assert record["system"] == "policy"
    assert json.loads(record["tools"])[0]["name"] == "f"


def test_sharegpt_of_real_trajectories_alternate(groups) -> None:
    for j in (j for g in groups for j in g if j.passed):
        record = sharegpt_record(j.row)
        assert record is not None
        roles = [c["from"] for c in record["conversations"]]
        assert all(r in ("human", "observation") for r in roles[0::2])
        assert all(r in ("gpt", "function_call") for r in roles[1::2])
        assert roles[-1] == "gpt"


def test_openai_arguments_are_text_and_every_call_has_an_id() -> None:
    record = openai_record(PARALLEL)
    assert record is not None
    messages = record["messages"]
    assert messages[-1] == {"role": "assistant", "content": "anything else?"}
    calls = [c for m in messages for c in m.get("tool_calls", [])]
    assert [c["function"]["arguments"] for c in calls] == ['{"x": 1}', "not json", "{}"]
    assert all(c["id"] for c in calls)
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["a", "b", "c"]
    assert all("name" not in m for m in messages if m["role"] == "tool")
    assert record["parallel_tool_calls"] is True


def test_openai_fills_missing_ids() -> None:
    row = _row([{"role": "user", "content": "q"},
                {"role": "assistant", "tool_calls": [{"id": "", "name": "f", "arguments": "{}"}]},
                {"role": "tool", "content": "r", "tool_call_id": None, "name": "f"},
                {"role": "assistant", "content": "ok"}])
    messages = openai_record(row)["messages"]
    call_id = messages[1]["tool_calls"][0]["id"]
    assert call_id and messages[2]["tool_call_id"] == call_id


def test_rl_tasks_carry_what_the_verifiers_need(groups, blueprint_rows) -> None:
    for group in groups[:40]:
        oracle = next(j.row for j in group if j.row["agent"] == "scripted:oracle")
        bp = blueprint_rows[oracle["blueprint_id"]]
        task = rl_task_record(bp, oracle, family=bp["id"])
        assert task["environment"] == "retail"
        assert [m["role"] for m in task["prompt"]] == ["system", "user"]
        assert task["prompt"][1]["content"] == next(m["content"] for m in oracle["messages"] if m["role"] == "user")
        v = task["verification"]
        assert v["final_state_hash"] == bp["final_state_hash"]
        assert [c["name"] for c in v["ground_truth_calls"]] == [c["name"] for c in bp["calls"]]
        assert all(isinstance(c["arguments"], dict) for c in v["ground_truth_calls"])
        assert v["policy_rules"] == list(bp["policy_rules"])
        assert len(v["required_outputs"]) == len(bp["outputs"])
        assert task["user"]["goal"] == bp["goal"]
        assert task["user"]["behaviours"] == list(bp["behaviours"] or ())


def test_user_behaviours_are_queryable_in_the_catalog(default_build) -> None:
    """The default build's blueprints carry their user behaviours as a list column (issue 17):
    a DuckDB query over the catalog finds each drawn kind, and the count matches the rows."""
    con = connect(default_build)
    try:
        total = con.execute("SELECT count(*) FROM blueprints").fetchone()[0]
        with_any = con.execute("SELECT count(*) FROM blueprints WHERE len(behaviours) > 0").fetchone()[0]
        per_kind = dict(con.execute(
            "SELECT b, count(*) FROM (SELECT unnest(behaviours) AS b FROM blueprints) GROUP BY b").fetchall())
        asks = con.execute("SELECT count(*) FROM blueprints WHERE list_contains(behaviours, 'asks_human')"
                           ).fetchone()[0]
    finally:
        con.close()
    assert 0.3 * total <= with_any < total
    assert asks == per_kind["asks_human"] > 0
    assert {"question_back", "withholds_detail", "off_topic", "impatient", "corrects_detail",
            "ends_unhappy"} <= per_kind.keys(), per_kind
