"""The grounded-claims check and what names a write's target, on wording the generator never uses.

Dialogues are built by hand around real tool outputs of the retail environment: the claims
are phrased freely, so the check is measured on how facts are stated, not on templates.
"""

from __future__ import annotations

import json

import pytest

from trajforge.environments.retail import RetailDomain
from trajforge.environments.retail.data import RetailState
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, UserMessage
from trajforge.verifiers.claims import claim_problems, find_claims, sentences


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


def _state(domain: RetailDomain) -> RetailState:
    assert isinstance(domain.template, RetailState)
    return domain.template


def _two_orders(domain: RetailDomain, differ: str = "status") -> tuple[str, str]:
    """Two orders of one customer with different statuses."""
    state = _state(domain)
    for customer in state.customers.values():
        orders = [state.orders[o] for o in customer.order_ids]
        for a in orders:
            for b in orders:
                if getattr(a, differ) != getattr(b, differ):
                    return a.id, b.id
    raise AssertionError("no customer with two differing orders")


def _read(domain: RetailDomain, env: object, name: str, args: dict[str, object], n: int) -> list[Message]:
    call = ToolCall(id=f"c{n}", name=name, arguments=json.dumps(args))
    result = env.execute(call)  # type: ignore[attr-defined]
    return [AssistantMessage(content=None, tool_calls=(call,)), result]


def _dialogue(domain: RetailDomain, reads: list[tuple[str, dict[str, object]]], say: str) -> list[Message]:
    env = domain.environment()
    messages: list[Message] = [UserMessage(content="hi")]
    for n, (name, args) in enumerate(reads):
        messages += _read(domain, env, name, args, n)
    return messages + [AssistantMessage(content=say)]


def _problems(domain: RetailDomain, reads: list[tuple[str, dict[str, object]]], say: str) -> list[str]:
    return [p["why"] for p in claim_problems(domain, _dialogue(domain, reads, say))]


def test_sentences_keep_decimals_and_questions_state_nothing(domain: RetailDomain) -> None:
    assert sentences("Refunded $12.50 to you. Anything else?") == ["Refunded $12.50 to you.", "Anything else?"]
    assert find_claims("Is order #W1234567 still pending?", domain.claim_attributes) == []
    assert find_claims("Only pending orders can be cancelled.", domain.claim_attributes) == []


def test_a_status_claim_is_checked_against_the_order_it_names(domain: RetailDomain) -> None:
    a, b = _two_orders(domain)
    state = _state(domain)
    sa, sb = state.orders[a].status, state.orders[b].status
    reads: list[tuple[str, dict[str, object]]] = [("get_order_details", {"order_id": a}),
                                                  ("get_order_details", {"order_id": b})]
    bare = a.removeprefix("#")
    assert _problems(domain, reads, f"Good news: {bare} shows as {sa} right now.") == []
    assert _problems(domain, reads, f"Your order {a} is {sa}, and {b} is currently {sb}.") == []
    wrong = _problems(domain, reads, f"I checked, and order {a} is currently {sb}.")
    assert wrong and a in wrong[0] and sb in wrong[0]
    # the right value for the wrong entity
    assert _problems(domain, reads, f"Order {b} is {sa} at the moment.")
    # negation: "is not X" holds when the status is something else
    assert _problems(domain, reads, f"Order {a} is not {sb} yet.") == []
    assert _problems(domain, reads, f"Order {a} is not {sa}.")


def test_a_claim_needs_a_tool_output_and_an_entity(domain: RetailDomain) -> None:
    a, _ = _two_orders(domain)
    status = _state(domain).orders[a].status
    # nothing read about the order: the claim is about no record seen, so it names nothing known
    assert _problems(domain, [], f"Order {a} is {status}.")
    reads: list[tuple[str, dict[str, object]]] = [("get_order_details", {"order_id": a})]
    assert _problems(domain, reads, f"It's {status}, I can see that here.")
    # the entity named in an earlier sentence of the same message carries over
    assert _problems(domain, reads, f"I found order {a}. It is {status}.") == []


def test_amounts_and_availability_of_a_variant(domain: RetailDomain) -> None:
    state = _state(domain)
    product = next(p for p in state.products.values()
                   if any(not v.available for v in p.variants) and any(v.available for v in p.variants))
    gone = next(v for v in product.variants if not v.available)
    there = next(v for v in product.variants if v.available and v.price != gone.price)
    reads: list[tuple[str, dict[str, object]]] = [("get_product_details", {"product_id": product.id})]

    def named(v: object) -> str:
        return f"the {product.name} ({', '.join(v.options.values())})"  # type: ignore[attr-defined]

    assert _problems(domain, reads, f"{named(there).capitalize()} is ${there.price:.2f} and in stock.") == []
    assert _problems(domain, reads, f"{named(gone).capitalize()} would be ${gone.price:.2f}, "
                                    "but I'm afraid it's sold out.") == []
    assert _problems(domain, reads, f"{named(gone).capitalize()} is ${gone.price:.2f} but isn't available.") == []
    # the price of an unavailable variant with its unavailability left out
    omitted = _problems(domain, reads, f"{named(gone).capitalize()} is ${gone.price:.2f}.")
    assert omitted and "available" in omitted[0]
    # another variant's price for this one
    assert _problems(domain, reads, f"{named(there).capitalize()} is ${gone.price:.2f} and available.")
    assert _problems(domain, reads, f"{named(there).capitalize()} is ${there.price:.2f} but out of stock.")


def test_a_refund_stated_after_a_write_is_the_refund_the_tool_made(domain: RetailDomain) -> None:
    state = _state(domain)
    order = next(o for o in state.orders.values() if o.status == "pending")
    env = domain.environment()
    messages: list[Message] = [UserMessage(content="cancel it")]
    messages += _read(domain, env, "get_order_details", {"order_id": order.id}, 0)
    messages += _read(domain, env, "cancel_pending_order", {"order_id": order.id, "reason": "no longer needed"}, 1)
    right = AssistantMessage(content=f"That's done. {order.id.removeprefix('#')} has been cancelled; "
                                     f"you'll see ${order.total:.2f} back on your card.")
    assert claim_problems(domain, messages + [right]) == []
    wrong = AssistantMessage(content=f"Order {order.id} has been cancelled and ${order.total + 5:.2f} refunded.")
    assert claim_problems(domain, messages + [wrong])
    stale = AssistantMessage(content=f"Order {order.id} is still pending.")
    assert claim_problems(domain, messages + [stale])


@pytest.mark.parametrize("how", ["#W", "W", "w", "item", "recent"])
def test_what_names_a_write_target(domain: RetailDomain, how: str) -> None:
    state = _state(domain)
    for customer in state.customers.values():
        orders = [state.orders[o] for o in customer.order_ids]
        latest = max(orders, key=lambda o: o.placed_on)
        if len(orders) < 2 or sum(o.placed_on == latest.placed_on for o in orders) != 1:
            continue
        names = [i.name for o in orders for i in o.items]
        unique = [i.name for i in latest.items if names.count(i.name) == 1]
        other = next(o for o in orders if o.id != latest.id)
        shared = [i.name for i in latest.items if names.count(i.name) > 1]
        if unique:
            break
    else:
        raise AssertionError("no customer fits")
    digits = latest.id.removeprefix("#W")
    text = {"#W": f"cancel {latest.id}?", "W": f"cancel W{digits}?", "w": f"cancel w{digits}, ok?",
            "item": f"cancel the order with the {unique[0]}?", "recent": "cancel your most recent order?"}[how]
    args = {"order_id": latest.id, "reason": "no longer needed"}
    assert domain.names_target(state, "cancel_pending_order", args, text)
    assert not domain.names_target(state, "cancel_pending_order", args, f"cancel {other.id}?")
    assert not domain.names_target(state, "cancel_pending_order", args, f"cancel {digits[::-1]}?")
    # an explicit id decides, even beside an item of the write's order
    assert not domain.names_target(state, "cancel_pending_order", args,
                                   f"cancel the {unique[0]} in order {other.id}?")
    assert not domain.names_target(state, "cancel_pending_order", args, f"cancel {latest.id} and {other.id}?")
    if shared:  # an item two orders hold names neither
        assert not domain.names_target(state, "cancel_pending_order", args, f"cancel the one with the {shared[0]}?")
    profile = {"customer_id": customer.id, "address1": "1 A St", "address2": "", "city": "X",
               "state": "TX", "zip": "00000"}
    assert domain.names_target(state, "modify_customer_address", profile, "update the address on your profile?")
    assert not domain.names_target(state, "modify_customer_address", profile, "update it?")


def test_an_address_or_a_date_said_of_the_wrong_order_fails(domain: RetailDomain) -> None:
    state = _state(domain)
    for customer in state.customers.values():
        orders = [state.orders[o] for o in customer.order_ids if state.orders[o].status == "pending"]
        others = [state.orders[o] for o in customer.order_ids]
        if orders and any(o.placed_on[5:] != orders[0].placed_on[5:] for o in others):
            break
    else:
        raise AssertionError("no customer fits")
    target = orders[0]
    other = next(o for o in others if o.placed_on[5:] != target.placed_on[5:])
    env = domain.environment()
    messages: list[Message] = [UserMessage(content="change the address")]
    messages += _read(domain, env, "get_order_details", {"order_id": other.id}, 0)
    args = {"order_id": target.id, "address1": "9 Elm St", "address2": "", "city": "Austin", "state": "TX",
            "zip": "78701"}
    messages += _read(domain, env, "modify_pending_order_address", args, 1)
    new = "9 Elm St, Austin, TX 78701"
    # a confirmation-like proposal states nothing; the report after the write does
    assert claim_problems(domain, messages + [AssistantMessage(content=f"I can send {other.id} to {new}.")]) == []
    assert claim_problems(domain, messages + [AssistantMessage(content=f"Order {target.id} now ships to {new}.")]) == []
    wrong = claim_problems(domain, messages + [AssistantMessage(content=f"Order {other.id} now ships to {new}.")])
    assert wrong and "address" in wrong[0]["why"]
    month = ("January February March April May June July August September October November December"
             .split()[int(target.placed_on[5:7]) - 1])
    day = int(target.placed_on[8:])
    for said in (target.placed_on, f"{month} {day}", f"{day} {month} {target.placed_on[:4]}"):
        assert claim_problems(domain, messages + [AssistantMessage(content=f"Order {target.id} was placed on {said}.")]) == []
        assert claim_problems(domain, messages + [AssistantMessage(content=f"Order {other.id} was placed on {said}.")])


def test_an_entity_named_in_a_sentence_is_no_claim_about_itself_and_dates_need_a_month() -> None:
    """"Reservation GE788C now has flight HA152" claims a flight of GE788C: the flight's own
    number names the flight and says nothing about it (so another reservation's flight fails);
    "Marriott" and "Maybe" are not months, "Dr. Kovacs" does not end a sentence."""
    from trajforge.environments.airline import AirlineDomain
    from trajforge.environments.claims import ClaimRecord
    from trajforge.verifiers.claims import _dates, message_problems

    airline = AirlineDomain(30, 0)
    mine = ClaimRecord("reservation", "AX795P", (("AX795P",),), {"flight": ("HA152",), "amount": (426.0,)})
    other = ClaimRecord("reservation", "GE788C", (("GE788C",),), {"flight": ("HA755",), "amount": (426.0,)})
    flight = ClaimRecord("flight", "HA152", (("HA152",),), {"flight": ("HA152",)})
    latest = {(r.kind, r.key): r for r in (mine, other, flight)}
    assert message_problems(airline, "Reservation AX795P now has flight HA152.", latest) == []
    problems = message_problems(airline, "Reservation GE788C now has flight HA152.", latest)
    assert problems and "GE788C" in problems[0]
    assert list(_dates("the $612.98 Marriott charge")) == [] and list(_dates("Maybe 12 of them")) == []
    assert [d for _, d, _ in _dates("on May 19th and 3 March 2024")] == ["05-19", "2024-03-03"]
    assert sentences("Seen by Dr. Amara Kovacs on May 3. Done.") == ["Seen by Dr. Amara Kovacs on May 3.", "Done."]
