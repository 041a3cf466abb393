"""What airline declares for the grounded-claims check and for naming a write's target.

Entities: reservations (by booking code, with or without ``#``, any case), flights (by number
and date: a flight number alone names a route flown every day), gift cards and travel
certificates (by id). Attributes: a reservation's or flight's status, a reservation's cabin,
amounts (payments, refunds, fares, a card's or certificate's balance), dates (a flight's date,
when a reservation was booked, its flights' dates, its passengers' dates of birth), a flight's
scheduled times, which flights a reservation holds (a flight number said of it) and how many
checked bags it has and who its passengers are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trajforge.environments.airline.data import cabin_text, date_text, flight_key
from trajforge.environments.base import Observation
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord

CODE = r"[A-Z]{2}\d{3}[A-Z]"
_CODE_FORM = re.compile(r"(?<![\w#])#?([A-Za-z]{2}\d{3}[A-Za-z])(?![\w])")
ID_FORMS: tuple[tuple[str, str], ...] = ((rf"(?<![\w#])#({CODE})(?![\w])", r"\1"),)
STATUSES = ("scheduled", "delayed", "cancelled", "departed", "landed", "active")
ATTRIBUTES = (
    Attribute("status", AttributeType.status, vocabulary=STATUSES + ("canceled",)),
    Attribute("cabin", AttributeType.status, vocabulary=("basic economy", "economy", "business")),
    Attribute("amount", AttributeType.money),
    Attribute("date", AttributeType.date),
    Attribute("time", AttributeType.phrase),
    Attribute("flight", AttributeType.phrase),  # a reservation's flights; a flight's own number
    Attribute("bags", AttributeType.phrase),  # a reservation's checked bags: "3 checked bags"
    Attribute("passenger", AttributeType.phrase),  # a reservation's passengers, by full name
)


def bags_text(total: int) -> str:
    return f"{total} checked bag" + ("" if total == 1 else "s")


def canonical(text: str) -> str:
    """``text`` with every booking code in its canonical form (no ``#``, upper case)."""
    return _CODE_FORM.sub(lambda m: m.group(1).upper(), text)


def codes(text: str) -> list[str]:
    """The booking codes ``text`` names, canonical."""
    return [m.group(1).upper() for m in _CODE_FORM.finditer(text)]


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def _status(value: str) -> tuple[str, ...]:
    return (value, "canceled") if value == "cancelled" else (value,)


def claim_records(observation: Observation) -> list[ClaimRecord]:
    out: list[ClaimRecord] = []
    for obj in _objects(observation.result):
        if "legs" in obj and "passengers" in obj and isinstance(obj.get("id"), str):
            payments = [float(p.get("amount") or 0) * (1 if p.get("kind") == "payment" else -1)
                        for p in obj.get("payment_history") or []]
            prices = [float(leg.get("price") or 0) for leg in obj.get("legs") or []]  # per passenger
            refunds = [-a for a in payments if a < 0]
            amounts = ({abs(a) for a in payments} | set(prices) | {sum(a for a in payments if a > 0)}
                       | ({sum(refunds)} if refunds else set()))
            dates = ([str(obj.get("created_at", ""))[:10]] + [str(leg.get("date")) for leg in obj.get("legs") or []]
                     + [str(p.get("date_of_birth")) for p in obj.get("passengers") or []])
            out.append(ClaimRecord("reservation", obj["id"], ((obj["id"],),),
                                   {"status": _status(str(obj.get("status"))),
                                    "cabin": (cabin_text(str(obj.get("cabin"))),),
                                    "amount": tuple(sorted(round(a, 2) for a in amounts)),
                                    "date": tuple(dates),
                                    "flight": tuple(str(leg.get("flight_number")) for leg in obj.get("legs") or []),
                                    "bags": (bags_text(int(obj.get("total_baggages") or 0)),),
                                    "passenger": tuple(f"{p.get('first_name')} {p.get('last_name')}"
                                                       for p in obj.get("passengers") or [])}))
        elif "flight_number" in obj and "departure_time" in obj and "status" in obj:
            number, day = str(obj["flight_number"]), str(obj.get("date"))
            out.append(ClaimRecord("flight", flight_key(number, day),
                                   ((number, date_text(day)), (number, day)),
                                   {"status": _status(str(obj["status"])),
                                    "amount": tuple(float(v) for v in (obj.get("prices") or {}).values()),
                                    "date": (day,),
                                    "time": (str(obj["departure_time"]), str(obj.get("arrival_time"))),
                                    "flight": (number,)}))
        elif obj.get("kind") in ("gift_card", "certificate") and isinstance(obj.get("id"), str):
            out.append(ClaimRecord(str(obj["kind"]), obj["id"], ((obj["id"],),),
                                   {"amount": (obj.get("balance"),)}))
    return out


def names_target(args: dict[str, Any], text: str) -> bool:
    """A confirmation request names a write's reservation by its booking code (with or without
    ``#``, any case), and names no other booking code."""
    if "reservation_id" not in args:
        return True
    return set(codes(text)) == {str(args["reservation_id"]).upper()}
