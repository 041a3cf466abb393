"""The banking domain's state: customers, accounts, cards, a long transaction history per
account, disputes, transfers and saved payees, as of a fixed ``TODAY``."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Literal

from trajforge.environments.base import State
from trajforge.schemas.base import Record

# the bank's "today": every date in the data, "last Tuesday" and the 60-day window are relative to it
TODAY = date(2026, 6, 18)  # a Thursday
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
DISPUTE_WINDOW_DAYS = 60
DISPUTE_THRESHOLD = 500.0  # disputes of charges above this go to a human agent

AccountType = Literal["checking", "savings"]
AccountStatus = Literal["active", "frozen", "closed"]
CardStatus = Literal["active", "frozen", "replaced", "closed"]
TxnStatus = Literal["posted", "pending"]


class Address(Record):
    street: str
    city: str
    state: str
    zip: str


class Customer(Record):
    id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: str
    passcode: str  # the second factor with the email; never shown by a tool
    address: Address
    account_ids: tuple[str, ...]
    card_ids: tuple[str, ...]
    payee_ids: tuple[str, ...]


class Account(Record):
    id: str
    customer_id: str
    type: AccountType
    status: AccountStatus
    balance: float
    daily_transfer_limit: float
    transferred_today: float
    transaction_ids: tuple[str, ...]  # newest first; an index, not shown by the tools

    @property
    def remaining_limit(self) -> float:
        return round(max(0.0, self.daily_transfer_limit - self.transferred_today), 2)


class Card(Record):
    id: str
    customer_id: str
    account_id: str
    type: Literal["debit", "credit"]
    last_four: str
    status: CardStatus
    expires: str
    replaced_by: str | None = None


class Transaction(Record):
    id: str
    account_id: str
    date: str
    merchant: str
    category: str
    amount: float
    status: TxnStatus
    disputed: bool = False
    dispute_id: str | None = None


class Dispute(Record):
    id: str
    customer_id: str
    account_id: str
    transaction_id: str
    merchant: str
    amount: float
    reason: str
    status: Literal["under review", "resolved"]
    opened_on: str


class Transfer(Record):
    id: str
    kind: Literal["internal", "payee"]
    from_account_id: str
    to_account_id: str | None = None
    payee_id: str | None = None
    amount: float
    date: str
    status: Literal["completed"]
    from_balance_after: float


class Payee(Record):
    id: str
    customer_id: str
    name: str
    bank: str
    account_last_four: str


class BankingState(State):
    customers: dict[str, Customer]
    accounts: dict[str, Account]
    cards: dict[str, Card]
    transactions: dict[str, Transaction]
    disputes: dict[str, Dispute]
    transfers: dict[str, Transfer]
    payees: dict[str, Payee]


def money(value: float) -> str:
    """An amount as the agent says it: two decimals, no sign."""
    return f"{abs(value):.2f}"


def address_text(a: Address | dict[str, str]) -> str:
    """An address as one line of prose: "12 Oak St, Austin, TX 78701"."""
    d = a.model_dump() if isinstance(a, Address) else a
    return f"{d['street']}, {d['city']}, {d['state']} {d['zip']}"


def random_address(rng: random.Random) -> Address:
    city, state = rng.choice(CITIES)
    return Address(street=f"{rng.randint(10, 9999)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}",
                   city=city, state=state, zip=_digits(rng, 5))


def days_ago(day: str) -> int:
    return (TODAY - date.fromisoformat(day)).days


# --- deterministic data builder --------------------------------------------------------------

FIRST_NAMES = ("Ava", "Liam", "Mia", "Noah", "Emma", "Omar", "Yuki", "Lucas", "Sofia", "Mateo",
               "Aisha", "Ethan", "Chloe", "Ravi", "Isabella", "Daniel", "Fatima", "Leo", "Grace",
               "Hiro", "Nora", "Samuel", "Zara", "Ivan", "Amara", "Jonas", "Priya", "Elena",
               "Kofi", "Lena", "Marco", "Ines", "Tomas", "Maya", "Arjun", "Clara", "Diego", "Hana")
LAST_NAMES = ("Garcia", "Smith", "Chen", "Patel", "Kim", "Nguyen", "Silva", "Muller", "Rossi",
              "Khan", "Lopez", "Brown", "Sato", "Cohen", "Okafor", "Novak", "Dubois", "Ahmed",
              "Larsen", "Moreau", "Santos", "Ivanova", "Hughes", "Kowalski", "Haddad", "Fischer")
STREETS = ("Maple", "Oak", "Cedar", "Pine", "Elm", "Lake", "Hill", "Sunset", "River", "Park")
STREET_KINDS = ("St", "Ave", "Rd", "Ln", "Dr")
CITIES = (("Austin", "TX"), ("Denver", "CO"), ("Seattle", "WA"), ("Boston", "MA"),
          ("Phoenix", "AZ"), ("Portland", "OR"), ("Chicago", "IL"), ("Atlanta", "GA"))

# category -> (merchants, amount range); no merchant name contains a category's phrase
CATEGORIES: dict[str, tuple[tuple[str, ...], tuple[float, float]]] = {
    "coffee": (("Blue Bottle", "Starbucks", "Daily Grind", "Peet's"), (3.5, 9.5)),
    "groceries": (("Whole Foods", "Trader Joe's", "Safeway", "Kroger"), (18.0, 190.0)),
    "fuel": (("Shell", "Chevron", "Exxon", "Valero"), (28.0, 88.0)),
    "travel": (("Delta Air Lines", "Marriott", "Hilton", "United Airlines"), (140.0, 1450.0)),
    "dining": (("Chipotle", "Olive Garden", "Sushi Zen", "Panera"), (12.0, 95.0)),
    "shopping": (("Amazon", "Target", "Best Buy", "IKEA"), (9.0, 420.0)),
    "utilities": (("City Power", "Comcast", "Verizon"), (40.0, 220.0)),
}
CATEGORY_WEIGHTS = {"coffee": 8, "groceries": 6, "fuel": 4, "travel": 1, "dining": 5,
                    "shopping": 4, "utilities": 2}
PAYEE_NAMES = ("Pinecrest Properties", "Green Valley Daycare", "Riverside Dental",
               "Summit Auto Loans", "Harbor Insurance", "Lakeside Gym", "Maple Tutoring",
               "Northside Plumbing")
BANKS = ("First National", "Coastal Credit Union", "Metro Bank", "Union Savings")


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


class _Ids:
    """Unique ids of each kind: a prefix and a fixed number of digits (each kind its own length)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def new(self, prefix: str, n: int) -> str:
        while True:
            value = f"{prefix}-{_digits(self.rng, n)}"
            if value not in self.used and not value.endswith("-" + "0" * n):
                self.used.add(value)
                return value


def _transactions(rng: random.Random, ids: _Ids, account_id: str, n: int,
                  disputes: dict[str, Dispute], customer_id: str) -> list[Transaction]:
    cats = list(CATEGORY_WEIGHTS)
    weights = [CATEGORY_WEIGHTS[c] for c in cats]
    out: list[Transaction] = []
    for _ in range(n):
        category = rng.choices(cats, weights)[0]
        merchants, (low, high) = CATEGORIES[category]
        ago = rng.randint(0, 115)
        day = (TODAY - timedelta(days=ago)).isoformat()
        status: TxnStatus = "pending" if ago <= 2 and rng.random() < 0.75 else "posted"
        txn = Transaction(id=ids.new("TXN", 8), account_id=account_id, date=day,
                          merchant=rng.choice(merchants), category=category,
                          amount=round(rng.uniform(low, high), 2), status=status)
        if status == "posted" and rng.random() < 0.05:
            dispute_id = ids.new("DSP", 9)
            disputes[dispute_id] = Dispute(
                id=dispute_id, customer_id=customer_id, account_id=account_id,
                transaction_id=txn.id, merchant=txn.merchant, amount=txn.amount,
                reason=rng.choice(("unrecognized charge", "duplicate charge", "wrong amount")),
                status=rng.choice(("under review", "resolved")),
                opened_on=(TODAY - timedelta(days=rng.randint(0, min(ago, 30)))).isoformat())
            txn = txn.model_copy(update={"disputed": True, "dispute_id": dispute_id})
        out.append(txn)
    out.sort(key=lambda t: (t.date, t.id), reverse=True)
    return out


def build_banking_state(rng: random.Random, size: int) -> BankingState:
    """``size`` customers, each with a checking account (and 0-2 savings accounts), a debit
    card (and maybe a credit card and an old replaced card), 0-3 payees and dozens of
    transactions per account; deterministic in rng."""
    ids = _Ids(rng)
    customers: dict[str, Customer] = {}
    accounts: dict[str, Account] = {}
    cards: dict[str, Card] = {}
    transactions: dict[str, Transaction] = {}
    disputes: dict[str, Dispute] = {}
    payees: dict[str, Payee] = {}
    phones: set[str] = set()
    emails: set[str] = set()
    for _ in range(size):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        customer_id = ids.new("CUS", 5)
        phone = f"555-{_digits(rng, 3)}-{_digits(rng, 4)}"
        while phone in phones:
            phone = f"555-{_digits(rng, 3)}-{_digits(rng, 4)}"
        phones.add(phone)
        birth = date(rng.randint(1950, 2003), rng.randint(1, 12), rng.randint(1, 28)).isoformat()
        address = random_address(rng)
        account_ids: list[str] = []
        savings: list[AccountType] = ["savings"] * rng.choice((0, 1, 1, 1, 2))
        for kind in ["checking", *savings]:
            account_id = ids.new("ACC", 6)
            status: AccountStatus = rng.choices(("active", "frozen", "closed"), (92, 5, 3))[0]
            n = rng.randint(32, 55) if kind == "checking" else rng.randint(10, 18)
            history = _transactions(rng, ids, account_id, n, disputes, customer_id)
            transactions.update((t.id, t) for t in history)
            balance = round(rng.uniform(150, 9000) if kind == "checking" else rng.uniform(400, 30000), 2)
            limit = float(rng.choice((1000, 2500, 2500, 5000)) if kind == "checking"
                          else rng.choice((1000, 1500, 2500)))
            accounts[account_id] = Account(
                id=account_id, customer_id=customer_id, type=kind, status=status, balance=balance,
                daily_transfer_limit=limit,
                transferred_today=float(rng.choice((0, 0, 0, 0, 150, 400, 900))),
                transaction_ids=tuple(t.id for t in history))
            account_ids.append(account_id)
        checking = account_ids[0]
        card_ids: list[str] = []
        kinds: list[tuple[Literal["debit", "credit"], CardStatus]] = [
            ("debit", rng.choices(("active", "frozen", "closed"), (78, 18, 4))[0])]
        if rng.random() < 0.55:
            kinds.append(("credit", rng.choices(("active", "frozen", "closed"), (78, 18, 4))[0]))
        for card_type, card_status in kinds:
            card_id = ids.new("CRD", 7)
            if rng.random() < 0.25:  # an older card this one replaced
                old_id = ids.new("CRD", 7)
                cards[old_id] = Card(id=old_id, customer_id=customer_id, account_id=checking,
                                     type=card_type, last_four=_digits(rng, 4), status="replaced",
                                     expires=f"20{rng.randint(25, 27)}-{rng.randint(1, 12):02d}",
                                     replaced_by=card_id)
                card_ids.append(old_id)
            cards[card_id] = Card(id=card_id, customer_id=customer_id, account_id=checking,
                                  type=card_type, last_four=_digits(rng, 4), status=card_status,
                                  expires=f"20{rng.randint(28, 31)}-{rng.randint(1, 12):02d}")
            card_ids.append(card_id)
        payee_ids: list[str] = []
        for name in rng.sample(PAYEE_NAMES, rng.choice((0, 1, 2, 2, 3))):
            payee_id = ids.new("PYE", 4)
            payees[payee_id] = Payee(id=payee_id, customer_id=customer_id, name=name,
                                     bank=rng.choice(BANKS), account_last_four=_digits(rng, 4))
            payee_ids.append(payee_id)
        email = f"{first.lower()}.{last.lower()}{_digits(rng, 3)}@example.com"
        while email in emails:
            email = f"{first.lower()}.{last.lower()}{_digits(rng, 3)}@example.com"
        emails.add(email)
        customers[customer_id] = Customer(
            id=customer_id, first_name=first, last_name=last, email=email, phone=phone,
            date_of_birth=birth, passcode=_digits(rng, 6), address=address,
            account_ids=tuple(account_ids), card_ids=tuple(card_ids), payee_ids=tuple(payee_ids))
    return BankingState(customers=customers, accounts=accounts, cards=cards,
                        transactions=transactions, disputes=disputes, transfers={}, payees=payees)
