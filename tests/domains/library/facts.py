"""What the library's checks and its scripted oracle read from tool results.

- ``ID_FORMS``: a card number with or without ``LC-``, an ISBN with or without hyphens, both to
  the tools' spelling (``LC-48213907``, ``978-0-306-40615-7``).
- ``ATTRIBUTES`` / ``claim_records``: loans (by loan reference: due date, title), holds (by hold
  reference: status, title), a member's card (its fine balance) and a payment receipt (its amount).
- ``report_facts``: the values of an intent's report placeholders, found from what the tools
  showed in this episode (a loan named by reference or as "my copy of <title>", a hold likewise,
  an edition by title and format), never from the blueprint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from trajforge.environments.base import Observation, ReportFacts
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord

ID_FORMS: tuple[tuple[str, str], ...] = (
    (r"(?<![\w-])(97[89])-?(\d)-?(\d{3})-?(\d{5})-?(\d)(?![\w-])", r"\1-\2-\3-\4-\5"),
    (r"(?<![\w-])(?:LC-?)?(\d{8})(?![\w-])", r"LC-\1"),
)
ATTRIBUTES = (
    Attribute("due", AttributeType.date),
    Attribute("title", AttributeType.phrase),
    Attribute("status", AttributeType.status, vocabulary=("waiting", "ready", "cancelled", "canceled")),
    Attribute("amount", AttributeType.money),
)
_LOAN = re.compile(r"\bLN-\d{6}\b", re.IGNORECASE)
_HOLD = re.compile(r"\bHD-\d{5}\b", re.IGNORECASE)
_ISBN = re.compile(r"\b97[89]-\d-\d{3}-\d{5}-\d\b")
_CARD = re.compile(r"\bLC-\d{8}\b")
# the kinds of key a confirmation may name, by the parameter that takes one
KEYS: dict[str, re.Pattern[str]] = {"loan_ref": _LOAN, "hold_ref": _HOLD, "isbn": _ISBN, "card_number": _CARD}


def names_target(args: dict[str, Any], said: str) -> bool:
    """A confirmation request (``said``, ids in canonical form) names every key the write takes
    (its loan, hold, edition, card; its pickup branch) and no other key of those kinds: "renew
    loan LN-1 (or LN-2?)" names two loans and so confirms neither."""
    for param, value in args.items():
        if param in KEYS:
            if {m.upper() for m in KEYS[param].findall(said)} != {str(value).upper()}:
                return False
        elif param == "branch_code" and not re.search(rf"\b{re.escape(str(value))}\b", said):
            return False
    return True


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def _is_loan(obj: dict[str, Any]) -> bool:
    return "loan_ref" in obj and "due_date" in obj


def _is_hold(obj: dict[str, Any]) -> bool:
    return "hold_ref" in obj and "queue_position" in obj


def claim_records(observation: Observation) -> list[ClaimRecord]:
    if observation.error is not None:
        return []
    out: list[ClaimRecord] = []
    for obj in _objects(observation.result):
        if _is_loan(obj):
            out.append(ClaimRecord("loan", obj["loan_ref"], ((obj["loan_ref"],),),
                                   {"due": (obj["due_date"],), "title": (obj["title"],)}))
        elif _is_hold(obj):
            status = str(obj["status"])
            out.append(ClaimRecord("hold", obj["hold_ref"], ((obj["hold_ref"],),),
                                   {"status": (status, "canceled") if status == "cancelled" else (status,),
                                    "title": (obj["title"],)}))
        elif "receipt" in obj and "paid" in obj:
            out.append(ClaimRecord("payment", obj["receipt"], ((obj["receipt"],),), {"amount": (obj["paid"],)}))
            out.append(ClaimRecord("card", obj["card_number"], ((obj["card_number"],),),
                                   {"amount": (obj["balance"],)}))
        elif "card_number" in obj and "fines" in obj:
            out.append(ClaimRecord("card", obj["card_number"], ((obj["card_number"],),),
                                   {"amount": (obj["fines"],)}))
    return out


# --- report facts -----------------------------------------------------------------------------

def _latest(observed: Sequence[Observation], test: Any, key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for obs in observed:
        if obs.error is None:
            for obj in _objects(obs.result):
                if test(obj):
                    out[obj[key]] = obj
    return out


def _resolve(ref: str, records: dict[str, dict[str, Any]], pattern: re.Pattern[str],
             live: tuple[str, ...]) -> dict[str, Any] | None:
    """The record a reference names: its key, or "my copy of / my hold on <title>" (the one live
    record of that title, or the one record of it, after a write ended it)."""
    m = pattern.search(ref)
    if m:
        return records.get(m.group(0).upper())
    title = ref.split(" of ", 1)[-1] if "copy of" in ref else ref.split(" on ", 1)[-1]
    found = [r for r in records.values() if r["title"].lower() == title.strip().lower()]
    alive = [r for r in found if r["status"] in live]
    if len(alive) == 1:
        return alive[0]
    return found[0] if len(found) == 1 else None


def _card(observed: Sequence[Observation]) -> dict[str, Any] | None:
    cards = [o for obs in observed if obs.error is None for o in _objects(obs.result)
             if "card_number" in o and ("fines" in o or "paid" in o)]
    return cards[-1] if cards else None


def report_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    if kind in ("renew_loan", "renew_refused", "loan_due"):
        loans = _latest(observed, _is_loan, "loan_ref")
        loan = _resolve(slots.get("loan", ""), loans, _LOAN, ("on loan",))
        if loan is None:
            return ReportFacts()
        facts: dict[str, str] = {"loan_ref": loan["loan_ref"], "title": loan["title"],
                                 "due_date": loan["due_date"]}
        if kind == "renew_refused":
            books = _latest(observed, lambda o: "holds_queued" in o and "isbn" in o, "isbn")
            book = books.get(loan["isbn"])
            if book is not None and book["holds_queued"] > 0:
                facts["queued"] = str(book["holds_queued"])
            elif int(loan["renewals"]) >= 2:
                facts["renewals"] = str(loan["renewals"])
        return ReportFacts(facts, ("loan_ref",))
    if kind == "cancel_hold":
        hold = _resolve(slots.get("hold", ""), _latest(observed, _is_hold, "hold_ref"), _HOLD,
                        ("waiting", "ready"))
        if hold is None:
            return ReportFacts()
        return ReportFacts({"hold_ref": hold["hold_ref"], "title": hold["title"], "status": hold["status"]},
                           ("hold_ref",))
    if kind == "place_hold":
        title, fmt = slots.get("book", "").lower(), slots.get("format", "").lower()
        editions = [o for obs in observed if obs.error is None for o in _objects(obs.result)
                    if "isbn" in o and "format" in o and "loan_ref" not in o and "hold_ref" not in o
                    and o["title"].lower() == title and o["format"] == fmt]
        facts = {}
        if editions:
            facts.update(isbn=editions[-1]["isbn"], title=editions[-1]["title"], format=fmt)
        card = _card(observed)
        if card is not None:
            facts["card_number"] = card["card_number"]
        if slots.get("branch"):
            facts["branch_code"] = slots["branch"]
        placed = [o for obs in observed if obs.tool == "place_hold" and obs.error is None
                  for o in _objects(obs.result) if _is_hold(o) and o["isbn"] == facts.get("isbn")]
        if placed:
            facts.update(hold_ref=placed[-1]["hold_ref"], position=str(placed[-1]["queue_position"]),
                         branch_code=placed[-1]["branch_code"])
        return ReportFacts(facts, ("hold_ref",) if "hold_ref" in facts else ())
    if kind == "pay_fines":
        card = _card(observed)
        if card is None:
            return ReportFacts()
        if "paid" in card:
            return ReportFacts({"receipt": card["receipt"], "paid": f"{card['paid']:.2f}",
                                "card_number": card["card_number"], "balance": f"{card['balance']:.2f}"},
                               ("card_number",))
        return ReportFacts({"card_number": card["card_number"], "balance": f"{card['fines']:.2f}"},
                           ("card_number",))
    return ReportFacts()
