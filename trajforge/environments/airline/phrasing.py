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
        # each carries one of the keywords, so the user hears it as asking for the reservation
        clarify=("I see more than one reservation that fits: {candidates}. Which reservation do you mean?",
                 "You have more than one trip there on your profile ({candidates}). Which booking is this about?",
                 "More than one of your bookings flies there: {candidates}. Could you tell me which "
                 "reservation you mean?",
                 "I'm finding {candidates}, and each of them could be it. Which booking code should I use?",
                 "That matches several reservations: {candidates}. Which booking would that be?"),
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

# what the agent says as it takes a request up, and with its first read of what the request is
# about (``IntentSpec.takes`` / ``progress``); kinds the user's words cannot tell apart (the
# outcome is the agent's to find out) share them
TAKES_CANCEL = ("Happy to look into cancelling a reservation for you.", "Let's see about cancelling that booking.",
                "Sure, let's take a look at cancelling your trip.", "A cancellation, understood.")
PROGRESS_CANCEL = ("Let me pull up the reservation to look into the cancellation.",
                   "Opening that booking to see about cancelling it.", "Checking the reservation you want to cancel.")
TAKES_DISRUPTED = ("Sorry to hear your trip was disrupted; let's look into it.",
                   "Let's see what we can do about that disrupted flight.",
                   "Sure, let me help with the disruption to your trip.")
PROGRESS_DISRUPTED = ("Let me pull up the reservation with the disrupted flight.",
                      "Checking the booking that was affected.",
                      "Opening that reservation to look into the disruption.")

INTENTS: dict[str, IntentSpec] = {
    "flight_status": IntentSpec(
        "flight_status", writes=False, core_slots=("flight",), slots=("flight",),
        takes=("Glad to check on a flight for you.", "Let's find out how that flight is doing.",
               "Sure, a flight status check."),
        progress=("Let me look that flight up.", "Checking that flight now.", "Pulling up the flight."),
        requests=("Can you check the status of {flight}?", "Is {flight} on time?",
                  "What's going on with {flight}?", "Could you tell me the current status of {flight}?",
                  "Any news on {flight}?", "I'd like to know whether {flight} is running on schedule.",
                  "Is there an update on {flight}? I want to plan my trip to the airport.",
                  "Quick question, how is {flight} looking?", "What does your system show for {flight}?",
                  "I'm trying to find out if {flight} is still leaving as planned.",
                  "Has anything changed with {flight}?", "Would you mind looking up {flight} for me?",
                  "Just wondering about {flight}. Is it leaving when it's supposed to?",
                  "Before I head out, could you see where things stand with {flight}?",
                  "I haven't heard anything about {flight} and I'm getting a bit nervous. What's its status?",
                  "Need the latest on {flight}, please.", "Is {flight} delayed or anything?"),
        actions=(),
        reports=("Flight {flight_number} on {flight_date} shows as {flight_status}. Its planned departure "
                 "from {origin} is {departure_time}.",
                 "The status of flight {flight_number} on {flight_date} is {flight_status}, with its planned "
                 "departure from {origin} at {departure_time}."),
    ),
    "cancel_refused": IntentSpec(
        "cancel_refused", writes=False, outcome="refused", core_slots=(), slots=("reservation",),
        takes=TAKES_CANCEL,
        progress=PROGRESS_CANCEL,
        requests=_CANCEL_REQUESTS + (
            "Could you cancel my reservation? I can't make the trip.", "I'd like my booking cancelled.",
            "Can one of my reservations be cancelled?",
            "I'm not going to make this trip, so I need the reservation cancelled.",
            "I'd like to get out of a booking I have and cancel it.", "Please help me cancel a trip.",
            "Hi there, I need a reservation cancelled.", "Hey, can I cancel a trip I booked with you?",
            "I'm hoping to cancel one of my reservations.", "Would it be possible to cancel my booking?",
            "I've decided not to travel, so I'd like to cancel my reservation.",
            "I have a trip I no longer want. Can you cancel it?", "My ticket needs to be cancelled.",
            "I'm reaching out to cancel a flight reservation."),
        actions=(),
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
        takes=TAKES_DISRUPTED,
        progress=PROGRESS_DISRUPTED,
        requests=("One of my flights was disrupted and I had extra costs. I want them reimbursed.",
                  "My flight was messed up and I had to pay out of pocket. Can I get reimbursed?",
                  "I ended up paying for things myself when my flight fell apart. How do I get that money back?",
                  "Because of a flight disruption I had some unexpected expenses, and I'd like to be paid back.",
                  "Can the airline cover the costs I had after my flight went wrong?",
                  "I'm looking to get reimbursed for expenses from a disrupted flight.",
                  ("My travel got thrown off and I spent my own money sorting it out. "
                   "Is there a way to claim that back?"),
                  "I'd like to submit a claim for out-of-pocket costs from a flight that didn't go to plan.",
                  "The flight disruption cost me money, and I want the airline to pay me back.",
                  "Is there any way to get back what I spent because my flight was disrupted?",
                  "I had to cover some costs on my own after a flight problem. Can those be reimbursed?",
                  "After the mess with my flight I've got receipts for extra expenses. I'd like reimbursement.",
                  "Hi, I'm after reimbursement for expenses I ran into when my flight was disrupted.",
                  "My trip was disrupted and it left me out of pocket. Could I be reimbursed for that?",
                  "Flight trouble left me with a pile of extra costs. I'd like those costs covered."),
        actions=(),
        reports=("I've passed your request to a human agent.",),
    ),
    "change_flight": IntentSpec(
        "change_flight", writes=True, core_slots=(), slots=("reservation", "date", "payment"),
        takes=("Happy to help you move a flight to another date.", "Let's look at changing the date of that flight.",
               "Sure, a new date for a flight."),
        progress=("Let me open the reservation to change the date.", "Checking the booking whose date you want moved.",
                  "Pulling up the reservation for the date change."),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I need to change the date of a flight.", "Can I move one of my flights to another day?",
                  "I'd like to fly on a different date.", "Is it possible to switch my trip to a different day?",
                  "I'd like to rebook one of my flights for another date.",
                  "Could you help me move a flight on my reservation to a new date?",
                  "My travel dates have shifted, so I need to change when I fly.",
                  "How would I go about changing the day I'm flying?",
                  "I want one of my flights on a different day.",
                  "Hey, can I fly a different day than the one I booked?",
                  "I need to reschedule a flight on one of my bookings.",
                  "Is there any way to swap my flight for one on another date?",
                  "Looking to change the travel date on my ticket.",
                  "The day I booked doesn't work for me anymore. Can the flight be moved?",
                  "I think I need to rebook my flight for a different date.",
                  "Would you be able to change the date on one of my reservations?"),
        # with the new flight's fare in the booked cabin (report_facts' new_fare, from the search)
        actions=("move reservation {reservation_id} to flight {new_flight} on {new_date} (${new_fare} a "
                 "passenger in {cabin}), settling the fare difference with {payment}",
                 "put reservation {reservation_id} on flight {new_flight} on {new_date}, whose {cabin} fare "
                 "is ${new_fare} a passenger, with any fare difference going through {payment}"),
        reports=("Reservation {reservation_id} now has flight {new_flight} on {new_date}. The fare "
                 "difference of ${difference} for reservation {reservation_id} was {settled}.",
                 "Done: reservation {reservation_id} is on flight {new_flight} on {new_date}. For "
                 "reservation {reservation_id}, the fare difference of ${difference} was {settled}."),
    ),
    "change_cabin": IntentSpec(
        "change_cabin", writes=True, core_slots=("cabin",), slots=("reservation", "cabin", "payment"),
        takes=("Happy to help you change the cabin on a booking.", "Let's look at moving you to another cabin.",
               "Sure, a different cabin for your trip."),
        progress=("Let me open the reservation to change the cabin.",
                  "Checking the booking you want in another cabin.",
                  "Pulling up the reservation for the cabin change."),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I'd like to move my booking to {cabin}.", "Can I change my reservation to {cabin}?",
                  "Is it possible to switch my trip to {cabin}?",
                  "I want to fly {cabin} instead on one of my bookings.",
                  "Could you change the cabin on my reservation to {cabin}?",
                  "I'd rather be in {cabin}. Can my ticket be changed?",
                  "How do I get my booking moved into {cabin}?", "I need to change cabins to {cabin} on a reservation.",
                  "Hi, I'd like my reservation switched over to {cabin}.",
                  "Any chance I could go {cabin} on my trip instead?", "Please put my booking in {cabin}.",
                  "I think I'd like to travel in {cabin} on one of my reservations.",
                  "I'm hoping to move my ticket to {cabin}.",
                  "Can the cabin class on my booking be changed to {cabin}?",
                  "Would you be able to move me to {cabin} on my reservation?",
                  "I'm interested in changing my reservation's cabin to {cabin}."),
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
        takes=TAKES_CANCEL,
        progress=PROGRESS_CANCEL,
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=_CANCEL_REQUESTS + (
            "Please cancel one of my reservations.", "Is it possible to cancel a trip I booked?",
            "How do I go about cancelling one of my bookings?", "I need one of my trips cancelled.",
            "Could you help me cancel a flight reservation?",
            "I won't be taking one of my trips, so I'd like to cancel it.",
            "Hi, I want to cancel a reservation I made.", "Hoping you can cancel a booking for me.",
            "I'd like to get a reservation of mine cancelled.", "Cancel one of my bookings for me, would you?",
            "I'm writing because I want to cancel a trip.", "Is there a way for me to cancel my flight booking?",
            "I think I have to cancel one of my reservations."),
        actions=("cancel reservation {reservation_id} with the reason '{reason}' and refund its payments",
                 "cancel your reservation {reservation_id} (reason: {reason})"),
        reports=("Reservation {reservation_id} is now cancelled, and ${refund} will be refunded to the "
                 "payment methods used.",
                 "Done: reservation {reservation_id} has been cancelled. A refund of ${refund} for "
                 "reservation {reservation_id} is on its way to the original payment methods."),
    ),
    "add_bags": IntentSpec(
        "add_bags", writes=True, core_slots=(), slots=("reservation", "bags", "payment"),
        takes=("Happy to help you add checked bags.", "Let's get those bags added to your booking.",
               "Sure, extra checked bags."),
        progress=("Let me open the reservation to add the bags.", "Checking the booking the bags go on.",
                  "Pulling up the reservation for the bags."),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I'd like to add checked bags to my booking.", "Can I check more bags on a reservation?",
                  "I need to add some checked luggage to my reservation.",
                  "Is it possible to add checked baggage to my trip?", "How do I add checked bags to a booking?",
                  "I'm bringing more luggage than planned and want to add checked bags.",
                  "Could you add extra checked bags to one of my reservations?",
                  "I'd like to check more luggage on my trip.",
                  "Hey, can I get additional checked bags on my ticket?",
                  "We're packing heavy this time, so I need more checked bags on the booking.",
                  "Is there any way to add checked baggage to a reservation I already have?",
                  "I want to bump up the number of checked bags on my booking.",
                  "I think I'll need extra checked luggage for this trip. Can that be added?",
                  "Looking to add checked bags to one of my bookings.", "My reservation needs more checked bags.",
                  "Could I put more checked baggage on my reservation?"),
        actions=("set reservation {reservation_id} to {bags}, paying any bag fees with {payment}",
                 "update the bags on reservation {reservation_id} to {bags}, with fees charged to {payment}"),
        reports=("Reservation {reservation_id} now has {bags}. The bag fee for reservation "
                 "{reservation_id} came to ${fee}.",
                 "Done: reservation {reservation_id} now has {bags}. Reservation {reservation_id} was "
                 "charged ${fee} for bags."),
    ),
    "add_insurance": IntentSpec(
        "add_insurance", writes=True, core_slots=(), slots=("reservation", "payment"),
        takes=("Happy to help you add travel insurance.", "Let's look at adding insurance to a booking.",
               "Sure, travel insurance for a trip."),
        progress=("Let me open the reservation to add the insurance.", "Checking the booking you want insured.",
                  "Pulling up the reservation for the insurance."),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("I'd like to add travel insurance to a booking.", "Can I get travel insurance on my trip?",
                  "Is it possible to add travel insurance to my reservation?", "I want to insure one of my trips.",
                  "Could you add travel insurance to one of my bookings?",
                  "How do I get travel insurance added to a reservation?",
                  "I'd feel better with travel insurance on my trip. Can I add it?",
                  "I think I should have travel insurance on one of my bookings.",
                  "Hi, I'm looking to buy travel insurance for a reservation.",
                  "Can travel insurance still be added to a booking I've already made?",
                  "I need travel insurance on my ticket.",
                  "Is there any way to put travel insurance on my reservation?",
                  "Just to be safe, I'd like travel insurance added to my booking.",
                  "Would you add travel insurance to my trip for me?",
                  "I'm interested in adding travel insurance to one of my reservations.",
                  "Travel insurance on my booking would give me peace of mind. Can I get it?"),
        actions=("add travel insurance to reservation {reservation_id}, paid with {payment}",
                 "insure reservation {reservation_id} and charge {payment}"),
        reports=("Reservation {reservation_id} now has travel insurance; reservation {reservation_id} was "
                 "charged ${fee}.",
                 "Travel insurance is added to reservation {reservation_id}, for ${fee} on reservation "
                 "{reservation_id}."),
    ),
    "update_passenger": IntentSpec(
        "update_passenger", writes=True, core_slots=(), slots=("reservation", "passenger", "details"),
        takes=("Happy to help you fix a passenger's details.", "Let's get those passenger details corrected.",
               "Sure, a correction to a passenger's details."),
        progress=("Let me open the reservation to correct the passenger.",
                  "Checking the booking with the passenger to correct.",
                  "Pulling up the reservation for the correction."),
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("A passenger's details on my booking are wrong.",
                  "I need to fix a name on one of my reservations.",
                  "Can you correct a passenger's details on my reservation?",
                  "There's a mistake in a traveller's details on one of my bookings.",
                  "I'd like to update the name and date of birth for someone on my trip.",
                  "One of the passengers on my reservation has the wrong information.",
                  "I spotted an error in a passenger's details and need it fixed.",
                  "How can I fix a typo in a passenger's info on my booking?",
                  "Is it possible to change the details of a traveller on my reservation? They aren't correct.",
                  "Someone on my booking is listed incorrectly. Could that be corrected?",
                  "I think a passenger's name was entered wrong on my trip.",
                  "I need a passenger's details corrected on one of my reservations.",
                  "The passenger info on my ticket doesn't match their ID. Can it be fixed?",
                  "Hi, could you help me fix the details for a traveller on my booking?",
                  "Would you be able to correct a passenger's name and birth date on my reservation?",
                  "Looks like a passenger's details got mixed up on my booking, and I want them corrected."),
        actions=("correct {passenger} on reservation {reservation_id} to {details}",
                 "update the passenger {passenger} on reservation {reservation_id} to read {details}"),
        reports=("The passenger on reservation {reservation_id} now reads {passenger_name}.",
                 "Reservation {reservation_id} is updated: the passenger is now {passenger_name}."),
    ),
    "compensation": IntentSpec(
        "compensation", writes=True, core_slots=(), slots=("reservation",),
        takes=TAKES_DISRUPTED,
        progress=PROGRESS_DISRUPTED,
        found=("I have reservation {reservation_id} here: booked on {booked} in {cabin}, and it is {status}.",
               "Reservation {reservation_id} is {status}; it was booked on {booked}, in {cabin}.",
               "I found reservation {reservation_id} ({cabin}, booked {booked})."),
        requests=("One of my flights was disrupted. I'd like some compensation.",
                  "My flight didn't go as planned. Is there any compensation?",
                  "Is there any compensation for the trouble with my flight?",
                  "I'd like to ask about compensation for a disrupted flight.",
                  "My trip was thrown off by a flight problem. Can I get something for it?",
                  "After what happened with my flight, I think I'm owed some compensation.",
                  "Could the airline offer me something for my disrupted flight?",
                  "How do I claim compensation for a flight that went wrong?",
                  "I was really inconvenienced by my flight. Is the airline offering any compensation?",
                  "Hi, I'm hoping for compensation after one of my flights was disrupted.",
                  "The disruption to my flight was a real hassle. What compensation can you offer?",
                  "I want compensation for the flight disruption I went through.",
                  "Am I entitled to any compensation for my flight?",
                  "Can I get a goodwill gesture for the problems with my flight?",
                  "I'd appreciate some compensation for how my flight turned out.",
                  "Is there anything you can do to make up for my disrupted flight?"),
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
