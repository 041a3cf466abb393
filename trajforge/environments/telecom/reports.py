"""What a careful telecom agent can tell the customer, read from the tool results it has seen
(never from the blueprint, never from the customer's phone: the agent only hears about that).

The entity an intent is about is the line or the bill the customer named (a phone number in any
common spelling, a bill id); its values are the latest the tools showed: a line's status, plan,
price and data, a bill's amount, due date and status, a top-up's charge, the plan the customer
asked for as ``list_plans`` shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trajforge.environments.base import Observation, ReportFacts
from trajforge.environments.telecom.claims import bill_ids, data_left, data_total, phone_numbers
from trajforge.environments.telecom.data import money


def is_line(value: Any) -> bool:
    return isinstance(value, dict) and {"number", "status", "plan_id", "data_limit_gb"} <= value.keys()


def is_bill(value: Any) -> bool:
    return isinstance(value, dict) and {"id", "amount", "due_date", "status"} <= value.keys()


def _ok(observed: Sequence[Observation]) -> list[Observation]:
    return [o for o in observed if o.error is None]


def latest_line(number: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    found = None
    for obs in _ok(observed):
        if is_line(obs.result) and obs.result["number"] == number:
            found = obs.result
    return found


def matching_lines(ref: str, observed: Sequence[Observation]) -> tuple[str, ...]:
    """The numbers of the lines the tools showed (a line's details, or the customer's summary of
    their lines) that "my line on the Plus 15GB plan" fits (their latest version is on the plan
    it names), in the order first shown."""
    low = ref.lower()
    plans: dict[str, str] = {}
    for obs in _ok(observed):
        result = obs.result
        shown = result.get("lines") if isinstance(result, dict) and "lines" in result else [result]
        for line in shown if isinstance(shown, list) else []:
            if isinstance(line, dict) and {"number", "plan_name"} <= line.keys():
                plans[str(line["number"])] = str(line["plan_name"]).lower()
    return tuple(n for n, plan in plans.items() if f" {plan} plan" in f" {low}")


def _bills(observed: Sequence[Observation]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for obs in _ok(observed):
        if is_bill(obs.result):
            out[obs.result["id"]] = obs.result
    return out


def _plan(name: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    for obs in reversed(_ok(observed)):
        if isinstance(obs.result, list):
            for plan in obs.result:
                if isinstance(plan, dict) and str(plan.get("name", "")).lower() == name.lower():
                    return plan
    return None


def _line_facts(line: dict[str, Any]) -> dict[str, str]:
    return {"number": str(line["number"]), "status": str(line["status"]),
            "plan_name": str(line["plan_name"]), "price": money(line["monthly_price"]),
            "data_left": data_left(line["data_left_gb"]), "data_limit": data_total(line["data_limit_gb"]),
            "roaming": "enabled" if line["roaming_enabled"] else "not enabled"}


def _bill_facts(bill: dict[str, Any]) -> dict[str, str]:
    return {"bill_id": str(bill["id"]), "amount": money(bill["amount"]), "due_date": str(bill["due_date"]),
            "bill_status": str(bill["status"]), "period": str(bill["period"])}


def report_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    """The values of an intent's report placeholders, from this episode's tool results."""
    if kind in ("pay_bill", "bill_question"):
        named = bill_ids(slots.get("bill", ""))
        bill = _bills(observed).get(named[0]) if named else None
        return ReportFacts(_bill_facts(bill), ("bill_id",)) if bill else ReportFacts()
    numbers = phone_numbers(slots.get("line", ""))
    line = latest_line(numbers[0], observed) if numbers else None
    if line is None:
        return ReportFacts()
    facts = _line_facts(line)
    if kind == "roaming_refused":
        overdue = [b for b in _bills(observed).values()
                   if b["status"] == "overdue" and b.get("customer_id") == line["customer_id"]]
        if overdue:  # the refusal is about the bill that blocks it
            facts.update(_bill_facts(overdue[-1]))
            return ReportFacts(facts, ("bill_id",))
    elif kind == "change_plan":
        plan = _plan(slots.get("plan", ""), observed)
        if plan is not None:
            facts.update(plan_id=str(plan["id"]), new_price=money(plan["monthly_price"]))
    elif kind == "data_topup":
        charged = [o.result for o in _ok(observed) if is_line(o.result) and "charge" in o.result
                   and o.result["number"] == line["number"]]
        # nothing is charged until the top-up is added; the charge is this report's first value
        facts = {"charge": money(charged[-1]["charge"] if charged else 0.0), **facts}
    return ReportFacts(facts, ("number",))
