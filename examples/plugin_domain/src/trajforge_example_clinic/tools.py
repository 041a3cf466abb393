"""The clinic's tools, and its rules about single writes.

Tools raise ``ToolError`` for a wrong call (an unknown key); they do not check policy rules:
``write_breaches`` names the rules a write would break, and the environment refuses such a write
before the tool runs (the policy check replays the same method).
"""

from __future__ import annotations

import re
from typing import Any

from trajforge.environments.base import ToolKind, Toolkit, tool
from trajforge.errors import ToolError
from trajforge_example_clinic.records import (
    MAX_UPCOMING,
    NOTICE_HOURS,
    NOW,
    Appointment,
    ClinicState,
    Patient,
    hours_until,
)

_PATIENT = re.compile(r"^(?:PT-?)?(\d{7})$", re.IGNORECASE)


def patient_key(value: str) -> str:
    """A patient number as the clinic writes it (``PT-`` put back when left out)."""
    m = _PATIENT.match(value.strip())
    return f"PT-{m.group(1)}" if m else value.strip()


class ClinicTools(Toolkit):
    state: ClinicState

    def _patient(self, patient_number: str) -> Patient:
        patient = self.state.patients.get(patient_key(patient_number))
        if patient is None:
            raise ToolError(f"no patient {patient_number}")
        return patient

    def _appointment(self, booking_ref: str) -> Appointment:
        appointment = self.state.appointments.get(booking_ref.strip().upper())
        if appointment is None:
            raise ToolError(f"no appointment {booking_ref}")
        return appointment

    def _view(self, appointment: Appointment) -> dict[str, Any]:
        doctor = self.state.doctors[appointment.doctor_code]
        return {**appointment.model_dump(), "doctor": doctor.name, "specialty": doctor.specialty}

    # --- identifying the patient (the auth tools: each returns the patient number) ---

    @tool(ToolKind.read)
    def verify_patient(self, patient_number: str, date_of_birth: str) -> str:
        """Identify a patient by patient number and date of birth. Returns the patient number.

        Args:
            patient_number: The patient number on the clinic card, e.g. "PT-1000000".
            date_of_birth: The patient's date of birth, YYYY-MM-DD.
        """
        patient = self.state.patients.get(patient_key(patient_number))
        if patient is None or patient.date_of_birth != date_of_birth.strip():
            raise ToolError("patient number and date of birth do not match")
        return patient.patient_number

    @tool(ToolKind.read)
    def find_patient(self, full_name: str, phone: str) -> str:
        """Identify a patient by full name and phone number. Returns the patient number.

        Args:
            full_name: The patient's first and last name.
            phone: The phone number on file, like 555-201-4433.
        """
        found = [p for p in self.state.patients.values()
                 if p.name.lower() == " ".join(full_name.lower().split()) and p.phone == phone.strip()]
        if len(found) != 1:
            raise ToolError("no single patient matches this name and phone number")
        return found[0].patient_number

    # --- reads ---

    @tool(ToolKind.read)
    def get_patient(self, patient_number: str) -> dict[str, Any]:
        """A patient's record: name, referrals on file, booking references.

        Args:
            patient_number: The patient number, e.g. "PT-1000000".
        """
        return self._patient(patient_number).model_dump(exclude={"date_of_birth", "phone"})

    @tool(ToolKind.read)
    def list_doctors(self) -> list[dict[str, Any]]:
        """The clinic's doctors with their codes and specialties."""
        return [d.model_dump() for d in self.state.doctors.values()]

    @tool(ToolKind.read)
    def find_open_slots(self, doctor_code: str) -> list[dict[str, Any]]:
        """A doctor's open appointment slots from now on, earliest first.

        Args:
            doctor_code: The doctor's code, e.g. "DR-100".
        """
        if doctor_code not in self.state.doctors:
            raise ToolError(f"no doctor {doctor_code}")
        return [s.model_dump() for s in sorted(self.state.slots.values(), key=lambda s: s.start)
                if s.doctor_code == doctor_code and s.status == "open" and s.start > NOW]

    @tool(ToolKind.read)
    def get_appointment(self, booking_ref: str) -> dict[str, Any]:
        """One appointment: doctor, start time, status.

        Args:
            booking_ref: The booking reference, e.g. "AP-100000".
        """
        return self._view(self._appointment(booking_ref))

    @tool(ToolKind.read)
    def transfer_to_front_desk(self, summary: str) -> str:
        """Hand the conversation to the front-desk staff, with a summary of the request.

        Args:
            summary: What the patient needs and what was found.
        """
        return "Transfer successful"

    # --- writes ---

    @tool(ToolKind.write)
    def book_appointment(self, patient_number: str, slot_code: str) -> dict[str, Any]:
        """Book an open slot for a patient.

        Args:
            patient_number: The patient number.
            slot_code: The slot's code, e.g. "SL-10000".
        """
        patient = self._patient(patient_number)
        slot = self.state.slots.get(slot_code.strip().upper())
        if slot is None:
            raise ToolError(f"no slot {slot_code}")
        ref = f"AP-{max(int(r[3:]) for r in self.state.appointments) + 1}" if self.state.appointments else "AP-100000"
        appointment = Appointment(booking_ref=ref, patient_number=patient.patient_number, slot_code=slot.slot_code,
                                  doctor_code=slot.doctor_code, start=slot.start, status="booked")
        self.state.appointments[ref] = appointment
        self.state.slots[slot.slot_code] = slot.model_copy(update={"status": "booked"})
        self.state.patients[patient.patient_number] = patient.model_copy(update={"bookings": patient.bookings + (ref,)})
        return self._view(appointment)

    @tool(ToolKind.write)
    def cancel_appointment(self, booking_ref: str) -> dict[str, Any]:
        """Cancel a booked appointment and free its slot.

        Args:
            booking_ref: The booking reference, e.g. "AP-100000".
        """
        appointment = self._appointment(booking_ref)
        cancelled = appointment.model_copy(update={"status": "cancelled"})
        self.state.appointments[appointment.booking_ref] = cancelled
        slot = self.state.slots[appointment.slot_code]
        self.state.slots[slot.slot_code] = slot.model_copy(update={"status": "open"})
        return self._view(cancelled)

    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        state, out = self.state, []
        if name == "book_appointment":
            patient = state.patients.get(patient_key(str(args.get("patient_number", ""))))
            slot = state.slots.get(str(args.get("slot_code", "")).strip().upper())
            if patient is None or slot is None:
                return []
            if slot.status != "open":
                out.append(("slot_open", f"slot {slot.slot_code} is {slot.status}"))
            specialty = state.doctors[slot.doctor_code].specialty
            if specialty != "general practice" and specialty not in patient.referrals:
                out.append(("referral", f"no {specialty} referral on file"))
            upcoming = [r for r in patient.bookings if state.appointments[r].status == "booked"
                        and state.appointments[r].start > NOW]
            if len(upcoming) >= MAX_UPCOMING:
                out.append(("upcoming_limit", f"{len(upcoming)} upcoming appointments"))
        elif name == "cancel_appointment":
            appointment = state.appointments.get(str(args.get("booking_ref", "")).strip().upper())
            if appointment is None:
                return []
            if appointment.status != "booked":
                out.append(("booked_only", f"appointment {appointment.booking_ref} is {appointment.status}"))
            elif hours_until(appointment.start) < NOTICE_HOURS:
                out.append(("cancel_notice", f"appointment {appointment.booking_ref} starts {appointment.start}"))
        return out
