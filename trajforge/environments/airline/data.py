"""The airline domain's state: airports, dated flights, users and their reservations.

The domain has a fixed "now" (``NOW``: 2024-05-15 15:00 EST) so that "booked within the last
24 hours" and "has departed" are facts of the data, the same in every episode: a flight before
now has departed (or landed), one after it has not.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Literal

from trajforge.environments.base import State
from trajforge.schemas.base import Record

NOW = "2024-05-15T15:00:00"  # Eastern time; every time in the data is Eastern time
NOW_TEXT = "2024-05-15 15:00 EST"
Cabin = Literal["basic_economy", "economy", "business"]
CABINS: tuple[str, ...] = ("basic_economy", "economy", "business")
FlightStatus = Literal["scheduled", "delayed", "cancelled", "departed", "landed"]
Tier = Literal["regular", "silver", "gold"]
BAG_FEE = 50
INSURANCE_FEE = 30
# free checked bags per passenger, by membership tier and cabin
FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
# compensation per passenger for a flight of the reservation the airline cancelled or delayed
COMPENSATION = {"cancelled": 100, "delayed": 50}

AIRPORTS: dict[str, tuple[str, str]] = {
    "JFK": ("New York", "John F. Kennedy International"),
    "LAX": ("Los Angeles", "Los Angeles International"),
    "ORD": ("Chicago", "O'Hare International"),
    "DEN": ("Denver", "Denver International"),
    "SFO": ("San Francisco", "San Francisco International"),
    "SEA": ("Seattle", "Seattle-Tacoma International"),
    "ATL": ("Atlanta", "Hartsfield-Jackson Atlanta International"),
    "BOS": ("Boston", "Logan International"),
    "MIA": ("Miami", "Miami International"),
    "DFW": ("Dallas", "Dallas/Fort Worth International"),
    "PHX": ("Phoenix", "Phoenix Sky Harbor International"),
    "LAS": ("Las Vegas", "Harry Reid International"),
    "MSP": ("Minneapolis", "Minneapolis-Saint Paul International"),
    "IAH": ("Houston", "George Bush Intercontinental"),
}
FIRST_DATE, LAST_DATE = date(2024, 5, 8), date(2024, 5, 30)


class Airport(Record):
    code: str
    city: str
    name: str


class Flight(Record):
    """One flight on one date."""

    flight_number: str
    date: str
    origin: str
    destination: str
    departure_time: str  # "08:15", Eastern time
    arrival_time: str
    status: FlightStatus
    prices: dict[str, int]  # cabin -> fare per passenger
    seats_left: dict[str, int]  # cabin -> seats left


class PaymentMethod(Record):
    id: str
    kind: Literal["credit_card", "gift_card", "certificate"]
    brand: str | None = None
    last_four: str | None = None
    balance: float | None = None


class Passenger(Record):
    first_name: str
    last_name: str
    date_of_birth: str


class User(Record):
    id: str
    first_name: str
    last_name: str
    email: str
    date_of_birth: str
    membership: Tier
    payment_methods: tuple[PaymentMethod, ...]
    reservations: tuple[str, ...]

    def payment_method(self, method_id: str) -> PaymentMethod | None:
        return next((p for p in self.payment_methods if p.id == method_id), None)


class Leg(Record):
    flight_number: str
    date: str
    origin: str
    destination: str
    price: int  # fare per passenger paid for this leg
    seats: tuple[str, ...]  # one per passenger


class Payment(Record):
    payment_id: str
    kind: Literal["payment", "refund"]
    amount: float
    note: str  # what it was for: "booking", "flight change", "bags", ...


class Reservation(Record):
    id: str
    user_id: str
    origin: str
    destination: str
    trip_type: Literal["one_way", "round_trip"]
    cabin: Cabin
    legs: tuple[Leg, ...]
    passengers: tuple[Passenger, ...]
    total_baggages: int
    nonfree_baggages: int
    insurance: bool
    payment_history: tuple[Payment, ...]
    created_at: str
    status: Literal["active", "cancelled"]
    cancel_reason: str | None = None


class AirlineState(State):
    airports: dict[str, Airport]
    flights: dict[str, Flight]  # key: "HA482/2024-05-20"
    users: dict[str, User]
    reservations: dict[str, Reservation]


def flight_key(number: str, day: str) -> str:
    return f"{number}/{day}"


def money(value: float) -> str:
    """An amount as the agent says it: two decimals, no sign."""
    return f"{abs(value):.2f}"


def cabin_text(cabin: str) -> str:
    """A cabin in prose: "basic economy"."""
    return cabin.replace("_", " ")


def date_text(day: str) -> str:
    """A date in prose: "May 20"."""
    d = date.fromisoformat(day[:10])
    return f"{d.strftime('%B')} {d.day}"


def departed(flight: Flight) -> bool:
    return flight.status in ("departed", "landed")


# --- deterministic data builder --------------------------------------------------------------

FIRST_NAMES = ("Ava", "Liam", "Mia", "Noah", "Emma", "Omar", "Yuki", "Lucas", "Sofia", "Mateo",
               "Aisha", "Ethan", "Chloe", "Ravi", "Isabella", "Daniel", "Fatima", "Leo", "Grace",
               "Hiro", "Nora", "Samuel", "Zara", "Ivan", "Amara", "Jonas", "Priya", "Elena",
               "Kofi", "Lena", "Marco", "Ines", "Tomas", "Maya", "Arjun", "Clara", "Diego", "Hana")
LAST_NAMES = ("Garcia", "Smith", "Chen", "Patel", "Kim", "Nguyen", "Silva", "Muller", "Rossi",
              "Khan", "Lopez", "Brown", "Sato", "Cohen", "Okafor", "Novak", "Dubois", "Ahmed",
              "Larsen", "Moreau", "Santos", "Ivanova", "Hughes", "Kowalski", "Haddad", "Fischer",
              "Mensah", "Ortiz", "Berg", "Tanaka")
BRANDS = ("visa", "mastercard", "amex")
LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _status(rng: random.Random, day: date, dep: int, arr: int) -> str:
    now = datetime.fromisoformat(NOW)
    start = datetime.combine(day, datetime.min.time()) + timedelta(minutes=dep)
    end = datetime.combine(day, datetime.min.time()) + timedelta(minutes=arr)
    roll = rng.random()
    if roll < 0.06:
        return "cancelled"
    if end <= now:
        return "landed"
    if start <= now:
        return "departed"
    return "delayed" if roll < 0.13 else "scheduled"


def build_flights(rng: random.Random) -> dict[str, Flight]:
    """Routes between the airports (each with its return), one or two flights a day on each."""
    codes = list(AIRPORTS)
    pairs: set[tuple[str, str]] = set()
    for i, a in enumerate(codes):  # a ring, so every airport is reachable, plus random chords
        pairs.add((a, codes[(i + 1) % len(codes)]))
    while len(pairs) < 34:
        a, b = rng.sample(codes, 2)
        if (b, a) not in pairs:
            pairs.add((a, b))
    used: set[str] = set()
    flights: dict[str, Flight] = {}
    for a, b in sorted(pairs):
        duration = rng.randint(70, 330)
        base = rng.randint(90, 320)
        for origin, destination in ((a, b), (b, a)):
            for _ in range(rng.randint(1, 2)):
                number = f"HA{rng.randint(100, 999)}"
                while number in used:
                    number = f"HA{rng.randint(100, 999)}"
                used.add(number)
                dep = rng.randrange(6 * 60, 21 * 60, 5)
                arr = min(dep + duration, 23 * 60 + 55)
                day = FIRST_DATE
                while day <= LAST_DATE:
                    economy = base + rng.randint(-30, 60)
                    prices = {"basic_economy": int(economy * 0.65), "economy": economy,
                              "business": int(economy * rng.uniform(2.3, 3.2))}
                    seats = {c: rng.choice((0, 2, 4, 7, 9, 12, 16, 20)) for c in CABINS}
                    flights[flight_key(number, day.isoformat())] = Flight(
                        flight_number=number, date=day.isoformat(), origin=origin,
                        destination=destination, departure_time=_clock(dep), arrival_time=_clock(arr),
                        status=_status(rng, day, dep, arr),
                        prices=prices, seats_left=seats)
                    day += timedelta(days=1)
    return flights


def _payment_methods(rng: random.Random) -> tuple[PaymentMethod, ...]:
    methods: list[PaymentMethod] = []
    for kind in rng.sample(("credit_card", "gift_card", "certificate", "credit_card"), rng.randint(1, 3)):
        pm_id = f"{kind}_{_digits(rng, 7)}"
        if kind == "credit_card":
            methods.append(PaymentMethod(id=pm_id, kind="credit_card", brand=rng.choice(BRANDS),
                                         last_four=_digits(rng, 4)))
        else:
            methods.append(PaymentMethod(id=pm_id, kind=kind,
                                         balance=float(rng.choice((0, 40, 100, 150, 250, 400, 600)))))
    return tuple(methods)


def _code(rng: random.Random, used: set[str]) -> str:
    while True:
        code = rng.choice(LETTERS) + rng.choice(LETTERS) + _digits(rng, 3) + rng.choice(LETTERS)
        if code not in used:
            used.add(code)
            return code


def _dob(rng: random.Random, young: bool = False) -> str:
    year = rng.randint(2006, 2016) if young else rng.randint(1950, 2003)
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _seat(rng: random.Random, cabin: str) -> str:
    row = rng.randint(1, 4) if cabin == "business" else rng.randint(8, 36)
    return f"{row}{rng.choice('ABCDEF')}"


def _created(rng: random.Random) -> str:
    now = datetime.fromisoformat(NOW)
    if rng.random() < 0.22:  # booked within the last 24 hours
        at = now - timedelta(minutes=rng.randint(20, 23 * 60 + 30))
    else:
        at = now - timedelta(hours=rng.randint(26, 24 * 25))
    return at.replace(minute=(at.minute // 5) * 5, second=0).isoformat()


def build_airline_state(rng: random.Random, size: int) -> AirlineState:
    """``size`` users, each with 1-3 payment methods and 1-4 reservations; deterministic in rng."""
    airports = {c: Airport(code=c, city=city, name=name) for c, (city, name) in AIRPORTS.items()}
    flights = build_flights(rng)
    by_route: dict[tuple[str, str, str], list[Flight]] = {}
    for f in flights.values():
        by_route.setdefault((f.origin, f.destination, f.date), []).append(f)
    routes = sorted({(f.origin, f.destination) for f in flights.values()})
    users: dict[str, User] = {}
    reservations: dict[str, Reservation] = {}
    codes: set[str] = set()
    for _ in range(size):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        user_id = f"{first.lower()}_{last.lower()}_{_digits(rng, 4)}"
        while user_id in users:
            user_id = f"{first.lower()}_{last.lower()}_{_digits(rng, 4)}"
        dob = _dob(rng)
        tier = rng.choices(("regular", "silver", "gold"), (50, 30, 20))[0]
        methods = _payment_methods(rng)
        companions = [Passenger(first_name=rng.choice(FIRST_NAMES),
                                last_name=rng.choice((last, rng.choice(LAST_NAMES))),
                                date_of_birth=_dob(rng, young=rng.random() < 0.4)) for _ in range(3)]
        mine: list[str] = []
        for _ in range(rng.randint(1, 4)):
            origin, destination = rng.choice(routes)
            out_day = FIRST_DATE + timedelta(days=rng.randint(2, 20))
            legs_days = [(origin, destination, out_day)]
            if rng.random() < 0.45:
                back = out_day + timedelta(days=rng.randint(1, 5))
                if back <= LAST_DATE:
                    legs_days.append((destination, origin, back))
            cabin = rng.choices(CABINS, (30, 50, 20))[0]
            others = rng.sample(companions, rng.choice((0, 0, 1, 1, 2)))
            me = Passenger(first_name=first, last_name=last, date_of_birth=dob)
            passengers = (me, *others) if rng.random() < 0.9 else tuple(others or [me])
            legs = []
            for o, d, day in legs_days:
                flight = rng.choice(by_route[(o, d, day.isoformat())])
                legs.append(Leg(flight_number=flight.flight_number, date=flight.date, origin=o,
                                destination=d, price=flight.prices[cabin],
                                seats=tuple(_seat(rng, cabin) for _ in passengers)))
            bags = rng.randint(0, 2 * len(passengers))
            free = FREE_BAGS[tier][cabin] * len(passengers)
            insurance = rng.random() < 0.3
            nonfree = max(0, bags - free)
            total = (sum(leg.price for leg in legs) * len(passengers) + BAG_FEE * nonfree
                     + (INSURANCE_FEE * len(passengers) if insurance else 0))
            payer = rng.choice([m for m in methods if m.kind == "credit_card"] or list(methods))
            code = _code(rng, codes)
            reservations[code] = Reservation(
                id=code, user_id=user_id, origin=origin, destination=destination,
                trip_type="round_trip" if len(legs) == 2 else "one_way", cabin=cabin,
                legs=tuple(legs), passengers=tuple(passengers), total_baggages=bags,
                nonfree_baggages=nonfree, insurance=insurance,
                payment_history=(Payment(payment_id=payer.id, kind="payment", amount=float(total),
                                         note="booking"),),
                created_at=_created(rng), status="cancelled" if rng.random() < 0.05 else "active")
            mine.append(code)
        users[user_id] = User(id=user_id, first_name=first, last_name=last,
                              email=f"{first.lower()}.{last.lower()}{_digits(rng, 3)}@example.com",
                              date_of_birth=dob, membership=tier,
                              payment_methods=methods, reservations=tuple(mine))
    return AirlineState(airports=airports, flights=flights, users=users, reservations=reservations)
