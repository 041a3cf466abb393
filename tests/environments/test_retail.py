"""The retail domain: deterministic data, tools that enforce the policy, and the policy text."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from trajforge.environments import Environment
from trajforge.environments.retail import RetailDomain
from trajforge.environments.retail.data import CATALOG, Customer, Order, RetailState, build_retail_state
from trajforge.environments.retail.policy import CANCEL_REASONS, POLICY_TEXT, RULES, TOOL_RULES
from trajforge.errors import PolicyViolation, ToolError
from trajforge.schemas import ToolCall


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture()
def env(domain: RetailDomain) -> Environment:
    return domain.environment()


def _find(state: RetailState, pred: Callable[[Order, Customer], bool]) -> tuple[Order, Customer]:
    for order in state.orders.values():
        customer = state.customers[order.customer_id]
        if pred(order, customer):
            return order, customer
    raise AssertionError("no order in the test state satisfies the condition")


def _other_variant(state: RetailState, order: Order, *, same_product: bool) -> tuple[str, str]:
    """(item_id in the order, new item id): an available other variant of the same product, or
    (``same_product=False``) an available variant of a different product."""
    for item in order.items:
        if same_product:
            product = state.products[item.product_id]
            for v in product.variants:
                if v.available and v.item_id != item.item_id:
                    return item.item_id, v.item_id
        else:
            other = next(p for p in state.products.values() if p.id != item.product_id)
            return item.item_id, next(v.item_id for v in other.variants if v.available)
    raise AssertionError("no variant found")


def _violation(env: Environment, name: str, args: dict[str, Any]) -> PolicyViolation:
    before = env.state_hash()
    with pytest.raises(PolicyViolation) as info:
        env.call(name, args)
    assert env.state_hash() == before, "a refused write must not change the state"
    message = env.execute(ToolCall(id="c", name=name, arguments=json.dumps(args)))
    assert message.is_error and f"policy {info.value.rule}" in message.content
    assert env.state_hash() == before
    return info.value


# --- data -------------------------------------------------------------------------------------

def test_data_builder_is_deterministic_for_a_seed() -> None:
    a = build_retail_state(random.Random(5), 50)
    b = build_retail_state(random.Random(5), 50)
    assert a == b
    assert a.model_dump_json() == b.model_dump_json()
    c = build_retail_state(random.Random(6), 50)
    assert c != a and set(c.customers) != set(a.customers)
    assert RetailDomain(50, 5).template == a
    assert RetailDomain(50, 5).hasher.hash(a) == RetailDomain(50, 5).hasher.hash(b)


@pytest.mark.parametrize("size", [10, 37, 200])
def test_data_sizes_follow_size(size: int) -> None:
    state = build_retail_state(random.Random(1), size)
    assert len(state.customers) == size
    assert size <= len(state.orders) <= 5 * size
    assert len(state.products) == len(CATALOG)
    owned = [o for c in state.customers.values() for o in c.order_ids]
    assert sorted(owned) == sorted(state.orders), "every order belongs to exactly one customer"
    for customer in state.customers.values():
        assert 1 <= len(customer.payment_methods) <= 3
        assert 1 <= len(customer.order_ids) <= 5
        assert customer.email == customer.email.lower() and customer.email.endswith("@example.com")
        for order_id in customer.order_ids:
            order = state.orders[order_id]
            assert order.customer_id == customer.id
            assert re.fullmatch(r"#W\d{7}", order.id)
            assert customer.payment_method(order.payment_method_id) is not None
            assert 1 <= len(order.items) <= 4
            assert order.payments[0].amount == order.total
            for item in order.items:
                variant = state.products[item.product_id].variant(item.item_id)
                assert variant is not None and variant.price == item.price


def test_larger_worlds_have_proportionally_more_orders() -> None:
    small = build_retail_state(random.Random(0), 30)
    large = build_retail_state(random.Random(0), 300)
    assert 5 * len(small.orders) < len(large.orders)


# --- rules the tools enforce ------------------------------------------------------------------

def test_cancel_a_non_pending_order(env: Environment) -> None:
    order, _ = _find(env.state, lambda o, c: o.status == "delivered")
    v = _violation(env, "cancel_pending_order", {"order_id": order.id, "reason": "no longer needed"})
    assert v.rule == "cancel_pending"
    for status in ("processed", "shipped", "cancelled"):
        order, _ = _find(env.state, lambda o, c, s=status: o.status == s)
        assert _violation(env, "cancel_pending_order",
                          {"order_id": order.id, "reason": "ordered by mistake"}).rule == "cancel_pending"


def test_cancel_with_a_bad_reason(env: Environment) -> None:
    order, _ = _find(env.state, lambda o, c: o.status == "pending")
    v = _violation(env, "cancel_pending_order", {"order_id": order.id, "reason": "found it cheaper"})
    assert v.rule == "cancel_reason"
    for reason in CANCEL_REASONS:  # the allowed reasons work
        fresh = env.domain.environment()
        result = fresh.call("cancel_pending_order", {"order_id": order.id, "reason": reason})
        assert result.status == "cancelled" and result.cancel_reason == reason
        assert result.payments[-1].kind == "refund" and result.payments[-1].amount == order.total


def test_modify_a_non_pending_order(env: Environment) -> None:
    order, customer = _find(env.state, lambda o, c: o.status == "shipped" and len(c.payment_methods) > 1)
    address = {"address1": "1 Elm St", "address2": "", "city": "Austin", "state": "TX", "zip": "73301"}
    assert _violation(env, "modify_pending_order_address",
                      {"order_id": order.id, **address}).rule == "modify_pending"
    other = next(m.id for m in customer.payment_methods if m.id != order.payment_method_id)
    assert _violation(env, "modify_pending_order_payment",
                      {"order_id": order.id, "payment_method_id": other}).rule == "modify_pending"
    item_id, new_id = _other_variant(env.state, order, same_product=True)
    assert _violation(env, "modify_pending_order_items",
                      {"order_id": order.id, "item_ids": [item_id], "new_item_ids": [new_id],
                       "payment_method_id": order.payment_method_id}).rule == "modify_pending"


def test_return_a_non_delivered_order(env: Environment) -> None:
    for status in ("pending", "shipped", "return requested", "exchange requested"):
        order, _ = _find(env.state, lambda o, c, s=status: o.status == s)
        v = _violation(env, "return_delivered_order_items",
                       {"order_id": order.id, "item_ids": [order.items[0].item_id],
                        "payment_method_id": order.payment_method_id})
        assert v.rule == "return_delivered", status


def test_an_order_takes_one_return_only(env: Environment) -> None:
    order, _ = _find(env.state, lambda o, c: o.status == "delivered" and len(o.items) > 1)
    args = {"order_id": order.id, "item_ids": [order.items[0].item_id],
            "payment_method_id": order.payment_method_id}
    result = env.call("return_delivered_order_items", args)
    assert result.status == "return requested"
    assert result.payments[-1].amount == order.items[0].price
    again = {**args, "item_ids": [order.items[1].item_id]}
    assert _violation(env, "return_delivered_order_items", again).rule == "return_delivered"


def test_refund_to_a_non_original_non_gift_card_method(env: Environment) -> None:
    def ok(o: Order, c: Customer) -> bool:
        return o.status == "delivered" and any(
            m.id != o.payment_method_id and m.kind != "gift_card" for m in c.payment_methods)

    order, customer = _find(env.state, ok)
    other = next(m.id for m in customer.payment_methods
                 if m.id != order.payment_method_id and m.kind != "gift_card")
    v = _violation(env, "return_delivered_order_items",
                   {"order_id": order.id, "item_ids": [order.items[0].item_id],
                    "payment_method_id": other})
    assert v.rule == "refund_method"


def test_refund_to_a_gift_card_is_allowed_and_credits_it(env: Environment) -> None:
    order, customer = _find(env.state, lambda o, c: o.status == "delivered" and any(
        m.kind == "gift_card" for m in c.payment_methods))
    card = next(m for m in customer.payment_methods if m.kind == "gift_card")
    item = order.items[0]
    env.call("return_delivered_order_items", {"order_id": order.id, "item_ids": [item.item_id],
                                              "payment_method_id": card.id})
    balance = env.state.customers[customer.id].payment_method(card.id).balance  # type: ignore[union-attr]
    assert balance == pytest.approx((card.balance or 0) + item.price)


def test_exchange_for_another_products_variant(env: Environment) -> None:
    order, _ = _find(env.state, lambda o, c: o.status == "delivered")
    item_id, foreign = _other_variant(env.state, order, same_product=False)
    args = {"order_id": order.id, "item_ids": [item_id], "new_item_ids": [foreign],
            "payment_method_id": order.payment_method_id}
    assert _violation(env, "exchange_delivered_order_items", args).rule == "same_product"
    same = {**args, "new_item_ids": [item_id]}  # the same variant is no exchange either
    assert _violation(env, "exchange_delivered_order_items", same).rule == "same_product"


def test_gift_card_without_balance(env: Environment) -> None:
    def ok(o: Order, c: Customer) -> bool:
        return o.status == "pending" and any(
            m.kind == "gift_card" and (m.balance or 0) < o.total and m.id != o.payment_method_id
            for m in c.payment_methods)

    order, customer = _find(env.state, ok)
    card = next(m for m in customer.payment_methods if m.kind == "gift_card"
                and (m.balance or 0) < order.total and m.id != order.payment_method_id)
    v = _violation(env, "modify_pending_order_payment",
                   {"order_id": order.id, "payment_method_id": card.id})
    assert v.rule == "gift_card_balance"


def test_gift_card_with_balance_pays_and_is_charged(env: Environment) -> None:
    order, customer = _find(env.state, lambda o, c: o.status == "pending" and any(
        m.kind == "gift_card" and (m.balance or 0) >= o.total and m.id != o.payment_method_id
        for m in c.payment_methods))
    card = next(m for m in customer.payment_methods if m.kind == "gift_card"
                and (m.balance or 0) >= order.total and m.id != order.payment_method_id)
    result = env.call("modify_pending_order_payment", {"order_id": order.id, "payment_method_id": card.id})
    assert result.payment_method_id == card.id
    balance = env.state.customers[customer.id].payment_method(card.id).balance  # type: ignore[union-attr]
    assert balance == pytest.approx((card.balance or 0) - order.total)


def test_same_payment_method_again(env: Environment) -> None:
    order, _ = _find(env.state, lambda o, c: o.status == "pending")
    v = _violation(env, "modify_pending_order_payment",
                   {"order_id": order.id, "payment_method_id": order.payment_method_id})
    assert v.rule == "new_payment_differs"
    foreign = next(m.id for c in env.state.customers.values() if c.id != order.customer_id
                   for m in c.payment_methods if m.kind != "gift_card")
    assert _violation(env, "modify_pending_order_payment",
                      {"order_id": order.id, "payment_method_id": foreign}).rule == "new_payment_differs"


def test_items_modified_twice(env: Environment) -> None:
    def ok(o: Order, c: Customer) -> bool:
        if o.status != "pending" or o.items_modified:
            return False
        return any(v.available and v.item_id != i.item_id and v.price <= i.price
                   for i in o.items for v in env.state.products[i.product_id].variants)

    order, _ = _find(env.state, ok)
    item, variant = next((i, v) for i in order.items for v in env.state.products[i.product_id].variants
                         if v.available and v.item_id != i.item_id and v.price <= i.price)
    first = env.call("modify_pending_order_items",
                     {"order_id": order.id, "item_ids": [item.item_id],
                      "new_item_ids": [variant.item_id], "payment_method_id": order.payment_method_id})
    assert first.items_modified and first.item(variant.item_id) is not None
    assert first.status == "pending"
    back = {"order_id": order.id, "item_ids": [variant.item_id], "new_item_ids": [item.item_id],
            "payment_method_id": order.payment_method_id}
    assert _violation(env, "modify_pending_order_items", back).rule == "items_once"


def test_wrong_items_are_tool_errors_not_policy(env: Environment) -> None:
    order, _ = _find(env.state, lambda o, c: o.status == "delivered")
    base = {"order_id": order.id, "payment_method_id": order.payment_method_id}
    for item_ids in ([], ["0000000000"], [order.items[0].item_id] * 2):
        with pytest.raises(ToolError) as info:
            env.call("return_delivered_order_items", {**base, "item_ids": item_ids})
        assert not isinstance(info.value, PolicyViolation)
    with pytest.raises(ToolError, match="pair one to one"):
        env.call("exchange_delivered_order_items",
                 {**base, "item_ids": [order.items[0].item_id], "new_item_ids": []})


# --- the policy as the verifier sees it -------------------------------------------------------

def test_policy_breaches_reports_own_account(domain: RetailDomain) -> None:
    state = domain.template
    order, owner = _find(state, lambda o, c: o.status == "pending")
    stranger = next(c for c in state.customers if c != owner.id)
    args = {"order_id": order.id, "reason": "no longer needed"}
    assert domain.policy_breaches(state, "cancel_pending_order", args, owner.id) == []
    assert domain.policy_breaches(state, "cancel_pending_order", args, stranger) == ["own_account"]
    assert domain.policy_breaches(state, "cancel_pending_order", args, None) == []
    profile = {"customer_id": owner.id, "address1": "1 A St", "address2": "", "city": "X",
               "state": "TX", "zip": "00000"}
    assert domain.policy_breaches(state, "modify_customer_address", profile, stranger) == ["own_account"]
    assert domain.policy_breaches(state, "modify_customer_address", profile, owner.id) == []
    bad = {"order_id": order.id, "reason": "meh"}
    assert domain.policy_breaches(state, "cancel_pending_order", bad, stranger) == [
        "cancel_reason", "own_account"]
    assert domain.account_owner(state, {"order_id": order.id}) == owner.id
    assert domain.account_owner(state, {"order_id": "#W_nope"}) is None


def test_policy_text_lists_the_rules() -> None:
    assert len(RULES) >= 8
    numbered = re.findall(r"^\d+\. \[(\w+)\] ", POLICY_TEXT, flags=re.MULTILINE)
    assert numbered == list(RULES)
    for rule, text in RULES.items():
        assert f"[{rule}] {text}" in POLICY_TEXT
    assert RetailDomain.policy == POLICY_TEXT and RetailDomain.policy_rules == RULES


def test_tool_rules_name_known_rules_and_writes(domain: RetailDomain) -> None:
    writes = {n for n, t in domain.tools.items() if t.kind.value == "write"}
    assert set(TOOL_RULES) == writes
    for rules in TOOL_RULES.values():
        assert set(rules) <= set(RULES)
    assert domain.auth_tools <= set(domain.tools)
    assert domain.transfer_tool in domain.tools
