"""What a careful airline agent can tell the passenger, read from the tool results it has seen.

``report_facts`` is the airline side of ``Domain.report_facts``. It finds the reservation an
intent is about from the episode's evidence (a booking code, with or without ``#``; "my trip
to Denver": the one reservation read that flies there; "the booking for me and Hana Kim": the
one read with that passenger), or the flight ("flight HA482 on May 20"; "my flight to Denver":
the one leg of the reservations read that lands there), and returns the values its latest
tool output showed: the code as the tool spelled it, statuses and cabins verbatim, dates in
words, money as two decimals of what the write appended to the payment history. Nothing here
reads the blueprint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import Any

from trajforge.environments.airline.claims import bags_text, codes
from trajforge.environments.airline.data import AIRPORTS, cabin_text, date_text, money
from trajforge.environments.base import Observation, ReportFacts

_CITY_CODES = {city.lower(): code for code, (city, _) in AIRPORTS.items()}
_FLIGHT = re.compile(r"\b(HA\d{3})\b", re.IGNORECASE)
_MONTH_DAY = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|"
                        r"November|December) (\d{1,2})\b")


def _is_reservation(value: Any) -> bool:
    return isinstance(value, dict) and {"id", "legs", "passengers", "payment_history"} <= value.keys()


def _is_flight(value: Any) -> bool:
    return isinstance(value, dict) and {"flight_number", "date", "status", "departure_time"} <= value.keys()


def _city(text: str, after: str) -> str | None:
    """The airport code of the city named after ``after`` ("to Denver" -> "DEN")."""
    low = text.lower()
    for city, code in sorted(_CITY_CODES.items(), key=lambda x: -len(x[0])):
        if f"{after} {city}" in low:
            return code
    return None


def _iso(text: str) -> str | None:
    m = _MONTH_DAY.search(text)
    if not m:
        return None
    month = ("January February March April May June July August September October November "
             "December").split().index(m.group(1)) + 1
    return date(2024, month, int(m.group(2))).isoformat()


def _versions(observed: Sequence[Observation]) -> dict[str, list[tuple[int, dict[str, Any], str]]]:
    """Every version of every reservation the tools showed, oldest first: (index, record, tool)."""
    out: dict[str, list[tuple[int, dict[str, Any], str]]] = {}
    for i, obs in enumerate(observed):
        if obs.error is None and _is_reservation(obs.result):
            out.setdefault(obs.result["id"], []).append((i, obs.result, obs.tool))
    return out


def resolve_reservation(ref: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    """The latest version of the reservation ``ref`` names, among those the tools showed."""
    latest = {rid: versions[-1][1] for rid, versions in _versions(observed).items()}
    named = codes(ref)
    if named:
        return latest.get(named[0])
    found: list[dict[str, Any]] = []
    if _city(ref, "to"):
        found = [latest[rid] for rid in matching_reservations(ref, observed)]
    elif " and " in ref:
        name = ref.rsplit(" and ", 1)[1].strip().rstrip(".").lower()
        found = [r for r in latest.values()
                 if any(f"{p['first_name']} {p['last_name']}".lower() == name for p in r["passengers"])]
    return found[0] if len(found) == 1 else None


def matching_reservations(ref: str, observed: Sequence[Observation]) -> tuple[str, ...]:
    """The ids of the reservations the tools showed that "my trip to Denver" fits (their latest
    version flies there), in the order first shown."""
    destination = _city(ref, "to")
    if destination is None:
        return ()
    return tuple(rid for rid, versions in _versions(observed).items()
                 if versions[-1][1]["destination"] == destination)


def _flights(observed: Sequence[Observation]) -> dict[tuple[str, str], dict[str, Any]]:
    """The latest record of every flight the tools showed (searches included)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for obs in observed:
        if obs.error is not None:
            continue
        stack = [obs.result]
        while stack:
            value = stack.pop()
            if _is_flight(value):
                out[(value["flight_number"], value["date"])] = value
            elif isinstance(value, list):
                stack.extend(value)
    return out


def _flight_facts(flight: dict[str, Any]) -> dict[str, str]:
    return {"flight_number": str(flight["flight_number"]), "flight_date": date_text(flight["date"]),
            "flight_status": str(flight["status"]), "departure_time": str(flight["departure_time"]),
            "origin": AIRPORTS.get(flight["origin"], (flight["origin"], ""))[0]}


def _flight_status(slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    ref = slots.get("flight", "")
    flights = _flights(observed)
    m = _FLIGHT.search(ref)
    key: tuple[str, str] | None = None
    if m:
        day = _iso(ref)
        key = (m.group(1).upper(), day) if day else None
    else:
        destination = _city(ref, "to")
        legs = {(leg["flight_number"], leg["date"]) for r in
                (v[-1][1] for v in _versions(observed).values())
                if r["status"] == "active" for leg in r["legs"] if leg["destination"] == destination}
        key = next(iter(legs)) if len(legs) == 1 else None
    if key is None or key not in flights:
        return ReportFacts()
    return ReportFacts(_flight_facts(flights[key]), ("flight_number",))


def _written(rid: str, observed: Sequence[Observation], writes: frozenset[str]
             ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the reservation just before, the reservation as the last successful write returned it)."""
    versions = _versions(observed).get(rid, [])
    at = [j for j, (_, _, tool) in enumerate(versions) if tool in writes]
    if not at:
        return None, None
    j = at[-1]
    return (versions[j - 1][1] if j > 0 else None), versions[j][1]


def _appended(before: dict[str, Any] | None, after: dict[str, Any]) -> list[dict[str, Any]]:
    payments = list(after.get("payment_history", ()))
    return payments[len(before.get("payment_history", ())):] if before is not None else []


def _settled(new: list[dict[str, Any]]) -> tuple[str, str]:
    if not new:
        return money(0.0), "nothing to pay or refund"
    last = new[-1]
    return money(float(last["amount"])), ("refunded to your saved payment method" if last["kind"] == "refund"
                                          else "charged to your saved payment method")


def _change_facts(slots: dict[str, str], res: dict[str, Any],
                  observed: Sequence[Observation]) -> dict[str, str]:
    """The flight a change picks (the search's earliest or cheapest in the reservation's cabin)
    and its fare per passenger in that cabin, as the search showed it (``new_fare``)."""
    searches = [o for o in observed if o.error is None and o.tool == "search_direct_flights"
                and isinstance(o.result, list)]
    wish = slots.get("date", "")
    if not searches:
        return {}
    options = [f for f in searches[-1].result if _is_flight(f)]
    cabin = res["cabin"]
    if not options or cabin not in options[0].get("prices", {}):
        return {}
    def key(f: dict[str, Any]) -> Any:
        return f["prices"][cabin] if "cheapest" in wish else f["departure_time"]
    best = min(options, key=key)
    if sum(key(f) == key(best) for f in options) != 1:
        return {}
    return {"new_flight": str(best["flight_number"]), "new_date": date_text(best["date"]),
            "new_fare": money(best["prices"][cabin])}


def report_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation],
                 writes: frozenset[str]) -> ReportFacts:
    """The values of an intent's report placeholders, from this episode's tool results."""
    if kind == "flight_status":
        return _flight_status(slots, observed)
    ref = slots.get("reservation")
    res = resolve_reservation(ref, observed) if ref else None
    if res is None:
        return ReportFacts()
    facts = {"reservation_id": str(res["id"]), "status": str(res["status"]),
             "cabin": cabin_text(str(res["cabin"])), "booked": str(res["created_at"])[:10]}
    if kind == "change_flight":
        facts.update(_change_facts(slots, res, observed))
    before, after = _written(res["id"], observed, writes)
    if kind == "compensation":
        return ReportFacts({**facts, **_certificate(res, observed)}, ("reservation_id",))
    if after is None:
        return ReportFacts(facts, ("reservation_id",))
    new = _appended(before, after)
    facts.update(status=str(after["status"]), cabin=cabin_text(str(after["cabin"])))
    if kind == "change_flight":
        legs = after["legs"]
        facts.update(new_flight=str(legs[-1]["flight_number"]), new_date=date_text(legs[-1]["date"]))
    if kind in ("change_flight", "change_cabin"):
        facts["difference"], facts["settled"] = _settled(new)
    elif kind == "cancel_reservation":
        facts["refund"] = money(sum(float(p["amount"]) for p in new if p["kind"] == "refund"))
    elif kind in ("add_bags", "add_insurance"):
        facts["fee"] = money(sum(float(p["amount"]) for p in new if p["kind"] == "payment"))
        facts.update(bags=bags_text(int(after["total_baggages"])), nonfree=str(after["nonfree_baggages"]))
    elif kind == "update_passenger" and before is not None:
        changed = [p for p, q in zip(after["passengers"], before["passengers"], strict=False) if p != q]
        if changed:
            p = changed[0]
            facts["passenger_name"] = f"{p['first_name']} {p['last_name']}, born {p['date_of_birth']}"
    return ReportFacts(facts, ("reservation_id",))


def _certificate(res: dict[str, Any], observed: Sequence[Observation]) -> dict[str, str]:
    """The certificate the last send_certificate for this reservation added, and its flight."""
    for i in range(len(observed) - 1, -1, -1):
        obs = observed[i]
        if obs.tool != "send_certificate" or obs.error is not None \
                or obs.arguments.get("reservation_id") != res["id"] or not isinstance(obs.result, dict):
            continue
        before = next((o.result for o in reversed(observed[:i]) if o.error is None and isinstance(o.result, dict)
                       and o.result.get("id") == obs.result.get("id") and "payment_methods" in o.result), None)
        known = {m["id"] for m in (before or {}).get("payment_methods", [])}
        added = [m for m in obs.result.get("payment_methods", []) if m["id"] not in known]
        if not added:
            return {}
        return {"certificate_id": str(added[-1]["id"]), "amount": money(float(added[-1]["balance"])),
                "flight_number": str(obs.arguments.get("flight_number"))}
    return {}
