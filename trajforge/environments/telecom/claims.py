"""What telecom declares for the grounded-claims check and for naming ids.

Entities: lines (named by phone number, written 415-555-0123, (415) 555-0123 or 415.555.0123),
bills (by id, B and 7 digits, any case), plans (by id). Attributes: a line's or bill's
status, amounts (a plan's price, a bill's amount, a top-up's charge), a bill's due date, and a
line's plan, data left, data allowance and whether roaming is enabled on it. The customer's own phone is no
entity here: the agent never sees it.
"""

from __future__ import annotations

import re
from typing import Any

from trajforge.environments.base import Observation
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord

_PHONE = r"(?<![\d-])\(?(\d{3})\)?[ .-]?(\d{3})[ .-](\d{4})(?![\d])"
_BILL = r"(?<![\w])[Bb](\d{7})\b"
_CUSTOMER = r"(?<![\w])[Cc][Uu](\d{6})\b"
ID_FORMS: tuple[tuple[str, str], ...] = ((_PHONE, r"\1-\2-\3"), (_BILL, r"B\1"), (_CUSTOMER, r"CU\1"))
STATUSES = ("active", "suspended", "paid", "unpaid", "overdue")
ATTRIBUTES = (
    Attribute("status", AttributeType.status, vocabulary=STATUSES),
    Attribute("amount", AttributeType.money),
    Attribute("date", AttributeType.date),
    Attribute("plan", AttributeType.phrase),  # the plan a line is on, by name
    Attribute("data_left", AttributeType.phrase),  # "3.5GB left"
    Attribute("data_limit", AttributeType.phrase),  # "42GB in total"
    Attribute("roaming", AttributeType.flag, yes=("roaming enabled",),
              no=("roaming not enabled", "roaming disabled")),
)


def data_left(value: float) -> str:
    """A line's data left as an agent says it: "3.5GB left"."""
    return f"{float(value):g}GB left"


def data_total(value: float) -> str:
    """A line's data allowance this cycle (plan and top-ups) as an agent says it: "42GB in total"."""
    return f"{float(value):g}GB in total"


def phone_numbers(text: str) -> list[str]:
    """The phone numbers ``text`` names, canonical (``415-555-0123``)."""
    return [f"{a}-{b}-{c}" for a, b, c in re.findall(_PHONE, text)]


def bill_ids(text: str) -> list[str]:
    return ["B" + d for d in re.findall(_BILL, text)]


def _record(obj: dict[str, Any]) -> ClaimRecord | None:
    if {"number", "status", "plan_name", "monthly_price"} <= obj.keys():
        amounts = [obj["monthly_price"]] + ([obj["charge"]] if "charge" in obj else [])
        values: dict[str, tuple[Any, ...]] = {"status": (obj["status"],), "amount": tuple(amounts),
                                              "plan": (str(obj["plan_name"]),)}
        if "data_left_gb" in obj:
            values["data_left"] = (data_left(obj["data_left_gb"]),)
        if "data_limit_gb" in obj:
            values["data_limit"] = (data_total(obj["data_limit_gb"]),)
        if "roaming_enabled" in obj:
            values["roaming"] = (bool(obj["roaming_enabled"]),)
        return ClaimRecord("line", str(obj["number"]), ((str(obj["number"]),),), values)
    if {"id", "amount", "status"} <= obj.keys() and str(obj["id"]).startswith("B"):
        bill: dict[str, tuple[Any, ...]] = {"status": (obj["status"],), "amount": (obj["amount"],)}
        if "due_date" in obj:
            bill["date"] = (str(obj["due_date"]),)
        return ClaimRecord("bill", str(obj["id"]), ((str(obj["id"]),),), bill)
    if {"id", "name", "monthly_price", "data_gb"} <= obj.keys():
        # named by its id only: a plan's name said of a line ("is now on Max 40GB") is a claim
        # about the line's plan, not a mention of the plan
        return ClaimRecord("plan", str(obj["id"]), ((str(obj["id"]),),),
                           {"amount": (obj["monthly_price"],), "plan": (str(obj["name"]),)})
    return None


def _objects(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [o for v in value for o in _objects(v)]
    if isinstance(value, dict):
        return [value] + [o for v in value.values() if isinstance(v, list) for o in _objects(v)]
    return []


def claim_records(observation: Observation) -> list[ClaimRecord]:
    return [r for r in (_record(o) for o in _objects(observation.result)) if r is not None]
