"""The clinic's state: frozen records in tables, built deterministically from (rng, size)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from trajforge.environments.base import State
from trajforge.schemas.base import Record

NOW = "2026-04-06 09:00"  # the desk's fixed "now", so that "within 24 hours" never drifts
NOTICE_HOURS = 24
MAX_UPCOMING = 3
DOCTORS = (  # code, name, specialty (a specialist needs a referral on file)
    ("DR-101", "Dr Amara Kovacs", "general practice"),
    ("DR-102", "Dr Felix Oyelaran", "general practice"),
    ("DR-103", "Dr Hanna Lindgren", "general practice"),
    ("DR-204", "Dr Rafael Moreno", "dermatology"),
    ("DR-305", "Dr Yuki Sato", "cardiology"),
)
_FIRST = ("Alma", "Boris", "Celine", "Dario", "Elif", "Gustav", "Hiro", "Imani", "Jasper", "Kaia", "Luca",
          "Mirela", "Nadim", "Oona", "Priya", "Rowan", "Selma", "Tobias", "Wren", "Zeno")
_LAST = ("Achebe", "Brandt", "Costa", "Dahl", "Ekwueme", "Florescu", "Grünberg", "Horvat", "Ibsen", "Janssen",
         "Kaur", "Lorenzo", "Mbeki", "Novak", "Ortega", "Pillai", "Rossi", "Strand", "Toivonen", "Valdez")


class Doctor(Record):
    doctor_code: str
    name: str
    specialty: str


class Slot(Record):
    slot_code: str
    doctor_code: str
    start: str  # "YYYY-MM-DD HH:MM"
    status: str  # "open" | "booked"


class Patient(Record):
    patient_number: str
    name: str
    date_of_birth: str
    phone: str
    referrals: tuple[str, ...]  # specialties a GP referred the patient to
    bookings: tuple[str, ...]  # booking refs, oldest first


class Appointment(Record):
    booking_ref: str
    patient_number: str
    slot_code: str
    doctor_code: str
    start: str
    status: str  # "booked" | "cancelled"


class ClinicState(State):
    doctors: dict[str, Doctor]
    slots: dict[str, Slot]
    patients: dict[str, Patient]
    appointments: dict[str, Appointment]


def hours_until(start: str) -> float:
    return (datetime.fromisoformat(start) - datetime.fromisoformat(NOW)).total_seconds() / 3600


def build_clinic_state(rng: random.Random, size: int) -> ClinicState:
    doctors = {code: Doctor(doctor_code=code, name=name, specialty=spec) for code, name, spec in DOCTORS}
    slots: dict[str, Slot] = {}
    per_day = min(16, 3 + size // 40)  # enough open slots for the patients, whatever the size
    codes = iter(rng.sample(range(10000, 99999), 14 * 16 * len(DOCTORS)))
    for code in doctors:
        for day in range(14):
            for half_hour in sorted(rng.sample(range(16), per_day)):
                at = datetime.fromisoformat(NOW) + timedelta(days=day, minutes=30 * half_hour)
                slot = Slot(slot_code=f"SL-{next(codes)}", doctor_code=code, start=at.strftime("%Y-%m-%d %H:%M"),
                            status="open")
                slots[slot.slot_code] = slot
    patients: dict[str, Patient] = {}
    appointments: dict[str, Appointment] = {}
    numbers = rng.sample(range(1_000_000, 9_999_999), size)
    refs = iter(rng.sample(range(100_000, 999_999), size * 4))
    open_slots = sorted(slots)
    rng.shuffle(open_slots)
    for number in numbers:
        patient_number = f"PT-{number}"
        referrals = tuple(sorted(rng.sample(("dermatology", "cardiology"), rng.choice((0, 0, 1, 2)))))
        bookings = []
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            if not open_slots:
                break
            slot = slots[open_slots.pop()]
            if doctors[slot.doctor_code].specialty != "general practice" and \
                    doctors[slot.doctor_code].specialty not in referrals:
                continue
            slots[slot.slot_code] = slot.model_copy(update={"status": "booked"})
            appointment = Appointment(booking_ref=f"AP-{next(refs)}", patient_number=patient_number,
                                      slot_code=slot.slot_code, doctor_code=slot.doctor_code, start=slot.start,
                                      status="booked")
            appointments[appointment.booking_ref] = appointment
            bookings.append(appointment.booking_ref)
        patients[patient_number] = Patient(
            patient_number=patient_number, name=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
            date_of_birth=f"{rng.randint(1940, 2010)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            phone=f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}", referrals=referrals,
            bookings=tuple(bookings))
    return ClinicState(doctors=doctors, slots=slots, patients=patients, appointments=appointments)
