"""Telecom intent kinds, slots and the customer's phone tools, with the phrase banks the scripted
customer and agent draw from."""

from __future__ import annotations

from trajforge.environments.tasks import (
    ASKING_SYNONYMS,
    IdentitySpec,
    InstructionSpec,
    IntentSpec,
    ProseSpec,
    SlotSpec,
)

# a customer authenticates with a line's number and the account PIN, or with the account email
IDENTITY = IdentitySpec(
    factors=(("phone", "pin"), ("email",)),
    asks=("First I need to verify the account: what is your phone number and account PIN, or the "
          "account email?",
          "Could you give me the phone number and the account PIN, or the account email, so I can "
          "find your account?",
          "To pull up your account, please share your phone number with the account PIN (or the "
          "account email)."),
    keywords=("account pin", "account email"),
    answers=(("My number is {phone} and the PIN is {pin}.", "It's {phone}, PIN {pin}.",
              "Phone number {phone}, account PIN {pin}."),
             ("The account email is {email}.", "It's {email}.", "You'll find me under {email}.")))

PROSE = ProseSpec(
    role="a mobile phone customer",
    roles=("You are a mobile phone customer ({who}).", "Play a customer of the phone company ({who}).",
           "Act as a subscriber of the mobile provider ({who}).", "Role: phone line customer ({who})."),
    synonyms=ASKING_SYNONYMS + (
        ("phone", ("mobile", "cell phone")),
        ("mobile data", ("cellular data", "mobile internet")),
        ("plan", ("tariff", "package")),
        ("bill", ("invoice",)),
        ("switch", ("move", "change")),
        ("abroad", ("overseas", "travelling")),
    ))

SLOTS: dict[str, SlotSpec] = {
    "line": SlotSpec(
        "line",
        questions=("Which phone number is this about?", "Which of your lines do you mean? The phone "
                   "number is enough.", "Could you tell me the phone number of the line?"),
        keywords=("which phone number", "which of your lines", "phone number of the line"),
        answers=("It's {value}.", "The number is {value}.", "{value}.", "That's my line {value}."),
    ),
    "plan": SlotSpec(
        "plan",
        questions=("Which plan would you like to move to?", "Which plan should the line switch to?",
                   "What plan did you have in mind?"),
        keywords=("which plan", "what plan"),
        answers=("The {value} plan.", "{value}, please.", "I'd like {value}."),
    ),
    "size": SlotSpec(
        "size",
        questions=("How much extra data would you like: 1GB, 2GB, 5GB or 10GB?",
                   "Which top-up size do you want (1GB, 2GB, 5GB or 10GB)?"),
        keywords=("how much extra data", "which top-up size"),
        answers=("{value}, please.", "Let's do {value}.", "I'll take {value}."),
    ),
    "bill": SlotSpec(
        "bill",
        questions=("Which bill is it? The bill id starts with a B.", "Could you give me the bill id?"),
        keywords=("which bill", "the bill id"),
        answers=("It's {value}.", "The bill is {value}.", "{value}."),
    ),
}

INTENTS: dict[str, IntentSpec] = {
    "no_data": IntentSpec(
        "no_data", writes=False, core_slots=("line",), slots=("line",),
        requests=("Mobile data stopped working on my phone, {line}.",
                  "I can't get online on my phone {line}: no mobile data at all.",
                  "My phone {line} has no internet when I'm out of wifi."),
        actions=("check line {number}",),
        # (claims are read in statements: no "plan", "should" or "can" in these sentences)
        reports=("Your line {number} is {status} on {plan_name} with {data_left} this cycle. The "
                 "problem was in the phone's settings, and mobile data works again now.",
                 "Line {number} is {status} and has {data_left} on {plan_name}. With the phone's "
                 "settings fixed, you're back online.",
                 "Good: the account side of {number} was fine ({status}, {plan_name}, {data_left}), "
                 "and the phone is set up correctly again."),
    ),
    "roaming_abroad": IntentSpec(
        "roaming_abroad", writes=True, core_slots=("line",), slots=("line",),
        found=("Line {number} is {status}, on the {plan_name} plan.",
               "I see line {number} on {plan_name}."),
        requests=("I'm abroad and my phone {line} has no service. Can you sort out roaming?",
                  "I'm travelling and {line} shows no service here, I need roaming.",
                  "My line {line} doesn't work abroad, can you turn on roaming?"),
        actions=("enable international roaming on line {number}",
                 "turn on roaming for your line {number} on our side"),
        reports=("Line {number} now has roaming {roaming} and {data_left}, and your phone is set for "
                 "it too, so you have service again.",
                 "Your line {number} shows roaming {roaming} on our side, with {data_left}, and the "
                 "phone's setting is on; enjoy your trip.",
                 "All set: {number} has roaming {roaming} on the account ({data_left}), and the phone "
                 "is ready."),
    ),
    "roaming_refused": IntentSpec(
        "roaming_refused", writes=False, outcome="refused", core_slots=("line",), slots=("line",),
        requests=("I'm abroad and my phone {line} has no service. Can you turn on roaming?",
                  "Please enable roaming on {line}, I'm travelling.",
                  "My line {line} has no signal abroad, I need roaming switched on."),
        actions=("check line {number}",),
        reports=("I can't enable roaming on line {number}. Bill {bill_id} of ${amount} is "
                 "{bill_status}, and roaming needs an account with every bill settled.",
                 "Roaming can't be switched on for {number} right now. Your bill {bill_id} "
                 "(${amount}) is {bill_status}, and our policy allows roaming only once all bills "
                 "are settled.",
                 "Sorry, roaming on {number} cannot be enabled yet. Bill {bill_id} for ${amount} is "
                 "{bill_status}; roaming needs the bills settled first."),
    ),
    "change_plan": IntentSpec(
        "change_plan", writes=True, core_slots=(), slots=("line", "plan"),
        found=("Line {number} is on {plan_name} at ${price} a month right now.",
               "I see line {number} on the {plan_name} plan, ${price} a month, with {data_left}."),
        requests=("I'd like to change the plan on one of my lines.", "Can I switch my phone plan?",
                  "I want a different plan for my line."),
        actions=("move line {number} to the {plan} plan ({plan_id}) at ${new_price} a month",
                 "switch your line {number} to {plan} (plan id {plan_id}), ${new_price} per month"),
        reports=("Done: line {number} is now on {plan_name} at ${price} a month, with {data_left} "
                 "this cycle.",
                 "Your line {number} has switched to {plan_name}; it costs ${price} per month and "
                 "has {data_left} this cycle.",
                 "Line {number} is on {plan_name} now, ${price} monthly, {data_left}."),
    ),
    "data_topup": IntentSpec(
        "data_topup", writes=True, core_slots=("line",), slots=("line", "size"),
        found=("Line {number} is on {plan_name}, with {data_left}.",
               "I see line {number} has {data_left} of {data_limit}."),
        requests=("I've run out of data on {line}. Can I buy more?",
                  "My line {line} used up all its data, I need a top-up.",
                  "I need extra data on {line} for the rest of the month."),
        actions=("add a {size} data top-up to line {number}, charged to your next bill",
                 "top up line {number} with {size} for the rest of this billing cycle"),
        reports=("Added {size} to line {number}: you now have {data_limit} this cycle, and ${charge} "
                 "goes on your next bill.",
                 "Line {number} got {size} more; that's {data_limit}, with ${charge} added to your "
                 "next bill.",
                 "Your top-up is active on {number}: ${charge} for {size}, {data_limit} this cycle."),
    ),
    "pay_bill": IntentSpec(
        "pay_bill", writes=True, core_slots=("bill",), slots=("bill",),
        found=("Bill {bill_id} for {period} is {bill_status}: ${amount}, due {due_date}.",
               "I found bill {bill_id}: ${amount}, {bill_status}, due {due_date}."),
        requests=("I'd like to pay my bill {bill}.", "Can I pay bill {bill} now?",
                  "Please take the payment for bill {bill}."),
        actions=("pay bill {bill_id} of ${amount} with the card on file",
                 "charge ${amount} to your card on file for bill {bill_id}"),
        reports=("Bill {bill_id} is now {bill_status}: ${amount} was charged to your card on file.",
                 "Payment done: ${amount} for bill {bill_id}, which is {bill_status} now.",
                 "Your bill {bill_id} (${amount}) is {bill_status}."),
    ),
    "resume_line": IntentSpec(
        "resume_line", writes=True, core_slots=("line",), slots=("line",),
        found=("Line {number} is {status} at the moment.",
               "I see line {number} on {plan_name}; it is {status}."),
        requests=("My line {line} is suspended, can you turn it back on?",
                  "Please reactivate my suspended line {line}.",
                  "{line} was suspended. I'd like it working again."),
        actions=("resume your suspended line {number}", "reactivate line {number}"),
        reports=("Line {number} is {status} again, on {plan_name} with {data_left}.",
                 "Your line {number} is back: it's {status} now, with {data_left} on {plan_name}.",
                 "Done, {number} is {status} ({plan_name}, {data_left})."),
    ),
    "bill_question": IntentSpec(
        "bill_question", writes=False, core_slots=("bill",), slots=("bill",),
        requests=("How much is my bill {bill} and when is it due?",
                  "Can you tell me the amount and due date of bill {bill}?",
                  "I have a question about bill {bill}: what do I owe, and by when?"),
        actions=("look up bill {bill_id}",),
        reports=("Bill {bill_id} for {period} is ${amount}, due {due_date}; it is {bill_status}.",
                 "Your bill {bill_id} comes to ${amount} and is due on {due_date} (status: "
                 "{bill_status}).",
                 "Bill {bill_id}: ${amount}, due {due_date}, currently {bill_status}."),
    ),
    "outage": IntentSpec(
        "outage", writes=False, outcome="transferred", core_slots=("line",), slots=("line",),
        requests=("My phone {line} has had no service at home since this morning.",
                  "There's no signal on {line} at my place, nothing works.",
                  "My line {line} shows no service at home."),
        actions=("check line {number}",),
        reports=("There is a network outage in your area.",),  # never said: a hand-over ends it
    ),
}

# the customer's phone: how the agent asks for each tool, how the customer recognises the ask
# (keywords of its own, not the agent's phrases) and what they say they see afterwards
_SEEN = (" The status bar shows {signal}, data: {mobile_data_indicator}.",
         " Now it says {signal} and {mobile_data_indicator} for data.")


def _replies(lead: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a + b for a in lead for b in _SEEN)


INSTRUCTIONS: dict[str, InstructionSpec] = {
    "check_status_bar": InstructionSpec(
        asks=("Could you look at the status bar of your phone and tell me what it shows, and "
              "whether airplane mode, mobile data and roaming are on?",
              "Please check your phone's status bar and quick settings and tell me what you see.",
              "Let's start with the phone: what does the status bar show right now?"),
        keywords=("status bar",),
        replies=("The status bar shows {signal}, data: {mobile_data_indicator}. Airplane mode is "
                 "{airplane_mode}, mobile data is {mobile_data}, roaming is {roaming}.",
                 "I see {signal} and {mobile_data_indicator} for data. Airplane mode {airplane_mode}, "
                 "mobile data {mobile_data}, roaming {roaming}, APN {apn}, SIM {sim}.",
                 "It says {signal}; data shows {mobile_data_indicator}. Settings: airplane mode "
                 "{airplane_mode}, mobile data {mobile_data}, roaming {roaming}.")),
    "toggle_airplane_mode": InstructionSpec(
        asks=("Airplane mode seems to be the culprit: please switch it off in your quick settings.",
              "Could you open your quick settings and turn airplane mode off?"),
        keywords=("airplane mode",),
        replies=_replies(("Okay, airplane mode is {airplane_mode} now.", "Done, I switched it."))),
    "toggle_mobile_data": InstructionSpec(
        asks=("Please open Settings > Network and flip the mobile data switch on.",
              "Could you turn on the mobile data toggle in your phone's settings?"),
        keywords=("mobile data switch", "mobile data toggle"),
        replies=_replies(("Done, mobile data is {mobile_data} now.", "Okay, I flipped it."))),
    "toggle_device_roaming": InstructionSpec(
        asks=("On the phone itself, please turn on the data roaming switch under Settings > Network.",
              "One more step on your side: flip the roaming switch in your phone's network settings "
              "to on."),
        keywords=("data roaming switch", "roaming switch"),
        replies=_replies(("Okay, roaming is {roaming} on the phone now.", "Done, I turned it on."))),
    "reset_apn_settings": InstructionSpec(
        asks=("Your phone may have wrong access point settings: please go to Settings > Network > "
              "APN and choose 'Reset to default'.",
              "Could you reset the APN settings on your phone to the default ones?"),
        keywords=("apn",),
        replies=_replies(("I reset them, APN says {apn} now.", "Done, reset to default."))),
    "restart_device": InstructionSpec(
        asks=("Please restart your phone: turn it off, wait a few seconds and turn it on again.",
              "Could you restart your phone so it reads the SIM card again?"),
        keywords=("restart your phone", "turn your phone off and on"),
        replies=_replies(("It's back on, SIM is {sim}.", "Okay, it restarted."))),
}

BARE_REPORTS = ("Done.", "All set.", "That's taken care of.")
