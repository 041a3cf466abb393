"""What a domain declares for the generic parts (account and entity parameters, identity), and
the defaults a plug-in that declares nothing gets."""

from __future__ import annotations

import asyncio
import random
from typing import ClassVar

import pytest

from trajforge.environments import Domain, State, ToolKind, Toolkit, tool
from trajforge.environments.base import toolkit_tools
from trajforge.environments.retail import RetailDomain
from trajforge.environments.tasks import DEFAULT_IDENTITY, DEFAULT_PROSE, IdentitySpec, ProseSpec
from trajforge.generators import generate_blueprints
from trajforge.generators.paraphrase import paraphrase_goal
from trajforge.schemas import (
    AssistantMessage,
    EpisodeSpec,
    TaskBlueprint,
    TerminationReason,
    Trajectory,
    UserMessage,
)
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, run_episode
from trajforge.verifiers import verify


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


# --- identity ---------------------------------------------------------------------------------

def test_identity_declarations(retail: RetailDomain) -> None:
    assert retail.identity.factors == (("email",), ("name", "zip"))
    assert retail.identity.facts == ("email", "name", "zip")
    assert BareLoans.identity is DEFAULT_IDENTITY and DEFAULT_IDENTITY.facts == ("user_id",)
    with pytest.raises(ValueError, match="one tuple of answers"):
        IdentitySpec(factors=(("card",), ("name", "birth_date")), asks=("Who?",), keywords=("who",),
                     answers=(("{card}",),))


POSTCODE = IdentitySpec(
    factors=(("email",), ("name", "zip")),
    asks=("Who am I speaking with? Your mail address, or name plus postcode.",),
    keywords=("who am i speaking",),
    answers=(("Mail: {email}.",), ("Name {name}; postcode {zip}.",)))


class PostcodeRetail(RetailDomain):
    """Retail with other identity phrases: the scripted sides must use these, not retail's."""

    identity = POSTCODE


def _episode(bp: TaskBlueprint, domain: RetailDomain, seed: int) -> Trajectory:
    rng = random.Random(seed)
    spec = EpisodeSpec(agent="scripted:oracle", user="scripted", seed=seed, max_turns=40)
    return asyncio.run(run_episode(bp.id, domain.environment(), ScriptedAgent(bp, domain, rng),
                                   ScriptedUser(bp, domain, rng), EpisodeLimits(), run_id="decl",
                                   episode=spec))


def test_the_scripted_sides_read_the_declared_identity() -> None:
    domain = PostcodeRetail(60, 3)
    bps = [b for b in generate_blueprints(domain, GenerationConfig(), "decl", 0, 60)
           if isinstance(b, TaskBlueprint)]
    asked = answered_by = 0
    for i, bp in enumerate(bps):
        t = _episode(bp, domain, i)
        texts = [m.content or "" for m in t.messages if isinstance(m, (AssistantMessage, UserMessage))]
        assert not any(a in x for a in retail_identity().asks for x in texts)
        asked += any(POSTCODE.asks[0] in x for x in texts)
        answered_by += any(x.startswith(("Mail: ", "Name ")) or " Mail: " in x or " Name " in x
                           for x in texts)
        assert t.termination is TerminationReason.user_stop, (bp.id, t.termination)
        failed = [v.check for v in verify(t, bp, domain) if not v.passed]
        assert not failed, (bp.id, failed)
    assert asked >= 5 and answered_by >= 10


def retail_identity() -> IdentitySpec:
    from trajforge.environments.retail.phrasing import IDENTITY

    return IDENTITY


# --- prose ------------------------------------------------------------------------------------

def test_goals_and_paraphrases_read_the_declared_prose(retail: RetailDomain) -> None:
    assert retail.prose.role == "a customer" and BareLoans.prose is DEFAULT_PROSE
    bps = [b for b in generate_blueprints(retail, GenerationConfig(), "decl", 0, 5)
           if isinstance(b, TaskBlueprint)]
    assert bps and all(b.user.goal.startswith("You are a customer (") for b in bps)
    goal = "You are a member (card: LC-1). You want: (1) Can you renew my loan? [isbn: 978-0] (2) Can I pay?"
    for seed in range(10):
        # a plug-in's goal is not in retail's shape: only its synonyms are swapped
        assert paraphrase_goal(goal, random.Random(seed), retail.prose).startswith("You are a member (")
    member = ProseSpec(role="a member", roles=("Play a library member ({who}).",), synonyms=())
    outs = {paraphrase_goal(goal, random.Random(s), member) for s in range(10)}
    assert all("Play a library member (card: LC-1)." in o and "isbn: 978-0" in o for o in outs)
    assert all(not o.startswith("You are a member") for o in outs)
