"""Sampling retail tasks: a customer, 1-4 intents, and the ground-truth calls that fulfil them.

Each intent is built against a working environment that already holds the effects of the
intents before it, and its calls are executed there at once, so outputs (refunds, price
differences, statuses) are real results. Targets are named either by id or by description
("the order with the Desk Lamp", "my most recent order"); a description costs the agent reads
of every order it could refer to, which is the intent's evidence burden.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from trajforge.environments.base import Environment
from trajforge.environments.kit import P_AMBIGUOUS, KindMix, TaskBuilder, draw_intents
from trajforge.environments.retail.data import Customer, Order, RetailState, _address, address_text, money
from trajforge.environments.retail.policy import CANCEL_REASONS, price_difference
from trajforge.environments.tasks import (
    DraftCall,
    DraftIntent,
    DraftOutput,
    DraftTask,
    IntentPlan,
    TaskPlan,
    TaskRejected,
)
from trajforge.schemas.blueprint import TaskBlueprint

# cancel_refused: a cancellation the policy forbids (the order is past pending); the user asks for
# a write, the correct agent reads the order and refuses
READ_ONLY_KINDS = ("order_status", "product_price")
WRITE_KINDS = ("cancel_order", "modify_address", "modify_payment", "modify_items", "return_items",
               "exchange_items", "update_profile_address", "cancel_refused")
# the order statuses an intent's target must have (None: the intent needs no order)
ORDER_STATUSES: dict[str, tuple[str, ...] | None] = {
    "cancel_order": ("pending",), "modify_address": ("pending",), "modify_payment": ("pending",),
    "modify_items": ("pending",), "return_items": ("delivered",), "exchange_items": ("delivered",),
    "order_status": ("pending", "processed", "shipped", "delivered", "cancelled"),
    "cancel_refused": ("processed", "shipped", "delivered"),
    "update_profile_address": None, "product_price": None}
KINDS = KindMix(READ_ONLY_KINDS, WRITE_KINDS,
                weights={"cancel_order": 3, "modify_address": 2, "modify_payment": 2, "modify_items": 2,
                         "return_items": 4, "exchange_items": 3, "cancel_refused": 1},
                once=frozenset({"update_profile_address", "product_price"}))


# the share of descriptions of an order that fit another order of the same status, where one
# can (a clarify step; otherwise the description names it alone), and the intents that take them:
# a write whose outputs follow the write, so asking which order comes between the reads and it
CLARIFIED_KINDS = frozenset({"cancel_order", "modify_address", "modify_payment", "modify_items",
                             "return_items", "exchange_items"})


class _Builder(TaskBuilder):
    """Builds one task for one customer (``used``: the orders its intents took)."""

    def __init__(self, env: Environment, rng: random.Random, customer: Customer,
                 p_indirect: float, p_revision: float, p_redirect: float) -> None:
        super().__init__(env, rng)
        self.customer = customer
        self.p_indirect, self.p_revision, self.p_redirect = p_indirect, p_revision, p_redirect

    @property
    def state(self) -> RetailState:
        return self.env.state  # type: ignore[return-value]

    def orders(self) -> list[Order]:
        return [self.state.orders[o] for o in self.customer.order_ids]

    def refresh(self) -> None:
        self.customer = self.state.customers[self.customer.id]

    # --- references --------------------------------------------------------------------------

    def order_ref(self, order: Order) -> tuple[str, list[DraftCall], int]:
        """How the user names the order, the reads that resolve it, and their count. When the
        user's first words for it fit another order of the same status (an item both hold), the
        user names the order by its id once asked (``self.clarify``: what they say first)."""
        orders = self.orders()
        self.clarify = None
        if len(orders) > 1 and self.rng.random() < self.p_indirect:
            shared = sorted({i.name for i in order.items
                             if sum(o.status == order.status and any(x.name == i.name for x in o.items)
                                    for o in orders) > 1})
            wanted = self.rng.random() < P_AMBIGUOUS if self.clarify_plan is None else self.clarify_plan
            if shared and self.kind in CLARIFIED_KINDS and wanted:
                self.clarify = ("order", f"the order with the {self.rng.choice(shared)}")
                return order.id, self._read_all(orders), len(orders)
            names = Counter(i.name for o in orders for i in {x.name: x for x in o.items}.values())
            unique = [i.name for i in order.items if names[i.name] == 1]
            latest = max(o.placed_on for o in orders)
            ref = None
            if order.placed_on == latest and sum(o.placed_on == latest for o in orders) == 1 \
                    and self.rng.random() < 0.4:
                ref = "my most recent order"
            elif unique:
                ref = f"the order with the {self.rng.choice(unique)}"
            if ref:
                return ref, self._read_all(orders), len(orders)
        return order.id, self.read_call("get_order_details", {"order_id": order.id}, ("order",)), 1

    def _read_all(self, orders: list[Order]) -> list[DraftCall]:
        """The reads a description of an order costs: every order it could mean."""
        return [c for o in orders for c in self.read_call("get_order_details", {"order_id": o.id}, ("order",))]

    def item_ref(self, order: Order, item_ids: list[str]) -> str:
        names = Counter(i.name for i in order.items)
        parts = []
        for item_id in item_ids:
            item = order.item(item_id)
            assert item is not None
            if names[item.name] == 1:
                parts.append(f"the {item.name}")
            else:
                first = next(iter(item.options.values()))
                same = [i for i in order.items if i.name == item.name and first in i.options.values()]
                if len(same) != 1:
                    raise TaskRejected("ambiguous_item", f"{item.name} in {order.id}")
                parts.append(f"the {first} {item.name}")
        return " and ".join(parts)

    def pick_order(self, statuses: tuple[str, ...]) -> Order:
        options = [o for o in self.orders() if o.status in statuses and o.id not in self.used]
        if not options:
            raise TaskRejected("no_eligible_order", "/".join(statuses))
        order = self.rng.choice(options)
        self.used.add(order.id)
        return order

    def new_variant(self, order: Order) -> tuple[str, str, str, str, list[str]]:
        """(item_id, new_item_id, option_name, option text, other option texts) for a swap."""
        candidates = []
        for item in order.items:
            product = self.state.products[item.product_id]
            for variant in product.variants:
                changed = [k for k in item.options if item.options[k] != variant.options[k]]
                if len(changed) == 1 and variant.available and variant.price != item.price:
                    candidates.append((item, variant, changed[0]))
        if not candidates:
            raise TaskRejected("no_available_variant", order.id)
        item, variant, key = self.rng.choice(candidates)
        others = [f"{key} {v.options[key]}" for _, v, k in candidates
                  if k == key and v.item_id != variant.item_id and _ == item]
        return item.item_id, variant.item_id, key, f"{key} {variant.options[key]}", others

    def gift_card(self) -> str | None:
        cards = [m for m in self.customer.payment_methods if m.kind == "gift_card"]
        return cards[0].id if len(cards) == 1 else None

    def method_text(self, method_id: str) -> str:
        method = self.customer.payment_method(method_id)
        assert method is not None
        if method.kind == "gift_card":
            return "my gift card"
        if method.kind == "paypal":
            return "my PayPal account"
        return f"my {method.brand} card ending in {method.last_four}"

    # --- intents -----------------------------------------------------------------------------

    def _cancel_order(self) -> DraftIntent:
        order = self.pick_order(("pending",))
        ref, reads, burden = self.order_ref(order)
        reason = self.rng.choice(CANCEL_REASONS)
        write = DraftCall("cancel_pending_order", {"order_id": order.id, "reason": reason}, "write",
                          ("order", "reason"))
        calls = reads + [write]
        return DraftIntent("cancel_order", {"order": ref, "reason": reason}, calls,
                           [DraftOutput("refund", money(order.total), len(calls) - 1)], burden)

    def _modify_address(self) -> DraftIntent:
        order = self.pick_order(("pending",))
        ref, reads, burden = self.order_ref(order)
        new = _address(self.rng)
        text = address_text(new)
        write = DraftCall("modify_pending_order_address",
                          {"order_id": order.id, **new.model_dump()}, "write", ("order", "address"))
        intent = DraftIntent("modify_address", {"order": ref, "address": text}, reads + [write],
                             [], burden)
        roll = self.rng.random()
        if roll < self.p_redirect:
            intent.initial_kind = "cancel_order"
            intent.initial_slots = {"reason": self.rng.choice(CANCEL_REASONS)}
        elif roll < self.p_redirect + self.p_revision:
            typo = new.model_copy(update={"zip": f"{(int(new.zip) + 1) % 100000:05d}"})
            intent.revision = ("address", address_text(typo))
        return intent

    def _modify_payment(self) -> DraftIntent:
        order = self.pick_order(("pending",))
        options = [m for m in self.customer.payment_methods if m.id != order.payment_method_id
                   and not (m.kind == "gift_card" and (m.balance or 0) < order.total)
                   and not (m.kind == "gift_card" and self.gift_card() is None)]
        if not options:
            raise TaskRejected("no_other_payment_method", order.id)
        method = self.rng.choice(options)
        ref, reads, burden = self.order_ref(order)
        write = DraftCall("modify_pending_order_payment",
                          {"order_id": order.id, "payment_method_id": method.id}, "write",
                          ("order", "payment"))
        return DraftIntent("modify_payment", {"order": ref, "payment": self.method_text(method.id)},
                           reads + [write], [], burden)

    def _swap(self, kind: str, statuses: tuple[str, ...], tool_name: str) -> DraftIntent:
        order = self.pick_order(statuses)
        item_id, new_id, key, option, others = self.new_variant(order)
        ref, reads, burden = self.order_ref(order)
        items = self.item_ref(order, [item_id])
        product_id = order.item(item_id).product_id  # type: ignore[union-attr]
        reads += self.read_call("get_product_details", {"product_id": product_id},
                                ("order", "option"))
        diff = price_difference(self.state, order.id, [item_id], [new_id])
        if diff > 0 and self.customer.payment_method(order.payment_method_id).kind == "gift_card":  # type: ignore[union-attr]
            raise TaskRejected("gift_card_cannot_pay_difference", order.id)
        write = DraftCall(tool_name, {"order_id": order.id, "item_ids": [item_id],
                                      "new_item_ids": [new_id],
                                      "payment_method_id": order.payment_method_id},
                          "write", ("order", "items", "option"))
        calls = reads + [write]
        intent = DraftIntent(kind, {"order": ref, "items": items, "option_name": key,
                                    "option": option}, calls,
                             [DraftOutput("difference", money(diff), len(calls) - 1)], burden + 1)
        if kind == "exchange_items" and self.rng.random() < self.p_redirect:
            intent.initial_kind = "return_items"
            intent.initial_slots = {"payment": "the original payment method"}
        elif others and self.rng.random() < self.p_revision:
            intent.revision = ("option", self.rng.choice(others))
        return intent

    def _modify_items(self) -> DraftIntent:
        order_ok = [o for o in self.orders() if o.status == "pending" and not o.items_modified]
        if not order_ok:
            raise TaskRejected("no_eligible_order", "pending")
        return self._swap("modify_items", ("pending",), "modify_pending_order_items")

    def _exchange_items(self) -> DraftIntent:
        return self._swap("exchange_items", ("delivered",), "exchange_delivered_order_items")

    def _return_items(self) -> DraftIntent:
        order = self.pick_order(("delivered",))
        count = 2 if len(order.items) > 1 and self.rng.random() < 0.3 else 1
        item_ids = [i.item_id for i in self.rng.sample(list(order.items), count)]
        ref, reads, burden = self.order_ref(order)
        items = self.item_ref(order, item_ids)
        gift = self.gift_card()
        to_gift = gift is not None and self.rng.random() < 0.35
        method_id = gift if to_gift and gift else order.payment_method_id
        payment = "my gift card" if to_gift else "the original payment method"
        write = DraftCall("return_delivered_order_items",
                          {"order_id": order.id, "item_ids": item_ids, "payment_method_id": method_id},
                          "write", ("order", "items", "payment"))
        calls = reads + [write]
        amount = sum(order.known_item(i).price for i in item_ids)
        intent = DraftIntent("return_items", {"order": ref, "items": items, "payment": payment},
                             calls, [DraftOutput("refund", money(amount), len(calls) - 1)], burden)
        if to_gift and self.rng.random() < self.p_revision:
            intent.revision = ("payment", "the original payment method")
        return intent

    def _update_profile_address(self) -> DraftIntent:
        new = _address(self.rng)
        write = DraftCall("modify_customer_address",
                          {"customer_id": self.customer.id, **new.model_dump()}, "write", ("address",))
        return DraftIntent("update_profile_address", {"address": address_text(new)}, [write], [], 0)

    def _order_status(self) -> DraftIntent:
        order = self.pick_order(("pending", "processed", "shipped", "delivered", "cancelled"))
        ref, reads, burden = self.order_ref(order)
        at = [i for i, c in enumerate(reads) if c.arguments.get("order_id") == order.id]
        if not at:
            raise TaskRejected("already_read", order.id)
        return DraftIntent("order_status", {"order": ref}, reads,
                           [DraftOutput("status", order.status, at[0])], burden)

    def _cancel_refused(self) -> DraftIntent:
        order = self.pick_order(("processed", "shipped", "delivered"))
        ref, reads, burden = self.order_ref(order)
        at = [i for i, c in enumerate(reads) if c.arguments.get("order_id") == order.id]
        if not at:
            raise TaskRejected("already_read", order.id)
        # the write asked for (its reason fixed: no draw, the other tasks stay as they were)
        refused = DraftCall("cancel_pending_order", {"order_id": order.id, "reason": CANCEL_REASONS[0]},
                            "write", ("order",))
        return DraftIntent("cancel_refused", {"order": ref}, reads,
                           [DraftOutput("status", order.status, at[0])], burden, refused=[refused])

    def _product_price(self) -> DraftIntent:
        product = self.rng.choice(list(self.state.products.values()))
        variant = self.rng.choice(product.variants)
        first = dict(variant.options)
        same = [v for v in product.variants if v.options == first]
        if len(same) != 1:
            raise TaskRejected("ambiguous_variant", product.name)
        option = " and ".join(f"{k} {v}" for k, v in first.items())
        calls = (self.read_call("list_product_types", {}, ())
                 + self.read_call("get_product_details", {"product_id": product.id}, ()))
        if not calls or calls[-1].name != "get_product_details":
            raise TaskRejected("already_read", product.id)
        return DraftIntent("product_price", {"product": product.name, "option": option}, calls,
                           [DraftOutput("price", money(variant.price), len(calls) - 1)], len(calls))


def _unique_name_zip(state: RetailState) -> set[str]:
    counts = Counter((c.first_name, c.last_name, c.address.zip) for c in state.customers.values())
    return {c.id for c in state.customers.values()
            if counts[(c.first_name, c.last_name, c.address.zip)] == 1}


class RetailTaskSampler:
    """Samples ``DraftTask``s over one template state (construct once, sample many)."""

    def __init__(self, domain: Any) -> None:
        self.domain = domain
        state: RetailState = domain.template
        self.customer_ids = sorted(state.customers)
        self.name_zip_ok = _unique_name_zip(state)

    def sample(self, rng: random.Random, n_intents: int, *, p_indirect: float, p_revision: float,
               p_redirect: float, p_read_only: float) -> DraftTask:
        env = self.domain.environment()
        customer: Customer = env.state.customers[rng.choice(self.customer_ids)]
        identity, auth = _identity(customer,
                                   by_name_zip=customer.id in self.name_zip_ok and rng.random() < 0.4)
        builder = _Builder(env, rng, customer, p_indirect, p_revision, p_redirect)
        auth_calls = [auth] + builder.read_call("get_customer_details",
                                                {"customer_id": customer.id}, ("identity",))
        intents = draw_intents(rng, n_intents, p_read_only, KINDS, builder)
        return DraftTask(identity=identity, auth_calls=auth_calls, intents=intents)

    def plan_of(self, bp: TaskBlueprint) -> TaskPlan:
        """The shape of an existing retail task, for ``sample_planned`` to sample another like it."""
        revised = {d.intent for d in bp.user.disclosure if d.action == "revise"}
        described = {d.intent for d in bp.user.disclosure if d.action == "clarify"}  # then asked which
        auth = next((c.name for c in bp.ground_truth.calls if c.name in self.domain.auth_tools), None)
        intents = []
        for k, intent in enumerate(bp.user.intents):
            ids = {str(v) for c in bp.ground_truth.calls if c.intent == k
                   for v in c.arguments.values()}
            ref = intent.slots.get("order")
            intents.append(IntentPlan(kind=intent.kind, redirect=intent.initial_kind is not None,
                                      revision=k in revised, indirect=ref is not None and ref not in ids,
                                      clarify=k in described))
        n_orders = None
        if any(i.indirect or i.clarify for i in intents):  # a description's reads cover all the customer's orders
            owner = next((c.arguments.get("customer_id") for c in bp.ground_truth.calls
                          if c.name == "get_customer_details"), None)
            customer = self.domain.template.customers.get(owner)
            n_orders = len(customer.order_ids) if customer is not None else None
        return TaskPlan(auth_tool=auth, intents=tuple(intents), n_entities=n_orders)

    def _fits(self, customer: Customer, plan: TaskPlan) -> bool:
        """Whether the customer has the orders the plan needs (a cheap pre-filter; the draw
        itself still decides)."""
        if plan.n_entities is not None and len(customer.order_ids) != plan.n_entities:
            return False
        orders = [self.domain.template.orders[o] for o in customer.order_ids]
        needed = Counter(ORDER_STATUSES.get(i.kind) for i in plan.intents)
        for statuses, count in needed.items():
            if statuses is not None and sum(o.status in statuses for o in orders) < count:
                return False
        return True

    def sample_planned(self, rng: random.Random, plan: TaskPlan) -> DraftTask:
        """A task of exactly the planned shape (kinds in order, redirects, revisions, indirect
        references, way of authenticating) for a fresh customer, or ``TaskRejected`` when this
        draw cannot have it (no eligible order, no revisable fact, ...): callers draw again."""
        env = self.domain.environment()
        by_name_zip = plan.auth_tool == "find_customer_id_by_name_zip"
        pool = [c for c in (sorted(self.name_zip_ok) if by_name_zip else self.customer_ids)
                if self._fits(env.state.customers[c], plan)]
        if not pool:
            raise TaskRejected("no_customer_fits", f"{len(plan.intents)} intents, "
                                                   f"{plan.n_entities} orders")
        customer: Customer = env.state.customers[rng.choice(pool)]
        identity, auth = _identity(customer, by_name_zip=by_name_zip)
        builder = _Builder(env, rng, customer, 0.0, 0.0, 0.0)
        auth_calls = [auth] + builder.read_call("get_customer_details",
                                                {"customer_id": customer.id}, ("identity",))
        intents: list[DraftIntent] = []
        for step in plan.intents:
            if not hasattr(builder, f"_{step.kind}"):
                raise TaskRejected("unknown_intent_kind", step.kind)
            builder.p_indirect = 1.0 if step.indirect or step.clarify else 0.0
            builder.clarify_plan = step.clarify
            builder.p_redirect = 1.0 if step.redirect else 0.0
            builder.p_revision = 1.0 if step.revision else 0.0
            intent = builder.build(step.kind)
            if (intent.initial_kind is not None) != step.redirect or \
                    (intent.revision is not None) != step.revision or (intent.clarify is not None) != step.clarify:
                raise TaskRejected("plan_not_met", f"{step.kind}: redirect/revision")
            builder.execute(intent)
            intents.append(intent)
        return DraftTask(identity=identity, auth_calls=auth_calls, intents=intents)


def _identity(customer: Customer, *, by_name_zip: bool) -> tuple[dict[str, str], DraftCall]:
    """What the user gives to authenticate, and the call that resolves it."""
    if by_name_zip:
        return ({"name": f"{customer.first_name} {customer.last_name}", "zip": customer.address.zip},
                DraftCall("find_customer_id_by_name_zip",
                          {"first_name": customer.first_name, "last_name": customer.last_name,
                           "zip": customer.address.zip}, "read", ("identity",)))
    return ({"email": customer.email},
            DraftCall("find_customer_id_by_email", {"email": customer.email}, "read", ("identity",)))
