"""The built-in ``telecom`` domain: a mobile provider's customer care, under dual control.

The state holds the provider's side (customers, lines, plans, bills, outages) and the customers'
phones (``devices``, the user's side: ``user_tables``). The agent has the account tools; the
customer has tools of their own on the phone (``ToolKind.user``: read the status bar, toggle
airplane mode, mobile data or roaming, reset the APN settings, restart), which the agent can
only ask them to use. A task's expected final state covers both sides.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from trajforge.environments.base import Domain, Observation, ReportFacts, State
from trajforge.environments.claims import ClaimRecord
from trajforge.environments.telecom import claims
from trajforge.environments.telecom.data import TelecomState, build_telecom_state
from trajforge.environments.telecom.phrasing import (
    BARE_REPORTS,
    IDENTITY,
    INSTRUCTIONS,
    INTENTS,
    PROSE,
    SLOTS,
)
from trajforge.environments.telecom.policy import POLICY_TEXT, RULES, TOOL_RULES
from trajforge.environments.telecom.reports import matching_lines, report_facts
from trajforge.environments.telecom.scenario import SCENARIO
from trajforge.environments.telecom.tasks import TelecomTaskSampler
from trajforge.environments.telecom.tools import TelecomTools


class TelecomDomain(Domain):
    name: ClassVar[str] = "telecom"
    toolkit_type = TelecomTools
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
    instructions = INSTRUCTIONS
    user_tables = frozenset({"devices"})
    entity_pattern = (r"\b\d{3}-\d{3}-\d{4}\b|\bB\d{7}\b|\bCU\d{6}\b|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
                      r"|\b\d{5}\b")
    id_forms = claims.ID_FORMS
    claim_attributes = claims.ATTRIBUTES
    account_params = frozenset({"customer_id", "phone_number", "bill_id"})
    entity_params = frozenset({"customer_id", "phone_number", "bill_id", "plan_id", "zip_code"})

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> State:
        return build_telecom_state(rng, size)

    def sample_entities(self, rng: random.Random, k: int = 2) -> dict[str, list[dict[str, Any]]]:
        """A customer, their lines, phones and bills, and the plans on offer."""
        state = self.template
        assert isinstance(state, TelecomState)
        customer = state.customers[rng.choice(sorted(state.customers))]
        return {"customers": [customer.model_dump(mode="json")],
                "lines": [state.lines[n].model_dump(mode="json") for n in customer.line_numbers],
                "devices": [state.devices[n].model_dump(mode="json") for n in customer.line_numbers],
                "bills": [state.bills[b].model_dump(mode="json") for b in customer.bill_ids],
                "plans": [p.model_dump(mode="json") for p in state.plans.values()]}

    def task_sampler(self) -> TelecomTaskSampler:
        return TelecomTaskSampler(self)

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        assert isinstance(state, TelecomState)
        if "customer_id" in args:
            return str(args["customer_id"])
        line = state.lines.get(str(args.get("phone_number", "")))
        if line is not None:
            return line.customer_id
        bill = state.bills.get(str(args.get("bill_id", "")))
        return bill.customer_id if bill is not None else None

    def claim_records(self, observation: Observation) -> list[ClaimRecord]:
        return claims.claim_records(observation)

    def candidates(self, slot: str, words: str, observed: tuple[Observation, ...]) -> tuple[str, ...]:
        return matching_lines(words, observed) if slot == "line" else ()

    def report_facts(self, kind: str, slots: dict[str, str],
                     observed: tuple[Observation, ...]) -> ReportFacts:
        return report_facts(kind, slots, observed)
