"""Sampling clinic tasks with the kit: a patient, 1-4 intents, the calls that fulfil them.

Each intent kind is a ``_Builder._<kind>`` method returning a ``DraftIntent`` (the user's slot
values, the ground-truth calls, the outputs the agent must state) or raising ``TaskRejected``
when this patient has none; ``kit.draw_intents`` tries kinds by weight and runs each intent's
calls on the working environment (``kit.TaskBuilder.execute``) before drawing the next.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, cast

from trajforge.environments.base import Environment
from trajforge.environments.kit import KindMix, TaskBuilder, draw_intents
from trajforge.environments.tasks import DraftCall, DraftIntent, DraftOutput, DraftTask, TaskRejected
from trajforge_example_clinic.records import (
    MAX_UPCOMING,
    NOTICE_HOURS,
    NOW,
    Appointment,
    ClinicState,
    Patient,
    hours_until,
)

KINDS = KindMix(read_only=("visit_time", "cancel_too_late", "prescription"),
                writes=("book_visit", "cancel_visit", "cancel_too_late", "prescription"),
                weights={"book_visit": 4, "cancel_visit": 3, "cancel_too_late": 2},
                once=frozenset({"prescription"}), final=frozenset({"prescription"}))


class _Builder(TaskBuilder):
    """Builds one task for one patient (the kit's TaskBuilder: reads made, entities used)."""

    def __init__(self, env: Environment, rng: random.Random, patient: Patient, p_indirect: float,
                 p_revision: float) -> None:
        super().__init__(env, rng)
        self.patient = patient
        self.p_indirect, self.p_revision = p_indirect, p_revision

    @property
    def state(self) -> ClinicState:
        return cast(ClinicState, self.env.state)

    def refresh(self) -> None:
        self.patient = self.state.patients[self.patient.patient_number]

    def upcoming(self) -> list[Appointment]:
        return [a for r in self.patient.bookings if (a := self.state.appointments[r]).status == "booked"
                and a.start > NOW]

    def doctor(self, a: Appointment) -> str:
        return self.state.doctors[a.doctor_code].name

    def pick(self, fits: Any, why: str) -> Appointment:
        options = [a for a in self.upcoming() if a.booking_ref not in self.used and fits(a)]
        if not options:
            raise TaskRejected("no_appointment", why)
        chosen = self.rng.choice(options)
        self.used.add(chosen.booking_ref)
        return chosen

    def reference(self, a: Appointment) -> tuple[str, list[DraftCall]]:
        """How the patient names the appointment, and the reads that find it."""
        mine = self.upcoming()
        if Counter(self.doctor(x) for x in mine)[self.doctor(a)] == 1 and len(mine) > 1 \
                and self.rng.random() < self.p_indirect:
            reads = [c for x in mine for c in self.read_call("get_appointment", {"booking_ref": x.booking_ref},
                                                             ("appointment",))]
            return f"my appointment with {self.doctor(a)}", reads
        return a.booking_ref, self.read_call("get_appointment", {"booking_ref": a.booking_ref}, ("appointment",))

    # --- the intent kinds ---

    def _book_visit(self) -> DraftIntent:
        if len(self.upcoming()) >= MAX_UPCOMING:
            raise TaskRejected("upcoming_limit", self.patient.patient_number)
        doctors = [d for d in self.state.doctors.values()
                   if d.specialty == "general practice" or d.specialty in self.patient.referrals]
        doctor = self.rng.choice(doctors)
        freed = {self.state.appointments[r].slot_code for r in self.used}  # not the slot just cancelled
        open_slots = sorted((s for s in self.state.slots.values() if s.doctor_code == doctor.doctor_code
                             and s.status == "open" and s.start > NOW and s.slot_code not in freed),
                            key=lambda s: s.start)
        if not open_slots:
            raise TaskRejected("no_open_slot", doctor.doctor_code)
        slot = self.rng.choice(open_slots[:6])
        reads = self.read_call("list_doctors", {}, ("doctor",))
        reads += self.read_call("find_open_slots", {"doctor_code": doctor.doctor_code}, ("doctor",))
        write = DraftCall("book_appointment", {"patient_number": self.patient.patient_number,
                                               "slot_code": slot.slot_code}, "write", ("doctor", "time"))
        calls = reads + [write]
        ref = f"AP-{max(int(r[3:]) for r in self.state.appointments) + 1}"
        intent = DraftIntent("book_visit", {"doctor": doctor.name, "time": slot.start}, calls,
                             [DraftOutput("booking_ref", ref, len(calls) - 1)], len(reads))
        others = [s.start for s in open_slots[:6] if s.slot_code != slot.slot_code]
        if others and self.rng.random() < self.p_revision:
            intent.revision = ("time", self.rng.choice(others))  # another time said first
        return intent

    def _visit_time(self) -> DraftIntent:
        a = self.pick(lambda a: True, "upcoming")
        ref, reads = self.reference(a)
        if not any(c.arguments["booking_ref"] == a.booking_ref for c in reads):
            raise TaskRejected("already_read", a.booking_ref)
        at = max(i for i, c in enumerate(reads) if c.arguments["booking_ref"] == a.booking_ref)
        return DraftIntent("visit_time", {"appointment": ref}, reads, [DraftOutput("start", a.start, at)])

    def _cancel_visit(self) -> DraftIntent:
        a = self.pick(lambda a: hours_until(a.start) >= NOTICE_HOURS, "cancellable")
        ref, reads = self.reference(a)
        calls = reads + [DraftCall("cancel_appointment", {"booking_ref": a.booking_ref}, "write", ("appointment",))]
        return DraftIntent("cancel_visit", {"appointment": ref}, calls,
                           [DraftOutput("status", "cancelled", len(calls) - 1)])

    def _cancel_too_late(self) -> DraftIntent:
        a = self.pick(lambda a: hours_until(a.start) < NOTICE_HOURS, "within the notice period")
        ref, reads = self.reference(a)
        if not any(c.arguments["booking_ref"] == a.booking_ref for c in reads):
            raise TaskRejected("already_read", a.booking_ref)
        at = max(i for i, c in enumerate(reads) if c.arguments["booking_ref"] == a.booking_ref)
        return DraftIntent("cancel_too_late", {"appointment": ref}, reads, [DraftOutput("start", a.start, at)])

    def _prescription(self) -> DraftIntent:
        summary = (f"Patient {self.patient.patient_number} asks for a repeat prescription; prescriptions are "
                   "handled by the front desk.")
        return DraftIntent("prescription", {}, [DraftCall("transfer_to_front_desk", {"summary": summary}, "read",
                                                          ("identity",))])


class ClinicTaskSampler:
    """``Domain.task_sampler()``: construct once, then ``sample`` a DraftTask per blueprint."""

    def __init__(self, domain: Any) -> None:
        self.domain = domain
        state: ClinicState = domain.template
        self.numbers = sorted(state.patients)
        counts = Counter((p.name, p.phone) for p in state.patients.values())
        self.by_phone = {p.patient_number for p in state.patients.values() if counts[(p.name, p.phone)] == 1}

    def sample(self, rng: random.Random, n_intents: int, *, p_indirect: float, p_revision: float,
               p_redirect: float, p_read_only: float) -> DraftTask:
        env = self.domain.environment()
        patient: Patient = env.state.patients[rng.choice(self.numbers)]
        if patient.patient_number in self.by_phone and rng.random() < 0.4:
            identity = {"name": patient.name, "phone": patient.phone}
            auth = DraftCall("find_patient", {"full_name": patient.name, "phone": patient.phone}, "read",
                             ("identity",))
        else:
            identity = {"patient_number": patient.patient_number, "date_of_birth": patient.date_of_birth}
            auth = DraftCall("verify_patient", dict(identity), "read", ("identity",))
        builder = _Builder(env, rng, patient, p_indirect, p_revision)
        auth_calls = [auth] + builder.read_call("get_patient", {"patient_number": patient.patient_number},
                                                ("identity",))
        intents = draw_intents(rng, n_intents, p_read_only, KINDS, builder)
        return DraftTask(identity=identity, auth_calls=auth_calls, intents=intents)
