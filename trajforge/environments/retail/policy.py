"""The retail policy: the text the agent reads, and the rules as code.

Every rule has an id. Rules about a single write are checked by ``write_breaches`` (the toolkit's
``write_breaches``: the environment refuses a write that breaks one; the policy verifier
re-checks them on a replay).
Dialogue rules (``authenticate``, ``confirm``) are checked by their own verifiers, and
``own_account`` needs to know who was authenticated, so only the verifier can check it.
"""

from __future__ import annotations

from typing import Any

from trajforge.environments.kit import policy_text, standard_rules
from trajforge.environments.retail.data import RetailState

CANCEL_REASONS = ("no longer needed", "ordered by mistake")

RULES: dict[str, str] = {
    **standard_rules(user="customer", identify="email, or by first name, last name and zip code",
                     owns="profile and orders"),
    "cancel_pending": "Only pending orders can be cancelled.",
    "cancel_reason": "The cancellation reason must be 'no longer needed' or 'ordered by mistake'.",
    "modify_pending": "Only pending orders can have their shipping address, payment method or "
                      "items changed.",
    "items_once": "The items of a pending order can be modified only once.",
    "return_delivered": "Only delivered orders can be returned or exchanged, and an order takes "
                        "one return or one exchange, not both and not twice.",
    "refund_method": "Refunds and price differences go to the order's original payment method "
                     "or to one of the customer's gift cards, nowhere else.",
    "same_product": "An item can only be exchanged or modified for an available variant of the "
                    "same product that differs from the current one.",
    "gift_card_balance": "A gift card can pay an amount only if its balance covers it.",
    "new_payment_differs": "A new payment method must be one of the customer's own and "
                           "different from the order's current one.",
}

# The rules each write tool is subject to (beyond authenticate, confirm and own_account).
TOOL_RULES: dict[str, tuple[str, ...]] = {
    "cancel_pending_order": ("cancel_pending", "cancel_reason"),
    "modify_pending_order_address": ("modify_pending",),
    "modify_pending_order_payment": ("modify_pending", "new_payment_differs", "gift_card_balance"),
    "modify_pending_order_items": ("modify_pending", "items_once", "same_product", "refund_method",
                                   "gift_card_balance"),
    "return_delivered_order_items": ("return_delivered", "refund_method"),
    "exchange_delivered_order_items": ("return_delivered", "refund_method", "same_product",
                                       "gift_card_balance"),
    "modify_customer_address": (),
}

POLICY_TEXT = policy_text(
    "Retail customer service policy",
    "You are a customer service agent for an online store. Help authenticated customers with "
    "their orders, returns, exchanges and profile. Be concise, never invent information, and "
    "use the tools for every fact and action.", RULES,
    "If a request is outside these rules, explain why it cannot be done; transfer to a human "
    "agent only if the customer insists on something you cannot do.")


def _gift_card_short(state: RetailState, customer_id: str, method_id: str, amount: float) -> bool:
    method = state.customers[customer_id].payment_method(method_id)
    return (method is not None and method.kind == "gift_card" and amount > 0
            and (method.balance or 0.0) + 1e-9 < amount)


def _refund_target_ok(state: RetailState, order_id: str, method_id: str) -> bool:
    order = state.orders[order_id]
    if method_id == order.payment_method_id:
        return True
    method = state.customers[order.customer_id].payment_method(method_id)
    return method is not None and method.kind == "gift_card"


def _variant_breach(state: RetailState, order_id: str, item_ids: list[str],
                    new_item_ids: list[str]) -> bool:
    order = state.orders[order_id]
    for old_id, new_id in zip(item_ids, new_item_ids, strict=False):
        item = order.item(old_id)
        product = state.products.get(item.product_id) if item else None
        if product is None:
            continue
        variant = product.variant(new_id)
        if variant is None or not variant.available or new_id == old_id:
            return True
    return False


def price_difference(state: RetailState, order_id: str, item_ids: list[str],
                     new_item_ids: list[str]) -> float:
    """New minus old price of the swapped items (positive: the customer pays)."""
    order = state.orders[order_id]
    diff = 0.0
    for old_id, new_id in zip(item_ids, new_item_ids, strict=False):
        item = order.item(old_id)
        product = state.products.get(item.product_id) if item else None
        variant = product.variant(new_id) if product else None
        if item and variant:
            diff += variant.price - item.price
    return round(diff, 2)


def write_breaches(state: RetailState, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(rule, message) for each rule the write would break; calls on unknown ids break none
    (the tool reports those as plain errors)."""
    order = state.orders.get(args.get("order_id", ""))
    if name == "modify_customer_address" or order is None:
        return []
    out: list[tuple[str, str]] = []
    if name == "cancel_pending_order":
        if order.status != "pending":
            out.append(("cancel_pending", f"order {order.id} is {order.status}, not pending"))
        if args.get("reason") not in CANCEL_REASONS:
            out.append(("cancel_reason", f"reason {args.get('reason')!r} is not allowed"))
    elif name.startswith("modify_pending_order"):
        if order.status != "pending":
            out.append(("modify_pending", f"order {order.id} is {order.status}, not pending"))
        if name == "modify_pending_order_payment":
            method_id = args.get("payment_method_id", "")
            customer = state.customers[order.customer_id]
            if customer.payment_method(method_id) is None or method_id == order.payment_method_id:
                out.append(("new_payment_differs", f"{method_id} is not a new method of the customer"))
            elif _gift_card_short(state, order.customer_id, method_id, order.total):
                out.append(("gift_card_balance", f"{method_id} cannot cover {order.total:.2f}"))
        if name == "modify_pending_order_items":
            item_ids, new_ids = list(args.get("item_ids", [])), list(args.get("new_item_ids", []))
            if order.items_modified:
                out.append(("items_once", f"order {order.id} was already modified"))
            if _variant_breach(state, order.id, item_ids, new_ids):
                out.append(("same_product", "a new item is not an available other variant"))
            method_id = args.get("payment_method_id", "")
            if not _refund_target_ok(state, order.id, method_id):
                out.append(("refund_method", f"{method_id} is not allowed for this order"))
            elif _gift_card_short(state, order.customer_id, method_id,
                                  price_difference(state, order.id, item_ids, new_ids)):
                out.append(("gift_card_balance", f"{method_id} cannot cover the difference"))
    elif name in ("return_delivered_order_items", "exchange_delivered_order_items"):
        if order.status != "delivered":
            out.append(("return_delivered", f"order {order.id} is {order.status}, not delivered"))
        method_id = args.get("payment_method_id", "")
        if not _refund_target_ok(state, order.id, method_id):
            out.append(("refund_method", f"{method_id} is not the original payment method or a gift card"))
        if name == "exchange_delivered_order_items":
            item_ids, new_ids = list(args.get("item_ids", [])), list(args.get("new_item_ids", []))
            if _variant_breach(state, order.id, item_ids, new_ids):
                out.append(("same_product", "a new item is not an available other variant"))
            elif _gift_card_short(state, order.customer_id, method_id,
                                  price_difference(state, order.id, item_ids, new_ids)):
                out.append(("gift_card_balance", f"{method_id} cannot cover the difference"))
    return out
