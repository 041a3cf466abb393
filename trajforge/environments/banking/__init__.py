"""The built-in ``banking`` domain: a retail bank's customer service.

Read-heavy evidence: customers describe a charge in words and the agent finds it among an
account's dozens of transactions; two-factor identification; transfers within daily limits;
card freezes and replacements; disputes that are refused (pending, too old, already disputed)
or handed to a human (above the threshold).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from trajforge.environments.banking import claims
from trajforge.environments.banking.data import BankingState, build_banking_state
from trajforge.environments.banking.phrasing import BARE_REPORTS, IDENTITY, INTENTS, PROSE, SLOTS
from trajforge.environments.banking.policy import POLICY_TEXT, RULES, TOOL_RULES
from trajforge.environments.banking.reports import matching_accounts, report_facts
from trajforge.environments.banking.scenario import SCENARIO
from trajforge.environments.banking.tasks import BankingTaskSampler
from trajforge.environments.banking.tools import BankingTools
from trajforge.environments.base import Domain, Observation, ReportFacts, State
from trajforge.environments.claims import ClaimRecord


class BankingDomain(Domain):
    name: ClassVar[str] = "banking"
    toolkit_type = BankingTools
    policy = POLICY_TEXT
    policy_rules = RULES
    tool_rules = TOOL_RULES
    auth_tools = frozenset({"find_customer_by_phone", "find_customer_by_email"})
    transfer_tool = "transfer_to_human_agents"
    intents = INTENTS
    slots = SLOTS
    identity = IDENTITY
    prose = PROSE
    scenario = SCENARIO
    bare_reports = BARE_REPORTS
    entity_pattern = claims.ENTITY_PATTERN
    id_forms = claims.ID_FORMS
    claim_attributes = claims.ATTRIBUTES
    account_params = frozenset({"customer_id", "account_id", "from_account_id", "card_id",
                                "transaction_id"})
    entity_params = frozenset({"customer_id", "account_id", "from_account_id", "to_account_id",
                               "card_id", "transaction_id", "payee_id", "phone"})

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> BankingState:
        return build_banking_state(rng, size)

    def sample_entities(self, rng: random.Random, k: int = 2) -> dict[str, list[dict[str, Any]]]:
        """A customer (without the passcode), their accounts with their latest transactions,
        their cards and payees."""
        state = self.template
        assert isinstance(state, BankingState)
        customer = state.customers[rng.choice(sorted(state.customers))]
        accounts = [state.accounts[a] for a in customer.account_ids]
        txns = [state.transactions[t] for a in accounts for t in a.transaction_ids[:10 * k]]
        profile = customer.model_dump(mode="json")
        profile.pop("passcode")
        return {"customers": [profile],
                "accounts": [a.model_dump(mode="json", exclude={"transaction_ids"}) for a in accounts],
                "transactions": [t.model_dump(mode="json") for t in txns],
                "cards": [state.cards[c].model_dump(mode="json") for c in customer.card_ids],
                "payees": [state.payees[p].model_dump(mode="json") for p in customer.payee_ids]}

    def task_sampler(self) -> BankingTaskSampler:
        return BankingTaskSampler(self)

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        assert isinstance(state, BankingState)
        if "customer_id" in args:
            return str(args["customer_id"])
        for key in ("account_id", "from_account_id"):
            if key in args:
                account = state.accounts.get(str(args[key]))
                return account.customer_id if account else None
        if "card_id" in args:
            card = state.cards.get(str(args["card_id"]))
            return card.customer_id if card else None
        if "transaction_id" in args:
            txn = state.transactions.get(str(args["transaction_id"]))
            account = state.accounts.get(txn.account_id) if txn else None
            return account.customer_id if account else None
        return None

    def claim_records(self, observation: Observation) -> list[ClaimRecord]:
        return claims.claim_records(observation)

    def names_target(self, state: State, tool_name: str, args: dict[str, Any], text: str) -> bool:
        return claims.names_target(state, tool_name, args, text, self.canonical_ids)

    def candidates(self, slot: str, words: str, observed: tuple[Observation, ...]) -> tuple[str, ...]:
        return matching_accounts(words, observed) if slot in ("account", "from_account", "to_account") else ()

    def report_facts(self, kind: str, slots: dict[str, str],
                     observed: tuple[Observation, ...]) -> ReportFacts:
        return report_facts(kind, slots, observed)
