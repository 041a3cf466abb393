"""The built-in ``airline`` domain: an airline's reservation desk, at a fixed "now"."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from trajforge.environments.airline import claims
from trajforge.environments.airline.data import AirlineState, build_airline_state
from trajforge.environments.airline.phrasing import BARE_REPORTS, IDENTITY, INTENTS, PROSE, SLOTS
from trajforge.environments.airline.policy import POLICY_TEXT, RULES, TOOL_RULES
from trajforge.environments.airline.reports import matching_reservations, report_facts
from trajforge.environments.airline.scenario import SCENARIO
from trajforge.environments.airline.tasks import AirlineTaskSampler
from trajforge.environments.airline.tools import AirlineTools
from trajforge.environments.base import Domain, Observation, ReportFacts, State, ToolKind
from trajforge.environments.claims import ClaimRecord


class AirlineDomain(Domain):
    name: ClassVar[str] = "airline"
    toolkit_type = AirlineTools
    policy = POLICY_TEXT
    policy_rules = RULES
    tool_rules = TOOL_RULES
    auth_tools = frozenset({"find_user_id_by_email", "find_user_id_by_name_dob"})
    transfer_tool = "transfer_to_human_agents"
    intents = INTENTS
    slots = SLOTS
    identity = IDENTITY
    prose = PROSE
    scenario = SCENARIO
    bare_reports = BARE_REPORTS
    entity_pattern = (r"\b[A-Z]{2}\d{3}[A-Z]\b|\bHA\d{3}\b|\b[a-z]+_[a-z]+_\d{4}\b|"
                      r"\b(?:credit_card|gift_card|certificate)_\d{7}\b|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
    id_forms = claims.ID_FORMS
    claim_attributes = claims.ATTRIBUTES
    account_params = frozenset({"user_id", "reservation_id"})
    entity_params = frozenset({"user_id", "reservation_id", "flight_number", "flight_numbers",
                               "payment_id"})

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> State:
        return build_airline_state(rng, size)

    def sample_entities(self, rng: random.Random, k: int = 2) -> dict[str, list[dict[str, Any]]]:
        """A user, their reservations, and the flights those reservations fly."""
        state = self.template
        assert isinstance(state, AirlineState)
        user = state.users[rng.choice(sorted(state.users))]
        reservations = [state.reservations[r] for r in user.reservations]
        flights = sorted({f"{leg.flight_number}/{leg.date}" for r in reservations for leg in r.legs})
        return {"users": [user.model_dump(mode="json")],
                "reservations": [r.model_dump(mode="json") for r in reservations],
                "flights": [state.flights[f].model_dump(mode="json") for f in flights if f in state.flights]}

    def task_sampler(self) -> AirlineTaskSampler:
        return AirlineTaskSampler(self)

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        assert isinstance(state, AirlineState)
        if "user_id" in args:
            return str(args["user_id"])
        reservation = state.reservations.get(str(args.get("reservation_id", "")))
        return reservation.user_id if reservation else None

    def canonical_ids(self, text: str) -> str:
        """Booking codes without ``#`` and in upper case (``id_forms`` puts back the ``#``-less
        form; a regex replacement cannot upper-case, so this does both)."""
        return claims.canonical(super().canonical_ids(text))

    def claim_records(self, observation: Observation) -> list[ClaimRecord]:
        return claims.claim_records(observation)

    def names_target(self, state: State, tool_name: str, args: dict[str, Any], text: str) -> bool:
        return claims.names_target(args, text)

    def candidates(self, slot: str, words: str, observed: tuple[Observation, ...]) -> tuple[str, ...]:
        return matching_reservations(words, observed) if slot == "reservation" else ()

    def report_facts(self, kind: str, slots: dict[str, str],
                     observed: tuple[Observation, ...]) -> ReportFacts:
        writes = frozenset(t.name for t in self.tools.values() if t.kind is ToolKind.write)
        return report_facts(kind, slots, observed, writes)
