"""The banking toolkit: 12 reads (two of them identify the customer, one hands over to a human)
and 8 writes. Writes replace records (copy-on-write); policy rules are the environment's
(``write_breaches``), so a tool checks only that its ids exist."""

from __future__ import annotations

from datetime import date
from typing import Any

from trajforge.environments.banking.data import (
    TODAY,
    Account,
    Address,
    BankingState,
    Card,
    Customer,
    Dispute,
    Payee,
    Transaction,
    Transfer,
)
from trajforge.environments.banking.policy import write_breaches
from trajforge.environments.base import ToolKind, Toolkit, tool
from trajforge.environments.kit import find
from trajforge.errors import ToolError


def account_view(account: Account) -> dict[str, Any]:
    """An account as the tools show it (its transaction index left out)."""
    return {"id": account.id, "customer_id": account.customer_id, "type": account.type,
            "status": account.status, "balance": account.balance,
            "daily_transfer_limit": account.daily_transfer_limit,
            "transferred_today": account.transferred_today,
            "remaining_daily_limit": account.remaining_limit}


def profile_view(customer: Customer) -> dict[str, Any]:
    """A customer's profile as the tools show it (the passcode left out)."""
    data = customer.model_dump(mode="json")
    data.pop("passcode")
    return data


def next_id(table: dict[str, Any], prefix: str, n: int) -> str:
    """The id a new record of ``table`` gets: deterministic in the state (its size), so the task
    sampler knows it before the write runs."""
    k = len(table) + 1
    while f"{prefix}-{k:0{n}d}" in table:
        k += 1
    return f"{prefix}-{k:0{n}d}"


def new_last_four(old: str, n_cards: int) -> str:
    """The last four digits of a replacement card (deterministic in the state)."""
    value = f"{(int(old) * 7 + 3 + n_cards) % 10000:04d}"
    return value if value != old else f"{(int(value) + 1) % 10000:04d}"


def _iso(value: str, name: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"{name} must be a date as YYYY-MM-DD, not {value!r}") from None


class BankingTools(Toolkit):
    state: BankingState

    # --- helpers (not tools) ---
    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        return write_breaches(self.state, name, args)

    def _customer(self, customer_id: str) -> Customer:
        return find(self.state.customers, customer_id, "customer")

    def _account(self, account_id: str) -> Account:
        return find(self.state.accounts, account_id, "account")

    def _card(self, card_id: str) -> Card:
        return find(self.state.cards, card_id, "card")

    def _move(self, source: Account, amount: float) -> Account:
        updated = source.model_copy(update={
            "balance": round(source.balance - amount, 2),
            "transferred_today": round(source.transferred_today + amount, 2)})
        self.state.accounts[source.id] = updated
        return updated

    # --- reads: identity ---
    @tool(ToolKind.read)
    def find_customer_by_phone(self, phone: str, date_of_birth: str) -> str:
        """Identify a customer by the phone number on file and their date of birth; returns the customer id.

        Args:
            phone: The phone number on file, e.g. "555-201-3344".
            date_of_birth: The date of birth as YYYY-MM-DD, e.g. "1986-03-14".
        """
        wanted = "".join(c for c in phone if c.isdigit())
        for customer in self.state.customers.values():
            if "".join(c for c in customer.phone if c.isdigit()) == wanted \
                    and customer.date_of_birth == date_of_birth.strip():
                return customer.id
        raise ToolError("no customer with that phone number and date of birth")

    @tool(ToolKind.read)
    def find_customer_by_email(self, email: str, passcode: str) -> str:
        """Identify a customer by their email and their passcode; returns the customer id.

        Args:
            email: The customer's email, e.g. "ava.smith123@example.com".
            passcode: The customer's six-digit telephone banking passcode.
        """
        wanted = email.strip().lower()
        for customer in self.state.customers.values():
            if customer.email == wanted and customer.passcode == passcode.strip():
                return customer.id
        raise ToolError("no customer with that email and passcode")

    # --- reads ---
    @tool(ToolKind.read)
    def get_customer_profile(self, customer_id: str) -> dict[str, Any]:
        """Get a customer's profile: name, email, phone, address, and the ids of their accounts, cards and payees.

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
        """
        return profile_view(self._customer(customer_id))

    @tool(ToolKind.read)
    def list_accounts(self, customer_id: str) -> list[dict[str, Any]]:
        """List a customer's accounts with type, status, balance and daily transfer limit
        (and what remains of it today).

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
        """
        customer = self._customer(customer_id)
        return [account_view(self.state.accounts[a]) for a in customer.account_ids]

    @tool(ToolKind.read)
    def get_account(self, account_id: str) -> dict[str, Any]:
        """Get one account: type, status, balance, daily transfer limit, amount transferred
        today and the remaining limit.

        Args:
            account_id: The account id, e.g. "ACC-204518".
        """
        return account_view(self._account(account_id))

    @tool(ToolKind.read)
    def list_cards(self, customer_id: str) -> list[Card]:
        """List a customer's cards (debit and credit) with last four digits, status and linked account.

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
        """
        customer = self._customer(customer_id)
        return [self.state.cards[c] for c in customer.card_ids]

    @tool(ToolKind.read)
    def get_card(self, card_id: str) -> Card:
        """Get one card: type, last four digits, status, expiry and linked account.

        Args:
            card_id: The card id, e.g. "CRD-5521903".
        """
        return self._card(card_id)

    @tool(ToolKind.read)
    def list_transactions(self, account_id: str, start_date: str | None = None,
                          end_date: str | None = None, merchant: str | None = None,
                          category: str | None = None) -> list[Transaction]:
        """List an account's transactions, newest first, optionally only those in a date
        range, of a merchant or of a category.

        Args:
            account_id: The account id, e.g. "ACC-204518".
            start_date: Only transactions on or after this date (YYYY-MM-DD).
            end_date: Only transactions on or before this date (YYYY-MM-DD).
            merchant: Only transactions whose merchant name contains this text (any case).
            category: Only transactions of this category: coffee, groceries, fuel, travel,
                dining, shopping or utilities.
        """
        account = self._account(account_id)
        start = _iso(start_date, "start_date") if start_date else None
        end = _iso(end_date, "end_date") if end_date else None
        out = []
        for txn_id in account.transaction_ids:
            txn = self.state.transactions[txn_id]
            day = date.fromisoformat(txn.date)
            if (start and day < start) or (end and day > end):
                continue
            if merchant and merchant.strip().lower() not in txn.merchant.lower():
                continue
            if category and category.strip().lower() != txn.category:
                continue
            out.append(txn)
        return out

    @tool(ToolKind.read)
    def get_transaction(self, transaction_id: str) -> Transaction:
        """Get one transaction: date, merchant, category, amount, status (posted or pending) and whether it is disputed.

        Args:
            transaction_id: The transaction id, e.g. "TXN-40918273".
        """
        return find(self.state.transactions, transaction_id, "transaction")

    @tool(ToolKind.read)
    def list_payees(self, customer_id: str) -> list[Payee]:
        """List the payees saved on a customer's profile.

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
        """
        customer = self._customer(customer_id)
        return [self.state.payees[p] for p in customer.payee_ids]

    @tool(ToolKind.read)
    def list_disputes(self, customer_id: str) -> list[Dispute]:
        """List a customer's disputes with their transaction, amount, reason and status.

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
        """
        self._customer(customer_id)
        return [d for d in self.state.disputes.values() if d.customer_id == customer_id]

    @tool(ToolKind.read)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the customer's issue.

        Args:
            summary: What the customer needs, and why it is handed over.
        """
        return "Transfer successful"

    # --- writes ---
    @tool(ToolKind.write)
    def transfer_between_accounts(self, from_account_id: str, to_account_id: str,
                                  amount: float) -> Transfer:
        """Move money between two of the customer's own accounts, at once.

        Args:
            from_account_id: The account the money leaves, e.g. "ACC-204518".
            to_account_id: The account the money goes to, e.g. "ACC-771203".
            amount: The amount in dollars, e.g. 250.0.
        """
        source = self._account(from_account_id)
        target = self._account(to_account_id)
        source = self._move(source, amount)
        self.state.accounts[target.id] = target.model_copy(
            update={"balance": round(target.balance + amount, 2)})
        transfer = Transfer(id=next_id(self.state.transfers, "TRF", 9), kind="internal",
                            from_account_id=source.id, to_account_id=target.id, amount=amount,
                            date=TODAY.isoformat(), status="completed",
                            from_balance_after=source.balance)
        self.state.transfers[transfer.id] = transfer
        return transfer

    @tool(ToolKind.write)
    def pay_payee(self, from_account_id: str, payee_id: str, amount: float) -> Transfer:
        """Send money from one of the customer's accounts to one of their saved payees.

        Args:
            from_account_id: The account the money leaves, e.g. "ACC-204518".
            payee_id: The saved payee's id, e.g. "PYE-4821".
            amount: The amount in dollars, e.g. 250.0.
        """
        source = self._account(from_account_id)
        payee = find(self.state.payees, payee_id, "payee")
        source = self._move(source, amount)
        transfer = Transfer(id=next_id(self.state.transfers, "TRF", 9), kind="payee",
                            from_account_id=source.id, payee_id=payee.id, amount=amount,
                            date=TODAY.isoformat(), status="completed",
                            from_balance_after=source.balance)
        self.state.transfers[transfer.id] = transfer
        return transfer

    @tool(ToolKind.write)
    def dispute_transaction(self, transaction_id: str, reason: str) -> Dispute:
        """Open a dispute on a posted transaction; the dispute starts under review.

        Args:
            transaction_id: The transaction id, e.g. "TXN-40918273".
            reason: One of "unrecognized charge", "duplicate charge", "wrong amount", "item not received".
        """
        txn = find(self.state.transactions, transaction_id, "transaction")
        account = self.state.accounts[txn.account_id]
        dispute = Dispute(id=next_id(self.state.disputes, "DSP", 9),
                          customer_id=account.customer_id, account_id=account.id,
                          transaction_id=txn.id, merchant=txn.merchant, amount=txn.amount,
                          reason=reason, status="under review", opened_on=TODAY.isoformat())
        self.state.disputes[dispute.id] = dispute
        self.state.transactions[txn.id] = txn.model_copy(update={"disputed": True,
                                                                 "dispute_id": dispute.id})
        return dispute

    @tool(ToolKind.write)
    def freeze_card(self, card_id: str) -> Card:
        """Freeze an active card so that no new charge goes through (it can be unfrozen later).

        Args:
            card_id: The card id, e.g. "CRD-5521903".
        """
        card = self._card(card_id).model_copy(update={"status": "frozen"})
        self.state.cards[card.id] = card
        return card

    @tool(ToolKind.write)
    def unfreeze_card(self, card_id: str) -> Card:
        """Unfreeze a frozen card so that it works again.

        Args:
            card_id: The card id, e.g. "CRD-5521903".
        """
        card = self._card(card_id).model_copy(update={"status": "active"})
        self.state.cards[card.id] = card
        return card

    @tool(ToolKind.write)
    def replace_card(self, card_id: str, reason: str) -> dict[str, Any]:
        """Replace a card: the old card is marked replaced and a new card (new id and last
        four digits) is issued on the same account.

        Args:
            card_id: The card id, e.g. "CRD-5521903".
            reason: One of "lost", "stolen", "damaged".
        """
        old = self._card(card_id)
        new_id = next_id(self.state.cards, "CRD", 7)
        last_four = new_last_four(old.last_four, len(self.state.cards))
        new = Card(id=new_id, customer_id=old.customer_id, account_id=old.account_id,
                   type=old.type, last_four=last_four, status="active",
                   expires=f"{TODAY.year + 4}-{TODAY.month:02d}")
        old = old.model_copy(update={"status": "replaced", "replaced_by": new_id})
        self.state.cards[old.id] = old
        self.state.cards[new.id] = new
        customer = self.state.customers[old.customer_id]
        self.state.customers[customer.id] = customer.model_copy(
            update={"card_ids": customer.card_ids + (new_id,)})
        return {"old_card": old.model_dump(mode="json"), "new_card": new.model_dump(mode="json")}

    @tool(ToolKind.write)
    def update_phone(self, customer_id: str, phone: str) -> dict[str, Any]:
        """Change the phone number on a customer's profile.

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
            phone: The new phone number, as 555-123-4567.
        """
        customer = self._customer(customer_id).model_copy(update={"phone": phone.strip()})
        self.state.customers[customer.id] = customer
        return profile_view(customer)

    @tool(ToolKind.write)
    def update_address(self, customer_id: str, street: str, city: str, state: str,
                       zip: str) -> dict[str, Any]:
        """Change the mailing address on a customer's profile.

        Args:
            customer_id: The customer's id, e.g. "CUS-48213".
            street: Street line, e.g. "12 Oak St".
            city: City.
            state: Two-letter state code.
            zip: Five-digit zip code.
        """
        address = Address(street=street, city=city, state=state, zip=zip)
        customer = self._customer(customer_id).model_copy(update={"address": address})
        self.state.customers[customer.id] = customer
        return profile_view(customer)
