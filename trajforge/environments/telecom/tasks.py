"""Sampling telecom tasks: a customer, 1-3 intents, and the ground-truth calls that fulfil them.

Several intents are under dual control: the cause of the problem is on the customer's phone
(airplane mode on, mobile data off, a custom APN, a SIM that needs a restart, roaming off on the
phone while abroad), and the ground truth holds the customer's own tool calls (kind ``user``)
that the agent must ask for: read the status bar first, then the fix, then the status bar again.
Their effect on the phone (``devices``) is part of the expected final state. Each intent is
built on a working environment that already holds the effects of the intents before it.

Lines are named by their number. Where another of the customer's lines is on the same plan and
is one the request could act on too, the customer may say "my line on the Plus 15GB plan" first
and give the number only when the agent asks which one (a clarify step): only for a plan change,
where nothing the customer does on a phone comes between the reads and the write.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, cast

from trajforge.environments.base import Environment
from trajforge.environments.kit import P_AMBIGUOUS, KindMix, TaskBuilder, draw_intents
from trajforge.environments.tasks import DraftCall, DraftIntent, DraftOutput, DraftTask, TaskRejected
from trajforge.environments.telecom.data import (
    PLANS,
    TOPUP_CAP_GB,
    TOPUP_PRICE_PER_GB,
    TOPUP_SIZES,
    Customer,
    Device,
    Line,
    TelecomState,
    data_limit,
    money,
)
from trajforge.environments.telecom.policy import topup_gb

READ_ONLY_KINDS = ("bill_question", "roaming_refused")
WRITE_KINDS = ("no_data", "roaming_abroad", "change_plan", "data_topup", "pay_bill", "resume_line",
               "outage")
KINDS = KindMix(READ_ONLY_KINDS, WRITE_KINDS,
                weights={"no_data": 10, "roaming_abroad": 10, "change_plan": 2, "data_topup": 8,
                         "pay_bill": 1, "resume_line": 6, "outage": 6, "roaming_refused": 3},
                once=frozenset({"outage"}), final=frozenset({"outage"}))
# the share of descriptions of a line by its plan ("my line on the Plus 15GB plan") that fit
# another line the same intent could act on (same plan and status, eligible), where one can (a
# clarify step; otherwise the line is named by its number), and the intents that take them: a
# write with no call of the customer's before it, so asking which line comes between the reads
# and the write (the scripted agent asks the customer to use their phone once the reads are made)
CLARIFIED_KINDS = frozenset({"change_plan"})
# the phone's settings that keep it off mobile data, each with the customer's tool that fixes it
FIXES: tuple[tuple[str, str], ...] = (("airplane_mode", "toggle_airplane_mode"),
                                      ("mobile_data", "toggle_mobile_data"),
                                      ("apn", "reset_apn_settings"), ("sim", "restart_device"))


def phone_fixes(device: Device) -> list[str]:
    """The customer's tools that put the phone's settings right, in the order to use them."""
    wrong = {"airplane_mode": device.airplane_mode, "mobile_data": not device.mobile_data,
             "apn": device.apn != "standard", "sim": device.sim != "ready"}
    return [fix for setting, fix in FIXES if wrong[setting]]


class _Builder(TaskBuilder):
    """Builds one task for one customer (the kit's builder: reads made once, entities used once)."""

    def __init__(self, env: Environment, rng: random.Random, customer: Customer, p_revision: float,
                 p_indirect: float = 0.0) -> None:
        super().__init__(env, rng)
        self.customer, self.p_revision, self.p_indirect = customer, p_revision, p_indirect

    @property
    def state(self) -> TelecomState:
        return cast(TelecomState, self.env.state)

    def user_call(self, name: str, number: str) -> DraftCall:
        return DraftCall(name, {"number": number}, "user")

    def lines(self) -> list[Line]:
        return [self.state.lines[n] for n in self.customer.line_numbers]

    def pick_line(self, ok: Any) -> Line:
        options = [line for line in self.lines() if line.number not in self.used and ok(line)]
        if not options:
            raise TaskRejected("no_eligible_line", "")
        line = self.rng.choice(options)
        self.used.add(line.number)
        return line

    def line_reads(self, line: Line, fits: Callable[[Line], bool]) -> tuple[list[DraftCall], int]:
        """The reads that show the line the user names, and how many lines they show. When
        another of the customer's lines on its plan, in the same status, is one this intent could
        act on too (``fits``), the user may say "my line on the <plan> plan" first and give the
        number once asked (``self.clarify``); the agent then reads every line on that plan."""
        same = [x for x in self.lines() if x.plan_id == line.plan_id]
        rivalled = self.kind in CLARIFIED_KINDS and any(
            x.number != line.number and x.status == line.status and fits(x) for x in same)
        # drawn only where the words can be ambiguous, so other tasks keep their draws
        if rivalled and self.rng.random() < self.p_indirect and self.rng.random() < P_AMBIGUOUS:
            self.clarify = ("line", f"my line on the {self.state.plans[line.plan_id].name} plan")
            return [c for x in same for c in self.read_call(
                "get_line_details", {"phone_number": x.number}, ("line",))], len(same)
        return self.read_call("get_line_details", {"phone_number": line.number}, ("line",)), 1

    def device(self, line: Line) -> Device:
        return self.state.devices[line.number]

    def at_home_fine(self, line: Line) -> bool:
        """Active, at home, no outage: the network side serves the line."""
        device = self.device(line)
        return (line.status == "active" and device.abroad_in is None
                and self.customer.zip_code not in self.state.outages)

    def overdue(self) -> list[str]:
        return [b.id for b in self.state.overdue_bills(self.customer.id)]

    # --- intents -----------------------------------------------------------------------------

    def _no_data(self) -> DraftIntent:
        line = self.pick_line(lambda x: self.at_home_fine(x) and phone_fixes(self.device(x))
                              and x.data_used_gb < data_limit(self.state, x))
        n = line.number
        calls = self.read_call("get_line_details", {"phone_number": n}, ("line",))
        calls += [self.user_call("check_status_bar", n)]
        calls += [self.user_call(fix, n) for fix in phone_fixes(self.device(line))]
        calls += [self.user_call("check_status_bar", n)]
        return DraftIntent("no_data", {"line": n}, calls, [], 1)

    def _roaming_abroad(self) -> DraftIntent:
        def ok(x: Line) -> bool:
            device = self.device(x)
            return (x.status == "active" and device.abroad_in is not None and not self.overdue()
                    and not phone_fixes(device) and not (x.roaming_enabled and device.roaming))
        line = self.pick_line(ok)
        n, device = line.number, self.device(line)
        calls = self.read_call("get_line_details", {"phone_number": n}, ("line",))
        calls += [self.user_call("check_status_bar", n)]
        if not line.roaming_enabled:
            calls.append(DraftCall("enable_roaming", {"phone_number": n}, "write", ("line",)))
        if not device.roaming:
            calls.append(self.user_call("toggle_device_roaming", n))
        calls.append(self.user_call("check_status_bar", n))
        return DraftIntent("roaming_abroad", {"line": n}, calls, [], 1)

    def _roaming_refused(self) -> DraftIntent:
        overdue = self.overdue()
        line = self.pick_line(lambda x: x.status == "active" and not x.roaming_enabled and bool(overdue)
                              and self.device(x).abroad_in is not None)
        n = line.number
        calls = self.read_call("get_line_details", {"phone_number": n}, ("line",))
        calls.append(self.user_call("check_status_bar", n))
        bill = overdue[0]
        reads = self.read_call("get_bill_details", {"bill_id": bill}, ("line",))
        if not reads:
            raise TaskRejected("already_read", bill)
        calls += reads
        refused = DraftCall("enable_roaming", {"phone_number": n}, "write", ("line",))
        return DraftIntent("roaming_refused", {"line": n}, calls,
                           [DraftOutput("bill_status", "overdue", len(calls) - 1)], 2, refused=[refused])

    def _change_plan(self) -> DraftIntent:
        def fits(x: Line) -> bool:
            return x.status == "active" and not x.plan_changed_this_cycle

        line = self.pick_line(fits)
        n = line.number
        others = [p for p in PLANS if p.id != line.plan_id]
        plan = self.rng.choice(others)
        calls, lines = self.line_reads(line, fits)  # (every line the words fit, when described)
        calls += self.read_call("list_plans", {}, ("plan",))
        calls.append(DraftCall("change_plan", {"phone_number": n, "plan_id": plan.id}, "write",
                               ("line", "plan")))
        intent = DraftIntent("change_plan", {"line": n, "plan": plan.name}, calls,
                             [DraftOutput("price", money(plan.monthly_price), len(calls) - 1)], lines + 1)
        if self.rng.random() < self.p_revision:
            first = self.rng.choice([p for p in others if p.id != plan.id])
            intent.revision = ("plan", first.name)
        return intent

    def _data_topup(self) -> DraftIntent:
        def ok(x: Line) -> bool:
            return (self.at_home_fine(x) and not phone_fixes(self.device(x))
                    and x.data_used_gb >= data_limit(self.state, x) and x.topup_gb < TOPUP_CAP_GB)
        line = self.pick_line(ok)
        n = line.number
        sizes = [s for s in TOPUP_SIZES if line.topup_gb + topup_gb(s) <= TOPUP_CAP_GB]
        size = self.rng.choice(sizes)
        calls = self.read_call("get_line_details", {"phone_number": n}, ("line",))
        calls.append(self.user_call("check_status_bar", n))
        calls.append(DraftCall("add_data_topup", {"phone_number": n, "size": size}, "write",
                               ("line", "size")))
        intent = DraftIntent("data_topup", {"line": n, "size": size}, calls,
                             [DraftOutput("charge", money(topup_gb(size) * TOPUP_PRICE_PER_GB),
                                          len(calls) - 1)], 1)
        if len(sizes) > 1 and self.rng.random() < self.p_revision:
            intent.revision = ("size", self.rng.choice([s for s in sizes if s != size]))
        return intent

    def _pay_bill(self) -> DraftIntent:
        options = [b for b in self.customer.bill_ids
                   if self.state.bills[b].status != "paid" and b not in self.used]
        if not options:
            raise TaskRejected("no_open_bill", self.customer.id)
        overdue = [b for b in options if self.state.bills[b].status == "overdue"]
        bill = self.rng.choice(overdue or options)
        self.used.add(bill)
        calls = self.read_call("get_bill_details", {"bill_id": bill}, ("bill",))
        calls.append(DraftCall("pay_bill", {"bill_id": bill}, "write", ("bill",)))
        return DraftIntent("pay_bill", {"bill": bill}, calls,
                           [DraftOutput("amount", money(self.state.bills[bill].amount), len(calls) - 1)], 1)

    def _resume_line(self) -> DraftIntent:
        if self.overdue():
            raise TaskRejected("overdue_bill", self.customer.id)
        line = self.pick_line(lambda x: x.status == "suspended")
        n = line.number
        calls = self.read_call("get_line_details", {"phone_number": n}, ("line",))
        for bill in self.customer.bill_ids:  # none may be overdue: the agent reads them to know
            calls += self.read_call("get_bill_details", {"bill_id": bill}, ("line",))
        calls.append(DraftCall("resume_line", {"phone_number": n}, "write", ("line",)))
        return DraftIntent("resume_line", {"line": n}, calls,
                           [DraftOutput("status", "active", len(calls) - 1)], len(calls) - 1)

    def _bill_question(self) -> DraftIntent:
        options = [b for b in self.customer.bill_ids if b not in self.used]
        if not options:
            raise TaskRejected("no_bill", self.customer.id)
        bill = self.rng.choice(options)
        self.used.add(bill)
        calls = self.read_call("get_bill_details", {"bill_id": bill}, ("bill",))
        if not calls:
            raise TaskRejected("already_read", bill)
        record = self.state.bills[bill]
        return DraftIntent("bill_question", {"bill": bill}, calls,
                           [DraftOutput("amount", money(record.amount), 0),
                            DraftOutput("due_date", record.due_date, 0)], 1)

    def _outage(self) -> DraftIntent:
        def ok(x: Line) -> bool:
            device = self.device(x)
            return (x.status == "active" and device.abroad_in is None and not phone_fixes(device)
                    and self.customer.zip_code in self.state.outages)
        line = self.pick_line(ok)
        n = line.number
        calls = self.read_call("get_line_details", {"phone_number": n}, ("line",))
        calls.append(self.user_call("check_status_bar", n))
        calls += self.read_call("check_network_outage", {"zip_code": self.customer.zip_code}, ())
        summary = (f"Customer {self.customer.id}: line {n} has no service at home; the phone's "
                   f"settings are fine and there is a network outage in {self.customer.zip_code}.")
        calls.append(DraftCall("transfer_to_human_agents", {"summary": summary}, "read", ()))
        return DraftIntent("outage", {"line": n}, calls, [], 2)


class TelecomTaskSampler:
    """Samples ``DraftTask``s over one template state (construct once, sample many)."""

    def __init__(self, domain: Any) -> None:
        self.domain = domain
        state: TelecomState = domain.template
        self.customer_ids = sorted(state.customers)
        # per intent kind, the customers who can ask it (so a task can open with any kind: many
        # of them need a phone or a line in a particular state)
        env = domain.environment()
        self.eligible: dict[str, list[str]] = {}
        for kind in KINDS.read_only + KINDS.writes:
            for cid in self.customer_ids:
                try:
                    _Builder(env, random.Random(0), state.customers[cid], 0.0).build(kind)
                except TaskRejected:
                    continue
                self.eligible.setdefault(kind, []).append(cid)

    def sample(self, rng: random.Random, n_intents: int, *, p_indirect: float, p_revision: float,
               p_redirect: float, p_read_only: float) -> DraftTask:
        env = self.domain.environment()
        pool = KINDS.read_only if rng.random() < p_read_only else KINDS.writes
        kinds = [k for k in pool if self.eligible.get(k)]
        lead = rng.choices(kinds, [KINDS.weights.get(k, 1) for k in kinds])[0]
        customer: Customer = env.state.customers[rng.choice(self.eligible[lead])]
        by_email = rng.random() < 0.35
        if by_email:
            identity = {"email": customer.email}
            auth = DraftCall("find_customer_by_email", {"email": customer.email}, "read", ("identity",))
        else:
            phone = customer.line_numbers[0]
            identity = {"phone": phone, "pin": customer.pin}
            auth = DraftCall("find_customer_by_phone", {"phone_number": phone, "pin": customer.pin},
                             "read", ("identity",))
        builder = _Builder(env, rng, customer, p_revision, p_indirect)
        auth_calls = [auth] + builder.read_call("get_customer_details", {"customer_id": customer.id},
                                                ("identity",))
        first = builder.build(lead)  # the customer was drawn for it, so it builds
        builder.execute(first)
        intents = [first]
        if lead not in KINDS.final and n_intents > 1:  # (the once-only kind is final too)
            try:
                intents += draw_intents(rng, n_intents - 1, p_read_only, KINDS, builder)
            except TaskRejected:
                pass  # nothing more this customer can ask: a task of one intent
        return DraftTask(identity=identity, auth_calls=auth_calls, intents=intents)
