"""What the scripted patient and agent say: identity, prose, the facts asked for, each intent kind."""

from __future__ import annotations

from trajforge.environments.tasks import ASKING_SYNONYMS, IdentitySpec, IntentSpec, ProseSpec, SlotSpec

# the keys of each factor set are the keys of DraftTask.identity the sampler fills
IDENTITY = IdentitySpec(
    factors=(("patient_number", "date_of_birth"), ("name", "phone")),
    asks=("Before we start: your patient number and date of birth, please (or your full name and phone number).",
          "Could I have your patient number and date of birth? Your name and phone number work too."),
    keywords=("patient number", "phone number"),
    answers=(("My patient number is {patient_number} and I was born {date_of_birth}.",
              "{patient_number}, date of birth {date_of_birth}."),
             ("I'm {name}, phone {phone}.", "My name is {name} and my phone number is {phone}.")))

PROSE = ProseSpec(
    role="a patient",
    roles=("You are a patient of the clinic ({who}).", "Play a clinic patient ({who}).", "Role: patient ({who})."),
    synonyms=ASKING_SYNONYMS + (("appointment", ("visit",)), ("book", ("schedule",))))

SLOTS: dict[str, SlotSpec] = {
    "time": SlotSpec(
        "time", questions=("Which of the open times would you like?", "What time suits you?"),
        keywords=("which of the open times", "what time"),
        answers=("{value}, please.", "I'll take {value}.")),
    "appointment": SlotSpec(
        "appointment", questions=("Which appointment is it? The booking reference helps.",
                                  "Which of your appointments do you mean?"),
        keywords=("which appointment", "which of your appointments"),
        answers=("It's {value}.", "{value}.")),
}

INTENTS: dict[str, IntentSpec] = {
    "book_visit": IntentSpec(
        "book_visit", writes=True, core_slots=("doctor",), slots=("doctor", "time"),
        requests=("I'd like to book an appointment with {doctor}.", "Can I see {doctor} soon?"),
        actions=("book slot {slot_code} with {doctor} at {time} for patient {patient_number}",
                 "reserve {time} with {doctor} (slot {slot_code}) for patient {patient_number}"),
        reports=("Appointment {booking_ref} with {doctor} on {start} is booked.",
                 "You're booked: appointment {booking_ref} with {doctor} is on {start}.")),
    "visit_time": IntentSpec(
        "visit_time", writes=False, core_slots=("appointment",), slots=("appointment",),
        requests=("When is {appointment}?", "Can you remind me when {appointment} is?"),
        actions=(),
        reports=("Appointment {booking_ref} with {doctor} is on {start}.",)),
    "cancel_visit": IntentSpec(
        "cancel_visit", writes=True, core_slots=(), slots=("appointment",),
        requests=("I need to cancel an appointment.", "Can you cancel one of my appointments?"),
        actions=("cancel appointment {booking_ref} with {doctor}",),
        reports=("Appointment {booking_ref} with {doctor} on {start} is now cancelled.",)),
    # the refusal: the read shows the appointment starts within 24 hours; nothing is written
    "cancel_too_late": IntentSpec(
        "cancel_too_late", writes=False, core_slots=(), slots=("appointment",),
        requests=("I need to cancel an appointment.", "Can you cancel one of my appointments?"),
        actions=(),
        reports=("I'm sorry, appointment {booking_ref} with {doctor} starts {start}, less than 24 hours from "
                 "now, and an appointment cannot be cancelled less than 24 hours before it starts.",)),
    # the hand-over: the task ends with transfer_to_front_desk
    "prescription": IntentSpec(
        "prescription", writes=False, core_slots=(), slots=(),
        requests=("I need a repeat prescription.", "Can I get my prescription renewed?"),
        actions=(),
        reports=("I've passed your request to the front desk.",)),
}

BARE_REPORTS = ("Done.", "That's taken care of.")
