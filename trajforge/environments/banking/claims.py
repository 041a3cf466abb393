"""What banking declares for the grounded-claims check and for naming a write's target.

Entities (each named by its id, with or without its prefix's dash, any case): accounts
(status; amounts: balance, daily limit, transferred today, remaining limit), cards (status;
also named "ending in 1234"), transactions (status, amount, date, merchant), disputes (status,
amount, date opened, merchant), transfers (status, amount, date; a transfer also shows its
source account's balance after it), payees, and the customer's profile (phone, address).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trajforge.environments.banking.data import address_text
from trajforge.environments.base import Observation, State
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord

# prefix -> number of digits; every kind has its own length, so an id's kind is its shape
ID_KINDS = {"CUS": 5, "ACC": 6, "CRD": 7, "TXN": 8, "DSP": 9, "TRF": 9, "PYE": 4}
# "ACC-204518", "acc-204518", "ACC204518", "ACC 204518" -> "ACC-204518"
ID_FORMS: tuple[tuple[str, str], ...] = tuple(
    (rf"(?i)(?<![\w-]){prefix}[- ]?(\d{{{n}}})(?![\d])", rf"{prefix}-\1") for prefix, n in ID_KINDS.items())
ENTITY_PATTERN = (r"\b(?:CUS-\d{5}|ACC-\d{6}|CRD-\d{7}|TXN-\d{8}|DSP-\d{9}|TRF-\d{9}|PYE-\d{4})\b"
                  r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b\d{3}-\d{3}-\d{4}\b")

STATUSES = ("active", "frozen", "closed", "replaced", "posted", "pending", "under review",
            "resolved", "completed")
ATTRIBUTES = (
    Attribute("status", AttributeType.status, vocabulary=STATUSES),
    Attribute("amount", AttributeType.money),
    Attribute("date", AttributeType.date),
    Attribute("merchant", AttributeType.phrase),
    Attribute("phone", AttributeType.phrase),
    Attribute("address", AttributeType.phrase),
    Attribute("card_ending", AttributeType.phrase),  # "ending in 1234": a card's last four digits
)
_PROFILE = re.compile(r"\b(profile|account on file|details on file)\b", re.IGNORECASE)


def ids_in(text: str, prefix: str) -> list[str]:
    """The ids of one kind that ``text`` names, in their canonical form."""
    n = ID_KINDS[prefix]
    return [f"{prefix}-{d}" for d in re.findall(rf"(?i)(?<![\w-]){prefix}[- ]?(\d{{{n}}})(?![\d])", text)]


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def _kind(obj: dict[str, Any]) -> str | None:
    value = obj.get("id")
    if not isinstance(value, str) or "-" not in value:
        return None
    return {"CUS": "customer", "ACC": "account", "CRD": "card", "TXN": "transaction",
            "DSP": "dispute", "TRF": "transfer", "PYE": "payee"}.get(value.split("-")[0])


def _amounts(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(float(obj[k]) for k in keys if isinstance(obj.get(k), (int, float))
                 and not isinstance(obj.get(k), bool))


def claim_records(observation: Observation) -> list[ClaimRecord]:
    """The entities a tool output shows, with the attribute values it showed for each."""
    out: list[ClaimRecord] = []
    for obj in _objects(observation.result):
        kind = _kind(obj)
        key = str(obj.get("id"))
        if kind == "account":
            out.append(ClaimRecord("account", key, ((key,),), {
                "status": (obj.get("status"),),
                "amount": _amounts(obj, ("balance", "daily_transfer_limit", "transferred_today",
                                         "remaining_daily_limit"))}))
        elif kind == "card":
            out.append(ClaimRecord("card", key, ((key,),),
                                   {"status": (obj.get("status"),),
                                    "card_ending": (f"ending in {obj.get('last_four')}",)}))
        elif kind == "transaction":
            out.append(ClaimRecord("transaction", key, ((key,),), {
                "status": (obj.get("status"),), "amount": _amounts(obj, ("amount",)),
                "date": (str(obj.get("date")),), "merchant": (str(obj.get("merchant")),)}))
        elif kind == "dispute":
            out.append(ClaimRecord("dispute", key, ((key,),), {
                "status": (obj.get("status"),), "amount": _amounts(obj, ("amount",)),
                "date": (str(obj.get("opened_on")),), "merchant": (str(obj.get("merchant")),)}))
        elif kind == "transfer":
            out.append(ClaimRecord("transfer", key, ((key,),), {
                "status": (obj.get("status"),), "amount": _amounts(obj, ("amount",)),
                "date": (str(obj.get("date")),)}))
            source = obj.get("from_account_id")
            if isinstance(source, str) and isinstance(obj.get("from_balance_after"), (int, float)):
                # the transfer shows its source account's balance after it
                out.append(ClaimRecord("account", source, ((source,),),
                                       {"amount": (float(obj["from_balance_after"]),)}))
        elif kind == "payee":
            out.append(ClaimRecord("payee", key, ((key,), (str(obj.get("name")),)), {}))
        elif kind == "customer" and "phone" in obj:
            # one customer is seen per episode: "your profile" names it
            address = obj.get("address")
            out.append(ClaimRecord("customer", key, ((key,), ("profile",)),
                                   {"phone": (str(obj["phone"]),),
                                    "address": (address_text(address),) if isinstance(address, dict) else ()}))
    return out


def names_target(state: State, tool_name: str, args: dict[str, Any], text: str,
                 canonical: Any) -> bool:
    """A confirmation request names each entity a write acts on by its id (any written form);
    a profile write's customer may instead be named as "your profile"."""
    said = canonical(text)
    for key, value in args.items():
        if key in ("amount", "reason", "street", "city", "state", "zip"):
            continue
        if key == "customer_id":
            if canonical(str(value)) not in said and not _PROFILE.search(text):
                return False
        elif canonical(str(value)) not in said:
            return False
    return True
