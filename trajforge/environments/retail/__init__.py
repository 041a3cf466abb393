"""The built-in ``retail`` domain: an online store's customer service."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from trajforge.environments.base import Domain, Observation, ReportFacts, State, ToolKind
from trajforge.environments.claims import ClaimRecord
from trajforge.environments.retail import claims
from trajforge.environments.retail.data import RetailState, build_retail_state
from trajforge.environments.retail.phrasing import BARE_REPORTS, IDENTITY, INTENTS, PROSE, SLOTS
from trajforge.environments.retail.policy import POLICY_TEXT, RULES, TOOL_RULES
from trajforge.environments.retail.reports import matching_orders, report_facts
from trajforge.environments.retail.scenario import SCENARIO
from trajforge.environments.retail.tasks import RetailTaskSampler
from trajforge.environments.retail.tools import RetailTools


class RetailDomain(Domain):
    name: ClassVar[str] = "retail"
    toolkit_type = RetailTools
    policy = POLICY_TEXT
    policy_rules = RULES
    tool_rules = TOOL_RULES
    auth_tools = frozenset({"find_customer_id_by_email", "find_customer_id_by_name_zip"})
    transfer_tool = "transfer_to_human_agents"
    intents = INTENTS
    slots = SLOTS
    identity = IDENTITY
    prose = PROSE
    scenario = SCENARIO
    bare_reports = BARE_REPORTS
    entity_pattern = r"#W\d{7}|\b\d{10}\b|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b\d{5}\b"
    id_forms = claims.ID_FORMS
    claim_attributes = claims.ATTRIBUTES
    account_params = frozenset({"customer_id", "order_id"})
    entity_params = frozenset({"customer_id", "order_id", "product_id", "payment_method_id",
                               "item_ids", "new_item_ids"})

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> State:
        return build_retail_state(rng, size)

    def sample_entities(self, rng: random.Random, k: int = 2) -> dict[str, list[dict[str, Any]]]:
        """A customer, their orders, and the catalog entries of what they ordered."""
        state = self.template
        assert isinstance(state, RetailState)
        customer = state.customers[rng.choice(sorted(state.customers))]
        orders = [state.orders[o] for o in customer.order_ids]
        products = sorted({i.product_id for o in orders for i in o.items})
        return {"customers": [customer.model_dump(mode="json")],
                "orders": [o.model_dump(mode="json") for o in orders],
                "products": [state.products[p].model_dump(mode="json") for p in products]}

    def task_sampler(self) -> RetailTaskSampler:
        return RetailTaskSampler(self)

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        assert isinstance(state, RetailState)
        if "customer_id" in args:
            return str(args["customer_id"])
        order = state.orders.get(str(args.get("order_id", "")))
        return order.customer_id if order else None

    def claim_records(self, observation: Observation) -> list[ClaimRecord]:
        return claims.claim_records(observation)

    def names_target(self, state: State, tool_name: str, args: dict[str, Any], text: str) -> bool:
        return claims.names_target(state, tool_name, args, text)

    def candidates(self, slot: str, words: str, observed: tuple[Observation, ...]) -> tuple[str, ...]:
        return matching_orders(words, observed) if slot == "order" else ()

    def report_facts(self, kind: str, slots: dict[str, str],
                     observed: tuple[Observation, ...]) -> ReportFacts:
        writes = frozenset(t.name for t in self.tools.values() if t.kind is ToolKind.write)
        return report_facts(kind, slots, observed, writes)
