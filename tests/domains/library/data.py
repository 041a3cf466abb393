"""The library's records and a deterministic template: branches, editions, members, loans, holds.

Naming is unlike retail's on purpose: members are keyed by ``card_number`` ("LC-48213907"),
editions by ISBN-13 ("978-0-306-40615-7"), loans by ``loan_ref`` ("LN-583920"), holds by
``hold_ref`` ("HD-20417"), branches by ``branch_code`` ("ELM"); no key ends in ``_id``.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from trajforge.environments.base import State
from trajforge.schemas.base import Record

TODAY = "2026-03-02"
RENEWAL_DAYS = 21
MAX_RENEWALS = 2
FINE_CAP = 10.00
HOLD_LIMIT = 3
BRANCHES = {"OAK": "Oak Street", "ELM": "Elm Park", "PINE": "Pine Hill", "BIRCH": "Birch Lane"}
FORMATS = ("hardcover", "paperback", "large print", "audiobook")

_ADJ = ("Silent", "Hidden", "Broken", "Golden", "Restless", "Quiet", "Crimson", "Distant", "Hollow", "Wild",
        "Gentle", "Frozen", "Bright", "Lost", "Secret", "Burning", "Patient", "Northern", "Salt", "Iron")
_NOUN = ("River", "Garden", "Harbor", "Orchard", "Lantern", "Kingdom", "Letter", "Meadow", "Station",
         "Island", "Forest", "Bridge", "Compass", "Tide", "Window", "Archive", "Valley", "Engine", "Sparrow",
         "Lighthouse")
_FIRST = ("Ada", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Grace", "Hugo", "Ines", "Jonah", "Keiko",
          "Lars", "Maya", "Nikolai", "Olive", "Pavel", "Quinn", "Rosa", "Soren", "Talia", "Umar", "Vera",
          "Wendell", "Ximena", "Yusuf", "Zora")
_LAST = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Abernathy", "Castellano", "Dubois", "Eriksen",
         "Fitzgerald", "Haddad", "Ivanova", "Jablonski", "Kowalczyk", "Nakamura", "Oduya", "Petrov",
         "Quintero", "Rasmussen", "Szabo", "Thorne", "Varga", "Whitlock")


class Branch(Record):
    branch_code: str
    name: str


class Edition(Record):
    isbn: str  # canonical: 978-d-ddd-ddddd-d
    title: str
    author: str
    format: str
    year: int
    on_shelf: dict[str, int]  # branch_code -> copies available to borrow now


class Member(Record):
    card_number: str
    pin: str
    first_name: str
    last_name: str
    date_of_birth: str
    postal_code: str
    home_branch: str
    fines: float
    loan_refs: tuple[str, ...]
    hold_refs: tuple[str, ...]


class Loan(Record):
    loan_ref: str
    card_number: str
    isbn: str
    borrowed_on: str
    due_date: str
    renewals: int
    status: str  # "on loan" | "returned"


class Hold(Record):
    hold_ref: str
    card_number: str
    isbn: str
    branch_code: str
    placed_on: str
    status: str  # "waiting" | "ready" | "cancelled"


class Payment(Record):
    receipt: str
    card_number: str
    amount: float
    paid_on: str


class LibraryState(State):
    branches: dict[str, Branch]
    editions: dict[str, Edition]
    members: dict[str, Member]
    loans: dict[str, Loan]
    holds: dict[str, Hold]
    payments: dict[str, Payment]


def isbn13(body12: str) -> str:
    """The ISBN-13 of a 12-digit body (its check digit added), hyphenated 978-d-ddd-ddddd-d."""
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(body12))
    digits = body12 + str((10 - total % 10) % 10)
    return f"{digits[:3]}-{digits[3]}-{digits[4:7]}-{digits[7:12]}-{digits[12]}"


def shift(day: str, days: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()


def money(value: float) -> str:
    return f"{value:.2f}"


def active_holds(state: LibraryState, isbn: str) -> list[Hold]:
    """The holds queued for an edition (waiting or ready), oldest first."""
    return sorted((h for h in state.holds.values() if h.isbn == isbn and h.status in ("waiting", "ready")),
                  key=lambda h: (h.placed_on, h.hold_ref))


def build_library_state(rng: random.Random, size: int) -> LibraryState:
    branches = {code: Branch(branch_code=code, name=name) for code, name in BRANCHES.items()}
    titles = [f"The {a} {n}" for a in _ADJ for n in _NOUN]
    rng.shuffle(titles)
    editions: dict[str, Edition] = {}
    for title in titles[:max(40, size)]:
        author = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        year = rng.randint(1978, 2025)
        for fmt in rng.sample(FORMATS, rng.randint(1, 3)):
            while True:
                isbn = isbn13("978" + "".join(rng.choice("0123456789") for _ in range(9)))
                if isbn not in editions:
                    break
            shelf = {code: (rng.randint(0, 2) if rng.random() < 0.45 else 0) for code in BRANCHES}
            editions[isbn] = Edition(isbn=isbn, title=title, author=author, format=fmt, year=year,
                                     on_shelf=shelf)
    isbns = sorted(editions)
    out_of_stock = [i for i in isbns if sum(editions[i].on_shelf.values()) == 0]

    members: dict[str, Member] = {}
    loans: dict[str, Loan] = {}
    holds: dict[str, Hold] = {}
    payments: dict[str, Payment] = {}
    used: set[str] = set()

    def ref(prefix: str, digits: int) -> str:
        while True:
            value = f"{prefix}-{rng.randrange(10 ** (digits - 1), 10 ** digits)}"
            if value not in used:
                used.add(value)
                return value

    hold_numbers = iter(range(20001, 99999))
    for _ in range(size):
        card = ref("LC", 8)
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        dob = date(rng.randint(1945, 2008), rng.randint(1, 12), rng.randint(1, 28)).isoformat()
        roll = rng.random()
        fines = 0.0 if roll < 0.4 else (rng.randint(1, 39) * 0.25 if roll < 0.75 else rng.randint(41, 100) * 0.25)
        loan_refs = []
        for isbn in rng.sample(isbns, rng.randint(1, 4)):
            due = shift(TODAY, rng.randint(-8, 20))
            loan = Loan(loan_ref=ref("LN", 6), card_number=card, isbn=isbn, borrowed_on=shift(due, -RENEWAL_DAYS),
                        due_date=due, renewals=rng.choice((0, 0, 1, 2)), status="on loan")
            loans[loan.loan_ref] = loan
            loan_refs.append(loan.loan_ref)
        for isbn in rng.sample(isbns, rng.randint(0, 2)):
            due = shift(TODAY, -rng.randint(25, 200))
            loan = Loan(loan_ref=ref("LN", 6), card_number=card, isbn=isbn, borrowed_on=shift(due, -RENEWAL_DAYS),
                        due_date=due, renewals=rng.randint(0, 2), status="returned")
            loans[loan.loan_ref] = loan
            loan_refs.append(loan.loan_ref)
        hold_refs = []
        for isbn in rng.sample(out_of_stock, min(len(out_of_stock), rng.choice((0, 0, 1, 1, 2, 3)))):
            hold = Hold(hold_ref=f"HD-{next(hold_numbers)}", card_number=card, isbn=isbn,
                        branch_code=rng.choice(sorted(BRANCHES)), placed_on=shift(TODAY, -rng.randint(1, 60)),
                        status="ready" if rng.random() < 0.2 else "waiting")
            holds[hold.hold_ref] = hold
            hold_refs.append(hold.hold_ref)
        if fines and rng.random() < 0.5:
            receipt = ref("RC", 6)
            payments[receipt] = Payment(receipt=receipt, card_number=card, amount=rng.randint(1, 20) * 0.5,
                                        paid_on=shift(TODAY, -rng.randint(5, 90)))
        members[card] = Member(card_number=card, pin=f"{rng.randint(0, 9999):04d}", first_name=first,
                               last_name=last, date_of_birth=dob, postal_code=f"{rng.randint(10000, 99999)}",
                               home_branch=rng.choice(sorted(BRANCHES)), fines=round(fines, 2),
                               loan_refs=tuple(loan_refs), hold_refs=tuple(hold_refs))
    return LibraryState(branches=branches, editions=editions, members=members, loans=loans, holds=holds,
                        payments=payments)
