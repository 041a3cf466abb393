"""The library desk's tools and the rules about single writes (``LibraryTools.write_breaches``)."""

from __future__ import annotations

import re
from typing import Any

from tests.domains.library.data import (
    BRANCHES,
    FINE_CAP,
    HOLD_LIMIT,
    MAX_RENEWALS,
    RENEWAL_DAYS,
    TODAY,
    Edition,
    Hold,
    LibraryState,
    Loan,
    Member,
    Payment,
    active_holds,
    shift,
)
from trajforge.environments.base import ToolKind, Toolkit, tool
from trajforge.errors import ToolError

_ISBN = re.compile(r"^(97[89])-?(\d)-?(\d{3})-?(\d{5})-?(\d)$")
_CARD = re.compile(r"^(?:LC-?)?(\d{8})$", re.IGNORECASE)


def canonical_isbn(value: str) -> str:
    m = _ISBN.match(value.strip())
    return "-".join(m.groups()) if m else value.strip()


def canonical_card(value: str) -> str:
    m = _CARD.match(value.strip())
    return f"LC-{m.group(1)}" if m else value.strip()


class LibraryTools(Toolkit):
    state: LibraryState

    # --- lookups (no rule: unknown keys are the tool's error) ---

    def _member(self, card_number: str) -> Member:
        member = self.state.members.get(canonical_card(card_number))
        if member is None:
            raise ToolError(f"no member with card number {card_number}")
        return member

    def _edition(self, isbn: str) -> Edition:
        edition = self.state.editions.get(canonical_isbn(isbn))
        if edition is None:
            raise ToolError(f"no edition with ISBN {isbn}")
        return edition

    def _loan(self, loan_ref: str) -> Loan:
        loan = self.state.loans.get(loan_ref.strip().upper())
        if loan is None:
            raise ToolError(f"no loan {loan_ref}")
        return loan

    def _hold(self, hold_ref: str) -> Hold:
        hold = self.state.holds.get(hold_ref.strip().upper())
        if hold is None:
            raise ToolError(f"no hold {hold_ref}")
        return hold

    def _loan_view(self, loan: Loan) -> dict[str, Any]:
        edition = self.state.editions[loan.isbn]
        return {**loan.model_dump(mode="json"), "title": edition.title, "format": edition.format}

    def _hold_view(self, hold: Hold) -> dict[str, Any]:
        edition = self.state.editions[hold.isbn]
        queue = [h.hold_ref for h in active_holds(self.state, hold.isbn)]
        position = queue.index(hold.hold_ref) + 1 if hold.hold_ref in queue else None
        return {**hold.model_dump(mode="json"), "title": edition.title, "format": edition.format,
                "queue_position": position}

    # --- identification ---

    @tool(ToolKind.read)
    def verify_member_card(self, card_number: str, pin: str) -> str:
        """Identify a member by library card number and PIN. Returns the card number.

        Args:
            card_number: The library card number, e.g. "LC-10000000" (the LC- may be left out).
            pin: The four-digit PIN the member chose for the card.
        """
        member = self.state.members.get(canonical_card(card_number))
        if member is None or member.pin != pin.strip():
            raise ToolError("card number and PIN do not match a member")
        return member.card_number

    @tool(ToolKind.read)
    def find_member_by_details(self, full_name: str, date_of_birth: str, postal_code: str) -> str:
        """Identify a member by full name, date of birth and postal code. Returns the card number.

        Args:
            full_name: First and last name, as on the card.
            date_of_birth: Date of birth, YYYY-MM-DD.
            postal_code: The five-digit postal code of the member's address.
        """
        name = " ".join(full_name.lower().split())
        found = [m for m in self.state.members.values()
                 if f"{m.first_name} {m.last_name}".lower() == name and m.date_of_birth == date_of_birth.strip()
                 and m.postal_code == postal_code.strip()]
        if len(found) != 1:
            raise ToolError("no single member matches these details")
        return found[0].card_number

    # --- reads ---

    @tool(ToolKind.read)
    def get_member(self, card_number: str) -> dict[str, Any]:
        """A member's profile: name, home branch, outstanding fines, loan and hold references.

        Args:
            card_number: The library card number, e.g. "LC-10000000".
        """
        member = self._member(card_number)
        return member.model_dump(mode="json", exclude={"pin"})

    @tool(ToolKind.read)
    def list_loans(self, card_number: str) -> list[dict[str, Any]]:
        """Every loan on a member's card (on loan and returned), with titles and due dates.

        Args:
            card_number: The library card number, e.g. "LC-10000000".
        """
        member = self._member(card_number)
        return [self._loan_view(self.state.loans[r]) for r in member.loan_refs]

    @tool(ToolKind.read)
    def get_loan(self, loan_ref: str) -> dict[str, Any]:
        """One loan: the edition, due date, how many times it was renewed, its status.

        Args:
            loan_ref: The loan reference, e.g. "LN-100000".
        """
        return self._loan_view(self._loan(loan_ref))

    @tool(ToolKind.read)
    def get_hold(self, hold_ref: str) -> dict[str, Any]:
        """One hold: the edition, pickup branch, status and place in the queue.

        Args:
            hold_ref: The hold reference, e.g. "HD-10000".
        """
        return self._hold_view(self._hold(hold_ref))

    @tool(ToolKind.read)
    def search_catalog(self, query: str) -> list[dict[str, Any]]:
        """Editions whose title or author contains the query (case-insensitive), at most 10.

        Args:
            query: Words of a title or an author's name.
        """
        q = " ".join(query.lower().split())
        if len(q) < 3:
            raise ToolError("the query needs at least three characters")
        found = [e for e in self.state.editions.values() if q in e.title.lower() or q in e.author.lower()]
        return [{"isbn": e.isbn, "title": e.title, "author": e.author, "format": e.format, "year": e.year}
                for e in sorted(found, key=lambda e: (e.title, e.format))[:10]]

    @tool(ToolKind.read)
    def get_book(self, isbn: str) -> dict[str, Any]:
        """One edition: title, author, format, copies on the shelf per branch, holds queued.

        Args:
            isbn: The edition's ISBN-13, with or without hyphens.
        """
        edition = self._edition(isbn)
        return {**edition.model_dump(mode="json"), "holds_queued": len(active_holds(self.state, edition.isbn))}

    @tool(ToolKind.read)
    def transfer_to_librarian(self, summary: str) -> str:
        """Hand the conversation to a librarian at the desk, with a summary of the request.

        Args:
            summary: What the member needs and what was found.
        """
        return "Transfer successful"

    # --- writes (rules are checked before they run: write_breaches) ---

    @tool(ToolKind.write)
    def renew_loan(self, loan_ref: str) -> dict[str, Any]:
        """Renew a loan: its due date moves 21 days later.

        Args:
            loan_ref: The loan reference, e.g. "LN-100000".
        """
        loan = self._loan(loan_ref)
        renewed = loan.model_copy(update={"due_date": shift(loan.due_date, RENEWAL_DAYS),
                                          "renewals": loan.renewals + 1})
        self.state.loans[loan.loan_ref] = renewed
        return self._loan_view(renewed)

    @tool(ToolKind.write)
    def place_hold(self, card_number: str, isbn: str, branch_code: str) -> dict[str, Any]:
        """Queue a member for an edition with no copy on the shelf, to collect at a branch.

        Args:
            card_number: The member's library card number.
            isbn: The edition's ISBN-13.
            branch_code: The pickup branch: "OAK", "ELM", "PINE" or "BIRCH".
        """
        member = self._member(card_number)
        edition = self._edition(isbn)
        if branch_code not in BRANCHES:
            raise ToolError(f"no branch {branch_code}")
        number = max((int(r[3:]) for r in self.state.holds), default=20000) + 1
        hold = Hold(hold_ref=f"HD-{number}", card_number=member.card_number, isbn=edition.isbn,
                    branch_code=branch_code, placed_on=TODAY, status="waiting")
        self.state.holds[hold.hold_ref] = hold
        self.state.members[member.card_number] = member.model_copy(
            update={"hold_refs": member.hold_refs + (hold.hold_ref,)})
        return self._hold_view(hold)

    @tool(ToolKind.write)
    def cancel_hold(self, hold_ref: str) -> dict[str, Any]:
        """Cancel a waiting hold.

        Args:
            hold_ref: The hold reference, e.g. "HD-10000".
        """
        hold = self._hold(hold_ref)
        cancelled = hold.model_copy(update={"status": "cancelled"})
        self.state.holds[hold.hold_ref] = cancelled
        return self._hold_view(cancelled)

    @tool(ToolKind.write)
    def pay_fine(self, card_number: str, amount: float) -> dict[str, Any]:
        """Take a payment toward a member's outstanding fines, with the card on the member's file.

        Args:
            card_number: The member's library card number.
            amount: The amount to pay, in dollars.
        """
        member = self._member(card_number)
        receipt = f"RC-{max((int(r[3:]) for r in self.state.payments), default=100000) + 1}"
        self.state.payments[receipt] = Payment(receipt=receipt, card_number=member.card_number,
                                               amount=round(amount, 2), paid_on=TODAY)
        balance = round(member.fines - amount, 2)
        self.state.members[member.card_number] = member.model_copy(update={"fines": balance})
        return {"receipt": receipt, "card_number": member.card_number, "paid": round(amount, 2),
                "balance": balance}

    # --- the domain's rules about single writes ---

    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        return write_breaches(self.state, name, args)


def write_breaches(state: LibraryState, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """``(rule, why)`` for each rule the write breaks; unknown keys break none (the tool says so)."""
    out: list[tuple[str, str]] = []
    if name == "renew_loan":
        loan = state.loans.get(str(args.get("loan_ref", "")).strip().upper())
        if loan is None:
            return []
        owner = state.members[loan.card_number]
        if loan.status != "on loan":
            out.append(("returned_final", f"loan {loan.loan_ref} was returned"))
        if loan.renewals >= MAX_RENEWALS:
            out.append(("renewal_limit", f"loan {loan.loan_ref} was renewed {loan.renewals} times"))
        if any(h.card_number != loan.card_number for h in active_holds(state, loan.isbn)):
            out.append(("holds_block_renewal", f"other members hold {loan.isbn}"))
        if owner.fines > FINE_CAP:
            out.append(("fines_block", f"card {owner.card_number} owes ${owner.fines:.2f}"))
    elif name == "place_hold":
        member = state.members.get(canonical_card(str(args.get("card_number", ""))))
        edition = state.editions.get(canonical_isbn(str(args.get("isbn", ""))))
        if member is None or edition is None:
            return []
        if sum(edition.on_shelf.values()) > 0:
            out.append(("shelf_first", f"{edition.isbn} has copies on the shelf"))
        mine = [state.holds[r] for r in member.hold_refs if state.holds[r].status in ("waiting", "ready")]
        if any(h.isbn == edition.isbn for h in mine):
            out.append(("one_hold_per_edition", f"card {member.card_number} already holds {edition.isbn}"))
        if len(mine) >= HOLD_LIMIT:
            out.append(("hold_limit", f"card {member.card_number} has {len(mine)} holds"))
        if member.fines > FINE_CAP:
            out.append(("fines_block", f"card {member.card_number} owes ${member.fines:.2f}"))
    elif name == "cancel_hold":
        hold = state.holds.get(str(args.get("hold_ref", "")).strip().upper())
        if hold is not None and hold.status != "waiting":
            out.append(("waiting_only", f"hold {hold.hold_ref} is {hold.status}"))
    elif name == "pay_fine":
        payer = state.members.get(canonical_card(str(args.get("card_number", ""))))
        amount = args.get("amount")
        if payer is not None and isinstance(amount, (int, float)) and not 0 < amount <= payer.fines + 1e-9:
            out.append(("fine_payment", f"${amount} is not between $0.01 and the ${payer.fines:.2f} owed"))
    return out
