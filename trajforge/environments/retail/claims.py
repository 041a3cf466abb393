"""What retail declares for the grounded-claims check and for naming a write's target.

Entities: orders (named by id, with or without ``#``), products (by name) and their variants
(by product name plus every option value), gift cards (by id). Attributes: an order's status,
shipping address and date placed, amounts (an order's payments, refunds, item prices and total;
a variant's price; a card's balance), and a variant's availability, which must be said whenever
its price is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trajforge.environments.base import Observation, State
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord
from trajforge.environments.retail.data import RetailState, address_text

_ORDER_FORM = r"(?<![\w#])#?[Ww](\d{7})\b"  # "#W1234567", "W1234567", "w1234567"
ID_FORMS: tuple[tuple[str, str], ...] = ((_ORDER_FORM, r"#W\1"),)
STATUSES = ("pending", "processed", "shipped", "delivered", "cancelled", "return requested",
            "exchange requested")
ATTRIBUTES = (
    Attribute("status", AttributeType.status, vocabulary=STATUSES + ("canceled",)),
    Attribute("amount", AttributeType.money),
    Attribute("address", AttributeType.phrase),
    Attribute("date", AttributeType.date),
    Attribute("available", AttributeType.flag,
              yes=("available", "in stock", "available to order", "can be ordered"),
              no=("unavailable", "out of stock", "sold out", "not in stock", "no longer available",
                  "not available", "cannot be ordered", "can't be ordered", "discontinued"),
              state_if=False),
)
_RECENT = re.compile(r"\b(most recent|latest|newest|last)\b(\s+\w+){0,2}\s+order\b", re.IGNORECASE)
_PROFILE = re.compile(r"\b(profile|account)\b", re.IGNORECASE)


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def order_ids(text: str) -> list[str]:
    """The order ids ``text`` names, in their canonical form (``#W1234567``)."""
    return ["#W" + digits for digits in re.findall(_ORDER_FORM, text)]


def claim_records(observation: Observation) -> list[ClaimRecord]:
    out: list[ClaimRecord] = []
    for obj in _objects(observation.result):
        if isinstance(obj.get("id"), str) and obj["id"].startswith("#W") and "status" in obj:
            items = obj.get("items") or []
            amounts = [p.get("amount") for p in obj.get("payments") or []] + [i.get("price") for i in items]
            amounts.append(round(sum(i.get("price") or 0 for i in items), 2))
            status = "cancelled" if obj["status"] == "canceled" else obj["status"]
            out.append(ClaimRecord("order", obj["id"], ((obj["id"],),),
                                   {"status": (status, "canceled") if status == "cancelled" else (status,),
                                    "amount": tuple(a for a in amounts if a is not None),
                                    "address": (address_text(obj["address"]),) if obj.get("address") else (),
                                    "date": (str(obj.get("placed_on")),)}))
        elif "variants" in obj and isinstance(obj.get("name"), str):
            variants = obj["variants"] or []
            out.append(ClaimRecord("product", str(obj.get("id")), ((obj["name"],),),
                                   {"amount": tuple(v.get("price") for v in variants)}))
            for v in variants:
                options = tuple(str(x) for x in (v.get("options") or {}).values())
                out.append(ClaimRecord("variant", str(v.get("item_id")), ((obj["name"], *options),),
                                       {"amount": (v.get("price"),), "available": (bool(v.get("available")),)}))
        elif obj.get("kind") == "gift_card" and isinstance(obj.get("id"), str):
            out.append(ClaimRecord("gift_card", obj["id"], ((obj["id"],),),
                                   {"amount": (obj.get("balance"),)}))
    return out


def names_target(state: State, tool_name: str, args: dict[str, Any], text: str) -> bool:
    """A confirmation request names a write's order by its id (``#W1234567``, ``W1234567``), by
    an item only that order of the customer holds ("the Desk Lamp"), or as "your most recent
    order" when it is; a profile write by "profile"/"account". When the request gives order
    ids, they decide: exactly the write's order must be the one named."""
    assert isinstance(state, RetailState)
    if "order_id" not in args:
        return "customer_id" not in args or bool(_PROFILE.search(text))
    order_id = str(args["order_id"])
    named = set(order_ids(text))
    if named:  # an id, when given, decides: "the Desk Lamp in #W2" for #W1's lamp names #W2
        return named == set(order_ids(order_id))
    order = state.orders.get(order_id)
    if order is None:
        return False
    customer = state.customers.get(order.customer_id)
    orders = [state.orders[o] for o in customer.order_ids] if customer else [order]
    low = text.lower()
    for item in order.items:
        holders = {o.id for o in orders for i in o.items if i.name == item.name}
        if holders == {order.id} and re.search(r"\b" + re.escape(item.name.lower()) + r"\b", low):
            return True
    latest = max(o.placed_on for o in orders)
    return (order.placed_on == latest and sum(o.placed_on == latest for o in orders) == 1
            and bool(_RECENT.search(text)))
