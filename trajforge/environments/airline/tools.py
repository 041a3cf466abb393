"""The airline toolkit: 11 reads, 7 writes. Writes replace records (copy-on-write)."""

from __future__ import annotations

import ast
import operator
import zlib
from typing import Any, Literal

from trajforge.environments.airline.data import (
    INSURANCE_FEE,
    NOW_TEXT,
    AirlineState,
    Flight,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    User,
    flight_key,
)
from trajforge.environments.airline.policy import (
    bag_fee,
    cabin_difference,
    flights_difference,
    leg_flights,
    net_payments,
    new_flights,
    write_breaches,
)
from trajforge.environments.base import ToolKind, Toolkit, tool
from trajforge.environments.kit import find, parse_python
from trajforge.errors import ToolError

_OPS: dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                         ast.Div: operator.truediv, ast.USub: operator.neg, ast.UAdd: operator.pos}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_evaluate(node.operand)))
    raise ToolError("only numbers, + - * / and parentheses are allowed")


class AirlineTools(Toolkit):
    state: AirlineState

    # --- helpers (not tools) ---
    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        return write_breaches(self.state, name, args)

    def _user(self, user_id: str) -> User:
        return find(self.state.users, user_id, "user")

    def _reservation(self, reservation_id: str, *, active: bool = True) -> Reservation:
        reservation = self.state.reservations.get(reservation_id)
        if reservation is None:
            raise ToolError(f"reservation {reservation_id} not found")
        if active and reservation.status == "cancelled":
            raise ToolError(f"reservation {reservation_id} is cancelled")
        return reservation

    def _airport(self, code: str) -> str:
        code = code.strip().upper()
        if code not in self.state.airports:
            raise ToolError(f"no airport with code {code}")
        return code

    def _pay(self, reservation: Reservation, payment_id: str, amount: float, note: str) -> tuple[Payment, ...]:
        """Charge (amount > 0) or refund (amount < 0) a method of the owner; the new payment history."""
        user = self.state.users[reservation.user_id]
        method = user.payment_method(payment_id)
        if method is None:
            raise ToolError(f"payment method {payment_id} not found for user {user.id}")
        if method.kind != "credit_card" and amount != 0:
            updated = method.model_copy(update={"balance": round((method.balance or 0.0) - amount, 2)})
            methods = tuple(updated if m.id == payment_id else m for m in user.payment_methods)
            self.state.users[user.id] = user.model_copy(update={"payment_methods": methods})
        payment = Payment(payment_id=payment_id, kind="payment" if amount >= 0 else "refund",
                          amount=round(abs(amount), 2), note=note)
        return reservation.payment_history + (payment,)

    def _put(self, reservation: Reservation, **changes: Any) -> Reservation:
        new = reservation.model_copy(update=changes)
        self.state.reservations[reservation.id] = new
        return new

    def _take_seats(self, flights: list[Flight], cabin: str, n: int) -> None:
        for f in flights:
            seats = dict(f.seats_left)
            seats[cabin] = max(0, seats.get(cabin, 0) - n)
            self.state.flights[flight_key(f.flight_number, f.date)] = f.model_copy(update={"seats_left": seats})

    # --- reads ---
    @tool(ToolKind.read)
    def find_user_id_by_email(self, email: str) -> str:
        """Find a user's id by the email address on their profile.

        Args:
            email: The user's email, e.g. "ava.smith123@example.com".
        """
        wanted = email.strip().lower()
        for user in self.state.users.values():
            if user.email == wanted:
                return user.id
        raise ToolError(f"no user with email {email}")

    @tool(ToolKind.read)
    def find_user_id_by_name_dob(self, first_name: str, last_name: str, date_of_birth: str) -> str:
        """Find a user's id by first name, last name and date of birth.

        Args:
            first_name: The user's first name, e.g. "Ava".
            last_name: The user's last name, e.g. "Smith".
            date_of_birth: The user's date of birth as YYYY-MM-DD, e.g. "1987-04-12".
        """
        key = (first_name.strip().lower(), last_name.strip().lower(), date_of_birth.strip())
        for user in self.state.users.values():
            if (user.first_name.lower(), user.last_name.lower(), user.date_of_birth) == key:
                return user.id
        raise ToolError("no user with that name and date of birth")

    @tool(ToolKind.read)
    def get_user_details(self, user_id: str) -> User:
        """Get a user's profile: name, email, date of birth, membership tier, saved payment methods
        (credit cards, gift cards and travel certificates with balances) and reservation codes.

        Args:
            user_id: The user's id, e.g. "ava_smith_1234".
        """
        return self._user(user_id)

    @tool(ToolKind.read)
    def get_reservation_details(self, reservation_id: str) -> Reservation:
        """Get a reservation: route, trip type, cabin, flights with dates, fares and seats,
        passengers, bags, insurance, payments and when it was booked.

        Args:
            reservation_id: The six-character booking code, e.g. "KQ482T".
        """
        return self._reservation(reservation_id, active=False)

    @tool(ToolKind.read)
    def search_direct_flights(self, origin: str, destination: str, date: str) -> list[Flight]:
        """Search the direct flights between two airports on a date that can still be booked
        (scheduled or delayed), with fares and seats left per cabin.

        Args:
            origin: The origin airport code, e.g. "JFK".
            destination: The destination airport code, e.g. "LAX".
            date: The date as YYYY-MM-DD, e.g. "2024-05-20".
        """
        a, b = self._airport(origin), self._airport(destination)
        return [f for f in self.state.flights.values() if f.origin == a and f.destination == b
                and f.date == date and f.status in ("scheduled", "delayed")]

    @tool(ToolKind.read)
    def search_onestop_flights(self, origin: str, destination: str, date: str) -> list[list[Flight]]:
        """Search pairs of flights with one connection between two airports on a date (the
        second leaves the connecting airport after the first arrives), both still bookable.

        Args:
            origin: The origin airport code, e.g. "JFK".
            destination: The destination airport code, e.g. "LAX".
            date: The date as YYYY-MM-DD, e.g. "2024-05-20".
        """
        a, b = self._airport(origin), self._airport(destination)
        day = [f for f in self.state.flights.values() if f.date == date
               and f.status in ("scheduled", "delayed")]
        return [[f, g] for f in day if f.origin == a and f.destination != b
                for g in day if g.origin == f.destination and g.destination == b
                and g.departure_time > f.arrival_time]

    @tool(ToolKind.read)
    def get_flight_status(self, flight_number: str, date: str) -> Flight:
        """Get a flight on a date: its route, scheduled times, status (scheduled, delayed,
        cancelled, departed or landed), fares and seats left per cabin.

        Args:
            flight_number: The flight number, e.g. "HA123".
            date: The date as YYYY-MM-DD, e.g. "2024-05-20".
        """
        flight = self.state.flights.get(flight_key(flight_number.strip().upper(), date.strip()))
        if flight is None:
            raise ToolError(f"no flight {flight_number} on {date}")
        return flight

    @tool(ToolKind.read)
    def list_airports(self) -> dict[str, str]:
        """List the airports the airline flies to, as a map from airport code to city."""
        return {a.code: a.city for a in self.state.airports.values()}

    @tool(ToolKind.read)
    def get_current_time(self) -> str:
        """Get the current date and time (Eastern time)."""
        return NOW_TEXT

    @tool(ToolKind.read)
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression, e.g. a fare difference; the result has two decimals.

        Args:
            expression: Numbers with + - * / and parentheses, e.g. "(312 - 245) * 2".
        """
        try:
            tree = parse_python(expression, mode="eval")
            return f"{_evaluate(tree):.2f}"
        except (SyntaxError, ZeroDivisionError):
            raise ToolError(f"cannot evaluate {expression!r}") from None

    @tool(ToolKind.read)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the passenger's request.

        Args:
            summary: What the passenger needs and what was found.
        """
        return "Transfer successful"

    # --- writes ---
    @tool(ToolKind.write)
    def cancel_reservation(self, reservation_id: str, reason: str) -> Reservation:
        """Cancel a whole reservation and refund every payment to the method it came from.

        Args:
            reservation_id: The booking code, e.g. "KQ482T".
            reason: One of "change of plan", "airline cancelled flight", "other".
        """
        reservation = self._reservation(reservation_id)
        history = reservation.payment_history
        for method_id, amount in net_payments(reservation).items():
            if amount > 0:
                history = self._pay(reservation.model_copy(update={"payment_history": history}),
                                    method_id, -amount, "refund")
        return self._put(reservation, status="cancelled", cancel_reason=reason, payment_history=history)

    @tool(ToolKind.write)
    def update_reservation_flights(self, reservation_id: str, flight_numbers: list[str],
                                   dates: list[str], payment_id: str) -> Reservation:
        """Replace the flights of a reservation (same trip and cabin), paying or refunding the
        fare difference for every passenger through payment_id.

        Args:
            reservation_id: The booking code, e.g. "KQ482T".
            flight_numbers: The new flights in travel order, e.g. ["HA123", "HA456"].
            dates: The date of each new flight, as YYYY-MM-DD, in the same order.
            payment_id: The saved payment method for the difference, e.g. "credit_card_1234567".
        """
        reservation = self._reservation(reservation_id)
        flights = new_flights(self.state, flight_numbers, dates)
        if flights is None:
            raise ToolError("flight_numbers and dates must pair up and name existing flights")
        diff = flights_difference(reservation, flights)
        history = self._pay(reservation, payment_id, diff, "flight change")
        n = len(reservation.passengers)
        old_seats = [leg.seats for leg in reservation.legs]
        legs = tuple(
            type(reservation.legs[0])(flight_number=f.flight_number, date=f.date, origin=f.origin,
                                      destination=f.destination, price=f.prices[reservation.cabin],
                                      seats=old_seats[i] if i < len(old_seats) else old_seats[-1])
            for i, f in enumerate(flights))
        held = {flight_key(leg.flight_number, leg.date) for leg in reservation.legs}
        self._take_seats([f for f in flights if flight_key(f.flight_number, f.date) not in held],
                         reservation.cabin, n)
        return self._put(reservation, legs=legs, payment_history=history)

    @tool(ToolKind.write)
    def update_reservation_cabin(self, reservation_id: str,
                                 cabin: Literal["basic_economy", "economy", "business"],
                                 payment_id: str) -> Reservation:
        """Move every flight of a reservation to another cabin, paying or refunding the fare
        difference for every passenger through payment_id.

        Args:
            reservation_id: The booking code, e.g. "KQ482T".
            cabin: The new cabin: "basic_economy", "economy" or "business".
            payment_id: The saved payment method for the difference, e.g. "credit_card_1234567".
        """
        reservation = self._reservation(reservation_id)
        diff = cabin_difference(self.state, reservation, cabin)
        history = self._pay(reservation, payment_id, diff, "cabin change")
        flights = {flight_key(f.flight_number, f.date): f for f in leg_flights(self.state, reservation)}
        legs = tuple(leg.model_copy(update={"price": flights[flight_key(leg.flight_number, leg.date)].prices[cabin]})
                     for leg in reservation.legs)
        self._take_seats(list(flights.values()), cabin, len(reservation.passengers))
        return self._put(reservation, cabin=cabin, legs=legs, payment_history=history)

    @tool(ToolKind.write)
    def update_reservation_baggages(self, reservation_id: str, total_baggages: int,
                                    nonfree_baggages: int, payment_id: str) -> Reservation:
        """Set the checked bags of a reservation; the bags beyond the free allowance are paid
        through payment_id.

        Args:
            reservation_id: The booking code, e.g. "KQ482T".
            total_baggages: The new total number of checked bags for all passengers.
            nonfree_baggages: How many of them are beyond the free allowance.
            payment_id: The saved payment method for the bag fees, e.g. "credit_card_1234567".
        """
        reservation = self._reservation(reservation_id)
        if total_baggages < 0 or nonfree_baggages < 0 or nonfree_baggages > total_baggages:
            raise ToolError("bag counts must be non-negative, nonfree at most total")
        history = self._pay(reservation, payment_id, bag_fee(reservation, nonfree_baggages), "bags")
        return self._put(reservation, total_baggages=total_baggages,
                         nonfree_baggages=nonfree_baggages, payment_history=history)

    @tool(ToolKind.write)
    def add_travel_insurance(self, reservation_id: str, payment_id: str) -> Reservation:
        """Add travel insurance to a reservation, $30 per passenger, paid through payment_id.

        Args:
            reservation_id: The booking code, e.g. "KQ482T".
            payment_id: The saved payment method to pay with, e.g. "credit_card_1234567".
        """
        reservation = self._reservation(reservation_id)
        history = self._pay(reservation, payment_id,
                            float(INSURANCE_FEE * len(reservation.passengers)), "insurance")
        return self._put(reservation, insurance=True, payment_history=history)

    @tool(ToolKind.write)
    def update_passenger(self, reservation_id: str, passenger_number: int, first_name: str,
                         last_name: str, date_of_birth: str) -> Reservation:
        """Correct the name and date of birth of one passenger of a reservation (the number of
        passengers never changes).

        Args:
            reservation_id: The booking code, e.g. "KQ482T".
            passenger_number: The passenger's position in the reservation, starting at 1.
            first_name: The corrected first name.
            last_name: The corrected last name.
            date_of_birth: The corrected date of birth, YYYY-MM-DD.
        """
        reservation = self._reservation(reservation_id)
        if not 1 <= passenger_number <= len(reservation.passengers):
            raise ToolError(f"reservation {reservation_id} has no passenger {passenger_number}")
        passengers = list(reservation.passengers)
        passengers[passenger_number - 1] = Passenger(first_name=first_name, last_name=last_name,
                                                     date_of_birth=date_of_birth)
        return self._put(reservation, passengers=tuple(passengers))

    @tool(ToolKind.write)
    def send_certificate(self, user_id: str, reservation_id: str, flight_number: str, date: str,
                         amount: float) -> User:
        """Send a travel certificate to a user as compensation for a cancelled or delayed flight
        of their reservation; it is added to their payment methods.

        Args:
            user_id: The user's id, e.g. "ava_smith_1234".
            reservation_id: The booking code of the affected reservation, e.g. "KQ482T".
            flight_number: The affected flight, e.g. "HA123".
            date: The affected flight's date, YYYY-MM-DD.
            amount: The certificate's value in dollars.
        """
        user = self._user(user_id)
        reservation = self._reservation(reservation_id)
        if reservation.user_id != user_id:
            raise ToolError(f"reservation {reservation_id} is not {user_id}'s")
        digits = zlib.crc32(f"{reservation_id}/{flight_number}/{date}".encode()) % 10_000_000
        method = PaymentMethod(id=f"certificate_{digits:07d}", kind="certificate", balance=round(amount, 2))
        if user.payment_method(method.id) is not None:
            raise ToolError(f"a certificate was already sent for {flight_number} on {date}")
        updated = user.model_copy(update={"payment_methods": user.payment_methods + (method,)})
        self.state.users[user_id] = updated
        return updated
