"""A test domain: a public library's member desk (loans, holds, fines), built with the kit.

Its naming is unlike retail's on purpose, so that a core that guesses from retail's names fails
here: no parameter ends in ``_id``; members are keyed by ``card_number``, editions by ``isbn``,
loans by ``loan_ref``, holds by ``hold_ref``, branches by ``branch_code``; a member proves who
they are with two factors (card number and PIN, or name, date of birth and postal code).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from tests.domains.library import facts
from tests.domains.library.data import LibraryState, build_library_state
from tests.domains.library.phrasing import BARE_REPORTS, IDENTITY, INTENTS, PROSE, SLOTS
from tests.domains.library.policy import POLICY_TEXT, RULES, TOOL_RULES
from tests.domains.library.tasks import LibraryTaskSampler
from tests.domains.library.tools import LibraryTools, canonical_card
from trajforge.environments.base import Domain, Observation, ReportFacts, State
from trajforge.environments.claims import ClaimRecord


class LibraryDomain(Domain):
    name: ClassVar[str] = "library"
    toolkit_type = LibraryTools
    policy = POLICY_TEXT
    policy_rules = RULES
    tool_rules = TOOL_RULES
    auth_tools = frozenset({"verify_member_card", "find_member_by_details"})
    transfer_tool = "transfer_to_librarian"
    intents = INTENTS
    slots = SLOTS
    identity = IDENTITY
    prose = PROSE
    bare_reports = BARE_REPORTS
    entity_pattern = r"\bLC-?\d{8}\b|\b97[89]-?\d-?\d{3}-?\d{5}-?\d\b|\bLN-\d{6}\b|\bHD-\d{5}\b|\bRC-\d{6}\b"
    id_forms = facts.ID_FORMS
    claim_attributes = facts.ATTRIBUTES
    account_params = frozenset({"card_number", "loan_ref", "hold_ref"})
    # the PIN too: an agent must have been told it before it uses one
    entity_params = frozenset({"card_number", "pin", "isbn", "loan_ref", "hold_ref", "branch_code"})

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> LibraryState:
        return build_library_state(rng, size)

    def task_sampler(self) -> LibraryTaskSampler:
        return LibraryTaskSampler(self)

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        assert isinstance(state, LibraryState)
        if "card_number" in args:
            card = canonical_card(str(args["card_number"]))
            return card if card in state.members else None
        if "loan_ref" in args:
            loan = state.loans.get(str(args["loan_ref"]).strip().upper())
            return loan.card_number if loan else None
        if "hold_ref" in args:
            hold = state.holds.get(str(args["hold_ref"]).strip().upper())
            return hold.card_number if hold else None
        return None

    def claim_records(self, observation: Observation) -> list[ClaimRecord]:
        return facts.claim_records(observation)

    def names_target(self, state: State, tool_name: str, args: dict[str, Any], text: str) -> bool:
        said = {k: self.canonical_ids(str(v)) for k, v in args.items() if not isinstance(v, list)}
        return facts.names_target(said, self.canonical_ids(text))

    def report_facts(self, kind: str, slots: dict[str, str],
                     observed: tuple[Observation, ...]) -> ReportFacts:
        return facts.report_facts(kind, slots, observed)
