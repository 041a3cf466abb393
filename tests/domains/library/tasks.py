"""Sampling library tasks with the kit: a member, 1-4 intents, their ground-truth calls.

A loan is named by its reference or as "my copy of <title>" (one list of the card's loans), a
hold by its reference or as "my hold on <title>" (a read of each live hold). ``renew_refused``
is the refusal (the reads show a queue of holds or the renewal limit; nothing is written) and
``lost_card`` the hand-over to a librarian, which ends the task.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, cast

from tests.domains.library.data import (
    BRANCHES,
    FINE_CAP,
    HOLD_LIMIT,
    MAX_RENEWALS,
    Edition,
    Hold,
    LibraryState,
    Loan,
    Member,
    active_holds,
    money,
    shift,
)
from trajforge.environments.base import Environment
from trajforge.environments.kit import KindMix, TaskBuilder, draw_intents
from trajforge.environments.tasks import DraftCall, DraftIntent, DraftOutput, DraftTask, TaskRejected

KINDS = KindMix(read_only=("loan_due", "renew_refused", "lost_card"),
                writes=("renew_loan", "place_hold", "cancel_hold", "pay_fines", "renew_refused", "lost_card"),
                weights={"renew_loan": 4, "place_hold": 3, "cancel_hold": 2, "pay_fines": 2, "renew_refused": 2},
                once=frozenset({"pay_fines", "lost_card"}), final=frozenset({"lost_card"}))


class _Builder(TaskBuilder):
    """Builds one task for one member (the kit's TaskBuilder: reads made, entities used)."""

    def __init__(self, env: Environment, rng: random.Random, member: Member, p_indirect: float,
                 p_revision: float) -> None:
        super().__init__(env, rng)
        self.member = member
        self.p_indirect, self.p_revision = p_indirect, p_revision

    @property
    def state(self) -> LibraryState:
        return cast(LibraryState, self.env.state)

    def refresh(self) -> None:
        self.member = self.state.members[self.member.card_number]

    def loans(self) -> list[Loan]:
        return [self.state.loans[r] for r in self.member.loan_refs if self.state.loans[r].status == "on loan"]

    def live_holds(self) -> list[Hold]:
        return [self.state.holds[r] for r in self.member.hold_refs
                if self.state.holds[r].status in ("waiting", "ready")]

    def title(self, isbn: str) -> str:
        return self.state.editions[isbn].title

    def pick_loan(self, fits: Any, why: str) -> Loan:
        options = [loan for loan in self.loans() if loan.loan_ref not in self.used and fits(loan)]
        if not options:
            raise TaskRejected("no_eligible_loan", why)
        loan = self.rng.choice(options)
        self.used.add(loan.loan_ref)
        return loan

    def loan_ref(self, loan: Loan) -> tuple[str, list[DraftCall], int]:
        titles = Counter(self.title(x.isbn) for x in self.loans())
        if titles[self.title(loan.isbn)] == 1 and self.rng.random() < self.p_indirect:
            reads = self.read_call("list_loans", {"card_number": self.member.card_number}, ("loan",))
            return f"my copy of {self.title(loan.isbn)}", reads, len(self.member.loan_refs)
        return loan.loan_ref, self.read_call("get_loan", {"loan_ref": loan.loan_ref}, ("loan",)), 1

    def hold_ref(self, hold: Hold) -> tuple[str, list[DraftCall], int]:
        live = self.live_holds()
        titles = Counter(self.title(h.isbn) for h in live)
        if len(live) > 1 and titles[self.title(hold.isbn)] == 1 and self.rng.random() < self.p_indirect:
            reads = [c for h in live for c in self.read_call("get_hold", {"hold_ref": h.hold_ref}, ("hold",))]
            return f"my hold on {self.title(hold.isbn)}", reads, len(live)
        return hold.hold_ref, self.read_call("get_hold", {"hold_ref": hold.hold_ref}, ("hold",)), 1

    def others_hold(self, loan: Loan) -> bool:
        return any(h.card_number != loan.card_number for h in active_holds(self.state, loan.isbn))

    # --- intents ---

    def _renew_loan(self) -> DraftIntent:
        if self.member.fines > FINE_CAP:
            raise TaskRejected("fines_block", self.member.card_number)
        loan = self.pick_loan(lambda x: x.renewals < MAX_RENEWALS and not self.others_hold(x), "renewable")
        ref, reads, burden = self.loan_ref(loan)
        reads += self.read_call("get_book", {"isbn": loan.isbn}, ("loan",))
        write = DraftCall("renew_loan", {"loan_ref": loan.loan_ref}, "write", ("loan",))
        calls = reads + [write]
        return DraftIntent("renew_loan", {"loan": ref}, calls,
                           [DraftOutput("due_date", shift(loan.due_date, 21), len(calls) - 1)], burden)

    def _renew_refused(self) -> DraftIntent:
        if self.member.fines > FINE_CAP:
            raise TaskRejected("fines_block", self.member.card_number)
        mine = {h.isbn for h in self.live_holds()}

        def fits(x: Loan) -> bool:
            return x.isbn not in mine and (self.others_hold(x) or x.renewals >= MAX_RENEWALS)
        loan = self.pick_loan(fits, "not renewable")
        ref, reads, burden = self.loan_ref(loan)
        book = self.read_call("get_book", {"isbn": loan.isbn}, ("loan",))
        if not reads or not book:
            raise TaskRejected("already_read", loan.loan_ref)
        calls = reads + book
        queued = len(active_holds(self.state, loan.isbn))
        output = (DraftOutput("queued", str(queued), len(calls) - 1) if queued
                  else DraftOutput("renewals", str(loan.renewals), len(reads) - 1))
        return DraftIntent("renew_refused", {"loan": ref}, calls, [output], burden)

    def _loan_due(self) -> DraftIntent:
        loan = self.pick_loan(lambda x: True, "on loan")
        ref, reads, burden = self.loan_ref(loan)
        if not reads:
            raise TaskRejected("already_read", loan.loan_ref)
        return DraftIntent("loan_due", {"loan": ref}, reads, [DraftOutput("due_date", loan.due_date, 0)], burden)

    def _place_hold(self) -> DraftIntent:
        live = self.live_holds()
        if self.member.fines > FINE_CAP or len(live) >= HOLD_LIMIT:
            raise TaskRejected("cannot_hold", self.member.card_number)
        held = {h.isbn for h in live}
        options: list[Edition] = [e for e in self.state.editions.values()
                                  if sum(e.on_shelf.values()) == 0 and e.isbn not in held
                                  and e.isbn not in self.used]
        if not options:
            raise TaskRejected("no_edition", "out of stock")
        edition = self.rng.choice(sorted(options, key=lambda e: e.isbn))
        self.used.add(edition.isbn)
        card = self.member.card_number
        reads = self.read_call("search_catalog", {"query": edition.title}, ("book",))
        reads += self.read_call("get_book", {"isbn": edition.isbn}, ("book", "format"))
        branch = self.rng.choice(sorted(BRANCHES))
        write = DraftCall("place_hold", {"card_number": card, "isbn": edition.isbn, "branch_code": branch}, "write",
                          ("book", "format", "branch"))
        calls = reads + [write]
        number = max((int(r[3:]) for r in self.state.holds), default=20000) + 1
        intent = DraftIntent("place_hold", {"book": edition.title, "format": edition.format, "branch": branch},
                             calls, [DraftOutput("hold_ref", f"HD-{number}", len(calls) - 1)], len(reads))
        if self.rng.random() < self.p_revision:
            intent.revision = ("branch", self.rng.choice([b for b in sorted(BRANCHES) if b != branch]))
        return intent

    def _cancel_hold(self) -> DraftIntent:
        options = [h for h in self.live_holds() if h.status == "waiting" and h.hold_ref not in self.used]
        if not options:
            raise TaskRejected("no_waiting_hold", self.member.card_number)
        hold = self.rng.choice(options)
        self.used.add(hold.hold_ref)
        ref, reads, burden = self.hold_ref(hold)
        write = DraftCall("cancel_hold", {"hold_ref": hold.hold_ref}, "write", ("hold",))
        calls = reads + [write]
        return DraftIntent("cancel_hold", {"hold": ref}, calls,
                           [DraftOutput("status", "cancelled", len(calls) - 1)], burden)

    def _pay_fines(self) -> DraftIntent:
        if self.member.fines <= 0:
            raise TaskRejected("no_fines", self.member.card_number)
        card = self.member.card_number
        reads = self.read_call("get_member", {"card_number": card}, ())
        write = DraftCall("pay_fine", {"card_number": card, "amount": self.member.fines}, "write", ())
        calls = reads + [write]
        return DraftIntent("pay_fines", {}, calls, [DraftOutput("paid", money(self.member.fines), len(calls) - 1)])

    def _lost_card(self) -> DraftIntent:
        card = self.member.card_number
        summary = (f"Member with card {card} reports the card lost or damaged and needs a replacement; "
                   "replacement cards are issued by a librarian.")
        return DraftIntent("lost_card", {}, [DraftCall("transfer_to_librarian", {"summary": summary}, "read",
                                                       ("identity",))])


def _unique_details(state: LibraryState) -> set[str]:
    counts = Counter((m.first_name, m.last_name, m.date_of_birth, m.postal_code) for m in state.members.values())
    return {m.card_number for m in state.members.values()
            if counts[(m.first_name, m.last_name, m.date_of_birth, m.postal_code)] == 1}


class LibraryTaskSampler:
    def __init__(self, domain: Any) -> None:
        self.domain = domain
        state: LibraryState = domain.template
        self.cards = sorted(state.members)
        self.by_details = _unique_details(state)

    def sample(self, rng: random.Random, n_intents: int, *, p_indirect: float, p_revision: float,
               p_redirect: float, p_read_only: float) -> DraftTask:
        env = self.domain.environment()
        member: Member = env.state.members[rng.choice(self.cards)]
        if member.card_number in self.by_details and rng.random() < 0.4:
            identity = {"name": f"{member.first_name} {member.last_name}", "date_of_birth": member.date_of_birth,
                        "postal_code": member.postal_code}
            auth = DraftCall("find_member_by_details",
                             {"full_name": identity["name"], "date_of_birth": member.date_of_birth,
                              "postal_code": member.postal_code}, "read", ("identity",))
        else:
            identity = {"card_number": member.card_number, "pin": member.pin}
            auth = DraftCall("verify_member_card", {"card_number": member.card_number, "pin": member.pin}, "read",
                             ("identity",))
        builder = _Builder(env, rng, member, p_indirect, p_revision)
        auth_calls = [auth] + builder.read_call("get_member", {"card_number": member.card_number}, ("identity",))
        intents = draw_intents(rng, n_intents, p_read_only, KINDS, builder)
        return DraftTask(identity=identity, auth_calls=auth_calls, intents=intents)
