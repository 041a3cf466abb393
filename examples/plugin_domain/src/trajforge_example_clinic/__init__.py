"""An example trajforge domain: a clinic's appointment desk, as a plug-in package.

The domain class gathers the declarations the framework reads (see the main README, "Adding a
domain"); everything else lives in the modules it imports: ``records`` (state), ``tools``
(toolkit and write rules), ``policy``, ``wording`` (what the scripted sides say), ``tasks``
(the sampler) and ``facts`` (what the checks and the oracle read from tool results).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from trajforge.environments.base import Domain, Observation, ReportFacts, State
from trajforge.environments.claims import ClaimRecord
from trajforge_example_clinic import facts
from trajforge_example_clinic.policy import POLICY_TEXT, RULES, TOOL_RULES
from trajforge_example_clinic.records import ClinicState, build_clinic_state
from trajforge_example_clinic.tasks import ClinicTaskSampler
from trajforge_example_clinic.tools import ClinicTools, patient_key
from trajforge_example_clinic.wording import BARE_REPORTS, IDENTITY, INTENTS, PROSE, SLOTS


class ClinicDomain(Domain):
    # required (environments.validate checks them when the domain loads)
    name: ClassVar[str] = "clinic"
    toolkit_type = ClinicTools
    policy = POLICY_TEXT
    policy_rules = RULES
    # what the checks and the scripted sides read
    tool_rules = TOOL_RULES
    auth_tools = frozenset({"verify_patient", "find_patient"})
    transfer_tool = "transfer_to_front_desk"
    intents = INTENTS
    slots = SLOTS
    identity = IDENTITY
    prose = PROSE
    bare_reports = BARE_REPORTS
    entity_pattern = r"\bPT-?\d{7}\b|\bAP-\d{6}\b|\bSL-\d{5}\b|\bDR-\d{3}\b|\b555-\d{3}-\d{4}\b"
    id_forms = facts.ID_FORMS
    claim_attributes = facts.ATTRIBUTES
    account_params = frozenset({"patient_number", "booking_ref"})
    entity_params = frozenset({"patient_number", "booking_ref", "slot_code", "doctor_code"})

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> ClinicState:
        return build_clinic_state(rng, size)

    def task_sampler(self) -> ClinicTaskSampler:
        return ClinicTaskSampler(self)

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        """Whose record a call touches: the patient number, or the patient an appointment is for."""
        assert isinstance(state, ClinicState)
        if "patient_number" in args:
            number = patient_key(str(args["patient_number"]))
            return number if number in state.patients else None
        appointment = state.appointments.get(str(args.get("booking_ref", "")).strip().upper())
        return appointment.patient_number if appointment else None

    def claim_records(self, observation: Observation) -> list[ClaimRecord]:
        return facts.claim_records(observation)

    def report_facts(self, kind: str, slots: dict[str, str], observed: tuple[Observation, ...]) -> ReportFacts:
        return facts.report_facts(kind, slots, observed)
