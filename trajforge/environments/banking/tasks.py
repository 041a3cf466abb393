"""Sampling banking tasks: a customer, 1-4 intents, and the ground-truth calls that fulfil them.

Each intent is built against a working environment that already holds the effects of the
intents before it (``kit.draw_intents``), and its calls run there at once. The evidence is
read-heavy: a customer describes a charge ("the coffee shop charge last Tuesday", "the $54.20
gas station charge") and the agent must list the account's dozens of transactions to find the
one that fits; a description is drawn only when exactly one transaction of the account fits it.
Accounts are named by id or by type, cards by id or by their last four digits, payees by name.
Where the customer has two accounts of a type that the request could act on ("my savings
account" when both savings accounts are active), the customer may say the type first and give
the account id only when the agent asks which one (a clarify step). Cards are never ambiguous
so: a customer has at most one usable card of each type.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, cast

from trajforge.environments.banking.data import (
    DISPUTE_THRESHOLD,
    DISPUTE_WINDOW_DAYS,
    Account,
    BankingState,
    Card,
    Customer,
    Transaction,
    _digits,
    address_text,
    days_ago,
    money,
    random_address,
)
from trajforge.environments.banking.policy import DISPUTE_REASONS, REPLACE_REASONS
from trajforge.environments.banking.reports import describe
from trajforge.environments.banking.tools import new_last_four, next_id
from trajforge.environments.base import Environment
from trajforge.environments.kit import P_AMBIGUOUS, KindMix, TaskBuilder, draw_intents
from trajforge.environments.tasks import (
    DraftCall,
    DraftIntent,
    DraftOutput,
    DraftTask,
    IntentPlan,
    TaskPlan,
    TaskRejected,
)
from trajforge.schemas.blueprint import TaskBlueprint

READ_ONLY_KINDS = ("account_balance", "transaction_lookup")
WRITE_KINDS = ("dispute_charge", "dispute_refused", "dispute_escalated", "transfer_funds",
               "pay_payee", "freeze_card", "unfreeze_card", "replace_card", "update_phone",
               "update_address")
KINDS = KindMix(READ_ONLY_KINDS, WRITE_KINDS,
                weights={"dispute_charge": 4, "dispute_refused": 3, "dispute_escalated": 2,
                         "transfer_funds": 3, "pay_payee": 2, "freeze_card": 2, "unfreeze_card": 2,
                         "replace_card": 3},
                once=frozenset({"update_phone", "update_address", "dispute_escalated"}),
                final=frozenset({"dispute_escalated"}))
# the share of descriptions of an account by its type ("my savings account") that fit another
# account the same intent could act on (same type and status, eligible), where one can (a clarify
# step; otherwise the account is named by id), and the intents that take them: a write whose
# outputs follow the write, so asking which account comes between the reads and it
CLARIFIED_KINDS = frozenset({"dispute_charge", "transfer_funds", "pay_payee"})
AMOUNTS = (20.0, 40.0, 50.0, 75.0, 120.0, 150.0, 200.0, 250.0, 300.0, 450.0, 600.0, 800.0, 1000.0,
           35.5, 62.25, 137.8)


def amount_text(value: float) -> str:
    """An amount as the customer says it: "250 dollars", "62.25 dollars"."""
    return f"{value:.0f} dollars" if value.is_integer() else f"{value:.2f} dollars"


def _distinct(a: str, b: str) -> bool:
    """Neither value is part of the other (so the agent can tell which one was said last)."""
    return a.lower() not in b.lower() and b.lower() not in a.lower()


class _Builder(TaskBuilder):
    """Builds one task for one customer; the kit's builder holds the working environment, what
    was read since the last write and the entities intents have taken."""

    def __init__(self, env: Environment, rng: random.Random, customer: Customer,
                 p_indirect: float, p_revision: float, p_redirect: float) -> None:
        super().__init__(env, rng)
        self.customer = customer
        self.p_indirect, self.p_revision, self.p_redirect = p_indirect, p_revision, p_redirect

    @property
    def state(self) -> BankingState:
        return cast(BankingState, self.env.state)

    def refresh(self) -> None:
        self.customer = self.state.customers[self.customer.id]

    # --- the customer's records ----------------------------------------------------------------

    def accounts(self) -> list[Account]:
        return [self.state.accounts[a] for a in self.customer.account_ids]

    def cards(self) -> list[Card]:
        return [self.state.cards[c] for c in self.customer.card_ids]

    def history(self, account: Account) -> list[Transaction]:
        return [self.state.transactions[t] for t in account.transaction_ids]

    def pick(self, options: list[Any], why: str) -> Any:
        options = [o for o in options if o.id not in self.used]
        if not options:
            raise TaskRejected(why, self.customer.id)
        chosen = self.rng.choice(options)
        self.used.add(chosen.id)
        return chosen

    # --- references ----------------------------------------------------------------------------

    def account_ref(self, account: Account, role: str,
                    fits: Callable[[Account], bool] | None = None) -> tuple[str, list[DraftCall]]:
        """How the user names an account ("my savings account" when it is their only one of
        its type, else its id) and the reads that show it to the agent. When another account of
        the type is one this intent could act on too (``fits``), the user may say the type first
        and give the id once asked (``self.clarify``); the agent lists the accounts to see both."""
        same = [a for a in self.accounts() if a.type == account.type]
        if len(same) == 1 and self.rng.random() < self.p_indirect:
            return (f"my {account.type} account",
                    self.read_call("list_accounts", {"customer_id": self.customer.id}, ("identity",)))
        # drawn only where the words can be ambiguous, so other tasks keep their draws
        if self._rivalled(account, same, fits) and (
                self.rng.random() < self.p_indirect and self.rng.random() < P_AMBIGUOUS
                if self.clarify_plan is None else self.clarify_plan):
            self.clarify = (role, f"my {account.type} account")
            return account.id, self.read_call("list_accounts", {"customer_id": self.customer.id}, (role,))
        return account.id, self.read_call("get_account", {"account_id": account.id}, (role,))

    def _rivalled(self, account: Account, same: list[Account], fits: Callable[[Account], bool] | None) -> bool:
        """Whether another account of the type, in the same status, is one this intent could act
        on too, so "my savings account" is truly ambiguous (one clarify step per intent)."""
        return fits is not None and self.clarify is None and self.kind in CLARIFIED_KINDS and any(
            a.id != account.id and a.status == account.status and fits(a) for a in same)

    def card_ref(self, card: Card, *, by_type: bool = True) -> tuple[str, list[DraftCall]]:
        """A card by its last four digits ("my debit card ending in 1234"), by type when it is
        the customer's only usable card of its type, or by id; and the read that shows it."""
        cards = self.cards()
        usable = [c for c in cards if c.type == card.type and c.status in ("active", "frozen")]
        ref = None
        if self.rng.random() < self.p_indirect:
            if by_type and len(usable) == 1 and self.rng.random() < 0.4:
                ref = f"my {card.type} card"
            elif sum(c.last_four == card.last_four for c in cards) == 1:
                ref = f"my {card.type} card ending in {card.last_four}"
        if ref is None:
            return card.id, self.read_call("get_card", {"card_id": card.id}, ("card",))
        return ref, self.read_call("list_cards", {"customer_id": self.customer.id}, ("identity",))

    def charge(self, account: Account, txn: Transaction) -> str:
        described = describe(txn.model_dump(mode="json"),
                             [t.model_dump(mode="json") for t in self.history(account)], self.rng)
        if described is None:
            raise TaskRejected("ambiguous_charge", txn.id)
        return described

    def listing(self, account: Account, txn: Transaction) -> list[DraftCall]:
        """The read of the account's transactions that shows ``txn``: the whole history, or
        (when that was read already) the transactions of its category."""
        calls = self.read_call("list_transactions", {"account_id": account.id}, ("account",))
        if not calls:
            calls = self.read_call("list_transactions",
                                   {"account_id": account.id, "category": txn.category},
                                   ("account", "charge"))
        if not calls:
            raise TaskRejected("already_read", account.id)
        return calls

    def transaction(self, fits: Any, why: str) -> tuple[Account, Transaction]:
        options = [(a, t) for a in self.accounts() for t in self.history(a)
                   if t.id not in self.used and fits(t)]
        if not options:
            raise TaskRejected(why, self.customer.id)
        account, txn = self.rng.choice(options)
        self.used.add(txn.id)
        return account, txn

    # --- read-only intents -----------------------------------------------------------------------

    def _account_balance(self) -> DraftIntent:
        account: Account = self.pick([a for a in self.accounts() if a.status != "closed"],
                                     "no_open_account")
        ref, calls = self.account_ref(account, "account")
        if not calls:  # the accounts were listed already: look this one up
            calls = self.read_call("get_account", {"account_id": account.id}, ("account",))
        if not calls:
            raise TaskRejected("already_read", account.id)
        return DraftIntent("account_balance", {"account": ref}, calls,
                           [DraftOutput("balance", money(account.balance), len(calls) - 1)], len(calls))

    def _transaction_lookup(self) -> DraftIntent:
        account, txn = self.transaction(lambda t: True, "no_transaction")
        described = self.charge(account, txn)
        ref, calls = self.account_ref(account, "account")
        calls += self.listing(account, txn)
        at = len(calls) - 1
        return DraftIntent("transaction_lookup", {"account": ref, "charge": described}, calls,
                           [DraftOutput("amount", money(txn.amount), at),
                            DraftOutput("date", txn.date, at)], len(calls))

    # --- disputes ----------------------------------------------------------------------------------

    def _disputable(self, t: Transaction) -> bool:
        return t.status == "posted" and not t.disputed and days_ago(t.date) <= DISPUTE_WINDOW_DAYS

    def _dispute_charge(self) -> DraftIntent:
        def fits(t: Transaction) -> bool:
            return self._disputable(t) and t.amount <= DISPUTE_THRESHOLD

        account, txn = self.transaction(fits, "no_disputable_charge")
        described = self.charge(account, txn)
        ref, calls = self.account_ref(account, "account", lambda a: any(
            t.id not in self.used and fits(t) for t in self.history(a)))
        calls += self.listing(account, txn)
        reason = self.rng.choice(DISPUTE_REASONS)
        calls.append(DraftCall("dispute_transaction", {"transaction_id": txn.id, "reason": reason},
                               "write", ("account", "charge", "reason")))
        dispute_id = next_id(self.state.disputes, "DSP", 9)
        intent = DraftIntent("dispute_charge", {"account": ref, "charge": described, "reason": reason},
                             calls, [DraftOutput("dispute_id", dispute_id, len(calls) - 1)],
                             len(calls) - 1)
        if self.rng.random() < self.p_revision:
            first = self.rng.choice([r for r in DISPUTE_REASONS if _distinct(r, reason)])
            intent.revision = ("reason", first)
        return intent

    def _dispute_refused(self) -> DraftIntent:
        def blocked(t: Transaction) -> bool:
            reasons = [t.status != "posted", days_ago(t.date) > DISPUTE_WINDOW_DAYS, t.disputed]
            return sum(reasons) == 1 and t.amount <= DISPUTE_THRESHOLD

        account, txn = self.transaction(blocked, "no_blocked_charge")
        described = self.charge(account, txn)
        ref, calls = self.account_ref(account, "account")
        calls += self.listing(account, txn)
        at = len(calls) - 1
        if txn.disputed:
            output = DraftOutput("dispute_id", str(txn.dispute_id), at)
        elif txn.status != "posted":
            output = DraftOutput("status", txn.status, at)
        else:
            output = DraftOutput("date", txn.date, at)
        # the write asked for (its reason fixed: no draw, the other tasks stay as they were)
        refused = DraftCall("dispute_transaction", {"transaction_id": txn.id, "reason": DISPUTE_REASONS[0]},
                            "write", ("account", "charge"))
        return DraftIntent("dispute_refused", {"account": ref, "charge": described}, calls, [output],
                           len(calls), refused=[refused])

    def _dispute_escalated(self) -> DraftIntent:
        account, txn = self.transaction(
            lambda t: self._disputable(t) and t.amount > DISPUTE_THRESHOLD, "no_large_charge")
        described = self.charge(account, txn)
        ref, calls = self.account_ref(account, "account")
        calls += self.listing(account, txn)
        burden = len(calls)
        summary = (f"Customer {self.customer.id} wants to dispute transaction {txn.id} "
                   f"({txn.merchant}, {money(txn.amount)} dollars on {txn.date}), above the "
                   f"{DISPUTE_THRESHOLD:.0f} dollar limit for disputes an agent may file.")
        calls.append(DraftCall("transfer_to_human_agents", {"summary": summary}, "read",
                               ("account", "charge")))
        return DraftIntent("dispute_escalated", {"account": ref, "charge": described}, calls, [],
                           burden)

    # --- money movement ----------------------------------------------------------------------------

    def _amount(self, source: Account) -> float:
        cap = min(source.remaining_limit, source.balance)
        options = [a for a in AMOUNTS if a <= cap]
        if not options:
            raise TaskRejected("no_room_to_transfer", source.id)
        return self.rng.choice(options)

    def _revise_amount(self, intent: DraftIntent, source: Account, amount: float) -> None:
        if self.rng.random() >= self.p_revision:
            return
        firsts = [a for a in AMOUNTS if a != amount and _distinct(amount_text(a), amount_text(amount))]
        intent.revision = ("amount", amount_text(self.rng.choice(firsts)))

    def _transfer_funds(self) -> DraftIntent:
        active = [a for a in self.accounts() if a.status == "active"]
        if len(active) < 2:
            raise TaskRejected("fewer_than_two_active_accounts", self.customer.id)
        source, target = self.rng.sample(active, 2)
        amount = self._amount(source)
        # the other account of the transfer is not one the words could mean
        from_ref, calls = self.account_ref(source, "from_account",
                                           lambda a: a.status == "active" and a.id != target.id)
        to_ref, more = self.account_ref(target, "to_account",
                                        lambda a: a.status == "active" and a.id != source.id)
        calls += more
        calls.append(DraftCall("transfer_between_accounts",
                               {"from_account_id": source.id, "to_account_id": target.id,
                                "amount": amount}, "write", ("from_account", "to_account", "amount")))
        intent = DraftIntent("transfer_funds", {"from_account": from_ref, "to_account": to_ref,
                                                "amount": amount_text(amount)}, calls,
                             [DraftOutput("balance", money(round(source.balance - amount, 2)),
                                          len(calls) - 1)], len(calls) - 1)
        self._revise_amount(intent, source, amount)
        return intent

    def _pay_payee(self) -> DraftIntent:
        payees = [self.state.payees[p] for p in self.customer.payee_ids]
        if not payees:
            raise TaskRejected("no_payee", self.customer.id)
        payee = self.rng.choice(payees)
        active = [a for a in self.accounts() if a.status == "active"]
        if not active:
            raise TaskRejected("no_active_account", self.customer.id)
        source = self.rng.choice(active)
        amount = self._amount(source)
        from_ref, calls = self.account_ref(source, "from_account", lambda a: a.status == "active")
        calls += self.read_call("list_payees", {"customer_id": self.customer.id}, ("identity",))
        calls.append(DraftCall("pay_payee", {"from_account_id": source.id, "payee_id": payee.id,
                                             "amount": amount}, "write",
                               ("from_account", "payee", "amount")))
        intent = DraftIntent("pay_payee", {"from_account": from_ref, "payee": payee.name,
                                           "amount": amount_text(amount)}, calls,
                             [DraftOutput("balance", money(round(source.balance - amount, 2)),
                                          len(calls) - 1)], len(calls) - 1)
        self._revise_amount(intent, source, amount)
        return intent

    # --- cards ---------------------------------------------------------------------------------------

    def _card_write(self, kind: str, tool: str, status: str, after: str) -> DraftIntent:
        card: Card = self.pick([c for c in self.cards() if c.status == status], f"no_{status}_card")
        ref, calls = self.card_ref(card)
        if not calls:
            calls = self.read_call("get_card", {"card_id": card.id}, ("card",))
        calls.append(DraftCall(tool, {"card_id": card.id}, "write", ("card",)))
        return DraftIntent(kind, {"card": ref}, calls, [DraftOutput("status", after, len(calls) - 1)],
                           len(calls) - 1)

    def _freeze_card(self) -> DraftIntent:
        return self._card_write("freeze_card", "freeze_card", "active", "frozen")

    def _unfreeze_card(self) -> DraftIntent:
        return self._card_write("unfreeze_card", "unfreeze_card", "frozen", "active")

    def _replace_card(self) -> DraftIntent:
        card: Card = self.pick([c for c in self.cards() if c.status in ("active", "frozen")],
                               "no_replaceable_card")
        # a lost or stolen card must be frozen first: an active one is replaced only as damaged
        problem = self.rng.choice(REPLACE_REASONS) if card.status == "frozen" else "damaged"
        ref, calls = self.card_ref(card, by_type=False)
        if not calls:
            calls = self.read_call("get_card", {"card_id": card.id}, ("card",))
        calls.append(DraftCall("replace_card", {"card_id": card.id, "reason": problem}, "write",
                               ("card", "card_problem")))
        at = len(calls) - 1
        new_id = next_id(self.state.cards, "CRD", 7)
        intent = DraftIntent("replace_card", {"card": ref, "card_problem": problem}, calls,
                             [DraftOutput("new_card_id", new_id, at),
                              DraftOutput("new_last_four", new_last_four(card.last_four,
                                                                         len(self.state.cards)), at)],
                             len(calls) - 1)
        if card.status == "active" and self.rng.random() < self.p_redirect:
            intent.initial_kind = "freeze_card"  # asked to freeze it first, then a replacement
        return intent

    # --- profile -------------------------------------------------------------------------------------

    def _update_phone(self) -> DraftIntent:
        taken = {c.phone for c in self.state.customers.values()}
        phone = f"555-{_digits(self.rng, 3)}-{_digits(self.rng, 4)}"
        while phone in taken:
            phone = f"555-{_digits(self.rng, 3)}-{_digits(self.rng, 4)}"
        call = DraftCall("update_phone", {"customer_id": self.customer.id, "phone": phone}, "write",
                         ("phone",))
        intent = DraftIntent("update_phone", {"phone": phone}, [call], [], 0)
        if self.rng.random() < self.p_revision:
            typo = phone[:-1] + str((int(phone[-1]) + 1) % 10)
            intent.revision = ("phone", typo)
        return intent

    def _update_address(self) -> DraftIntent:
        new = random_address(self.rng)
        call = DraftCall("update_address", {"customer_id": self.customer.id, **new.model_dump()},
                         "write", ("address",))
        intent = DraftIntent("update_address", {"address": address_text(new)}, [call], [], 0)
        if self.rng.random() < self.p_revision:
            typo = new.model_copy(update={"zip": f"{(int(new.zip) + 1) % 100000:05d}"})
            intent.revision = ("address", address_text(typo))
        return intent


# the slots that name an account or a card, by id or in words ("my savings account")
REFERENCES = ("account", "from_account", "to_account", "card")


def _indirect(slots: dict[str, str]) -> bool:
    """Whether an intent names an account or a card in words rather than by id."""
    return any(slot in slots and "-" not in slots[slot] for slot in REFERENCES)


def _identity(customer: Customer, by_phone: bool) -> tuple[dict[str, str], DraftCall]:
    """What the user gives to authenticate (two factors), and the call that resolves it."""
    if by_phone:
        return ({"phone": customer.phone, "date_of_birth": customer.date_of_birth},
                DraftCall("find_customer_by_phone",
                          {"phone": customer.phone, "date_of_birth": customer.date_of_birth},
                          "read", ("identity",)))
    return ({"email": customer.email, "passcode": customer.passcode},
            DraftCall("find_customer_by_email", {"email": customer.email, "passcode": customer.passcode},
                      "read", ("identity",)))


class BankingTaskSampler:
    """Samples ``DraftTask``s over one template state (construct once, sample many)."""

    def __init__(self, domain: Any) -> None:
        self.domain = domain
        self.customer_ids = sorted(domain.template.customers)

    def sample(self, rng: random.Random, n_intents: int, *, p_indirect: float, p_revision: float,
               p_redirect: float, p_read_only: float) -> DraftTask:
        env = self.domain.environment()
        customer: Customer = env.state.customers[rng.choice(self.customer_ids)]
        identity, auth = _identity(customer, by_phone=rng.random() < 0.5)
        builder = _Builder(env, rng, customer, p_indirect, p_revision, p_redirect)
        intents = draw_intents(rng, n_intents, p_read_only, KINDS, builder)
        return DraftTask(identity=identity, auth_calls=[auth], intents=intents)

    def plan_of(self, bp: TaskBlueprint) -> TaskPlan:
        """The shape of an existing banking task, for ``sample_planned`` to sample another like it."""
        revised = {d.intent for d in bp.user.disclosure if d.action == "revise"}
        described = {d.intent for d in bp.user.disclosure if d.action == "clarify"}  # then asked which
        auth = next((c.name for c in bp.ground_truth.calls if c.name in self.domain.auth_tools), None)
        intents = tuple(IntentPlan(kind=i.kind, redirect=i.initial_kind is not None, revision=k in revised,
                                   indirect=_indirect(dict(i.slots)), clarify=k in described)
                        for k, i in enumerate(bp.user.intents))
        return TaskPlan(auth_tool=auth, intents=intents)

    def sample_planned(self, rng: random.Random, plan: TaskPlan) -> DraftTask:
        """A task of exactly the planned shape (kinds in order, redirects, revisions, accounts and
        cards named in words or by id, an account first described in words that fit two, way of
        authenticating) for a fresh customer, or ``TaskRejected`` when this draw cannot have it:
        callers draw again."""
        env = self.domain.environment()
        customer: Customer = env.state.customers[rng.choice(self.customer_ids)]
        identity, auth = _identity(customer, by_phone=plan.auth_tool != "find_customer_by_email")
        builder = _Builder(env, rng, customer, 0.0, 0.0, 0.0)
        intents: list[DraftIntent] = []
        for step in plan.intents:
            if not hasattr(builder, f"_{step.kind}"):
                raise TaskRejected("unknown_intent_kind", step.kind)
            builder.p_indirect = 1.0 if step.indirect else 0.0
            builder.clarify_plan = step.clarify  # (the clarified account is named by id in the end)
            builder.p_redirect = 1.0 if step.redirect else 0.0
            builder.p_revision = 1.0 if step.revision else 0.0
            intent = builder.build(step.kind)
            if (intent.initial_kind is not None) != step.redirect or \
                    (intent.revision is not None) != step.revision or \
                    _indirect(intent.slots) != step.indirect or (intent.clarify is not None) != step.clarify:
                raise TaskRejected("plan_not_met", f"{step.kind}: redirect/revision/reference/clarify")
            builder.execute(intent)
            intents.append(intent)
        return DraftTask(identity=identity, auth_calls=[auth], intents=intents)
