"""What a careful banking agent can tell the customer, read from the tool results it has seen.

The user names things in words: an account by id or by type ("my savings account"), a card by
id, by its last four digits or by type, a payee by name, and a charge by id or by description
("the coffee shop charge last Tuesday", "the $54.20 gas station charge", "the Shell charge on
June 3"). ``describe`` writes such a description for the task sampler (only when exactly one
transaction of the account fits it) and ``parse_description`` reads one back; the resolvers
here find the entity among the records the tools showed in this episode (their latest
versions), and ``report_facts`` returns the values of an intent's report placeholders. Nothing
here reads the blueprint.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from trajforge.environments.banking.claims import ids_in
from trajforge.environments.banking.data import (
    CATEGORIES,
    DISPUTE_WINDOW_DAYS,
    MONTH_NAMES,
    TODAY,
    WEEKDAYS,
    address_text,
    days_ago,
    money,
)
from trajforge.environments.base import Observation, ReportFacts

# how a user names a category in a description; no merchant's name contains one of these
CATEGORY_WORDS = {"coffee": "coffee shop", "groceries": "supermarket", "fuel": "gas station",
                  "travel": "travel", "dining": "restaurant", "shopping": "shopping",
                  "utilities": "utility"}
MERCHANTS = sorted({m for merchants, _ in CATEGORIES.values() for m in merchants}, key=len, reverse=True)
_AMOUNT = re.compile(r"\$(\d+\.\d{2})")
_LAST_DAY = re.compile(r"\blast (" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
_ON_DAY = re.compile(r"\bon (" + "|".join(MONTH_NAMES) + r") (\d{1,2})\b", re.IGNORECASE)
_ENDING = re.compile(r"ending in (\d{4})")


# --- describing and reading back a charge ---------------------------------------------------

def when_text(day: str) -> str:
    """A transaction's date as a customer says it, relative to ``TODAY``."""
    ago = days_ago(day)
    if ago == 0:
        return "today"
    if ago == 1:
        return "yesterday"
    d = date.fromisoformat(day)
    if ago <= 7:
        return f"last {WEEKDAYS[d.weekday()]}"
    return f"on {MONTH_NAMES[d.month - 1]} {d.day}"


@dataclass(frozen=True)
class Described:
    """What a description of a charge constrains (None: not said)."""

    amount: float | None = None
    merchant: str | None = None
    category: str | None = None
    day: str | None = None

    def fits(self, txn: dict[str, Any]) -> bool:
        return ((self.amount is None or abs(float(txn["amount"]) - self.amount) < 0.005)
                and (self.merchant is None or txn["merchant"] == self.merchant)
                and (self.category is None or txn["category"] == self.category)
                and (self.day is None or txn["date"] == self.day))

    @property
    def empty(self) -> bool:
        return self == Described()


def _day_of(text: str) -> str | None:
    low = text.lower()
    if re.search(r"\btoday\b", low):
        return TODAY.isoformat()
    if re.search(r"\byesterday\b", low):
        return (TODAY - timedelta(days=1)).isoformat()
    m = _LAST_DAY.search(text)
    if m:
        wanted = [w.lower() for w in WEEKDAYS].index(m.group(1).lower())
        back = (TODAY.weekday() - wanted) % 7 or 7
        return (TODAY - timedelta(days=back)).isoformat()
    m = _ON_DAY.search(text)
    if m:
        month = [n.lower() for n in MONTH_NAMES].index(m.group(1).lower()) + 1
        try:
            d = date(TODAY.year, month, int(m.group(2)))
        except ValueError:
            return None
        if d > TODAY:
            d = date(TODAY.year - 1, month, int(m.group(2)))
        return d.isoformat()
    return None


def parse_description(text: str) -> Described:
    amount = _AMOUNT.search(text)
    low = text.lower()
    merchant = next((m for m in MERCHANTS if re.search(r"(?<!\w)" + re.escape(m.lower()) + r"(?!\w)", low)),
                    None)
    category = next((c for c, w in CATEGORY_WORDS.items() if re.search(r"\b" + w + r"\b", low)), None)
    return Described(float(amount.group(1)) if amount else None, merchant, category, _day_of(text))


def describe(txn: dict[str, Any], history: Sequence[dict[str, Any]], rng: random.Random) -> str | None:
    """A description of ``txn`` that exactly one transaction of ``history`` fits, or None."""
    cat = CATEGORY_WORDS[txn["category"]]
    amount = money(float(txn["amount"]))
    when = when_text(txn["date"])
    options = [f"the {cat} charge {when}", f"the ${amount} {cat} charge",
               f"the {txn['merchant']} charge {when}", f"the ${amount} charge from {txn['merchant']}"]
    rng.shuffle(options)
    for text in options:
        wanted = parse_description(text)
        if [t["id"] for t in history if wanted.fits(t)] == [txn["id"]]:
            return text
    return None


# --- what the tools showed ---------------------------------------------------------------------

def _objects(value: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            out += _objects(v)
    elif isinstance(value, list):
        for v in value:
            out += _objects(v)
    return out


def seen(observed: Sequence[Observation], prefix: str, field: str) -> dict[str, dict[str, Any]]:
    """The latest version of every record of a kind (its id's prefix) the tools showed, as long
    as it carries ``field`` (a full record, not a reference)."""
    out: dict[str, dict[str, Any]] = {}
    for obs in observed:
        if obs.error is not None:
            continue
        for obj in _objects(obs.result):
            value = obj.get("id")
            if isinstance(value, str) and value.startswith(prefix + "-") and field in obj:
                out[value] = obj
    return out


def resolve_account(ref: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    accounts = seen(observed, "ACC", "balance")
    named = ids_in(ref, "ACC")
    if named:
        return accounts.get(named[0])
    found = matching_accounts(ref, observed)
    return accounts[found[0]] if len(found) == 1 else None


def matching_accounts(ref: str, observed: Sequence[Observation]) -> tuple[str, ...]:
    """The ids of the accounts the tools showed that "my savings account" fits (of the type it
    names), in the order first shown."""
    low = ref.lower()
    kind = next((k for k in ("checking", "savings") if k in low), None)
    if kind is None:
        return ()
    return tuple(a for a, record in seen(observed, "ACC", "balance").items() if record["type"] == kind)


def resolve_card(ref: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    cards = seen(observed, "CRD", "last_four")
    named = ids_in(ref, "CRD")
    if named:
        return cards.get(named[0])
    found = list(cards.values())
    ending = _ENDING.search(ref)
    if ending:
        found = [c for c in found if c["last_four"] == ending.group(1)]
    else:
        found = [c for c in found if c["status"] in ("active", "frozen")]
    low = ref.lower()
    for kind in ("debit", "credit"):
        if kind in low:
            found = [c for c in found if c["type"] == kind]
    return found[0] if len(found) == 1 else None


def resolve_transaction(ref: str, account_id: str | None,
                        observed: Sequence[Observation]) -> dict[str, Any] | None:
    txns = seen(observed, "TXN", "merchant")
    named = ids_in(ref, "TXN")
    if named:
        return txns.get(named[0])
    wanted = parse_description(ref)
    if wanted.empty:
        return None
    found = [t for t in txns.values() if (account_id is None or t["account_id"] == account_id)
             and wanted.fits(t)]
    return found[0] if len(found) == 1 else None


def resolve_payee(ref: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    payees = seen(observed, "PYE", "name")
    named = ids_in(ref, "PYE")
    if named:
        return payees.get(named[0])
    found = [p for p in payees.values() if p["name"].lower() in ref.lower()]
    return found[0] if len(found) == 1 else None


def _last_result(observed: Sequence[Observation], tool: str, **match: str) -> Any:
    """The result of the last successful call of ``tool`` whose arguments have ``match``."""
    for obs in reversed(observed):
        if obs.tool == tool and obs.error is None and \
                all(str(obs.arguments.get(k)) == v for k, v in match.items()):
            return obs.result
    return None


# --- facts per intent kind ---------------------------------------------------------------------

def _transaction_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    account = resolve_account(slots.get("account", ""), observed)
    txn = resolve_transaction(slots.get("charge", ""), account["id"] if account else None, observed)
    if txn is None:
        return ReportFacts()
    facts = {"transaction_id": str(txn["id"]), "merchant": str(txn["merchant"]),
             "amount": money(float(txn["amount"]))}
    if kind == "transaction_lookup":
        facts |= {"date": str(txn["date"]), "status": str(txn["status"])}
    elif kind == "dispute_refused":
        if txn.get("disputed") and txn.get("dispute_id"):
            facts["dispute_id"] = str(txn["dispute_id"])
        elif txn["status"] != "posted":
            facts["status"] = str(txn["status"])
        elif days_ago(str(txn["date"])) > DISPUTE_WINDOW_DAYS:
            facts["date"] = str(txn["date"])
    elif kind == "dispute_charge":
        facts["date"] = str(txn["date"])
        dispute = _last_result(observed, "dispute_transaction", transaction_id=str(txn["id"]))
        if isinstance(dispute, dict):
            facts |= {"dispute_id": str(dispute["id"]), "dispute_status": str(dispute["status"])}
    entity = ("transaction_id", "dispute_id") if "dispute_id" in facts else ("transaction_id",)
    return ReportFacts(facts, entity)


def _transfer_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    source = resolve_account(slots.get("from_account", ""), observed)
    if source is None:
        return ReportFacts()
    facts = {"from_account_id": str(source["id"]), "balance": money(float(source["balance"]))}
    entity: tuple[str, ...] = ("from_account_id",)
    if kind == "transfer_funds":
        target = resolve_account(slots.get("to_account", ""), observed)
        if target is None:
            return ReportFacts()
        facts["to_account_id"] = str(target["id"])
        entity += ("to_account_id",)
        done = _last_result(observed, "transfer_between_accounts", from_account_id=source["id"],
                            to_account_id=target["id"])
    else:
        payee = resolve_payee(slots.get("payee", ""), observed)
        if payee is None:
            return ReportFacts()
        facts |= {"payee_id": str(payee["id"]), "payee_name": str(payee["name"])}
        entity += ("payee_id", "payee_name")
        done = _last_result(observed, "pay_payee", from_account_id=source["id"], payee_id=payee["id"])
    if isinstance(done, dict):
        facts |= {"transfer_id": str(done["id"]), "amount": money(float(done["amount"])),
                  "transfer_status": str(done["status"]),
                  "balance": money(float(done["from_balance_after"]))}
        entity += ("transfer_id",)
    return ReportFacts(facts, entity)


def _card_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    card = resolve_card(slots.get("card", ""), observed)
    if card is None:
        return ReportFacts()
    facts = {"card_id": str(card["id"]), "card_type": str(card["type"]),
             "last_four": str(card["last_four"]), "status": str(card["status"])}
    entity: tuple[str, ...] = ("card_id", "card_type", "last_four")
    if kind == "replace_card":
        done = _last_result(observed, "replace_card", card_id=card["id"])
        if isinstance(done, dict):
            new = done["new_card"]
            facts |= {"new_card_id": str(new["id"]), "new_last_four": str(new["last_four"]),
                      "new_status": str(new["status"])}
            entity += ("new_card_id", "new_last_four")
    return ReportFacts(facts, entity)


def _balance_facts(slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    account = resolve_account(slots.get("account", ""), observed)
    if account is None:
        return ReportFacts()
    return ReportFacts({"account_id": str(account["id"]), "account_type": str(account["type"]),
                        "balance": money(float(account["balance"]))}, ("account_id", "account_type"))


def _profile_facts(kind: str, observed: Sequence[Observation]) -> ReportFacts:
    done = _last_result(observed, kind)
    if not isinstance(done, dict) or "phone" not in done:
        return ReportFacts()
    if kind == "update_address":
        return ReportFacts({"address": address_text(done["address"])})
    return ReportFacts({"phone": str(done["phone"])})


def report_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    """The values of an intent's report placeholders, from this episode's tool results."""
    if kind in ("transaction_lookup", "dispute_charge", "dispute_refused"):
        return _transaction_facts(kind, slots, observed)
    if kind in ("transfer_funds", "pay_payee"):
        return _transfer_facts(kind, slots, observed)
    if kind in ("freeze_card", "unfreeze_card", "replace_card"):
        return _card_facts(kind, slots, observed)
    if kind == "account_balance":
        return _balance_facts(slots, observed)
    if kind in ("update_phone", "update_address"):
        return _profile_facts(kind, observed)
    return ReportFacts()  # dispute_escalated: the hand-over says it all
