"""What a careful retail agent can tell the customer, read from the tool results it has seen.

``report_facts`` is the retail side of ``Domain.report_facts``: it finds the entity an intent is
about from the evidence of the episode (an order named by id, with or without ``#``; "my most
recent order", the latest ``placed_on`` among the orders read; "the order with the Desk Lamp",
the order read that holds it; a product by name and its variant by option values) and returns
the values its latest tool output showed: the order id as the tool spelled it, the status
verbatim, money as two decimals of the tool's amount (the refund or charge the write appended),
the price and availability of the asked variant; before a write, what a cancellation or a return
will refund (``refund_due``) and what the variant a swap asks for costs (``new_price``), when the
tools showed it. Nothing here reads the blueprint.

The ``ReportFacts`` also say which values name the entity (``entity``) and which fact must be
said whenever the entity is talked about (``must_say``: an unavailable variant's availability).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trajforge.environments.base import Observation, ReportFacts
from trajforge.environments.retail.claims import order_ids
from trajforge.environments.retail.data import address_text, money

IN_STOCK = "in stock"
UNAVAILABLE = "currently unavailable"
_SWAPS = ("modify_items", "exchange_items")


def option_text(options: dict[str, str]) -> str:
    """A variant's options as the customer says them: "color blue and size M"."""
    return " and ".join(f"{k} {v}" for k, v in options.items())


def _is_order(value: Any) -> bool:
    return isinstance(value, dict) and {"id", "status", "items", "placed_on"} <= value.keys()


def _is_product(value: Any) -> bool:
    return isinstance(value, dict) and {"id", "name", "variants"} <= value.keys()


def _orders(observed: Sequence[Observation]) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Every version of every order the tools showed, oldest first, with its observation index."""
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, obs in enumerate(observed):
        if obs.error is None and _is_order(obs.result):
            out.setdefault(obs.result["id"], []).append((i, obs.result))
    return out


def resolve_order(ref: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    """The latest version of the order ``ref`` names, among the orders the tools showed."""
    orders = _orders(observed)
    latest = {oid: versions[-1][1] for oid, versions in orders.items()}
    named = order_ids(ref)
    if named:
        return latest.get(named[0])
    low = ref.lower()
    if "recent" in low or "latest" in low or "last order" in low:
        if not latest:
            return None
        newest = max(o["placed_on"] for o in latest.values())
        found = [o for o in latest.values() if o["placed_on"] == newest]
        return found[0] if len(found) == 1 else None
    # "the order with the Desk Lamp": the one order read that holds an item of that name
    holders = matching_orders(ref, observed)
    return latest[holders[0]] if len(holders) == 1 else None


def matching_orders(ref: str, observed: Sequence[Observation]) -> tuple[str, ...]:
    """The ids of the orders the tools showed that hold the item "the order with the Desk Lamp"
    names (the longest item name in ``ref`` that any of them holds), in the order first shown."""
    low = ref.lower()
    holders: dict[int, list[str]] = {}
    for oid, versions in _orders(observed).items():
        for item in versions[-1][1]["items"]:
            name = str(item["name"]).lower()
            if name and name in low and oid not in holders.setdefault(len(name), []):
                holders[len(name)].append(oid)
    return tuple(holders[max(holders)]) if holders else ()


def _write_of(order_id: str, observed: Sequence[Observation],
              write_tools: frozenset[str]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the order just before, the order as the last successful write on it returned it)."""
    versions: list[tuple[int, dict[str, Any], bool]] = []
    for obs in observed:
        if obs.error is None and _is_order(obs.result) and obs.result["id"] == order_id:
            versions.append((len(versions), obs.result, obs.tool in write_tools))
    writes = [v for v in versions if v[2]]
    if not writes:
        return None, None
    at = writes[-1][0]
    before = versions[at - 1][1] if at > 0 else None
    return before, writes[-1][1]


def _appended(before: dict[str, Any] | None, after: dict[str, Any]) -> list[dict[str, Any]]:
    payments = list(after.get("payments", ()))
    if before is None:
        return payments[-1:]
    return payments[len(before.get("payments", ())):]


def _chosen(order: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The order's items ``text`` names ("the Desk Lamp and the Fan"; "the black Desk Lamp" where
    the order holds two lamps), as the tools showed them."""
    items = order["items"]
    text = text.lower()
    chosen = []
    for item in items:
        name = str(item["name"]).lower()
        if not re.search(rf"\b{re.escape(name)}\b", text):
            continue
        if sum(str(i["name"]).lower() == name for i in items) > 1:  # "the black Desk Lamp"
            first = str(next(iter((item.get("options") or {}).values()), "")).lower()
            if not re.search(rf"\b{re.escape(first)} {re.escape(name)}\b", text):
                continue
        chosen.append(item)
    return chosen


def _refund_due(kind: str, order: dict[str, Any], slots: dict[str, str]) -> str | None:
    """What a cancellation or a return of the order as the tools last showed it will refund,
    when the order shows that amount itself (the price of one item, or of all of them): a
    confirmation says it, and no check can confirm a sum the tools never showed."""
    items = order["items"]
    if kind == "cancel_order":
        chosen = list(items)
    elif kind == "return_items":
        chosen = _chosen(order, slots.get("items", ""))
    else:
        return None
    if not chosen or len(chosen) not in (1, len(items)):
        return None
    return money(round(sum(float(i["price"]) for i in chosen), 2))


def _new_price(order: dict[str, Any], slots: dict[str, str], observed: Sequence[Observation]) -> str | None:
    """The price of the variant a swap asks for (the item's options with the asked one changed),
    as the latest read of its product showed it: a confirmation says what the new one costs (the
    difference is a sum no tool shows)."""
    chosen = _chosen(order, slots.get("items", ""))
    key, option = slots.get("option_name", ""), slots.get("option", "")
    if len(chosen) != 1 or not key or not option.lower().startswith(key.lower() + " "):
        return None
    item = chosen[0]
    wanted = {**(item.get("options") or {}), key: option[len(key) + 1:]}
    product = None
    for obs in observed:
        if obs.error is None and _is_product(obs.result) and obs.result["id"] == item.get("product_id"):
            product = obs.result
    for variant in (product or {}).get("variants", ()):
        options = variant.get("options") or {}
        if options.keys() == wanted.keys() and all(str(options[k]).lower() == str(v).lower()
                                                   for k, v in wanted.items()):
            return money(variant["price"])
    return None


def _order_facts(kind: str, order: dict[str, Any], observed: Sequence[Observation],
                 write_tools: frozenset[str], slots: dict[str, str]) -> ReportFacts:
    facts = {"order_id": str(order["id"]), "status": str(order["status"])}
    due = _refund_due(kind, order, slots)
    if due is not None:
        facts["refund_due"] = due
    price = _new_price(order, slots, observed) if kind in _SWAPS else None
    if price is not None:
        facts["new_price"] = price
    before, after = _write_of(order["id"], observed, write_tools)
    if after is None:
        return ReportFacts(facts, ("order_id",))
    facts["status"] = str(after["status"])
    facts["address"] = address_text(after["address"])
    new = _appended(before, after)
    refunds = [p for p in new if p["kind"] == "refund"]
    if kind in ("cancel_order", "return_items") and refunds:
        facts["refund"] = money(refunds[-1]["amount"])
    if kind in _SWAPS:
        if new:
            facts["difference"] = money(new[-1]["amount"])
            facts["settled"] = ("refunded to your original payment method" if new[-1]["kind"] == "refund"
                                else "charged to your original payment method")
        else:
            facts["difference"] = money(0.0)
            facts["settled"] = "so nothing is charged or refunded"
    return ReportFacts(facts, ("order_id",))


def _product_facts(slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    name = slots.get("product", "").lower()
    wanted = slots.get("option", "").lower()
    product = None
    for obs in observed:
        if obs.error is None and _is_product(obs.result) and str(obs.result["name"]).lower() == name:
            product = obs.result
    if product is None:
        return ReportFacts()
    facts = {"product": str(product["name"])}
    for variant in product["variants"]:
        if option_text(variant["options"]).lower() == wanted:
            facts["option"] = option_text(variant["options"])
            facts["price"] = money(variant["price"])
            facts["available"] = IN_STOCK if variant["available"] else UNAVAILABLE
            return ReportFacts(facts, ("product", "option"), () if variant["available"] else ("available",))
    return ReportFacts()


def _customer_facts(observed: Sequence[Observation]) -> ReportFacts:
    for obs in reversed(observed):
        result = obs.result
        if obs.error is None and isinstance(result, dict) and "payment_methods" in result \
                and "address" in result:
            return ReportFacts({"address": address_text(result["address"])})
    return ReportFacts()


def report_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation],
                 write_tools: frozenset[str]) -> ReportFacts:
    """The values of an intent's report placeholders, from this episode's tool results."""
    if kind == "product_price":
        return _product_facts(slots, observed)
    if kind == "update_profile_address":
        return _customer_facts(observed)
    ref = slots.get("order")
    if not ref:
        return ReportFacts()
    order = resolve_order(ref, observed)
    if order is None:
        return ReportFacts()
    return _order_facts(kind, order, observed, write_tools, slots)
