"""Airline intent kinds and slots, with the phrase banks the scripted user and agent draw from."""

from __future__ import annotations

from trajforge.environments.tasks import ASKING_SYNONYMS, IdentitySpec, IntentSpec, ProseSpec, SlotSpec

# a passenger authenticates with their email, or with their name and date of birth
IDENTITY = IdentitySpec(
    factors=(("email",), ("name", "date_of_birth")),
    asks=("Before I look at your booking, could you give me your email address, or your full name and date of birth?",
          ("I'll need to verify your identity first: what's the email on your profile, "
           "or your first and last name plus your date of birth?"),
          "To get started, please share the email on your profile (or your name and date of birth)."),
    keywords=("email", "date of birth"),
    answers=(("My email is {email}.", "It's {email}.", "The email on my profile is {email}."),
             ("I'm {name}, date of birth {date_of_birth}.", "{name}, born {date_of_birth}.",
              "My name is {name} and my date of birth is {date_of_birth}.")))

# a blueprint's goal: "You are a passenger (...)"; its paraphrases reword an airline's requests
PROSE = ProseSpec(
    role="a passenger",
    roles=("You are a passenger ({who}).", "Play an airline passenger ({who}).",
           "Act as a traveller who booked with the airline ({who}).",
           "You're a customer of Horizon Air ({who}).", "Role: airline passenger ({who})."),
    synonyms=ASKING_SYNONYMS + (
        ("cancel", ("call off", "cancel out")),
        ("change", ("move", "switch")),
        ("reservation", ("booking",)),
        ("booking", ("reservation",)),
        ("trip", ("journey",)),
        ("check the status of", ("look up", "find out the status of")),
        ("bags", ("suitcases", "luggage pieces")),
        ("compensation", ("something for the trouble", "a goodwill gesture")),
        ("reimbursed", ("paid back", "refunded")),
    ))

SLOTS: dict[str, SlotSpec] = {
    "reservation": SlotSpec(
        "reservation",
        questions=("Which reservation is this about? The six-character booking code (like KQ482T) helps, "
                   "or just describe the trip.",
                   "Could you tell me which booking you mean? The booking code works best.",
                   "Which reservation would that be?",
                   "Can you point me to the booking in question?"),
        keywords=("which reservation", "booking code", "which booking", "booking in question"),
        answers=("It's {value}.", "The reservation is {value}.", "{value}.", "That would be {value}."),
    ),
    "flight": SlotSpec(
        "flight",
        questions=("Which flight is it? The flight number and date help.",
                   "Which flight should I look up?"),
        keywords=("which flight",),
        answers=("It's {value}.", "{value}.", "I mean {value}."),
    ),
    "date": SlotSpec(
        "date",
        questions=("What new date and flight would you like?", "When would you like to fly instead?",
                   "Which new date works for you?"),
        keywords=("new date", "fly instead"),
        answers=("{value}, please.", "I'd like {value}.", "Let's do {value}."),
    ),
    "cabin": SlotSpec(
        "cabin",
        questions=("Which cabin would you like: basic economy, economy or business?",
                   "What cabin should I move you to?"),
        keywords=("which cabin", "what cabin"),
        answers=("{value}, please.", "I'd like {value}.", "{value}."),
    ),
    "bags": SlotSpec(
        "bags",
        questions=("How many checked bags should the reservation have in total?",
                   "How many bags would you like to check in all?"),
        keywords=("how many checked bags", "how many bags"),
        answers=("{value} in total.", "Make it {value}.", "{value}, please."),
    ),
    "payment": SlotSpec(
        "payment",
        questions=("Which of your saved payment methods should I use?",
                   "Which payment method on your profile would you like to use for this?"),
        keywords=("which of your saved payment", "which payment method"),
        answers=("Please use {value}.", "{value}.", "Let's use {value}."),
    ),
    "reason": SlotSpec(
        "reason",
        questions=("May I ask the reason for the cancellation: change of plan, airline cancelled flight, or other?",
                   "What's the reason for cancelling (change of plan / airline cancelled flight / other)?"),
        keywords=("reason",),
        answers=("{value}.", "The reason is: {value}.", "Put it down as {value}."),
    ),
    "passenger": SlotSpec(
        "passenger",
        questions=("Which passenger's details need correcting?", "Which traveller on the booking is it?"),
        keywords=("which passenger", "which traveller"),
        answers=("It's {value}.", "The passenger listed as {value}.", "{value}."),
    ),
    "details": SlotSpec(
        "details",
        questions=("What are the correct name and date of birth?",
                   "What should the name and date of birth read?"),
        keywords=("correct name", "name and date of birth read"),
        answers=("It should be {value}.", "The right details are {value}.", "{value}."),
    ),
    "expense": SlotSpec(
        "expense",
        questions=("What expense would you like reimbursed?", "What did you have to pay for?"),
        keywords=("what expense", "have to pay for"),
        answers=("{value}.", "I had to pay for {value}.", "It was {value}."),
    ),
}

_CANCEL_REQUESTS = ("I need to cancel a reservation.", "Can you cancel one of my bookings?",
                    "I'd like to cancel my trip.")

INTENTS: dict[str, IntentSpec] = {
    "flight_status": IntentSpec(
        "flight_status", writes=False, core_slots=("flight",), slots=("flight",),
        requests=("Can you check the status of {flight}?", "Is {flight} on time?",
                  "What's going on with {flight}?"),
        actions=(),
        reports=("Flight {flight_number} on {flight_date} shows as {flight_status}. Its planned departure "
                 "from {origin} is {departure_time}.",
                 "The status of flight {flight_number} on {flight_date} is {flight_status}, with its planned "
                 "departure from {origin} at {departure_time}."),
    ),
    "cancel_refused": IntentSpec(
        "cancel_refused", writes=False, outcome="refused", core_slots=(), slots=("reservation",),
        requests=_CANCEL_REQUESTS, actions=(),
        reports=("I'm sorry, I can't cancel reservation {reservation_id}: it was booked on {booked}, more "
                 "than 24 hours ago, it is in {cabin}, it has no travel insurance, and the airline has "
                 "cancelled none of its flights. Our policy allows a cancellation only within 24 hours of "
                 "booking, with travel insurance, in business, or when the airline cancelled a flight.",
                 "Unfortunately reservation {reservation_id} cannot be cancelled. It was booked on {booked}, "
                 "more than 24 hours ago; it is in {cabin} without travel insurance, and the airline has "
                 "cancelled none of its flights. A cancellation needs one of those: booking within 24 "
                 "hours, insurance, business, or a flight the airline cancelled."),
    ),
    "expense_transfer": IntentSpec(
        "expense_transfer", writes=False, outcome="transferred", core_slots=(), slots=("reservation", "expense"),
        requests=("One of my flights was disrupted and I had extra costs. I want them reimbursed.",
                  "My flight was messed up and I had to pay out of pocket. Can I get reimbursed?"),
        actions=(),
        reports=("I've passed your request to a human agent.",),
    ),
    "change_flight": IntentSpec(
        "change_flight", writes=True, core_slots=(), slots=("reservation", "date", "payment"),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I need to change the date of a flight.", "Can I move one of my flights to another day?",
                  "I'd like to fly on a different date."),
        actions=("move reservation {reservation_id} to flight {new_flight} on {new_date}, settling the "
                 "fare difference with {payment}",
                 "put reservation {reservation_id} on flight {new_flight} on {new_date}, with any fare "
                 "difference going through {payment}"),
        reports=("Reservation {reservation_id} now has flight {new_flight} on {new_date}. The fare "
                 "difference of ${difference} for reservation {reservation_id} was {settled}.",
                 "Done: reservation {reservation_id} is on flight {new_flight} on {new_date}. For "
                 "reservation {reservation_id}, the fare difference of ${difference} was {settled}."),
    ),
    "change_cabin": IntentSpec(
        "change_cabin", writes=True, core_slots=("cabin",), slots=("reservation", "cabin", "payment"),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I'd like to move my booking to {cabin}.", "Can I change my reservation to {cabin}?"),
        actions=("move reservation {reservation_id} to {cabin}, settling the fare difference with {payment}",
                 "change the cabin of reservation {reservation_id} to {cabin}, paying or refunding the "
                 "difference through {payment}"),
        reports=("Reservation {reservation_id} is now in {cabin}. The fare difference of ${difference} for "
                 "reservation {reservation_id} was {settled}.",
                 "All set: reservation {reservation_id} is now in {cabin}, and the difference of "
                 "${difference} for reservation {reservation_id} was {settled}."),
    ),
    "cancel_reservation": IntentSpec(
        "cancel_reservation", writes=True, core_slots=(), slots=("reservation", "reason"),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=_CANCEL_REQUESTS,
        actions=("cancel reservation {reservation_id} with the reason '{reason}' and refund its payments",
                 "cancel your reservation {reservation_id} (reason: {reason})"),
        reports=("Reservation {reservation_id} is now cancelled, and ${refund} will be refunded to the "
                 "payment methods used.",
                 "Done: reservation {reservation_id} has been cancelled. A refund of ${refund} for "
                 "reservation {reservation_id} is on its way to the original payment methods."),
    ),
    "add_bags": IntentSpec(
        "add_bags", writes=True, core_slots=(), slots=("reservation", "bags", "payment"),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I'd like to add checked bags to my booking.", "Can I check more bags on a reservation?"),
        actions=("set reservation {reservation_id} to {bags}, paying any bag fees with {payment}",
                 "update the bags on reservation {reservation_id} to {bags}, with fees charged to {payment}"),
        reports=("Reservation {reservation_id} now has {bags}. The bag fee for reservation "
                 "{reservation_id} came to ${fee}.",
                 "Done: reservation {reservation_id} now has {bags}. Reservation {reservation_id} was "
                 "charged ${fee} for bags."),
    ),
    "add_insurance": IntentSpec(
        "add_insurance", writes=True, core_slots=(), slots=("reservation", "payment"),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I'd like to add travel insurance to a booking.", "Can I get travel insurance on my trip?"),
        actions=("add travel insurance to reservation {reservation_id}, paid with {payment}",
                 "insure reservation {reservation_id} and charge {payment}"),
        reports=("Reservation {reservation_id} now has travel insurance; reservation {reservation_id} was "
                 "charged ${fee}.",
                 "Travel insurance is added to reservation {reservation_id}, for ${fee} on reservation "
                 "{reservation_id}."),
    ),
    "update_passenger": IntentSpec(
        "update_passenger", writes=True, core_slots=(), slots=("reservation", "passenger", "details"),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("A passenger's details on my booking are wrong.",
                  "I need to fix a name on one of my reservations."),
        actions=("correct {passenger} on reservation {reservation_id} to {details}",
                 "update the passenger {passenger} on reservation {reservation_id} to read {details}"),
        reports=("The passenger on reservation {reservation_id} now reads {passenger_name}.",
                 "Reservation {reservation_id} is updated: the passenger is now {passenger_name}."),
    ),
    "compensation": IntentSpec(
        "compensation", writes=True, core_slots=(), slots=("reservation",),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("One of my flights was disrupted. I'd like some compensation.",
                  "My flight didn't go as planned. Is there any compensation?"),
        actions=("send you a travel certificate as compensation for the disrupted flight of reservation "
                 "{reservation_id}",
                 "issue a compensation certificate for reservation {reservation_id}"),
        reports=("I've sent travel certificate {certificate_id} worth ${amount} to your profile for flight "
                 "{flight_number} of reservation {reservation_id}.",
                 "Certificate {certificate_id} for ${amount} is now on your profile, for flight "
                 "{flight_number} of reservation {reservation_id}."),
    ),
}

# Reports that leave the required outputs out (the fault-injecting agent's ``missing_output``).
BARE_REPORTS = ("Done, that's taken care of.", "All set on that one.", "That's sorted out now.")
