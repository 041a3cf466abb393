"""The telecom domain's state: the provider's side (customers, lines, plans, bills, outages) and
the customers' own phones (``devices``, the user's side under dual control).

Everything is built deterministically from ``(rng, size)``. The billing day is fixed
(``TODAY``), so "overdue" is a stored status, not a clock reading.
"""

from __future__ import annotations

import random
from typing import Literal

from trajforge.environments.base import State
from trajforge.schemas.base import Record

TODAY = "2026-12-01"
LineStatus = Literal["active", "suspended"]
BillStatus = Literal["paid", "unpaid", "overdue"]
TOPUP_SIZES = ("1GB", "2GB", "5GB", "10GB")
TOPUP_PRICE_PER_GB = 3.0
TOPUP_CAP_GB = 10  # top-ups a line may add per billing cycle


class Plan(Record):
    id: str
    name: str
    data_gb: int
    monthly_price: float
    roaming_included: bool


class Customer(Record):
    id: str
    first_name: str
    last_name: str
    email: str
    pin: str
    zip_code: str
    line_numbers: tuple[str, ...]
    bill_ids: tuple[str, ...]


class Line(Record):
    number: str
    customer_id: str
    plan_id: str
    status: LineStatus
    data_used_gb: float
    topup_gb: int = 0
    roaming_enabled: bool = False
    plan_changed_this_cycle: bool = False


class Bill(Record):
    id: str
    customer_id: str
    period: str
    amount: float
    due_date: str
    status: BillStatus


class Outage(Record):
    zip_code: str
    description: str
    estimated_fix: str


class Device(Record):
    """The customer's phone for one line: its settings and where it is (the user's side)."""

    number: str
    airplane_mode: bool = False
    mobile_data: bool = True
    roaming: bool = False
    apn: Literal["standard", "custom"] = "standard"
    sim: Literal["ready", "needs_restart"] = "ready"
    abroad_in: str | None = None  # the country the phone is in, when abroad


class TelecomState(State):
    plans: dict[str, Plan]
    customers: dict[str, Customer]
    lines: dict[str, Line]
    bills: dict[str, Bill]
    outages: dict[str, Outage]
    devices: dict[str, Device]

    def overdue_bills(self, customer_id: str) -> list[Bill]:
        customer = self.customers[customer_id]
        return [self.bills[b] for b in customer.bill_ids if self.bills[b].status == "overdue"]


def money(value: float) -> str:
    return f"{value:.2f}"


def data_limit(state: TelecomState, line: Line) -> int:
    return state.plans[line.plan_id].data_gb + line.topup_gb


def on_off(flag: bool) -> str:
    return "on" if flag else "off"


def screen(state: TelecomState, number: str) -> dict[str, str]:
    """What the phone of line ``number`` shows: its settings and the status bar's signal and
    mobile data indicator, as they follow from the device and the line."""
    device, line = state.devices[number], state.lines[number]
    customer = state.customers[line.customer_id]
    connected = False
    if device.airplane_mode:
        signal = "airplane mode icon, no signal"
    elif device.sim != "ready":
        signal = "No SIM card"
    elif line.status != "active":
        signal = "No service"
    elif device.abroad_in is not None and not (device.roaming and line.roaming_enabled):
        signal = "No service"
    elif device.abroad_in is None and customer.zip_code in state.outages:
        signal = "No service"
    else:
        signal = "full signal bars"
        connected = True
    has_data = (connected and device.mobile_data and device.apn == "standard"
                and line.data_used_gb < data_limit(state, line))
    return {"number": number, "signal": signal, "mobile_data_indicator": "LTE" if has_data else "no data",
            "airplane_mode": on_off(device.airplane_mode), "mobile_data": on_off(device.mobile_data),
            "roaming": on_off(device.roaming), "apn": device.apn, "sim": device.sim}


PLANS = (
    Plan(id="basic_5", name="Basic 5GB", data_gb=5, monthly_price=25.0, roaming_included=False),
    Plan(id="plus_15", name="Plus 15GB", data_gb=15, monthly_price=40.0, roaming_included=False),
    Plan(id="max_40", name="Max 40GB", data_gb=40, monthly_price=55.0, roaming_included=True),
    Plan(id="travel_20", name="Travel 20GB", data_gb=20, monthly_price=50.0, roaming_included=True),
    Plan(id="unlimited_100", name="Unlimited 100GB", data_gb=100, monthly_price=75.0,
         roaming_included=True),
)
FIRST = ("Ana", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi",
         "Luis", "Maya", "Nils", "Olga", "Priya", "Quentin", "Rosa", "Sami", "Tara", "Uma", "Victor",
         "Wen", "Yara", "Zoe")
LAST = ("Almeida", "Brooks", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
        "Jensen", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn",
        "Rossi", "Silva", "Tanaka", "Unger", "Varga", "Weber", "Young", "Zhang")
COUNTRIES = ("France", "Japan", "Mexico", "Italy", "Canada", "Spain", "Portugal", "Thailand")
AREAS = ("415", "628", "510", "650", "408", "707", "925")
PERIODS = ("2026-08", "2026-09", "2026-10", "2026-11")
DUE = {"2026-08": "2026-08-28", "2026-09": "2026-09-28", "2026-10": "2026-10-28",
       "2026-11": "2026-12-15"}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def build_telecom_state(rng: random.Random, size: int) -> TelecomState:
    plans = {p.id: p for p in PLANS}
    zips = sorted({f"9{_digits(rng, 4)}" for _ in range(max(8, size // 12))})
    outage_zips = zips[: max(1, len(zips) // 6)]
    outages = {z: Outage(zip_code=z, description=rng.choice(("fibre cut at a cell site",
                                                             "tower maintenance",
                                                             "power failure at a mast")),
                         estimated_fix=rng.choice(("2026-12-01 18:00", "2026-12-02 09:00",
                                                   "2026-12-02 14:00")))
               for z in outage_zips}
    customers: dict[str, Customer] = {}
    lines: dict[str, Line] = {}
    bills: dict[str, Bill] = {}
    devices: dict[str, Device] = {}
    used_numbers: set[str] = set()
    used_bills: set[str] = set()
    emails: set[str] = set()
    while len(customers) < size:
        cid = f"CU{_digits(rng, 6)}"
        if cid in customers:
            continue
        first, last = rng.choice(FIRST), rng.choice(LAST)
        email = f"{first.lower()}.{last.lower()}{_digits(rng, 2)}@example.com"
        if email in emails:
            continue
        emails.add(email)
        n_lines = rng.choices((1, 2, 3), (5, 3, 1))[0]
        overdue = rng.random() < 0.2
        numbers: list[str] = []
        while len(numbers) < n_lines:
            number = f"{rng.choice(AREAS)}-555-{_digits(rng, 4)}"
            if number not in used_numbers:
                used_numbers.add(number)
                numbers.append(number)
        bill_ids: list[str] = []
        for period in PERIODS[rng.randrange(0, 2):]:
            bid = f"B{_digits(rng, 7)}"
            while bid in used_bills:
                bid = f"B{_digits(rng, 7)}"
            used_bills.add(bid)
            status: str = "paid"
            if period == PERIODS[-1]:
                status = "unpaid"
            elif period == PERIODS[-2] and overdue:
                status = "overdue"
            bills[bid] = Bill(id=bid, customer_id=cid, period=period,
                              amount=round(rng.uniform(25, 160), 2), due_date=DUE[period],
                              status=status)
            bill_ids.append(bid)
        for number in numbers:
            plan = rng.choice(PLANS)
            suspended = (overdue and rng.random() < 0.6) or (not overdue and rng.random() < 0.08)
            exhausted = rng.random() < 0.2
            used = (float(plan.data_gb) + round(rng.uniform(0, 0.5), 2) if exhausted
                    else round(rng.uniform(0.1, plan.data_gb * 0.85), 2))
            lines[number] = Line(number=number, customer_id=cid, plan_id=plan.id,
                                 status="suspended" if suspended else "active",
                                 data_used_gb=used, topup_gb=rng.choice((0, 0, 0, 2, 5)),
                                 roaming_enabled=rng.random() < 0.3,
                                 plan_changed_this_cycle=rng.random() < 0.15)
            if lines[number].topup_gb and exhausted:
                lines[number] = lines[number].model_copy(
                    update={"data_used_gb": float(plan.data_gb + lines[number].topup_gb)})
            abroad = rng.choice(COUNTRIES) if rng.random() < 0.25 else None
            roll = rng.random()
            devices[number] = Device(
                number=number,
                airplane_mode=roll < 0.12 or 0.45 <= roll < 0.48,
                mobile_data=not (0.12 <= roll < 0.26 or 0.46 <= roll < 0.5),
                apn="custom" if 0.26 <= roll < 0.34 else "standard",
                sim="needs_restart" if 0.34 <= roll < 0.42 else "ready",
                roaming=abroad is not None and rng.random() < 0.4,
                abroad_in=abroad)
        customers[cid] = Customer(id=cid, first_name=first, last_name=last, email=email,
                                  pin=_digits(rng, 4), zip_code=rng.choice(zips),
                                  line_numbers=tuple(numbers), bill_ids=tuple(bill_ids))
    return TelecomState(plans=plans, customers=customers, lines=lines, bills=bills,
                        outages=outages, devices=devices)
