"""The banking policy: the text the agent reads, and the rules about single writes as code.

Each rule has a stable id. ``write_breaches`` (the toolkit's) names the rules a write would
break in a state; the environment refuses such a write before the tool runs, and the policy
check replays the same function. A call on an unknown id breaks no rule: the tool reports it.
"""

from __future__ import annotations

from typing import Any

from trajforge.environments.banking.data import (
    DISPUTE_THRESHOLD,
    DISPUTE_WINDOW_DAYS,
    TODAY,
    WEEKDAYS,
    Account,
    BankingState,
    days_ago,
)
from trajforge.environments.kit import policy_text, standard_rules

DISPUTE_REASONS = ("unrecognized charge", "duplicate charge", "wrong amount", "item not received")
REPLACE_REASONS = ("lost", "stolen", "damaged")

RULES: dict[str, str] = {
    **standard_rules(user="customer",
                     identify="the phone number on file together with their date of birth, or "
                              "their email together with their passcode (both facts of one pair)",
                     owns="profile, accounts, cards, payees and transactions"),
    "transfer_limit": "A transfer or payment must be a positive amount within the source "
                      "account's remaining daily transfer limit (its daily limit minus what it "
                      "has already sent today).",
    "sufficient_funds": "A transfer or payment cannot be more than the source account's balance.",
    "account_active": "Money moves only from and to active accounts, never from or to a frozen "
                      "or closed account.",
    "own_accounts": "A transfer between accounts moves money between two different accounts of "
                    "the same customer; money for anyone else goes to one of their saved payees.",
    "payee_owned": "Payments go only to a payee saved on the customer's own profile.",
    "dispute_posted": "Only posted transactions can be disputed; pending ones cannot.",
    "dispute_window": f"A transaction can be disputed only within {DISPUTE_WINDOW_DAYS} days of "
                      "its date.",
    "dispute_once": "A transaction can be disputed only once.",
    "dispute_reason": "The dispute reason must be one of 'unrecognized charge', 'duplicate "
                      "charge', 'wrong amount' or 'item not received'.",
    "dispute_threshold": f"A dispute of a charge above {DISPUTE_THRESHOLD:.0f} dollars is handled "
                         "by a human agent: transfer the customer instead of filing it.",
    "freeze_active": "Only active cards can be frozen.",
    "unfreeze_frozen": "Only frozen cards can be unfrozen.",
    "replace_eligible": "Only active or frozen cards can be replaced, and the reason must be "
                        "'lost', 'stolen' or 'damaged'.",
    "lost_frozen_first": "A card reported lost or stolen must be frozen before it is replaced.",
}

# the rules each write tool is subject to (beyond authenticate, confirm and own_account)
TOOL_RULES: dict[str, tuple[str, ...]] = {
    "transfer_between_accounts": ("transfer_limit", "sufficient_funds", "account_active",
                                  "own_accounts"),
    "pay_payee": ("transfer_limit", "sufficient_funds", "account_active", "payee_owned"),
    "dispute_transaction": ("dispute_posted", "dispute_window", "dispute_once", "dispute_reason",
                            "dispute_threshold"),
    "freeze_card": ("freeze_active",),
    "unfreeze_card": ("unfreeze_frozen",),
    "replace_card": ("replace_eligible", "lost_frozen_first"),
    "update_phone": (),
    "update_address": (),
}

POLICY_TEXT = policy_text(
    "Banking customer service policy",
    "You are a customer service agent of a retail bank. Help authenticated customers with their "
    "accounts, cards, transactions, transfers, disputes and profile. Be concise, never invent "
    "information, and use the tools for every fact and action. "
    f"Today is {WEEKDAYS[TODAY.weekday()]}, {TODAY.isoformat()}; 'yesterday' is the day before, "
    "and 'last <weekday>' is the most recent such day before today.", RULES,
    "If a request is outside these rules, explain why it cannot be done; transfer to a human "
    "agent only when a rule says so or the customer insists on something you cannot do.")


def _money_breaches(state: BankingState, source: Account, amount: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    value = float(amount) if isinstance(amount, (int, float)) else 0.0
    if value <= 0 or value > source.remaining_limit + 1e-9:
        out.append(("transfer_limit", f"{value:.2f} is not within the remaining daily limit "
                                      f"{source.remaining_limit:.2f} of {source.id}"))
    if value > source.balance + 1e-9:
        out.append(("sufficient_funds", f"{source.id} holds {source.balance:.2f}"))
    if source.status != "active":
        out.append(("account_active", f"{source.id} is {source.status}"))
    return out


def write_breaches(state: BankingState, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(rule, what is wrong) for each rule the write ``name(args)`` would break in ``state``."""
    out: list[tuple[str, str]] = []
    if name in ("transfer_between_accounts", "pay_payee"):
        source = state.accounts.get(str(args.get("from_account_id", "")))
        if source is None:
            return []
        if name == "transfer_between_accounts":
            target = state.accounts.get(str(args.get("to_account_id", "")))
            if target is None:
                return []
            out += _money_breaches(state, source, args.get("amount"))
            if target.status != "active" and not any(r == "account_active" for r, _ in out):
                out.append(("account_active", f"{target.id} is {target.status}"))
            if target.id == source.id or target.customer_id != source.customer_id:
                out.append(("own_accounts", f"{source.id} to {target.id} is not between two of "
                                            "the customer's own accounts"))
        else:
            payee = state.payees.get(str(args.get("payee_id", "")))
            if payee is None:
                return []
            out += _money_breaches(state, source, args.get("amount"))
            if payee.customer_id != source.customer_id:
                out.append(("payee_owned", f"payee {payee.id} is not saved by {source.customer_id}"))
    elif name == "dispute_transaction":
        txn = state.transactions.get(str(args.get("transaction_id", "")))
        if txn is None:
            return []
        if txn.status != "posted":
            out.append(("dispute_posted", f"{txn.id} is {txn.status}"))
        if days_ago(txn.date) > DISPUTE_WINDOW_DAYS:
            out.append(("dispute_window", f"{txn.id} is from {txn.date}"))
        if txn.disputed:
            out.append(("dispute_once", f"{txn.id} was already disputed ({txn.dispute_id})"))
        if args.get("reason") not in DISPUTE_REASONS:
            out.append(("dispute_reason", f"reason {args.get('reason')!r} is not allowed"))
        if txn.amount > DISPUTE_THRESHOLD:
            out.append(("dispute_threshold", f"{txn.id} is {txn.amount:.2f}, above "
                                             f"{DISPUTE_THRESHOLD:.2f}"))
    elif name in ("freeze_card", "unfreeze_card", "replace_card"):
        card = state.cards.get(str(args.get("card_id", "")))
        if card is None:
            return []
        if name == "freeze_card" and card.status != "active":
            out.append(("freeze_active", f"card {card.id} is {card.status}"))
        elif name == "unfreeze_card" and card.status != "frozen":
            out.append(("unfreeze_frozen", f"card {card.id} is {card.status}"))
        elif name == "replace_card":
            reason = args.get("reason")
            if card.status not in ("active", "frozen") or reason not in REPLACE_REASONS:
                out.append(("replace_eligible", f"card {card.id} is {card.status}, reason {reason!r}"))
            if reason in ("lost", "stolen") and card.status == "active":
                out.append(("lost_frozen_first", f"card {card.id} is active; freeze it first"))
    return out
