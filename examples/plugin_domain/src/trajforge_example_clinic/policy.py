"""The policy the agent reads: the kit's three standard rules, then the clinic's own."""

from __future__ import annotations

from trajforge.environments.kit import policy_text, standard_rules
from trajforge_example_clinic.records import MAX_UPCOMING, NOTICE_HOURS, NOW

RULES: dict[str, str] = {
    **standard_rules(user="patient", identify="patient number and date of birth, or by full name and phone "
                                              "number", owns="record and appointments"),
    "slot_open": "Only an open slot can be booked.",
    "referral": "A specialist (dermatology, cardiology) can be booked only with a referral to that specialty "
                "on file.",
    "upcoming_limit": f"A patient can have at most {MAX_UPCOMING} upcoming appointments.",
    "booked_only": "Only a booked appointment can be cancelled.",
    "cancel_notice": f"An appointment cannot be cancelled less than {NOTICE_HOURS} hours before it starts.",
    "front_desk": "Prescriptions, test results and billing are handled by the front desk: transfer the patient "
                  "with a summary.",
}

# the rules each write is subject to, beyond the standard three (blueprints list them)
TOOL_RULES: dict[str, tuple[str, ...]] = {
    "book_appointment": ("slot_open", "referral", "upcoming_limit"),
    "cancel_appointment": ("booked_only", "cancel_notice"),
}

POLICY_TEXT = policy_text(
    "Northside Clinic: appointment desk policy",
    f"You book and cancel appointments for identified patients. It is now {NOW}. Use the tools for every "
    "fact and action.", RULES,
    "If a rule stops a request, say which fact stops it and what the rule is.")
