"""The library's policy: its rules (kit.standard_rules' three first), and which writes each binds."""

from __future__ import annotations

from tests.domains.library.data import FINE_CAP, HOLD_LIMIT, MAX_RENEWALS, RENEWAL_DAYS, TODAY
from trajforge.environments.kit import policy_text, standard_rules

RULES: dict[str, str] = {
    **standard_rules(user="member", identify="library card number and PIN, or by full name, date of birth "
                                             "and postal code", owns="card, loans and holds"),
    "renewal_limit": f"A loan can be renewed at most {MAX_RENEWALS} times; each renewal adds {RENEWAL_DAYS} "
                     "days to its due date.",
    "holds_block_renewal": "A loan cannot be renewed while other members have holds queued for its edition.",
    "returned_final": "A returned loan cannot be renewed.",
    "fines_block": f"A member who owes more than ${FINE_CAP:.2f} in fines can neither renew loans nor place "
                   "holds until the balance is paid down.",
    "shelf_first": "Holds are only for editions with no copy on the shelf at any branch.",
    "one_hold_per_edition": "A member can hold an edition only once at a time.",
    "hold_limit": f"A member can have at most {HOLD_LIMIT} holds waiting or ready at a time.",
    "waiting_only": "Only a waiting hold can be cancelled; a hold ready for pickup lapses by itself.",
    "fine_payment": "A fine payment is more than zero and at most the outstanding balance.",
    "librarian_only": "Lost or damaged cards and items are handled by a librarian: transfer the member "
                      "with a summary of the request.",
}

TOOL_RULES: dict[str, tuple[str, ...]] = {
    "renew_loan": ("renewal_limit", "holds_block_renewal", "returned_final", "fines_block"),
    "place_hold": ("shelf_first", "one_hold_per_edition", "hold_limit", "fines_block"),
    "cancel_hold": ("waiting_only",),
    "pay_fine": ("fine_payment",),
}

POLICY_TEXT = policy_text(
    "Riverside Public Library: member desk policy",
    f"You help identified members with their loans, holds and fines. Today is {TODAY}. Use the tools "
    "for every fact and action, and never invent a card number, ISBN or reference.", RULES,
    "If a rule stops a request, say which fact stops it and what the rule is.")
