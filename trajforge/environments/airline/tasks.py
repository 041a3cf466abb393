"""Sampling airline tasks: a passenger, 1-4 intents, and the ground-truth calls that fulfil them.

Each intent is built against a working environment that already holds the effects of the
intents before it, and its calls run there at once, so outputs (fare differences, refunds, bag
fees) are real results. A reservation is named by its booking code or by description ("my trip
to Denver", "the booking for me and Hana Kim"); a description costs the agent a read of every
reservation on the profile (the intent's evidence burden). Where another reservation the intent
could act on flies to the same city, the user may say "my trip to Denver" first and give the
code only when the agent asks which one (a clarify step). Most intents read more than they
write: the reservation, the flights' statuses, a search, a calculation.

Two kinds end without a write: ``cancel_refused`` (the reads show the reservation cannot be
cancelled, and the report says why) and ``expense_transfer`` (reads, then a hand-over to a
human agent, which ends the task).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from trajforge.environments.airline.data import (
    AIRPORTS,
    AirlineState,
    Flight,
    Reservation,
    User,
    cabin_text,
    date_text,
    flight_key,
    money,
)
from trajforge.environments.airline.policy import (
    CANCEL_REASONS,
    bookable,
    booked_within_day,
    cabin_difference,
    cancellable,
    compensation_cap,
    compensation_eligible,
    free_bags,
    has_departed,
    leg_flights,
    net_payments,
)
from trajforge.environments.base import Environment
from trajforge.environments.kit import P_AMBIGUOUS, KindMix, TaskBuilder, draw_intents
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

READ_ONLY_KINDS = ("flight_status", "cancel_refused", "expense_transfer")
WRITE_KINDS = ("change_flight", "change_cabin", "cancel_reservation", "add_bags", "add_insurance",
               "update_passenger", "compensation", "cancel_refused", "expense_transfer")
KINDS = KindMix(READ_ONLY_KINDS, WRITE_KINDS,
                weights={"change_flight": 4, "change_cabin": 3, "cancel_reservation": 3, "add_bags": 3,
                         "add_insurance": 2, "update_passenger": 2, "compensation": 2,
                         "cancel_refused": 2, "expense_transfer": 1},
                once=frozenset({"expense_transfer"}), final=frozenset({"expense_transfer"}))
CHOICES = ("the earliest direct flight", "the cheapest direct flight")

# the share of descriptions of a reservation ("my trip to Denver") that fit another reservation
# the same intent could act on (same destination, active and eligible), where one can (a clarify
# step; otherwise the description names it alone), and the intents that take them: a write whose
# outputs follow the write, so asking which reservation comes between the reads and it
CLARIFIED_KINDS = frozenset({"change_flight", "change_cabin", "cancel_reservation", "add_bags",
                             "add_insurance", "update_passenger", "compensation"})


def choose_flight(flights: list[Flight], cabin: str, choice: str) -> Flight | None:
    """The flight a wish like "the cheapest direct flight" picks among ``flights`` (None on a tie)."""
    if not flights:
        return None
    def key(f: Flight) -> Any:
        return f.prices[cabin] if "cheapest" in choice else f.departure_time
    best = min(flights, key=key)
    return best if sum(key(f) == key(best) for f in flights) == 1 else None


class _Builder(TaskBuilder):
    """Builds one task for one user (``used``: the reservations its intents took)."""

    def __init__(self, env: Environment, rng: random.Random, user: User,
                 p_indirect: float, p_revision: float, p_redirect: float) -> None:
        super().__init__(env, rng)
        self.user = user
        self.p_indirect, self.p_revision, self.p_redirect = p_indirect, p_revision, p_redirect
        self.eligible: Callable[[Reservation], bool] | None = None  # what it may act on (``pick``)

    @property
    def state(self) -> AirlineState:
        return self.env.state  # type: ignore[return-value]

    def reservations(self) -> list[Reservation]:
        return [self.state.reservations[r] for r in self.user.reservations]

    def refresh(self) -> None:
        self.user = self.state.users[self.user.id]

    # --- references --------------------------------------------------------------------------

    def describe(self, reservation: Reservation) -> str | None:
        """A description that picks ``reservation`` alone among the user's reservations."""
        others = [r for r in self.reservations() if r.id != reservation.id]
        options = []
        city = AIRPORTS[reservation.destination][0]
        if all(r.destination != reservation.destination for r in others):
            options.append(f"my trip to {city}")
        for p in reservation.passengers[1:] if reservation.passengers[0].first_name == self.user.first_name \
                and reservation.passengers[0].last_name == self.user.last_name else ():
            name = f"{p.first_name} {p.last_name}"
            if all(all(f"{q.first_name} {q.last_name}" != name for q in r.passengers) for r in others) \
                    and sum(f"{q.first_name} {q.last_name}" == name for q in reservation.passengers) == 1:
                options.append(f"the booking for me and {name}")
        return self.rng.choice(options) if options else None

    def reservation_ref(self, reservation: Reservation) -> tuple[str, list[DraftCall], int]:
        """How the user names the reservation, the reads that resolve it, and their count. When
        the user's first words for it ("my trip to Denver") fit another reservation this intent
        could act on as well, the user gives its code once asked (``self.clarify``: what they
        say first)."""
        mine = self.reservations()
        self.clarify = None
        if len(mine) > 1 and self.rng.random() < self.p_indirect:
            # drawn only where the words can be ambiguous, so other tasks keep their draws
            if self.kind in CLARIFIED_KINDS and self._rivalled(reservation, mine) and \
                    (self.rng.random() < P_AMBIGUOUS if self.clarify_plan is None else self.clarify_plan):
                self.clarify = ("reservation", f"my trip to {AIRPORTS[reservation.destination][0]}")
                return reservation.id, self._read_all(mine), len(mine)
            ref = self.describe(reservation)
            if ref:
                return ref, self._read_all(mine), len(mine)
        return reservation.id, self.read_call("get_reservation_details",
                                              {"reservation_id": reservation.id}, ("reservation",)), 1

    def _rivalled(self, reservation: Reservation, mine: list[Reservation]) -> bool:
        """Whether another of the user's reservations flies to the same place and is one this
        intent could act on too (``pick``'s filter), so "my trip to <city>" is truly ambiguous."""
        eligible = self.eligible
        return eligible is not None and any(
            r.id != reservation.id and r.destination == reservation.destination
            and r.status == reservation.status and eligible(r) for r in mine)

    def _read_all(self, mine: list[Reservation]) -> list[DraftCall]:
        """The reads a description of a reservation costs: every reservation it could mean."""
        return [c for r in mine for c in self.read_call(
            "get_reservation_details", {"reservation_id": r.id}, ("reservation",))]

    def pick(self, fits: Callable[[Reservation], bool], why: str) -> Reservation:
        self.eligible = fits
        options = [r for r in self.reservations() if r.status == "active" and r.id not in self.used
                   and fits(r)]
        if not options:
            raise TaskRejected("no_eligible_reservation", why)
        reservation = self.rng.choice(options)
        self.used.add(reservation.id)
        return reservation

    def status_reads(self, reservation: Reservation, needs: tuple[str, ...]) -> list[DraftCall]:
        return [c for leg in reservation.legs for c in self.read_call(
            "get_flight_status", {"flight_number": leg.flight_number, "date": leg.date}, needs)]

    def method_text(self, method_id: str) -> str:
        method = self.user.payment_method(method_id)
        assert method is not None
        if method.kind == "gift_card":
            return "my gift card"
        if method.kind == "certificate":
            return "my travel certificate"
        return f"my {method.brand} card ending in {method.last_four}"

    def payment_options(self, amount: float) -> list[str]:
        """Saved methods the user can name unambiguously that can pay ``amount``."""
        kinds = Counter(m.kind for m in self.user.payment_methods)
        texts = Counter(self.method_text(m.id) for m in self.user.payment_methods)
        out = []
        for m in self.user.payment_methods:
            if texts[self.method_text(m.id)] > 1 or (m.kind != "credit_card" and kinds[m.kind] > 1):
                continue
            if m.kind != "credit_card" and amount > 0 and (m.balance or 0.0) < amount:
                continue
            out.append(m.id)
        return out

    def payment(self, amount: float) -> tuple[str, tuple[str, str] | None]:
        """A method to pay ``amount`` with, and maybe a revision (another method said first)."""
        options = self.payment_options(amount)
        if not options:
            raise TaskRejected("no_payment_method", f"{amount:.2f}")
        method = self.rng.choice(options)
        revision = None
        others = [o for o in options if o != method]
        if others and self.rng.random() < self.p_revision:
            revision = ("payment", self.method_text(self.rng.choice(others)))
        return method, revision

    # --- intents -----------------------------------------------------------------------------

    def build(self, kind: str) -> DraftIntent:
        self.eligible = None  # set by pick for this intent
        return super().build(kind)

    def _open(self, r: Reservation) -> bool:
        return not has_departed(self.state, r)

    def _flight_status(self) -> DraftIntent:
        legs = [(r, leg) for r in self.reservations() if r.status == "active" for leg in r.legs]
        if not legs:
            raise TaskRejected("no_flight", self.user.id)
        reservation, leg = self.rng.choice(legs)
        city = AIRPORTS[leg.destination][0]
        calls: list[DraftCall] = []
        burden = 1
        same_city = [x for _, x in legs if x.destination == leg.destination]
        mine = self.reservations()
        if len(same_city) == 1 and self.rng.random() < self.p_indirect:
            ref = f"my flight to {city}"
            calls = [c for r in mine for c in self.read_call(
                "get_reservation_details", {"reservation_id": r.id}, ("flight",))]
            burden = len(mine) + 1
        else:
            ref = f"flight {leg.flight_number} on {date_text(leg.date)}"
        status = self.read_call("get_flight_status", {"flight_number": leg.flight_number, "date": leg.date},
                                ("flight",))
        if not status:
            raise TaskRejected("already_read", leg.flight_number)
        calls += status
        flight = self.state.flights[flight_key(leg.flight_number, leg.date)]
        return DraftIntent("flight_status", {"flight": ref}, calls,
                           [DraftOutput("flight_status", flight.status, len(calls) - 1)], burden)

    def _cancel_refused(self) -> DraftIntent:
        reservation = self.pick(lambda r: self._open(r) and not cancellable(self.state, r),
                                "not cancellable")
        ref, reads, burden = self.reservation_ref(reservation)
        at = [i for i, c in enumerate(reads) if c.arguments.get("reservation_id") == reservation.id]
        if not at:
            raise TaskRejected("already_read", reservation.id)
        calls = reads + self.status_reads(reservation, ("reservation",))
        # the write asked for (its reason fixed: no draw, the other tasks stay as they were)
        refused = DraftCall("cancel_reservation", {"reservation_id": reservation.id, "reason": "change of plan"},
                            "write", ("reservation",))
        return DraftIntent("cancel_refused", {"reservation": ref}, calls,
                           [DraftOutput("booked", reservation.created_at[:10], at[0])], burden,
                           refused=[refused])

    def _disrupted(self, r: Reservation) -> list[Flight]:
        return [f for f in leg_flights(self.state, r) if f.status in ("cancelled", "delayed")]

    def _expense_transfer(self) -> DraftIntent:
        reservation = self.pick(lambda r: bool(self._disrupted(r)), "no disrupted flight")
        ref, reads, burden = self.reservation_ref(reservation)
        flight = self._disrupted(reservation)[0]
        expense = self.rng.choice(("a hotel night", "meals at the airport", "a taxi to another airport",
                                   "a rental car"))
        calls = reads + self.status_reads(reservation, ("reservation",))
        summary = (f"User {self.user.id} asks to be reimbursed for {expense} after flight "
                   f"{flight.flight_number} on {flight.date} of reservation {reservation.id} was "
                   f"{flight.status}; expense refunds are handled by human agents.")
        calls.append(DraftCall("transfer_to_human_agents", {"summary": summary}, "read",
                               ("reservation", "expense")))
        return DraftIntent("expense_transfer", {"reservation": ref, "expense": expense}, calls, [], burden)

    def _change_flight(self) -> DraftIntent:
        def fits(r: Reservation) -> bool:
            return self._open(r) and r.cabin != "basic_economy"
        reservation = self.pick(fits, "changeable")
        leg = reservation.legs[-1]  # the only leg of a one-way trip, the return of a round trip
        earliest = reservation.legs[0].date if len(reservation.legs) > 1 else "2024-05-16"
        n = len(reservation.passengers)
        days = sorted({f.date for f in self.state.flights.values()
                       if f.origin == leg.origin and f.destination == leg.destination
                       and f.date > earliest and f.date != leg.date})
        self.rng.shuffle(days)
        choice = self.rng.choice(CHOICES)
        for day in days[:6]:
            options = [f for f in self.state.flights.values() if f.origin == leg.origin
                       and f.destination == leg.destination and f.date == day
                       and f.status in ("scheduled", "delayed")]
            new = choose_flight(options, reservation.cabin, choice)
            if new is not None and bookable(new, reservation.cabin, n):
                break
        else:
            raise TaskRejected("no_new_flight", reservation.id)
        ref, reads, burden = self.reservation_ref(reservation)
        reads += self.read_call("search_direct_flights", {"origin": leg.origin, "destination": leg.destination,
                                                          "date": new.date}, ("reservation", "date"))
        diff = (new.prices[reservation.cabin] - leg.price) * n
        reads += self.read_call("calculate", {"expression": f"({new.prices[reservation.cabin]} - {leg.price}) * {n}"},
                                ("reservation", "date"))
        method, revision = self.payment(float(diff))
        numbers = [x.flight_number for x in reservation.legs[:-1]] + [new.flight_number]
        dates = [x.date for x in reservation.legs[:-1]] + [new.date]
        write = DraftCall("update_reservation_flights",
                          {"reservation_id": reservation.id, "flight_numbers": numbers, "dates": dates,
                           "payment_id": method}, "write", ("reservation", "date", "payment"))
        calls = reads + [write]
        wish = f"{date_text(new.date)}, {choice}" + (" for the return" if len(reservation.legs) > 1 else "")
        intent = DraftIntent("change_flight", {"reservation": ref, "date": wish,
                                               "payment": self.method_text(method)}, calls,
                             [DraftOutput("difference", money(diff), len(calls) - 1)], burden + 2)
        if self.rng.random() < self.p_redirect and cancellable(self.state, reservation):
            intent.initial_kind = "cancel_reservation"
            intent.initial_slots = {"reason": "change of plan"}
        elif revision:
            intent.revision = revision
        return intent

    def _change_cabin(self) -> DraftIntent:
        def fits(r: Reservation) -> bool:
            return self._open(r) and any(self._cabin_ok(r, c) for c in ("economy", "business"))
        reservation = self.pick(fits, "cabin change")
        cabin = self.rng.choice([c for c in ("economy", "business") if self._cabin_ok(reservation, c)])
        ref, reads, burden = self.reservation_ref(reservation)
        reads += self.status_reads(reservation, ("reservation",))
        diff = cabin_difference(self.state, reservation, cabin)
        method, revision = self.payment(diff)
        write = DraftCall("update_reservation_cabin", {"reservation_id": reservation.id, "cabin": cabin,
                                                       "payment_id": method}, "write",
                          ("reservation", "cabin", "payment"))
        calls = reads + [write]
        intent = DraftIntent("change_cabin", {"reservation": ref, "cabin": cabin_text(cabin),
                                              "payment": self.method_text(method)}, calls,
                             [DraftOutput("difference", money(diff), len(calls) - 1)], burden + 1)
        intent.revision = revision
        return intent

    def _cabin_ok(self, r: Reservation, cabin: str) -> bool:
        n = len(r.passengers)
        return cabin != r.cabin and all(bookable(f, cabin, n) for f in leg_flights(self.state, r))

    def _cancel_reservation(self) -> DraftIntent:
        reservation = self.pick(lambda r: self._open(r) and cancellable(self.state, r), "cancellable")
        ref, reads, burden = self.reservation_ref(reservation)
        if not (booked_within_day(reservation) or reservation.insurance or reservation.cabin == "business"):
            reads += self.status_reads(reservation, ("reservation",))  # the airline's cancellation
        by_airline = any(f.status == "cancelled" for f in leg_flights(self.state, reservation))
        reason = "airline cancelled flight" if by_airline else self.rng.choice(("change of plan", "other"))
        assert reason in CANCEL_REASONS
        write = DraftCall("cancel_reservation", {"reservation_id": reservation.id, "reason": reason}, "write",
                          ("reservation", "reason"))
        calls = reads + [write]
        refund = sum(a for a in net_payments(reservation).values() if a > 0)
        return DraftIntent("cancel_reservation", {"reservation": ref, "reason": reason}, calls,
                           [DraftOutput("refund", money(refund), len(calls) - 1)], burden)

    def _add_bags(self) -> DraftIntent:
        reservation = self.pick(self._open, "open reservation")
        n = len(reservation.passengers)
        total = reservation.total_baggages + self.rng.randint(1, 2)
        if total > 3 * n:
            raise TaskRejected("too_many_bags", reservation.id)
        nonfree = max(0, total - free_bags(self.state, reservation))
        fee = 50.0 * (nonfree - reservation.nonfree_baggages)
        ref, reads, burden = self.reservation_ref(reservation)
        method, revision = self.payment(fee)
        write = DraftCall("update_reservation_baggages",
                          {"reservation_id": reservation.id, "total_baggages": total,
                           "nonfree_baggages": nonfree, "payment_id": method}, "write",
                          ("reservation", "bags", "payment"))
        calls = reads + [write]
        bags = f"{total} checked bag" + ("s" if total != 1 else "")
        intent = DraftIntent("add_bags", {"reservation": ref, "bags": bags, "payment": self.method_text(method)},
                             calls, [DraftOutput("fee", money(fee), len(calls) - 1)], burden)
        intent.revision = revision
        return intent

    def _add_insurance(self) -> DraftIntent:
        reservation = self.pick(lambda r: self._open(r) and not r.insurance, "uninsured")
        fee = 30.0 * len(reservation.passengers)
        ref, reads, burden = self.reservation_ref(reservation)
        method, revision = self.payment(fee)
        write = DraftCall("add_travel_insurance", {"reservation_id": reservation.id, "payment_id": method},
                          "write", ("reservation", "payment"))
        calls = reads + [write]
        intent = DraftIntent("add_insurance", {"reservation": ref, "payment": self.method_text(method)},
                             calls, [DraftOutput("fee", money(fee), len(calls) - 1)], burden)
        intent.revision = revision
        return intent

    def _update_passenger(self) -> DraftIntent:
        reservation = self.pick(self._open, "open reservation")
        names = Counter(f"{p.first_name} {p.last_name}" for p in reservation.passengers)
        options = [i for i, p in enumerate(reservation.passengers) if names[f"{p.first_name} {p.last_name}"] == 1]
        if not options:
            raise TaskRejected("ambiguous_passenger", reservation.id)
        i = self.rng.choice(options)
        p = reservation.passengers[i]
        if self.rng.random() < 0.5:  # a misspelt last name, or first name
            first, last = p.first_name, p.last_name + self.rng.choice(("e", "s", "n"))
        else:
            first, last = p.first_name + self.rng.choice(("a", "e", "h")), p.last_name
        dob = p.date_of_birth
        ref, reads, burden = self.reservation_ref(reservation)
        write = DraftCall("update_passenger", {"reservation_id": reservation.id, "passenger_number": i + 1,
                                               "first_name": first, "last_name": last,
                                               "date_of_birth": dob}, "write",
                          ("reservation", "passenger", "details"))
        return DraftIntent("update_passenger", {"reservation": ref, "passenger": f"{p.first_name} {p.last_name}",
                                                "details": f"{first} {last}, born {dob}"},
                           reads + [write], [], burden)

    def _compensation(self) -> DraftIntent:
        def fits(r: Reservation) -> bool:
            return any(compensation_eligible(self.state, r, f.flight_number, f.date) for f in self._disrupted(r))
        reservation = self.pick(fits, "compensable")
        flight = next(f for f in self._disrupted(reservation)
                      if compensation_eligible(self.state, reservation, f.flight_number, f.date))
        ref, reads, burden = self.reservation_ref(reservation)
        reads += self.status_reads(reservation, ("reservation",))
        amount = float(compensation_cap(self.state, reservation, flight.flight_number, flight.date))
        write = DraftCall("send_certificate", {"user_id": self.user.id, "reservation_id": reservation.id,
                                               "flight_number": flight.flight_number, "date": flight.date,
                                               "amount": amount}, "write", ("reservation",))
        calls = reads + [write]
        return DraftIntent("compensation", {"reservation": ref}, calls,
                           [DraftOutput("amount", money(amount), len(calls) - 1)], burden + 1)


def _unique_name_dob(state: AirlineState) -> set[str]:
    counts = Counter((u.first_name, u.last_name, u.date_of_birth) for u in state.users.values())
    return {u.id for u in state.users.values() if counts[(u.first_name, u.last_name, u.date_of_birth)] == 1}


def _identity(user: User, *, by_name: bool) -> tuple[dict[str, str], DraftCall]:
    """What the user gives to authenticate, and the call that resolves it."""
    if by_name:
        return ({"name": f"{user.first_name} {user.last_name}", "date_of_birth": user.date_of_birth},
                DraftCall("find_user_id_by_name_dob", {"first_name": user.first_name, "last_name": user.last_name,
                                                       "date_of_birth": user.date_of_birth}, "read", ("identity",)))
    return ({"email": user.email},
            DraftCall("find_user_id_by_email", {"email": user.email}, "read", ("identity",)))


class AirlineTaskSampler:
    """Samples ``DraftTask``s over one template state (construct once, sample many)."""

    def __init__(self, domain: Any) -> None:
        self.domain = domain
        state: AirlineState = domain.template
        self.user_ids = sorted(state.users)
        self.name_dob_ok = _unique_name_dob(state)

    def _start(self, rng: random.Random, user: User, by_name: bool, p: tuple[float, float, float],
               env: Environment) -> tuple[dict[str, str], list[DraftCall], _Builder]:
        identity, auth = _identity(user, by_name=by_name)
        builder = _Builder(env, rng, user, *p)
        auth_calls = [auth] + builder.read_call("get_user_details", {"user_id": user.id}, ("identity",))
        return identity, auth_calls, builder

    def sample(self, rng: random.Random, n_intents: int, *, p_indirect: float, p_revision: float,
               p_redirect: float, p_read_only: float) -> DraftTask:
        env = self.domain.environment()
        user: User = env.state.users[rng.choice(self.user_ids)]
        by_name = user.id in self.name_dob_ok and rng.random() < 0.4
        identity, auth_calls, builder = self._start(rng, user, by_name, (p_indirect, p_revision, p_redirect), env)
        intents = draw_intents(rng, n_intents, p_read_only, KINDS, builder)
        return DraftTask(identity=identity, auth_calls=auth_calls, intents=intents)

    def plan_of(self, bp: TaskBlueprint) -> TaskPlan:
        """The shape of an existing airline task, for ``sample_planned`` to sample another like it."""
        revised = {d.intent for d in bp.user.disclosure if d.action == "revise"}
        described = {d.intent for d in bp.user.disclosure if d.action == "clarify"}  # then asked which
        auth = next((c.name for c in bp.ground_truth.calls if c.name in self.domain.auth_tools), None)
        intents = []
        for k, intent in enumerate(bp.user.intents):
            ids = {str(v) for c in bp.ground_truth.calls if c.intent == k for v in c.arguments.values()}
            ref = intent.slots.get("reservation")
            intents.append(IntentPlan(kind=intent.kind, redirect=intent.initial_kind is not None,
                                      revision=k in revised, indirect=ref is not None and ref not in ids,
                                      clarify=k in described))
        return TaskPlan(auth_tool=auth, intents=tuple(intents))

    def sample_planned(self, rng: random.Random, plan: TaskPlan) -> DraftTask:
        """A task of exactly the planned shape for a fresh user, or ``TaskRejected`` when this
        draw cannot have it: callers draw again."""
        env = self.domain.environment()
        by_name = plan.auth_tool == "find_user_id_by_name_dob"
        pool = sorted(self.name_dob_ok) if by_name else self.user_ids
        user: User = env.state.users[rng.choice(pool)]
        identity, auth_calls, builder = self._start(rng, user, by_name, (0.0, 0.0, 0.0), env)
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
