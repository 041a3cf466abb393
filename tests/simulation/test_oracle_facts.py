"""The scripted oracle says what its tools returned: read from the transcripts alone (not through
the checks), every value of every report is one a tool showed in that episode for the entity the
report names, described orders are resolved to the right one, and an unavailable variant is
said to be unavailable."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from trajforge.environments.retail import RetailDomain
from trajforge.generators import generate_blueprints
from trajforge.schemas import AssistantMessage, TaskBlueprint, ToolCall, ToolMessage, Trajectory
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer

ORDER_ID = re.compile(r"#W\d{7}")
AMOUNT = re.compile(r"\$(\d+\.\d{2})")
STATUSES = ("return requested", "exchange requested", "pending", "processed", "shipped",
            "delivered", "cancelled")


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture(scope="module")
def played(domain: RetailDomain) -> list[tuple[TaskBlueprint, Trajectory]]:
    bps = [b for b in generate_blueprints(domain, GenerationConfig(), "oracle_facts", 0, 400)
           if isinstance(b, TaskBlueprint)]
    player = EpisodePlayer(domain_of=lambda bp: domain)
    jobs = [EpisodeJob(bp, seed) for seed, bp in enumerate(bps)]
    out = asyncio.run(player.play_all(jobs, lambda p: (p.job.blueprint, p.trajectory)))
    return [o for o in out if o is not None]


def _results(t: Trajectory, until: int | None = None) -> list[Any]:
    """The tool results of ``t`` (those before message ``until``, when given)."""
    out = []
    for m in t.messages[:until]:
        if isinstance(m, ToolMessage) and not m.is_error:
            try:
                out.append(json.loads(m.content))
            except ValueError:
                out.append(m.content)
    return out


def _orders(t: Trajectory, until: int | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every version of every order a tool returned (before message ``until``), by id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in _results(t, until):
        if isinstance(r, dict) and "placed_on" in r:
            out.setdefault(r["id"], []).append(r)
    return out


def _amounts(order: dict[str, Any]) -> set[str]:
    values = [p["amount"] for p in order["payments"]] + [i["price"] for i in order["items"]]
    return {f"{v:.2f}" for v in values} | {f"{sum(i['price'] for i in order['items']):.2f}"}


def _names_variant(text: str, variant: dict[str, Any]) -> bool:
    return all(re.search(rf"\b{re.escape(f'{k} {o}')}\b", text) for k, o in variant["options"].items())


def _swap_target(sentence: str, products: list[dict[str, Any]],
                 orders: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The variant a swap the sentence describes asks for: an item of the order it names, of a
    product it names, with the one option it names ("... order #W1 for color pink") changed."""
    ids = ORDER_ID.findall(sentence)
    if len(ids) != 1 or ids[0] not in orders:
        return None
    for item in orders[ids[0]][-1]["items"]:
        if item["name"] not in sentence:
            continue
        for key in item["options"]:
            for p in products:
                for v in p["variants"]:
                    if p["id"] == item["product_id"] and v["options"] == {**item["options"], key: v["options"][key]} \
                            and v["options"][key] != item["options"][key] \
                            and re.search(rf"\b{re.escape(key)} {re.escape(v['options'][key])}\b", sentence):
                        return v
    return None


def _reports(t: Trajectory) -> list[tuple[int, str]]:
    """(index, text) of the agent's text messages that follow a tool result (its reports)."""
    out = []
    for i, m in enumerate(t.messages):
        if isinstance(m, AssistantMessage) and m.content and isinstance(t.messages[i - 1], ToolMessage) \
                and "?" in m.content and not m.content.rstrip().endswith("proceed?") \
                and "go ahead?" not in m.content:
            out.append((i, m.content))
    return out


def test_every_reported_value_is_one_a_tool_showed_for_the_named_entity(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    checked = {"order": 0, "price": 0, "swap": 0}
    for bp, t in played:
        products = [r for r in _results(t) if isinstance(r, dict) and "variants" in r]
        for at, text in _reports(t):
            orders = _orders(t, at)  # what the tools had shown when it was said
            sentences = re.split(r"(?<=[.!?])\s+", text)
            named: str | None = None
            for sentence in sentences:
                ids = ORDER_ID.findall(sentence)
                named = ids[-1] if ids else named
                amounts = AMOUNT.findall(sentence)
                statuses = [s for s in STATUSES if re.search(rf"\b{s}\b", sentence)]
                # a price names the product and all its variant's option values (a swap's
                # report names an item and the one option that changed)
                variant = next((v for p in products if p["name"] in sentence for v in p["variants"]
                                if _names_variant(sentence, v)), None)
                if variant is not None:
                    assert amounts == [f"{variant['price']:.2f}"], (bp.provenance.index, sentence)
                    checked["price"] += 1
                    continue
                swapped = _swap_target(sentence, products, orders)
                if swapped is not None and amounts:  # a swap's confirmation: what the new variant costs
                    assert amounts == [f"{swapped['price']:.2f}"], (bp.provenance.index, sentence)
                    checked["swap"] += 1
                    continue
                if not (amounts or statuses):
                    continue
                assert named is not None, (bp.provenance.index, text)
                assert named in orders, (bp.provenance.index, named)
                latest = orders[named][-1]
                for amount in amounts:
                    assert amount in _amounts(latest), (bp.provenance.index, sentence, latest["payments"])
                for status in statuses[:1]:  # "return requested" also contains no other status
                    assert status == latest["status"], (bp.provenance.index, sentence, latest["status"])
                checked["order"] += 1
    assert checked["order"] >= 200 and checked["price"] >= 10 and checked["swap"] >= 30, checked


def test_described_orders_are_resolved_to_the_right_one(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    seen = 0
    for bp, t in played:
        reports = _reports(t)
        for k, intent in enumerate(bp.user.intents):
            ref = intent.slots.get("order", "")
            if intent.kind != "order_status" or ref.startswith("#"):
                continue
            status = next(o for o in bp.ground_truth.outputs if o.intent == k)
            call = bp.ground_truth.calls[status.after_call]
            target = call.arguments["order_id"]
            # the report of this intent: the first report naming its status after its reads
            texts = [text for _, text in reports if status.value in text]
            assert any(target in text for text in texts), (bp.provenance.index, ref, target, texts)
            seen += 1
    assert seen >= 5, seen


def test_unavailable_variants_are_said_to_be_unavailable(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    counted = {True: 0, False: 0}
    for _, t in played:
        products = {r["name"]: r for r in _results(t) if isinstance(r, dict) and "variants" in r}
        for _, text in _reports(t):
            for name, product in products.items():
                if name not in text or "$" not in text:
                    continue
                variant = next((v for v in product["variants"]
                                if _names_variant(text, v)), None)
                if variant is None:
                    continue  # a swap's report, not a price
                if variant["available"]:
                    assert "in stock" in text and "unavailable" not in text, text
                else:
                    assert "unavailable" in text, text
                counted[variant["available"]] += 1
    assert counted[True] >= 5 and counted[False] >= 1, counted


def _writes(t: Trajectory, names: tuple[str, ...]) -> Iterator[tuple[str, ToolCall, ToolMessage]]:
    """(the agent's last words before it, the call, its result) for each successful call of
    ``names`` in ``t``."""
    calls: dict[str, ToolCall] = {}
    asked = ""
    for m in t.messages:
        if isinstance(m, AssistantMessage):
            asked = m.content or asked
            calls.update({c.id: c for c in m.tool_calls or ()})
        call = calls.get(m.tool_call_id) if isinstance(m, ToolMessage) and not m.is_error else None
        if call is not None and call.name in names:
            yield asked, call, m


def test_a_confirmation_states_the_refund_the_write_then_makes(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """A cancellation or a return is confirmed with what it will refund (when the order shows that
    amount: one item's price or the whole order's), and the write refunds exactly that."""
    stated = unstated = 0
    for bp, t in played:
        for asked, _, result in _writes(t, ("cancel_pending_order", "return_delivered_order_items")):
            refund = json.loads(result.content)["payments"][-1]
            assert refund["kind"] == "refund"
            said = AMOUNT.findall(asked)
            if said:
                assert said == [f"{refund['amount']:.2f}"], (bp.provenance.index, asked, refund)
                stated += 1
            else:
                unstated += 1
    assert stated >= 40 and unstated <= stated // 5, (stated, unstated)


def test_a_swap_is_confirmed_with_the_price_of_the_item_it_puts_in(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """An exchange or a change of a pending order's item is confirmed with what the variant the
    write then asks for costs, as the product read showed it (read from the transcript: the
    write's arguments and the tool results, not the checks)."""
    stated = 0
    for bp, t in played:
        for asked, call, _ in _writes(t, ("exchange_delivered_order_items", "modify_pending_order_items")):
            [new_id] = json.loads(call.arguments)["new_item_ids"]
            shown = [v for r in _results(t) if isinstance(r, dict) and "variants" in r
                     for v in r["variants"] if v["item_id"] == new_id]
            assert AMOUNT.findall(asked) == [f"{shown[-1]['price']:.2f}"], (bp.provenance.index, asked, shown)
            stated += 1
    assert stated >= 30, stated


WRITES = ("cancel_pending_order", "return_delivered_order_items", "exchange_delivered_order_items",
          "modify_pending_order_items", "modify_pending_order_address", "modify_pending_order_payment")


def test_what_was_found_is_said_once_at_the_first_word_after_the_read(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """The agent's first words after it reads the order a write is about say what it found (the
    order and its status), whatever comes next, a question for a missing detail included; the
    confirmation that follows does not say it again."""
    asked_first = confirmed_first = not_repeated = 0
    for bp, t in played:
        calls = {c.id: (c.name, c.parsed_arguments() or {}) for m in t.messages
                 if isinstance(m, AssistantMessage) for c in m.tool_calls or ()}
        written = {calls[m.tool_call_id][1].get("order_id") for m in t.messages
                   if isinstance(m, ToolMessage) and not m.is_error and calls[m.tool_call_id][0] in WRITES}
        for i, m in enumerate(t.messages):
            if not (isinstance(m, ToolMessage) and calls[m.tool_call_id][0] == "get_order_details"
                    and not m.is_error):
                continue
            order = json.loads(m.content)
            if order["id"] not in written or order["status"] not in ("pending", "delivered"):
                continue
            texts = [(k, n.content) for k, n in enumerate(t.messages[i + 1:], i + 1)
                     if isinstance(n, AssistantMessage) and n.content and not n.tool_calls]
            if not texts:
                continue
            k, first = texts[0]
            if ORDER_ID.findall(first) != [order["id"]]:
                continue  # about something else (a later intent's read came first), or which of several
            assert re.search(rf"\b{order['status']}\b", first), (bp.provenance.index, first)
            after = t.messages[k + 2] if k + 2 < len(t.messages) else None
            if isinstance(after, AssistantMessage) and any(c.name in WRITES for c in after.tool_calls or ()):
                confirmed_first += 1  # the user's answer was a consent: this was the confirmation
                continue
            if not first.rstrip().endswith("?"):
                continue  # a refusal or a report
            asked_first += 1
            # the words before the write: the confirmation, which does not repeat the status
            later = [text for _, text in texts[1:] if order["id"] in text]
            if later:
                assert not re.search(rf"\b(shows as|is still|was|currently) {order['status']}\b", later[0]), \
                    (bp.provenance.index, first, later[0])
                not_repeated += 1
    # in the default mix the user leaves a detail of most writes to be asked for after the read
    assert asked_first >= 100 and not_repeated >= 100, (asked_first, not_repeated, confirmed_first)
