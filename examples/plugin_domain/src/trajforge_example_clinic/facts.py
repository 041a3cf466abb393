"""What the checks and the scripted oracle read from the tools' results.

``claim_records``: which entities a tool output shows (appointments by booking reference: their
date, time, status and doctor; slots by code: their date and time), so ``grounded_claims`` can check what the
agent states. ``report_facts``: the values an intent's report needs, found in this episode's
tool results, never in the blueprint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from trajforge.environments.base import Observation, ReportFacts
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord

ID_FORMS = ((r"(?<![\w-])(?:PT-?)?(\d{7})(?![\w-])", r"PT-\1"),)  # a patient number with or without PT-
ATTRIBUTES = (
    Attribute("date", AttributeType.date),
    Attribute("status", AttributeType.status, vocabulary=("booked", "cancelled", "canceled")),
    Attribute("doctor", AttributeType.phrase),
    Attribute("time", AttributeType.phrase),  # the start's clock time, "16:30"
)
_REF = re.compile(r"\bAP-\d{6}\b", re.IGNORECASE)


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def _seen(observed: Sequence[Observation]) -> Iterator[tuple[str, dict[str, Any]]]:
    for obs in observed:
        if obs.error is None:
            for obj in _objects(obs.result):
                yield obs.tool, obj


def claim_records(observation: Observation) -> list[ClaimRecord]:
    out = []
    for _, obj in _seen([observation]):
        if "booking_ref" in obj:
            status = obj["status"]
            out.append(ClaimRecord("appointment", obj["booking_ref"], ((obj["booking_ref"],),),
                                   {"date": (obj["start"][:10],), "time": (obj["start"][11:],),
                                    "doctor": (obj["doctor"],),
                                    "status": (status, "canceled") if status == "cancelled" else (status,)}))
        elif "slot_code" in obj:
            out.append(ClaimRecord("slot", obj["slot_code"], ((obj["slot_code"],),),
                                   {"date": (obj["start"][:10],), "time": (obj["start"][11:],)}))
    return out


def _appointment(ref: str, observed: Sequence[Observation]) -> dict[str, Any] | None:
    """The latest record of the appointment ``ref`` names: its booking reference, or "my
    appointment with <doctor>": the one booked appointment with that doctor the tools showed, or
    (once it is cancelled) the one of that doctor the tools showed last."""
    latest: dict[str, dict[str, Any]] = {}
    for _, o in _seen(observed):
        if "booking_ref" in o:
            latest.pop(o["booking_ref"], None)
            latest[o["booking_ref"]] = o  # in the order they were last shown
    m = _REF.search(ref)
    if m:
        return latest.get(m.group(0).upper())
    doctor = ref.rsplit(" with ", 1)[-1].lower()
    found = [a for a in latest.values() if a["doctor"].lower() == doctor]
    booked = [a for a in found if a["status"] == "booked"]
    if len(booked) == 1:
        return booked[0]
    return found[-1] if found and not booked else None


def report_facts(kind: str, slots: dict[str, str], observed: Sequence[Observation]) -> ReportFacts:
    if kind == "book_visit":
        facts: dict[str, str] = {}
        doctor = next((o for _, o in _seen(observed) if "specialty" in o and "booking_ref" not in o
                       and o["name"].lower() == slots.get("doctor", "").lower()), None)
        if doctor is None:
            return ReportFacts()
        facts["doctor"] = doctor["name"]
        slot = next((o for _, o in _seen(observed) if "slot_code" in o and "booking_ref" not in o
                     and o["doctor_code"] == doctor["doctor_code"] and o["start"] == slots.get("time")), None)
        if slot is not None:
            facts["slot_code"] = slot["slot_code"]
        patient = [o for tool, o in _seen(observed) if tool == "get_patient"]
        if patient:
            facts["patient_number"] = patient[-1]["patient_number"]
        booked = [o for tool, o in _seen(observed) if tool == "book_appointment"
                  and slot is not None and o["slot_code"] == slot["slot_code"]]
        if booked:
            facts.update(booking_ref=booked[-1]["booking_ref"], start=booked[-1]["start"])
            return ReportFacts(facts, ("booking_ref",))
        return ReportFacts(facts, ())
    if kind in ("visit_time", "cancel_visit", "cancel_too_late"):
        appointment = _appointment(slots.get("appointment", ""), observed)
        if appointment is None:
            return ReportFacts()
        return ReportFacts({"booking_ref": appointment["booking_ref"], "doctor": appointment["doctor"],
                            "start": appointment["start"], "status": appointment["status"]}, ("booking_ref",))
    return ReportFacts()
