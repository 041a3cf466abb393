"""The airline policy: the text the agent reads, and the rules about single writes as code.

Every rule has an id. ``write_breaches`` (the toolkit's) names the rules a write would break in
the current state; the environment refuses such a write before the tool runs, and the policy
check replays the same function. Calls on unknown ids break no rule (the tools report them).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from trajforge.environments.airline.data import (
    BAG_FEE,
    COMPENSATION,
    FREE_BAGS,
    INSURANCE_FEE,
    NOW,
    NOW_TEXT,
    AirlineState,
    Flight,
    Reservation,
    departed,
    flight_key,
)
from trajforge.environments.kit import policy_text, standard_rules

CANCEL_REASONS = ("change of plan", "airline cancelled flight", "other")

RULES: dict[str, str] = {
    **standard_rules(user="passenger", identify="email, or by first name, last name and date of "
                                                "birth", owns="profile and reservations"),
    "not_departed": "A reservation any of whose flights has already departed (status departed or "
                    "landed) cannot be changed or cancelled in any way.",
    "basic_economy_no_change": "The flights of a basic economy reservation cannot be changed "
                               "(its cabin can be upgraded).",
    "cancel_window": "A reservation can be cancelled only if it was booked within the last 24 "
                     "hours, it has travel insurance, its cabin is business, or the airline "
                     "cancelled one of its flights.",
    "cancel_reason": "The cancellation reason must be 'change of plan', 'airline cancelled "
                     "flight' or 'other'.",
    "same_route": "A flight change keeps the reservation's origin, destination, trip type and "
                  "cabin: only the flights and dates change, to scheduled or delayed flights with "
                  "seats for every passenger in that cabin.",
    "cabin_differs": "A cabin change moves every flight of the reservation to one other cabin "
                     "with seats for every passenger; the fare difference is paid or refunded.",
    "payment_on_file": "Fare differences, bags and insurance are paid with a payment method saved "
                       "on the user's profile, and refunds go back to one.",
    "balance_covers": "A gift card or travel certificate can pay an amount only if its balance "
                      "covers it.",
    "bag_allowance": "Checked bags can be added, never removed. Each passenger flies with free "
                     "bags by membership and cabin (regular 0/1/2, silver 1/2/3, gold 2/3/3 in "
                     f"basic economy/economy/business); every other bag costs ${BAG_FEE}.",
    "insurance_once": f"Travel insurance (${INSURANCE_FEE} per passenger) can be added only to a "
                      "reservation that does not have it.",
    "compensation": "A travel certificate as compensation may be sent only for a flight of the "
                    "user's reservation that the airline cancelled or delayed, only to silver or "
                    "gold members, insured reservations or business passengers, and for at most "
                    f"${COMPENSATION['cancelled']} per passenger for a cancellation or "
                    f"${COMPENSATION['delayed']} per passenger for a delay.",
    "human_only": "Refunds of expenses (hotels, meals, rebooking elsewhere) and anything else "
                  "outside this policy are handled by human agents: transfer the user with a "
                  "summary of the request.",
}

# The rules each write tool is subject to (beyond authenticate, confirm and own_account).
TOOL_RULES: dict[str, tuple[str, ...]] = {
    "cancel_reservation": ("not_departed", "cancel_window", "cancel_reason"),
    "update_reservation_flights": ("not_departed", "basic_economy_no_change", "same_route",
                                   "payment_on_file", "balance_covers"),
    "update_reservation_cabin": ("not_departed", "cabin_differs", "payment_on_file",
                                 "balance_covers"),
    "update_reservation_baggages": ("not_departed", "bag_allowance", "payment_on_file",
                                    "balance_covers"),
    "add_travel_insurance": ("not_departed", "insurance_once", "payment_on_file", "balance_covers"),
    "update_passenger": ("not_departed",),
    "send_certificate": ("compensation",),
}

POLICY_TEXT = policy_text(
    "Airline customer service policy",
    "You are a customer service agent for Horizon Air. Help authenticated passengers with their "
    f"reservations, flights, bags and compensation. The current time is {NOW_TEXT}; all times "
    "are Eastern time. Be concise, never invent information, and use the tools for every fact "
    "and action.", RULES,
    "If a request is outside these rules, explain which rule stops it; transfer to a human agent "
    "only as the policy says.")


# --- facts the rules and tools share -----------------------------------------------------------

def booked_within_day(reservation: Reservation) -> bool:
    return datetime.fromisoformat(reservation.created_at) >= datetime.fromisoformat(NOW) - timedelta(hours=24)


def leg_flights(state: AirlineState, reservation: Reservation) -> list[Flight]:
    return [f for leg in reservation.legs
            if (f := state.flights.get(flight_key(leg.flight_number, leg.date))) is not None]


def has_departed(state: AirlineState, reservation: Reservation) -> bool:
    return any(departed(f) for f in leg_flights(state, reservation))


def airline_cancelled(state: AirlineState, reservation: Reservation) -> bool:
    return any(f.status == "cancelled" for f in leg_flights(state, reservation))


def cancellable(state: AirlineState, reservation: Reservation) -> bool:
    return (booked_within_day(reservation) or reservation.insurance
            or reservation.cabin == "business" or airline_cancelled(state, reservation))


def net_payments(reservation: Reservation) -> dict[str, float]:
    """What each payment method has paid for the reservation, refunds taken off."""
    out: dict[str, float] = {}
    for p in reservation.payment_history:
        signed = p.amount if p.kind == "payment" else -p.amount
        out[p.payment_id] = round(out.get(p.payment_id, 0.0) + signed, 2)
    return out


def free_bags(state: AirlineState, reservation: Reservation) -> int:
    user = state.users[reservation.user_id]
    return FREE_BAGS[user.membership][reservation.cabin] * len(reservation.passengers)


def new_flights(state: AirlineState, numbers: list[str], dates: list[str]) -> list[Flight] | None:
    """The flights named, or None when one of them does not exist."""
    if len(numbers) != len(dates) or not numbers:
        return None
    out = [state.flights.get(flight_key(n, d)) for n, d in zip(numbers, dates, strict=True)]
    return None if any(f is None for f in out) else [f for f in out if f is not None]


def route_ok(reservation: Reservation, flights: list[Flight]) -> bool:
    """The flights make the reservation's trip: its origin to its destination (and back, for a
    round trip), each leg starting where the last one ended, later the same day or after."""
    for a, b in zip(flights, flights[1:], strict=False):
        if a.destination != b.origin or (b.date, b.departure_time) <= (a.date, a.arrival_time):
            return False
    if flights[0].origin != reservation.origin:
        return False
    ends = [f.destination for f in flights]
    if reservation.trip_type == "one_way":
        return ends[-1] == reservation.destination and reservation.origin not in ends
    return reservation.destination in ends[:-1] and ends[-1] == reservation.origin


def bookable(flight: Flight, cabin: str, passengers: int) -> bool:
    return flight.status in ("scheduled", "delayed") and flight.seats_left.get(cabin, 0) >= passengers


def flights_difference(reservation: Reservation, flights: list[Flight]) -> float:
    """New minus old fare for every passenger (positive: the passenger pays)."""
    n = len(reservation.passengers)
    new = sum(f.prices[reservation.cabin] for f in flights)
    old = sum(leg.price for leg in reservation.legs)
    return float((new - old) * n)


def cabin_difference(state: AirlineState, reservation: Reservation, cabin: str) -> float:
    n = len(reservation.passengers)
    flights = leg_flights(state, reservation)
    new = sum(f.prices.get(cabin, 0) for f in flights)
    old = sum(leg.price for leg in reservation.legs)
    return float((new - old) * n)


def bag_fee(reservation: Reservation, nonfree: int) -> float:
    return float(BAG_FEE * (nonfree - reservation.nonfree_baggages))


def compensation_cap(state: AirlineState, reservation: Reservation, number: str, day: str) -> int:
    flight = state.flights.get(flight_key(number, day))
    if flight is None or flight.status not in COMPENSATION:
        return 0
    return COMPENSATION[flight.status] * len(reservation.passengers)


def compensation_eligible(state: AirlineState, reservation: Reservation, number: str, day: str) -> bool:
    user = state.users[reservation.user_id]
    in_reservation = any(leg.flight_number == number and leg.date == day for leg in reservation.legs)
    return (in_reservation and compensation_cap(state, reservation, number, day) > 0
            and (user.membership in ("silver", "gold") or reservation.insurance
                 or reservation.cabin == "business"))


def charge_of(state: AirlineState, name: str, reservation: Reservation, args: dict[str, Any]) -> float | None:
    """What a write would charge (positive) or refund (negative) through its payment method."""
    if name == "update_reservation_flights":
        flights = new_flights(state, list(args.get("flight_numbers", [])), list(args.get("dates", [])))
        return flights_difference(reservation, flights) if flights else None
    if name == "update_reservation_cabin":
        return cabin_difference(state, reservation, str(args.get("cabin")))
    if name == "update_reservation_baggages":
        return bag_fee(reservation, int(args.get("nonfree_baggages", 0)))
    if name == "add_travel_insurance":
        return float(INSURANCE_FEE * len(reservation.passengers))
    return None


def write_breaches(state: AirlineState, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(rule, message) for each rule the write would break."""
    out: list[tuple[str, str]] = []
    if name == "send_certificate":
        reservation = state.reservations.get(str(args.get("reservation_id", "")))
        if reservation is None or str(args.get("user_id")) not in state.users:
            return []
        number, day = str(args.get("flight_number", "")), str(args.get("date", ""))
        amount = float(args.get("amount", 0))
        if not compensation_eligible(state, reservation, number, day):
            out.append(("compensation", f"flight {number} on {day} of {reservation.id} earns no compensation"))
        elif amount > compensation_cap(state, reservation, number, day) + 1e-9 or amount <= 0:
            out.append(("compensation", f"${amount:.2f} is not an allowed compensation"))
        return out
    reservation = state.reservations.get(str(args.get("reservation_id", "")))
    if reservation is None or name not in TOOL_RULES:
        return []
    if has_departed(state, reservation):
        out.append(("not_departed", f"a flight of reservation {reservation.id} has already departed"))
    if name == "cancel_reservation":
        if not cancellable(state, reservation):
            out.append(("cancel_window", f"reservation {reservation.id} cannot be cancelled"))
        if args.get("reason") not in CANCEL_REASONS:
            out.append(("cancel_reason", f"reason {args.get('reason')!r} is not allowed"))
        return out
    if name == "update_reservation_flights":
        if reservation.cabin == "basic_economy":
            out.append(("basic_economy_no_change", f"reservation {reservation.id} is basic economy"))
        flights = new_flights(state, list(args.get("flight_numbers", [])), list(args.get("dates", [])))
        if flights is not None:
            n = len(reservation.passengers)
            held = {flight_key(leg.flight_number, leg.date) for leg in reservation.legs}
            if not route_ok(reservation, flights) or not all(
                    bookable(f, reservation.cabin, n) for f in flights
                    if flight_key(f.flight_number, f.date) not in held):
                out.append(("same_route", "the new flights do not make the same trip in the same cabin"))
    elif name == "update_reservation_cabin":
        cabin = str(args.get("cabin"))
        n = len(reservation.passengers)
        if cabin == reservation.cabin or not all(bookable(f, cabin, n)
                                                 for f in leg_flights(state, reservation)):
            out.append(("cabin_differs", f"cabin {cabin} is not another cabin with seats"))
    elif name == "update_reservation_baggages":
        total, nonfree = int(args.get("total_baggages", 0)), int(args.get("nonfree_baggages", 0))
        if total < reservation.total_baggages or nonfree != max(0, total - free_bags(state, reservation)):
            out.append(("bag_allowance", f"{total} bags with {nonfree} paid breaks the allowance"))
    elif name == "add_travel_insurance" and reservation.insurance:
        out.append(("insurance_once", f"reservation {reservation.id} already has insurance"))
    if "payment_id" in args:
        user = state.users[reservation.user_id]
        method = user.payment_method(str(args["payment_id"]))
        charge = charge_of(state, name, reservation, args)
        if method is None:
            out.append(("payment_on_file", f"{args['payment_id']} is not on the user's profile"))
        elif charge is not None and charge > 0 and method.kind != "credit_card" \
                and (method.balance or 0.0) + 1e-9 < charge:
            out.append(("balance_covers", f"{method.id} cannot cover ${charge:.2f}"))
    return out
