"""The telecom domain: state, agent and customer tools, write rules, sampler, domain check."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from trajforge.environments.base import Environment, ToolKind
from trajforge.environments.telecom import TelecomDomain
from trajforge.environments.telecom.data import Bill, Line, TelecomState
from trajforge.environments.telecom.tasks import TelecomTaskSampler
from trajforge.environments.validate import domain_problem
from trajforge.errors import PolicyViolation, ToolError
from trajforge.evaluation.domain_check import check_domain


@pytest.fixture(scope="module")
def domain() -> TelecomDomain:
    return TelecomDomain(120, 0)


def _state(env: Environment) -> TelecomState:
    assert isinstance(env.state, TelecomState)
    return env.state


def _line(domain: TelecomDomain, **want: Any) -> Line:
    state = domain.template
    assert isinstance(state, TelecomState)
    return next(x for x in state.lines.values() if all(getattr(x, k) == v for k, v in want.items()))


def _set_line(env: Environment, number: str, **changes: Any) -> None:
    state = _state(env)
    state.lines[number] = state.lines[number].model_copy(update=changes)


def _set_bills(env: Environment, customer_id: str, status: str) -> Bill:
    """Every bill of the customer paid, the last one given ``status``; that bill."""
    state = _state(env)
    ids = state.customers[customer_id].bill_ids
    for b in ids:
        state.bills[b] = state.bills[b].model_copy(update={"status": "paid"})
    state.bills[ids[-1]] = state.bills[ids[-1]].model_copy(update={"status": status})
    return state.bills[ids[-1]]


def test_the_domain_loads_and_meets_the_bar(domain: TelecomDomain) -> None:
    assert domain_problem(TelecomDomain) is None
    assert len(domain.agent_tools) >= 10 and len(domain.user_tools) >= 4
    assert len(domain.policy_rules) >= 8 and len(domain.intents) >= 6
    assert set(domain.instructions) == set(domain.user_tools)
    assert domain.user_tables == frozenset({"devices"})
    names = {s.function.name for s in domain.tool_specs()}
    assert names == set(domain.agent_tools) and not names & set(domain.user_tools)
    assert {s.function.name for s in domain.user_tool_specs()} == set(domain.user_tools)
    assert all(t.kind is ToolKind.user for t in domain.user_tools.values())
    for rule in domain.policy_rules:
        assert f"[{rule}]" in domain.policy


def test_the_state_is_deterministic() -> None:
    a, b = TelecomDomain(40, 3), TelecomDomain(40, 3)
    assert a.hasher.hash(a.template) == b.hasher.hash(b.template)
    assert TelecomDomain(40, 4).hasher.hash(TelecomDomain(40, 4).template) != a.hasher.hash(a.template)


def test_agent_tools_happy_path(domain: TelecomDomain) -> None:
    env = domain.environment()
    state = _state(env)
    customer = next(iter(state.customers.values()))
    number = customer.line_numbers[0]
    assert env.call("find_customer_by_phone", {"phone_number": number, "pin": customer.pin}) == customer.id
    assert env.call("find_customer_by_email", {"email": customer.email}) == customer.id
    details = env.call("get_customer_details", {"customer_id": customer.id})
    assert [x["number"] for x in details["lines"]] == list(customer.line_numbers)
    line = env.call("get_line_details", {"phone_number": number})
    assert line["number"] == number and line["data_limit_gb"] >= 5
    assert len(env.call("list_plans", {})) == 5
    bill = env.call("get_bill_details", {"bill_id": customer.bill_ids[0]})
    assert bill.id == customer.bill_ids[0]
    outage_zip = next(iter(state.outages))
    assert env.call("check_network_outage", {"zip_code": outage_zip})["outage"] is True
    assert env.call("check_network_outage", {"zip_code": "00000"})["outage"] is False
    assert env.call("transfer_to_human_agents", {"summary": "no service"}) == "Transfer successful"


def test_writes_happy_path(domain: TelecomDomain) -> None:
    env = domain.environment()
    line = _line(domain, status="active", roaming_enabled=False, plan_changed_this_cycle=False)
    _set_bills(env, line.customer_id, "unpaid")
    assert env.call("enable_roaming", {"phone_number": line.number})["roaming_enabled"] is True
    other = "plus_15" if line.plan_id != "plus_15" else "basic_5"
    assert env.call("change_plan", {"phone_number": line.number, "plan_id": other})["plan_id"] == other
    _set_line(env, line.number, data_used_gb=500.0, topup_gb=0)
    topped = env.call("add_data_topup", {"phone_number": line.number, "size": "2GB"})
    assert topped["topup_gb"] == 2 and topped["charge"] == 6.0
    bill = _set_bills(env, line.customer_id, "overdue")
    assert env.call("pay_bill", {"bill_id": bill.id}).status == "paid"
    _set_line(env, line.number, status="suspended")
    assert env.call("resume_line", {"phone_number": line.number})["status"] == "active"
    changes = {(c.table, c.key) for c in env.diff()}
    assert ("lines", line.number) in changes and ("bills", bill.id) in changes


def test_tool_errors(domain: TelecomDomain) -> None:
    env = domain.environment()
    customer = next(iter(domain.template.customers.values()))  # type: ignore[attr-defined]
    with pytest.raises(ToolError, match="PIN"):
        env.call("find_customer_by_phone", {"phone_number": customer.line_numbers[0], "pin": "xxxx"})
    with pytest.raises(ToolError, match="not found"):
        env.call("get_line_details", {"phone_number": "000-000-0000"})
    with pytest.raises(ToolError, match="not found"):
        env.call("get_bill_details", {"bill_id": "B0000000"})
    with pytest.raises(ToolError, match="not found"):
        env.call("change_plan", {"phone_number": customer.line_numbers[0], "plan_id": "gold"})
    with pytest.raises(ToolError, match="invalid arguments"):
        env.call("get_line_details", {})


def _refused(env: Environment, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(PolicyViolation) as caught:
        env.call(name, args)
    return caught.value.rule


def test_each_write_rule_refuses_with_its_id(domain: TelecomDomain) -> None:
    env = domain.environment()
    line = _line(domain, status="active", roaming_enabled=False, plan_changed_this_cycle=False)
    n = line.number
    bill = _set_bills(env, line.customer_id, "overdue")
    assert _refused(env, "enable_roaming", {"phone_number": n}) == "roaming_eligible"  # overdue bill
    _set_line(env, n, status="suspended")
    assert _refused(env, "resume_line", {"phone_number": n}) == "resume_paid"  # overdue bill
    assert _refused(env, "change_plan", {"phone_number": n, "plan_id": "max_40"}) == "plan_once"
    _set_bills(env, line.customer_id, "paid")
    assert _refused(env, "pay_bill", {"bill_id": bill.id}) == "pay_open"
    _set_line(env, n, status="active")
    assert _refused(env, "resume_line", {"phone_number": n}) == "resume_paid"  # not suspended
    assert _refused(env, "change_plan", {"phone_number": n, "plan_id": line.plan_id}) == "plan_once"
    _set_line(env, n, plan_changed_this_cycle=True)
    other = "plus_15" if line.plan_id != "plus_15" else "basic_5"
    assert _refused(env, "change_plan", {"phone_number": n, "plan_id": other}) == "plan_once"
    _set_line(env, n, data_used_gb=0.1, topup_gb=0)
    assert _refused(env, "add_data_topup", {"phone_number": n, "size": "1GB"}) == "topup_needed"
    _set_line(env, n, data_used_gb=900.0, topup_gb=8)
    assert _refused(env, "add_data_topup", {"phone_number": n, "size": "5GB"}) == "topup_limit"
    _set_line(env, n, roaming_enabled=True)
    assert _refused(env, "enable_roaming", {"phone_number": n}) == "roaming_eligible"  # already on
    assert not env.diff() or all(c.table == "lines" or c.table == "bills" for c in env.diff())


def test_policy_breaches_name_the_same_rules(domain: TelecomDomain) -> None:
    env = domain.environment()
    line = _line(domain, status="active", roaming_enabled=False)
    _set_bills(env, line.customer_id, "overdue")
    assert domain.policy_breaches(env.state, "enable_roaming", {"phone_number": line.number},
                                  line.customer_id) == ["roaming_eligible"]
    assert "own_account" in domain.policy_breaches(env.state, "enable_roaming",
                                                   {"phone_number": line.number}, "CU000000")


def test_customer_tools_are_the_customers_only(domain: TelecomDomain) -> None:
    env = domain.environment()
    state = _state(env)
    device = next(d for d in state.devices.values() if not d.airplane_mode)
    with pytest.raises(ToolError, match="unknown tool"):
        env.call("toggle_airplane_mode", {"number": device.number})  # the agent cannot
    with pytest.raises(ToolError, match="unknown tool"):
        env.call("get_line_details", {"phone_number": device.number}, actor="user")
    shown = env.call("toggle_airplane_mode", {"number": device.number}, actor="user")
    assert shown["airplane_mode"] == "on" and shown["signal"].startswith("airplane")
    assert state.devices[device.number].airplane_mode is True
    assert [(c.table, c.path) for c in env.diff()] == [("devices", "airplane_mode")]
    env.call("toggle_airplane_mode", {"number": device.number}, actor="user")
    assert env.state_hash() == domain.hasher.hash(domain.template)
    message = env.execute(_call("toggle_mobile_data", {"number": device.number}))
    assert message.is_error and "unknown tool" in message.content


def _call(name: str, args: dict[str, Any]) -> Any:
    from trajforge.schemas.messages import ToolCall

    return ToolCall(id="call_001", name=name, arguments=json.dumps(args))


def test_the_phone_shows_what_its_settings_and_the_line_make_of_it(domain: TelecomDomain) -> None:
    env = domain.environment()
    state = _state(env)
    line = _line(domain, status="active")
    n = line.number
    state.devices[n] = state.devices[n].model_copy(update={
        "airplane_mode": False, "mobile_data": True, "apn": "standard", "sim": "ready",
        "abroad_in": None})
    _set_line(env, n, data_used_gb=0.0)
    zip_code = state.customers[line.customer_id].zip_code
    state.outages.pop(zip_code, None)
    shown = env.call("check_status_bar", {"number": n}, actor="user")
    assert (shown["signal"], shown["mobile_data_indicator"]) == ("full signal bars", "LTE")
    env.call("toggle_mobile_data", {"number": n}, actor="user")
    assert env.call("check_status_bar", {"number": n}, actor="user")["mobile_data_indicator"] == "no data"
    state.devices[n] = state.devices[n].model_copy(update={"abroad_in": "Japan", "mobile_data": True})
    assert env.call("check_status_bar", {"number": n}, actor="user")["signal"] == "No service"


def test_the_sampler_is_deterministic(domain: TelecomDomain) -> None:
    sampler = TelecomTaskSampler(domain)
    axes = {"p_indirect": 0.3, "p_revision": 0.2, "p_redirect": 0.1, "p_read_only": 0.2}
    for seed in range(8):
        a = sampler.sample(random.Random(seed), 3, **axes)
        b = sampler.sample(random.Random(seed), 3, **axes)
        assert a == b


def test_the_sampler_asks_the_customer_to_act(domain: TelecomDomain) -> None:
    sampler = TelecomTaskSampler(domain)
    axes = {"p_indirect": 0.0, "p_revision": 0.0, "p_redirect": 0.0, "p_read_only": 0.2}
    kinds: set[str] = set()
    user_calls = 0
    for seed in range(80):
        task = sampler.sample(random.Random(seed), 2, **axes)
        kinds |= {i.kind for i in task.intents}
        user_calls += sum(c.kind == "user" for i in task.intents for c in i.calls)
    assert user_calls > 40
    assert kinds >= {"no_data", "roaming_abroad", "data_topup", "pay_bill", "change_plan", "outage"}


def test_domain_check_oracle_passes_and_faults_are_caught(domain: TelecomDomain) -> None:
    report = check_domain(domain, 60)
    assert report.blueprints >= 55
    result = report.as_dict()
    assert result["oracle"]["pass_rate"] == 1.0, result["examples"]
    assert not result["missed"], result["examples"]
    assert result["undeclared"] == []
