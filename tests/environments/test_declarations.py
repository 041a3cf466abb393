"""What a domain declares for the generic parts (account and entity parameters, identity), and
the defaults a plug-in that declares nothing gets."""

from __future__ import annotations

import random
from typing import ClassVar

import pytest

from trajforge.environments import Domain, State, ToolKind, Toolkit, tool
from trajforge.environments.base import toolkit_tools
from trajforge.environments.retail import RetailDomain


class LoanTools(Toolkit):
    @tool(ToolKind.read)
    def find_member(self, card_number: str) -> str:
        """Find a member by library card.

        Args:
            card_number: The card number, e.g. "LC-1234".
        """
        return "m1"

    @tool(ToolKind.read)
    def get_member(self, user_id: str) -> str:
        """A member's record.

        Args:
            user_id: The member id.
        """
        return user_id

    @tool(ToolKind.write)
    def renew_loan(self, member: str, isbn: str, loan_id: str) -> str:
        """Renew a loan.

        Args:
            member: The member id.
            isbn: The book's ISBN.
            loan_id: The loan.
        """
        return loan_id


class BareLoans(Domain):
    """A plug-in that declares nothing beyond what a domain must have."""

    name: ClassVar[str] = "bare_loans"
    toolkit_type = LoanTools
    policy = "Be kind."
    policy_rules: ClassVar[dict[str, str]] = {}

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> State:
        return State()


class DeclaredLoans(BareLoans):
    name: ClassVar[str] = "declared_loans"
    account_params = frozenset({"member"})
    entity_params = frozenset({"member", "isbn", "card_number"})


@pytest.fixture(scope="module")
def retail() -> RetailDomain:
    return RetailDomain(40, 1)


# --- account parameters -----------------------------------------------------------------------

def test_retail_declares_its_account_parameters(retail: RetailDomain) -> None:
    assert retail.account_params == {"customer_id", "order_id"}
    assert retail.tools["get_order_details"].account_params == ("order_id",)
    assert retail.tools["modify_customer_address"].account_params == ("customer_id",)
    assert retail.tools["get_product_details"].account_params == ()


def test_a_plugin_without_declarations_scopes_user_id() -> None:
    tools = BareLoans().tools
    assert tools["get_member"].account_params == ("user_id",)
    assert tools["renew_loan"].account_params == ()


def test_declared_account_parameters_replace_the_default() -> None:
    tools = DeclaredLoans().tools
    assert tools["renew_loan"].account_params == ("member",)
    assert tools["get_member"].account_params == ()
    # the same toolkit class under two declarations: two tool tables, built once each
    assert toolkit_tools(LoanTools, frozenset({"member"})) is tools
    assert BareLoans().tools is not tools


# --- entity parameters ------------------------------------------------------------------------

def test_entity_parameters_default_to_id_names() -> None:
    bare = BareLoans()
    assert [p for p in ("user_id", "loan_id", "item_ids", "isbn", "member") if bare.references_entity(p)] \
        == ["user_id", "loan_id", "item_ids"]


def test_declared_entity_parameters(retail: RetailDomain) -> None:
    declared = DeclaredLoans()
    assert {p for p in ("user_id", "loan_id", "isbn", "member", "card_number")
            if declared.references_entity(p)} == {"isbn", "member", "card_number"}
    assert {p for p in ("order_id", "customer_id", "product_id", "payment_method_id", "item_ids",
                        "new_item_ids", "zip", "email", "reason") if retail.references_entity(p)} \
        == {"order_id", "customer_id", "product_id", "payment_method_id", "item_ids", "new_item_ids"}
