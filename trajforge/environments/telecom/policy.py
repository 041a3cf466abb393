"""The telecom policy: the text the agent reads, and its write rules as code.

Rules about a single write are ``write_breaches`` (the environment refuses a write that breaks
one, before the tool runs; the policy check replays the same function). ``authenticate``,
``confirm`` and ``own_account`` are the kit's standard rules, checked by the framework.
"""

from __future__ import annotations

from typing import Any

from trajforge.environments.kit import policy_text, standard_rules
from trajforge.environments.telecom.data import TOPUP_CAP_GB, TelecomState, data_limit

RULES: dict[str, str] = {
    **standard_rules(user="customer",
                     identify="the line's phone number and the account PIN, or the account email",
                     owns="account, lines and bills"),
    "roaming_eligible": "Roaming can be enabled only on an active line that does not have it yet, "
                        "and only when none of the account's bills is overdue.",
    "plan_once": "A line's plan can be changed once per billing cycle, only to a different plan, "
                 "and only on an active line.",
    "topup_needed": "A data top-up can be added only to an active line that has used up its data "
                    "allowance; when data is left, the problem is on the phone, not the allowance.",
    "topup_limit": f"Top-ups come as 1GB, 2GB, 5GB or 10GB, and a line takes at most {TOPUP_CAP_GB}GB "
                   "of top-ups per billing cycle.",
    "resume_paid": "Only a suspended line can be resumed, and only once none of the account's "
                   "bills is overdue.",
    "pay_open": "Only an unpaid or overdue bill can be paid.",
}

# the rules each write tool is subject to (beyond authenticate, confirm and own_account)
TOOL_RULES: dict[str, tuple[str, ...]] = {
    "enable_roaming": ("roaming_eligible",),
    "change_plan": ("plan_once",),
    "add_data_topup": ("topup_needed", "topup_limit"),
    "resume_line": ("resume_paid",),
    "pay_bill": ("pay_open",),
}

POLICY_TEXT = policy_text(
    "Telecom customer care policy",
    "You are a customer care agent of a mobile phone provider. Help authenticated customers with "
    "their lines, plans, data and bills. The customer's phone is in their hands, not yours: you "
    "cannot change its settings, only ask the customer to check or change them and tell you "
    "what they see. Diagnose connection problems with what the phone shows before changing the "
    "account. Be concise, never invent information, and use the tools for every fact and action.",
    RULES,
    "When the cause is outside the customer's phone and account (a network outage in their area), "
    "transfer the customer to a human agent with a summary.")


def topup_gb(size: str) -> int:
    return int(size.removesuffix("GB"))


def write_breaches(state: TelecomState, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(rule, what is wrong) for each rule the write would break; unknown ids break none."""
    out: list[tuple[str, str]] = []
    if name == "pay_bill":
        bill = state.bills.get(str(args.get("bill_id", "")))
        if bill is not None and bill.status == "paid":
            out.append(("pay_open", f"bill {bill.id} is already paid"))
        return out
    line = state.lines.get(str(args.get("phone_number", "")))
    if line is None:
        return out
    overdue = state.overdue_bills(line.customer_id)
    if name == "enable_roaming":
        if line.status != "active":
            out.append(("roaming_eligible", f"line {line.number} is {line.status}"))
        elif line.roaming_enabled:
            out.append(("roaming_eligible", f"line {line.number} already has roaming"))
        elif overdue:
            out.append(("roaming_eligible", f"bill {overdue[0].id} is overdue"))
    elif name == "change_plan":
        if line.status != "active":
            out.append(("plan_once", f"line {line.number} is {line.status}"))
        elif line.plan_changed_this_cycle:
            out.append(("plan_once", f"line {line.number} already changed plan this cycle"))
        elif args.get("plan_id") == line.plan_id:
            out.append(("plan_once", f"line {line.number} is already on {line.plan_id}"))
    elif name == "add_data_topup":
        if line.status != "active" or line.data_used_gb < data_limit(state, line):
            out.append(("topup_needed", f"line {line.number} has data left or is not active"))
        size = str(args.get("size", ""))
        if size.endswith("GB") and size[:-2].isdigit() and line.topup_gb + topup_gb(size) > TOPUP_CAP_GB:
            out.append(("topup_limit", f"line {line.number} would exceed {TOPUP_CAP_GB}GB of top-ups"))
    elif name == "resume_line":
        if line.status != "suspended":
            out.append(("resume_paid", f"line {line.number} is not suspended"))
        elif overdue:
            out.append(("resume_paid", f"bill {overdue[0].id} is overdue"))
    return out
