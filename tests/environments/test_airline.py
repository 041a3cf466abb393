"""The airline domain: deterministic data at a fixed now, tools, rules enforced before writes,
the sampler, and the domain check's oracle on a few blueprints."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from trajforge.environments import Environment
from trajforge.environments.airline import AirlineDomain
from trajforge.environments.airline.data import (
    NOW_TEXT,
    AirlineState,
    Reservation,
    build_airline_state,
    flight_key,
)
from trajforge.environments.airline.policy import (
    POLICY_TEXT,
    RULES,
    TOOL_RULES,
    booked_within_day,
    cancellable,
    compensation_eligible,
    free_bags,
    has_departed,
    leg_flights,
)
from trajforge.environments.airline.reports import resolve_reservation
from trajforge.environments.base import Observation, ToolKind
from trajforge.environments.kit import AUTHENTICATE, CONFIRM, OWN_ACCOUNT
from trajforge.errors import PolicyViolation, ToolError
from trajforge.schemas import ToolCall


@pytest.fixture(scope="module")
def domain() -> AirlineDomain:
    return AirlineDomain(300, 0)


@pytest.fixture()
def env(domain: AirlineDomain) -> Environment:
    return domain.environment()


def _state(env: Environment) -> AirlineState:
    assert isinstance(env.state, AirlineState)
    return env.state


def _find(env: Environment, pred: Callable[[AirlineState, Reservation], bool]) -> Reservation:
    """An active reservation whose owner has a credit card, satisfying ``pred``."""
    state = _state(env)
    for reservation in state.reservations.values():
        user = state.users[reservation.user_id]
        if reservation.status == "active" and any(m.kind == "credit_card" for m in user.payment_methods) \
                and pred(state, reservation):
            return reservation
    raise AssertionError("no reservation in the test state satisfies the condition")


def _card(state: AirlineState, reservation: Reservation) -> str:
    user = state.users[reservation.user_id]
    return next(m.id for m in user.payment_methods if m.kind == "credit_card")


def _refused(env: Environment, name: str, args: dict[str, Any], rule: str) -> None:
    before = env.state_hash()
    with pytest.raises(PolicyViolation) as info:
        env.call(name, args)
    assert info.value.rule == rule
    assert env.state_hash() == before, "a refused write must not change the state"
    message = env.execute(ToolCall(id="c", name=name, arguments=json.dumps(args)))
    assert message.is_error and f"policy {rule}" in message.content


def _open(state: AirlineState, r: Reservation) -> bool:
    return not has_departed(state, r)


# --- the domain and its data ------------------------------------------------------------------

def test_declarations_meet_the_bar(domain: AirlineDomain) -> None:
    tools = domain.tools
    assert len(tools) >= 10 and len(domain.policy_rules) >= 8 and len(domain.intents) >= 6
    assert {AUTHENTICATE, CONFIRM, OWN_ACCOUNT} <= set(domain.policy_rules)
    assert domain.auth_tools <= set(tools) and domain.transfer_tool in tools
    assert tools["transfer_to_human_agents"].kind is ToolKind.read
    assert any(not s.writes for s in domain.intents.values())
    for tool, rules in TOOL_RULES.items():
        assert tools[tool].kind is ToolKind.write and set(rules) <= set(RULES)
    assert {t for t, d in tools.items() if d.kind is ToolKind.write} == set(TOOL_RULES)
    assert set(domain.identity.facts) == {"email", "name", "date_of_birth"}


def test_policy_text_numbers_every_rule_and_states_now() -> None:
    for i, rule in enumerate(RULES, start=1):
        assert f"{i}. [{rule}]" in POLICY_TEXT
    assert NOW_TEXT in POLICY_TEXT


def test_data_is_deterministic_and_sized() -> None:
    a = build_airline_state(random.Random(3), 40)
    b = build_airline_state(random.Random(3), 40)
    assert a.model_dump() == b.model_dump()
    assert len(a.users) == 40 and len(a.reservations) >= 40
    for r in a.reservations.values():
        assert len(r.id) == 6 and r.id.isupper() and r.id.isalnum()
        assert r.user_id in a.users and r.id in a.users[r.user_id].reservations
        assert all(flight_key(leg.flight_number, leg.date) in a.flights for leg in r.legs)


def test_now_fixes_departed_and_booking_window() -> None:
    state = build_airline_state(random.Random(0), 100)
    statuses = {f.status for f in state.flights.values()}
    assert {"scheduled", "delayed", "cancelled", "landed"} <= statuses
    for f in state.flights.values():
        if f.date < "2024-05-15":
            assert f.status in ("landed", "cancelled")
        if f.date > "2024-05-15":
            assert f.status in ("scheduled", "delayed", "cancelled")
    assert any(booked_within_day(r) for r in state.reservations.values())
    assert any(not booked_within_day(r) for r in state.reservations.values())


# --- reads ------------------------------------------------------------------------------------

def test_auth_tools_find_the_user_two_ways(env: Environment) -> None:
    user = next(iter(_state(env).users.values()))
    assert env.call("find_user_id_by_email", {"email": user.email.upper()}) == user.id
    assert env.call("find_user_id_by_name_dob", {"first_name": user.first_name, "last_name": user.last_name,
                                                 "date_of_birth": user.date_of_birth}) == user.id
    with pytest.raises(ToolError):
        env.call("find_user_id_by_email", {"email": "nobody@example.com"})
    with pytest.raises(ToolError):
        env.call("find_user_id_by_name_dob", {"first_name": user.first_name, "last_name": user.last_name,
                                              "date_of_birth": "1900-01-01"})


def test_search_and_status_reads(env: Environment) -> None:
    state = _state(env)
    flight = next(f for f in state.flights.values() if f.status == "scheduled")
    found = env.call("search_direct_flights", {"origin": flight.origin, "destination": flight.destination,
                                               "date": flight.date})
    assert flight in found and all(f.status in ("scheduled", "delayed") for f in found)
    pairs = env.call("search_onestop_flights", {"origin": flight.origin, "destination": "JFK",
                                                "date": flight.date})
    for a, b in pairs:
        assert a.destination == b.origin and b.departure_time > a.arrival_time and b.destination == "JFK"
    assert env.call("get_flight_status", {"flight_number": flight.flight_number.lower(),
                                          "date": flight.date}) == flight
    with pytest.raises(ToolError):
        env.call("get_flight_status", {"flight_number": "HA000", "date": flight.date})
    with pytest.raises(ToolError):
        env.call("search_direct_flights", {"origin": "XXX", "destination": "JFK", "date": flight.date})
    assert env.call("list_airports", {})["DEN"] == "Denver"
    assert env.call("get_current_time", {}) == NOW_TEXT
    assert env.call("calculate", {"expression": "(312 - 245) * 2"}) == "134.00"
    with pytest.raises(ToolError):
        env.call("calculate", {"expression": "__import__('os')"})
    assert env.call("transfer_to_human_agents", {"summary": "help"}) == "Transfer successful"


# --- writes: happy paths ----------------------------------------------------------------------

def test_cancel_refunds_every_payment(env: Environment) -> None:
    r = _find(env, lambda s, r: _open(s, r) and cancellable(s, r))
    out = env.call("cancel_reservation", {"reservation_id": r.id, "reason": "change of plan"})
    assert out.status == "cancelled" and out.cancel_reason == "change of plan"
    assert sum(p.amount for p in out.payment_history if p.kind == "refund") == \
        sum(p.amount for p in r.payment_history if p.kind == "payment")
    with pytest.raises(ToolError):  # a cancelled reservation takes no more writes
        env.call("add_travel_insurance", {"reservation_id": r.id, "payment_id": _card(_state(env), r)})


def test_change_cabin_charges_the_difference(env: Environment) -> None:
    def fits(s: AirlineState, r: Reservation) -> bool:
        return (_open(s, r) and r.cabin == "economy"
                and all(f.seats_left["business"] >= len(r.passengers) for f in leg_flights(s, r)))
    r = _find(env, fits)
    state = _state(env)
    new = sum(f.prices["business"] for f in leg_flights(state, r)) * len(r.passengers)
    diff = new - sum(leg.price for leg in r.legs) * len(r.passengers)
    out = env.call("update_reservation_cabin", {"reservation_id": r.id, "cabin": "business",
                                                "payment_id": _card(state, r)})
    assert out.cabin == "business" and out.payment_history[-1].amount == diff
    assert out.payment_history[-1].kind == "payment"


def test_bags_fee_and_gift_card_balance(env: Environment) -> None:
    def fits(s: AirlineState, r: Reservation) -> bool:
        user = s.users[r.user_id]
        return _open(s, r) and any(m.kind == "gift_card" and (m.balance or 0) >= 100 for m in user.payment_methods)
    r = _find(env, fits)
    state = _state(env)
    card = next(m for m in state.users[r.user_id].payment_methods if m.kind == "gift_card")
    total = free_bags(state, r) + 2
    out = env.call("update_reservation_baggages", {"reservation_id": r.id, "total_baggages": total,
                                                   "nonfree_baggages": 2, "payment_id": card.id})
    assert out.total_baggages == total and out.nonfree_baggages == 2
    fee = 50.0 * (2 - r.nonfree_baggages)
    assert out.payment_history[-1].amount == abs(fee)
    after = _state(env).users[r.user_id].payment_method(card.id)
    assert after is not None and after.balance == (card.balance or 0) - fee


def test_change_flight_to_another_day(env: Environment) -> None:
    state = _state(env)
    for r in state.reservations.values():
        if r.status != "active" or r.trip_type != "one_way" or r.cabin == "basic_economy" or has_departed(state, r):
            continue
        leg = r.legs[0]
        options = [f for f in state.flights.values() if f.origin == leg.origin and f.destination == leg.destination
                   and f.date > "2024-05-16" and f.date != leg.date and f.status == "scheduled"
                   and f.seats_left[r.cabin] >= len(r.passengers)]
        if options:
            new = options[0]
            out = env.call("update_reservation_flights", {"reservation_id": r.id, "flight_numbers": [new.flight_number],
                                                          "dates": [new.date], "payment_id": _card(state, r)})
            assert out.legs[0].flight_number == new.flight_number and out.legs[0].date == new.date
            assert out.payment_history[-1].amount == abs(new.prices[r.cabin] - leg.price) * len(r.passengers)
            seats = _state(env).flights[flight_key(new.flight_number, new.date)].seats_left[r.cabin]
            assert seats == new.seats_left[r.cabin] - len(r.passengers)
            return
    raise AssertionError("no changeable reservation")


def test_insurance_passenger_and_certificate(env: Environment) -> None:
    r = _find(env, lambda s, r: _open(s, r) and not r.insurance)
    state = _state(env)
    out = env.call("add_travel_insurance", {"reservation_id": r.id, "payment_id": _card(state, r)})
    assert out.insurance and out.payment_history[-1].amount == 30.0 * len(r.passengers)
    p = out.passengers[0]
    out = env.call("update_passenger", {"reservation_id": r.id, "passenger_number": 1, "first_name": p.first_name,
                                        "last_name": p.last_name + "e", "date_of_birth": p.date_of_birth})
    assert out.passengers[0].last_name == p.last_name + "e" and len(out.passengers) == len(r.passengers)
    with pytest.raises(ToolError):
        env.call("update_passenger", {"reservation_id": r.id, "passenger_number": 9, "first_name": "A",
                                      "last_name": "B", "date_of_birth": "2000-01-01"})
    c = _find(env, lambda s, r: any(compensation_eligible(s, r, f.flight_number, f.date) for f in leg_flights(s, r)))
    now = _state(env)
    flight = next(f for f in leg_flights(now, c) if compensation_eligible(now, c, f.flight_number, f.date))
    amount = (100 if flight.status == "cancelled" else 50) * len(c.passengers)
    user = env.call("send_certificate", {"user_id": c.user_id, "reservation_id": c.id,
                                         "flight_number": flight.flight_number, "date": flight.date, "amount": amount})
    assert user.payment_methods[-1].kind == "certificate" and user.payment_methods[-1].balance == amount


# --- writes: each rule refuses ----------------------------------------------------------------

def test_not_departed(env: Environment) -> None:
    r = _find(env, lambda s, r: has_departed(s, r) and not r.insurance)
    _refused(env, "add_travel_insurance", {"reservation_id": r.id, "payment_id": _card(_state(env), r)},
             "not_departed")


def test_cancel_window_and_reason(env: Environment) -> None:
    r = _find(env, lambda s, r: _open(s, r) and not cancellable(s, r))
    _refused(env, "cancel_reservation", {"reservation_id": r.id, "reason": "change of plan"}, "cancel_window")
    ok = _find(env, lambda s, r: _open(s, r) and cancellable(s, r))
    _refused(env, "cancel_reservation", {"reservation_id": ok.id, "reason": "changed my mind"}, "cancel_reason")


def test_basic_economy_and_same_route(env: Environment) -> None:
    state = _state(env)
    basic = _find(env, lambda s, r: _open(s, r) and r.cabin == "basic_economy")
    leg = basic.legs[0]
    _refused(env, "update_reservation_flights", {"reservation_id": basic.id, "flight_numbers": [leg.flight_number],
                                                 "dates": [leg.date], "payment_id": _card(state, basic)},
             "basic_economy_no_change")
    r = _find(env, lambda s, r: _open(s, r) and r.cabin == "economy" and r.trip_type == "one_way")
    other = next(f for f in state.flights.values() if f.origin != r.origin and f.date > "2024-05-16")
    _refused(env, "update_reservation_flights", {"reservation_id": r.id, "flight_numbers": [other.flight_number],
                                                 "dates": [other.date], "payment_id": _card(state, r)}, "same_route")
    with pytest.raises(ToolError):  # a flight that does not exist is the tool's error, not a rule
        env.call("update_reservation_flights", {"reservation_id": r.id, "flight_numbers": ["HA000"],
                                                "dates": ["2024-05-20"], "payment_id": _card(state, r)})


def test_cabin_differs(env: Environment) -> None:
    r = _find(env, _open)
    _refused(env, "update_reservation_cabin", {"reservation_id": r.id, "cabin": r.cabin,
                                               "payment_id": _card(_state(env), r)}, "cabin_differs")


def test_payment_on_file_and_balance(env: Environment) -> None:
    state = _state(env)
    r = _find(env, lambda s, r: _open(s, r) and not r.insurance)
    stranger = next(m.id for u in state.users.values() if u.id != r.user_id for m in u.payment_methods)
    _refused(env, "add_travel_insurance", {"reservation_id": r.id, "payment_id": stranger}, "payment_on_file")

    def broke(s: AirlineState, r: Reservation) -> bool:
        return _open(s, r) and not r.insurance and any(
            m.kind != "credit_card" and (m.balance or 0) < 30 * len(r.passengers)
            for m in s.users[r.user_id].payment_methods)
    r = _find(env, broke)
    card = next(m.id for m in state.users[r.user_id].payment_methods
                if m.kind != "credit_card" and (m.balance or 0) < 30 * len(r.passengers))
    _refused(env, "add_travel_insurance", {"reservation_id": r.id, "payment_id": card}, "balance_covers")


def test_bag_allowance_and_insurance_once(env: Environment) -> None:
    state = _state(env)
    r = _find(env, lambda s, r: _open(s, r) and r.total_baggages > 0)
    _refused(env, "update_reservation_baggages", {"reservation_id": r.id, "total_baggages": r.total_baggages - 1,
                                                  "nonfree_baggages": 0, "payment_id": _card(state, r)},
             "bag_allowance")
    total = free_bags(state, r) + 1
    _refused(env, "update_reservation_baggages", {"reservation_id": r.id,
                                                  "total_baggages": max(total, r.total_baggages),
                                                  "nonfree_baggages": 0, "payment_id": _card(state, r)},
             "bag_allowance")
    insured = _find(env, lambda s, r: _open(s, r) and r.insurance)
    _refused(env, "add_travel_insurance", {"reservation_id": insured.id, "payment_id": _card(state, insured)},
             "insurance_once")


def test_compensation_rules(env: Environment) -> None:
    state = _state(env)
    c = _find(env, lambda s, r: any(compensation_eligible(s, r, f.flight_number, f.date) for f in leg_flights(s, r)))
    flight = next(f for f in leg_flights(state, c) if compensation_eligible(state, c, f.flight_number, f.date))
    args = {"user_id": c.user_id, "reservation_id": c.id, "flight_number": flight.flight_number,
            "date": flight.date, "amount": 1000.0}
    _refused(env, "send_certificate", args, "compensation")  # above the cap
    fine = _find(env, lambda s, r: all(f.status == "scheduled" for f in leg_flights(s, r)))
    leg = fine.legs[0]
    _refused(env, "send_certificate", {"user_id": fine.user_id, "reservation_id": fine.id,
                                       "flight_number": leg.flight_number, "date": leg.date, "amount": 50.0},
             "compensation")


def test_own_account_is_a_breach_for_another_user(domain: AirlineDomain) -> None:
    state = domain.template
    assert isinstance(state, AirlineState)
    r = next(iter(state.reservations.values()))
    other = next(u for u in state.users if u != r.user_id)
    args = {"reservation_id": r.id, "payment_id": "credit_card_0000000"}
    assert domain.account_owner(state, args) == r.user_id
    assert "own_account" in domain.policy_breaches(state, "add_travel_insurance", args, other)


# --- ids, targets, reports --------------------------------------------------------------------

def test_id_forms_and_names_target(domain: AirlineDomain) -> None:
    assert domain.canonical_ids("booking #kq482t and KQ482T") == "booking KQ482T and KQ482T"
    args = {"reservation_id": "KQ482T"}
    assert domain.names_target(domain.template, "add_travel_insurance", args, "insure #kq482t?")
    assert not domain.names_target(domain.template, "add_travel_insurance", args, "insure KQ482T and AB123C?")
    assert not domain.names_target(domain.template, "add_travel_insurance", args, "insure your trip?")


def test_reports_resolve_descriptions_from_observations(domain: AirlineDomain) -> None:
    state = domain.template
    assert isinstance(state, AirlineState)
    user = next(u for u in state.users.values() if len(u.reservations) >= 2)
    observed = tuple(Observation("get_reservation_details", {"reservation_id": r},
                                 state.reservations[r].model_dump(mode="json")) for r in user.reservations)
    first = state.reservations[user.reservations[0]]
    found = resolve_reservation(f"#{first.id.lower()}", observed)
    assert found is not None and found["id"] == first.id
    facts = domain.report_facts("cancel_refused", {"reservation": first.id}, observed)
    assert facts.values["reservation_id"] == first.id and facts.values["booked"] == first.created_at[:10]
    assert facts.entity == ("reservation_id",)


def test_sample_entities_is_one_users_world(domain: AirlineDomain) -> None:
    found = domain.sample_entities(random.Random(0))
    user = found["users"][0]
    assert [r["id"] for r in found["reservations"]] == list(user["reservations"])
    assert all(r["user_id"] == user["id"] for r in found["reservations"]) and found["flights"]


def test_claim_records_cover_reservations_and_flights(domain: AirlineDomain) -> None:
    state = domain.template
    assert isinstance(state, AirlineState)
    r = next(iter(state.reservations.values()))
    records = domain.claim_records(Observation("get_reservation_details", {"reservation_id": r.id},
                                               r.model_dump(mode="json")))
    assert records[0].kind == "reservation" and records[0].values["cabin"] == (r.cabin.replace("_", " "),)
    flight = leg_flights(state, r)[0]
    records = domain.claim_records(Observation("get_flight_status", {}, flight.model_dump(mode="json")))
    assert records[0].kind == "flight" and records[0].values["status"][0] == flight.status


# --- the sampler ------------------------------------------------------------------------------

def _sample(domain: AirlineDomain, seed: int) -> Any:
    return domain.task_sampler().sample(random.Random(seed), 3, p_indirect=0.5, p_revision=0.25,
                                        p_redirect=0.15, p_read_only=0.15)


def test_sampler_is_deterministic(domain: AirlineDomain) -> None:
    from trajforge.errors import TaskRejected

    for seed in range(5):
        try:
            a = _sample(domain, seed)
        except TaskRejected:
            continue
        b = _sample(domain, seed)
        assert a == b


def test_sampler_draws_every_kind_and_ground_truth_runs(domain: AirlineDomain) -> None:
    from trajforge.environments.kit import run_ground_truth
    from trajforge.errors import TaskRejected

    kinds: set[str] = set()
    for seed in range(150):
        try:
            task = _sample(domain, seed)
        except TaskRejected:
            continue
        kinds |= {i.kind for i in task.intents}
        env = domain.environment()
        for call in task.auth_calls:
            env.call(call.name, call.arguments)
        for intent in task.intents:
            run_ground_truth(env, intent)
            if intent.kind == "cancel_refused":
                assert all(c.kind == "read" for c in intent.calls) and intent.outputs
            if intent.kind == "expense_transfer":
                assert intent.calls[-1].name == "transfer_to_human_agents"
                assert intent is task.intents[-1]
    assert kinds == set(domain.intents)


def test_plan_of_and_sample_planned_roundtrip(domain: AirlineDomain) -> None:
    from trajforge.errors import TaskRejected
    from trajforge.generators.compose import compose_blueprint

    sampler = domain.task_sampler()
    draft = _sample(domain, 1)
    bp = compose_blueprint(domain, draft, random.Random(1), seed=1, index=0)
    plan = sampler.plan_of(bp)
    assert [p.kind for p in plan.intents] == [i.kind for i in draft.intents]
    for seed in range(30):
        try:
            again = sampler.sample_planned(random.Random(seed), plan)
        except TaskRejected:
            continue
        assert [i.kind for i in again.intents] == [p.kind for p in plan.intents]
        return


def test_domain_check_oracle_passes(domain: AirlineDomain) -> None:
    from trajforge.environments.registry import domain_names
    from trajforge.evaluation.domain_check import check_domain
    from trajforge.simulation import worker_state

    if "airline" not in domain_names():  # until the entry point is registered: seed the cache
        worker_state._DOMAINS[("airline", domain.size, domain.seed)] = domain
    report = check_domain(domain, 60)
    assert report.blueprints >= 45
    assert report.oracle_pass_rate == 1.0, report.examples
    assert not report.undeclared
