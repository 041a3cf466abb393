"""Telecom intent kinds, slots and the customer's phone tools, with the phrase banks the scripted
customer and agent draw from."""

from __future__ import annotations

import random
from collections.abc import Callable

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
        # each reads right with a number and with "my line on the Plus 15GB plan"
        answers=("It's {value}.", "That's {value}.", "{value}.", "I'm calling about {value}."),
        # each carries one of the keywords (and no other slot's, nor a phone tool's), so the user
        # hears it as asking for the line; no plan named (a claim the grounded-claims check reads)
        clarify=("More than one of your lines is on that plan: {candidates}. Which of your lines do "
                 "you mean?",
                 "I see {candidates} on that plan. Which phone number is this about?",
                 "That fits more than one line on your account ({candidates}). Could you tell me "
                 "which phone number it is?",
                 "I'm seeing {candidates}, and each of them could be it. What is the phone number of "
                 "the line you mean?",
                 "You have {candidates} on that plan. Which of your lines should I look at?"),
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

# what the agent says as it takes a request up, and with its first read of what the request is
# about (``IntentSpec.takes`` / ``progress``); kinds the user's words cannot tell apart (the
# outcome is the agent's to find out) share them
TAKES_ROAMING = ("Sorry you're without service abroad; let's look into roaming.",
                 "Let's see about getting your phone working abroad.", "Sure, roaming for your trip.")
PROGRESS_ROAMING = ("Let me look at the line to see about roaming.", "Checking the line you're using abroad.",
                    "Pulling up that line for the roaming question.")

INTENTS: dict[str, IntentSpec] = {
    "no_data": IntentSpec(
        "no_data", writes=False, core_slots=("line",), slots=("line",),
        takes=("Sorry your data isn't working; let's sort it out.", "Let's get your mobile data going again.",
               "Sure, a data problem."),
        progress=("Let me look at the line first.", "Checking that line now.",
                  "Pulling up the line with the data problem."),
        requests=("Mobile data stopped working on my phone, {line}.",
                  "I can't get online on my phone {line}: no mobile data at all.",
                  "My phone {line} has no internet when I'm out of wifi.",
                  "Hi, the mobile data on {line} isn't working anymore.",
                  "Is there any reason my line {line} can't connect to the internet without wifi?",
                  "My data just won't load anything on {line}, could you look into it?",
                  "Why has mobile data quit on my number {line}?",
                  "Nothing loads on {line} unless I'm on wifi. What's going on?",
                  "I think something is wrong with the data on my line {line}, apps won't connect.",
                  "Mobile internet is dead on {line} and I need it for work.",
                  "Could you help me get data working again on {line}?",
                  "Web pages and apps just time out on {line} whenever I leave wifi.",
                  "Is there any way to get cellular data back on {line}? It stopped out of nowhere.",
                  "My line {line} won't use mobile data anymore, I'm stuck without internet outside.",
                  "Hello, I can't browse or send messages over data on {line}.",
                  "No data connection on {line} at all. This is really annoying.",
                  "I'm not getting any internet on my phone {line} away from wifi, can you check what's wrong?"),
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
        takes=TAKES_ROAMING,
        progress=PROGRESS_ROAMING,
        found=("Line {number} is {status}, on the {plan_name} plan.",
               "I see line {number} on {plan_name}."),
        requests=("I'm abroad and my phone {line} has no service. Can you sort out roaming?",
                  "I'm travelling and {line} shows no service here, I need roaming.",
                  "My line {line} doesn't work abroad, can you turn on roaming?",
                  "Hi, I just landed overseas and {line} has no network. Could you enable roaming for me?",
                  "I need roaming activated on {line}, I'm out of the country right now.",
                  "Is there any way to get {line} working while I'm abroad? I'd need roaming.",
                  "My phone {line} won't connect to anything here abroad. Please set up roaming.",
                  "Could you switch on international roaming for {line}? I'm on a trip and have no service.",
                  "Travelling for work and {line} has no signal at all. I need roaming turned on.",
                  "I'm overseas and can't use my line {line} at all. How do I get roaming?",
                  "No service on {line} since I arrived abroad. I guess roaming has to be turned on.",
                  "Can roaming be enabled on my number {line}? I'm in another country and my phone is useless.",
                  "I'd like international roaming on {line}, I'm away on holiday and cut off from the network.",
                  "I'm on vacation abroad and {line} just says no service. Could you get roaming working?",
                  "Hello, my line {line} stopped working the moment I crossed the border. I need roaming.",
                  "Abroad right now and totally cut off on {line}. Roaming needs to be switched on."),
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
        takes=TAKES_ROAMING,
        progress=PROGRESS_ROAMING,
        requests=("I'm abroad and my phone {line} has no service. Can you turn on roaming?",
                  "Please enable roaming on {line}, I'm travelling.",
                  "My line {line} has no signal abroad, I need roaming switched on.",
                  "I'm out of the country and {line} can't find a network. Could roaming be turned on?",
                  "Hi, I'm on a trip abroad and need roaming on my line {line}.",
                  "Would you enable international roaming for {line}? There's no service where I am.",
                  "My phone {line} is useless overseas. I want roaming activated.",
                  "Is it possible to get roaming on {line}? I just arrived abroad and have no connection.",
                  "I'm travelling overseas and {line} has no coverage. Roaming needs to be enabled.",
                  "Can I have roaming added to my line {line}? I'm abroad without any service.",
                  "I think I need roaming on {line}, nothing works since I left the country.",
                  "Get roaming going on {line}, I'm stuck abroad with no service.",
                  "Hello, I'm visiting another country and {line} won't connect. How can I get roaming?",
                  "My number {line} shows no service on my trip. Please activate roaming.",
                  "I'm away on holiday abroad and need international roaming for {line}.",
                  "Roaming isn't working for me abroad on {line}. Could you enable it?"),
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
        takes=("Happy to help you change a plan.", "Let's look at a new plan for that line.", "Sure, a plan change."),
        progress=("Let me look at the line's plan.", "Checking the line you want on another plan.",
                  "Pulling up the line for the plan change."),
        found=("Line {number} is on {plan_name} at ${price} a month right now.",
               "I see line {number} on the {plan_name} plan, ${price} a month, with {data_left}."),
        requests=("I'd like to change the plan on one of my lines.", "Can I switch my phone plan?",
                  "I want a different plan for my line.", "Is there any way to move my line to another plan?",
                  "I think my current plan doesn't suit me anymore. Could I change it?",
                  "Hi, I'm looking to switch to a different plan.", "How do I change the plan on my phone line?",
                  "My plan isn't right for how I use my phone, I'd like another one.",
                  "Could you put one of my lines on a different plan?", "I need to change my mobile plan.",
                  "Hello, I'd like to swap plans on a line of mine.",
                  "Thinking of changing my plan. Can that be done here?",
                  "Would it be possible to move one of my numbers onto another plan?",
                  "I'm paying for a plan that doesn't fit me, so I want to switch.",
                  "Time for a new plan on my line, I think.", "Can my line be moved to a different tariff?"),
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
        takes=("Happy to help you add data.", "Let's get you more data.", "Sure, a data top-up."),
        progress=("Let me look at the line that needs data.", "Checking the line for the top-up.",
                  "Pulling up the line to add data."),
        found=("Line {number} is on {plan_name}, with {data_left}.",
               "I see line {number} has {data_left} of {data_limit}."),
        requests=("I've run out of data on {line}. Can I buy more?",
                  "My line {line} used up all its data, I need a top-up.",
                  "I need extra data on {line} for the rest of the month.",
                  "Hi, my line {line} is out of data. Could I add some more?",
                  "I need more data on {line}, I've burned through my allowance.",
                  "Is there any way to get extra data for {line} before the cycle ends?",
                  "My data on {line} ran out early, I'd like a top-up.",
                  "Could you add a data top-up to my line {line}?",
                  "I'm out of data on my phone {line}. How can I get more?",
                  "Can I purchase a data add-on for {line}? My allowance is all gone.",
                  "Used all my data on {line} already, I need some more to get by.",
                  "I think I need to buy extra data for {line}.",
                  "Hello, {line} hit its data limit and I still need internet.",
                  "Would it be possible to top up the data on {line}?",
                  "My allowance on {line} is finished. I'd like to buy a data boost.",
                  "Ugh, no data left on {line} again. I'll need a top-up."),
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
        takes=("Happy to help you pay a bill.", "Let's take care of that bill.", "Sure, a bill payment."),
        progress=("Let me look that bill up.", "Checking the bill you want to pay.", "Pulling up the bill."),
        found=("Bill {bill_id} for {period} is {bill_status}: ${amount}, due {due_date}.",
               "I found bill {bill_id}: ${amount}, {bill_status}, due {due_date}."),
        requests=("I'd like to pay my bill {bill}.", "Can I pay bill {bill} now?",
                  "Please take the payment for bill {bill}.", "I want to settle bill {bill}.",
                  "Hi, could I pay off bill {bill}?", "Is there any way to pay bill {bill} through this chat?",
                  "I need to clear my bill {bill}.", "How do I pay bill {bill}? I'd like it sorted.",
                  "Could you charge my card for bill {bill}?", "I'd like to make a payment on bill {bill}.",
                  "Bill {bill} needs paying, can I do that here?", "Hello, I want to pay what I owe on bill {bill}.",
                  "I think I should pay bill {bill} before I forget.", "Can you process a payment for my bill {bill}?",
                  "Let me pay bill {bill}, I don't want it hanging over me.", "I'd like bill {bill} paid off, please."),
        actions=("pay bill {bill_id} of ${amount} with the card on file",
                 "charge ${amount} to your card on file for bill {bill_id}"),
        reports=("Bill {bill_id} is now {bill_status}: ${amount} was charged to your card on file.",
                 "Payment done: ${amount} for bill {bill_id}, which is {bill_status} now.",
                 "Your bill {bill_id} (${amount}) is {bill_status}."),
    ),
    "resume_line": IntentSpec(
        "resume_line", writes=True, core_slots=("line",), slots=("line",),
        takes=("Happy to help you get that line back on.", "Let's see about turning that line back on.",
               "Sure, a line to bring back."),
        progress=("Let me look at the line first.", "Checking the line you want back on.", "Pulling up that line."),
        found=("Line {number} is {status} at the moment.",
               "I see line {number} on {plan_name}; it is {status}."),
        requests=("My line {line} is suspended, can you turn it back on?",
                  "Please reactivate my suspended line {line}.", "{line} was suspended. I'd like it working again.",
                  "Hi, my number {line} got suspended. Can it be reactivated?",
                  "Is there any way to get my suspended line {line} back?", "I'd like to resume service on {line}.",
                  "My line {line} was put on hold and I need it active again.", "Could you unsuspend {line} for me?",
                  "I want my phone line {line} reactivated.",
                  "{line} has been suspended and I can't use it. Please bring it back.",
                  "Hello, I need my line {line} switched back on after the suspension.",
                  "I think it's time to reactivate my line {line}.",
                  "How can I get service restored on my suspended number {line}?",
                  "Can you lift the suspension on {line}?",
                  "My suspended line {line} needs to work again, I rely on it.",
                  "Would it be possible to resume my line {line}?"),
        actions=("resume your suspended line {number}", "reactivate line {number}"),
        reports=("Line {number} is {status} again, on {plan_name} with {data_left}.",
                 "Your line {number} is back: it's {status} now, with {data_left} on {plan_name}.",
                 "Done, {number} is {status} ({plan_name}, {data_left})."),
    ),
    "bill_question": IntentSpec(
        "bill_question", writes=False, core_slots=("bill",), slots=("bill",),
        takes=("Glad to look at a bill for you.", "Let's look up that bill.", "Sure, a question about a bill."),
        progress=("Let me look that bill up.", "Checking that bill now.", "Pulling up the bill."),
        requests=("How much is my bill {bill} and when is it due?",
                  "Can you tell me the amount and due date of bill {bill}?",
                  "I have a question about bill {bill}: what do I owe, and by when?",
                  "What's the total on bill {bill}?", "Hi, could you tell me what I owe on bill {bill}?",
                  "When do I need to pay bill {bill} by, and how much is it?",
                  "I'm trying to make sense of bill {bill}. What's the amount?",
                  "Is there any way to see what my bill {bill} comes to and when it's due?",
                  "I'd like to know how much bill {bill} comes to.",
                  "Quick question about bill {bill}, what's the due date?",
                  "How much do I owe for bill {bill}, and when is it due?",
                  "Can you look up bill {bill} and tell me the amount and deadline?",
                  "I got bill {bill} and I can't tell how much it is or when it's due.",
                  "What's the deal with my bill {bill}? I need the amount and the deadline.",
                  "Could I get the amount due on bill {bill}?",
                  "Hello, I have a question about my invoice {bill}. How much is it?"),
        actions=("look up bill {bill_id}",),
        reports=("Bill {bill_id} for {period} is ${amount}, due {due_date}; it is {bill_status}.",
                 "Your bill {bill_id} comes to ${amount} and is due on {due_date} (status: "
                 "{bill_status}).",
                 "Bill {bill_id}: ${amount}, due {due_date}, currently {bill_status}."),
    ),
    "outage": IntentSpec(
        "outage", writes=False, outcome="transferred", core_slots=("line",), slots=("line",),
        takes=("Sorry you've lost service at home; let's look into it.",
               "Let's see what's happening with your service.", "Sure, a line without service."),
        progress=("Let me look at the line first.", "Checking the line that lost service.", "Pulling up that line."),
        requests=("My phone {line} has had no service at home since this morning.",
                  "There's no signal on {line} at my place, nothing works.",
                  "My line {line} shows no service at home.",
                  "There's no signal on my line {line} anywhere around my home.",
                  "Hi, {line} can't get any service at my house.",
                  "My phone {line} keeps showing no service when I'm at home.",
                  "Is there a problem with the network near my home? {line} has no signal there.",
                  "I've got no bars at all on {line} at home.",
                  "No reception on {line} at my place, calls and texts won't go through.",
                  "I can't make calls from {line} at home, there's just no signal.",
                  "Something is wrong with the coverage at my home, {line} has no service.",
                  "My line {line} has no reception at all in my apartment.",
                  "Hello, {line} loses all signal whenever I'm home.",
                  "I think the network is down where I live, my phone {line} shows no service.",
                  "At home my number {line} gets no signal whatsoever. What's happening?",
                  "Ugh, {line} is completely dead at my house, no signal at all."),
        actions=("check line {number}",),
        reports=("There is a network outage in your area.",),  # never said: a hand-over ends it
    ),
}

# the customer's phone: how the agent asks for each tool, how the customer recognises the ask
# (keywords of its own, not the agent's phrases) and what they say they see afterwards. What the
# customer says is all the agent learns of their phone (the exports leave the user's tool results
# out), so the first look at it names every setting a fix acts on (airplane mode on, mobile data
# off, a custom APN, a SIM that needs a restart, roaming), each in a customer's words, in a random
# order; after a fix, the customer says what they did and what the status bar shows now.
_SIGNAL = {
    "full signal bars": ("full signal bars", "all the signal bars", "full bars", "a full signal",
                         "every bar of signal"),
    "No service": ('"No service" where the bars should be', 'no bars, just "No service"',
                   'a "No service" message', 'no signal, only the words "No service"'),
    "No SIM card": ('"No SIM card" where the bars should be', 'a "No SIM card" message',
                    'no bars, only the words "No SIM card"'),
    "airplane mode icon, no signal": ("the little airplane icon instead of the signal",
                                      "a plane symbol instead of the bars",
                                      "the airplane icon where the bars should be"),
}
_DATA = {
    "LTE": ("LTE for data", "the LTE symbol", "an LTE icon", "LTE next to the signal"),
    "no data": ("no data symbol", "no LTE or 4G icon", "nothing for mobile data", "no data indicator"),
}
_BAR = ("I see {signal} and {data}.", "The status bar shows {signal} and {data}.",
        "Up at the top I've got {signal}, with {data}.", "My screen shows {signal} and {data}.",
        "Looking at the top of the screen: {signal}, {data}.",
        "At the top of the screen I see {signal}, and {data}.")
_BAR_NOW = ("Now I see {signal} and {data}.", "The status bar now shows {signal} and {data}.",
            "Now the top of the screen has {signal}, with {data}.", "It shows {signal} and {data} now.")
_SETTINGS = {
    "airplane_mode": {"on": ("airplane mode is on", "flight mode is switched on", "airplane mode's on"),
                      "off": ("airplane mode is off", "flight mode is switched off", "airplane mode's off")},
    "mobile_data": {"on": ("mobile data is on", "the mobile data switch is on", "cellular data is on"),
                    "off": ("mobile data is off", "the mobile data switch is off", "cellular data is off")},
    "roaming": {"on": ("roaming is on", "data roaming is switched on", "the roaming toggle is on"),
                "off": ("roaming is off", "data roaming is switched off", "the roaming toggle is off")},
    "apn": {"standard": ("the APN says standard", "the APN is on the standard setting", "APN is set to standard"),
            "custom": ("the APN says custom", "the APN is set to something custom", "APN shows custom")},
    "sim": {"ready": ("the SIM shows as ready", "the SIM status says ready", "SIM says ready"),
            "needs_restart": ("the SIM says it needs a restart", "the SIM status says needs restart",
                              "SIM shows needs restart")},
}
_SETTINGS_FRAMES = ("In the settings, {list}.", "{list}.", "In quick settings, {list}.", "As for the settings, {list}.",
                    "Checking the settings: {list}.")


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:]


def _bar(values: dict[str, str], frames: tuple[str, ...], rng: random.Random) -> str:
    signal = rng.choice(_SIGNAL.get(values["signal"], (values["signal"],)))
    data = rng.choice(_DATA.get(values["mobile_data_indicator"], (values["mobile_data_indicator"],)))
    return rng.choice(frames).format(signal=signal, data=data)


# each setting as a phone comes: the customer always names one that differs (a fix acts on it) and
# roaming (what a fix abroad acts on), and any other with P_USUAL_SAID
_USUAL = {"airplane_mode": "off", "mobile_data": "on", "apn": "standard", "sim": "ready"}
P_USUAL_SAID = 0.4


def _settings(values: dict[str, str], rng: random.Random) -> str:
    named = [k for k in _SETTINGS if values[k] != _USUAL.get(k) or rng.random() < P_USUAL_SAID]
    clauses = [rng.choice(_SETTINGS[k].get(values[k], (f"{k} is {values[k]}",))) for k in named]
    rng.shuffle(clauses)
    cut = rng.choice((len(clauses), 2, 3)) if len(clauses) > 3 else len(clauses)  # one sentence, or two
    sentences: list[str] = []
    for part in (p for p in (clauses[:cut], clauses[cut:]) if p):
        listed = part[0] if len(part) == 1 else ", ".join(part[:-1]) + " and " + part[-1]
        frame = rng.choice(_SETTINGS_FRAMES) if not sentences else "{list}."
        sentences.append(_sentence(frame.format(list=listed)))
    return " ".join(sentences)


def describe_screen(values: dict[str, str], rng: random.Random) -> str:
    """The customer's first look at their phone: the status bar, then the settings (every one a
    fix acts on, roaming, and each usual one with ``P_USUAL_SAID``)."""
    return f"{_bar(values, _BAR, rng)} {_settings(values, rng)}"


def _after(leads: tuple[str, ...]) -> Callable[[dict[str, str], random.Random], str]:
    """What the customer says after using a tool: what they did (``leads``, over the result's
    fields), then what the status bar shows now."""
    def describe(values: dict[str, str], rng: random.Random) -> str:
        lead = rng.choice(leads).format(**values)
        return f"{lead} {_bar(values, _BAR_NOW, rng)}"
    return describe


INSTRUCTIONS: dict[str, InstructionSpec] = {
    "check_status_bar": InstructionSpec(
        asks=("Could you look at the status bar of your phone and tell me what it shows, and how "
              "airplane mode, mobile data, roaming, the APN and the SIM are set?",
              "Please check your phone's status bar and quick settings and tell me what you see.",
              "Let's start with the phone: what does the status bar show right now, and what do "
              "its settings say?"),
        keywords=("status bar",),
        describe=describe_screen),
    "toggle_airplane_mode": InstructionSpec(
        asks=("Airplane mode seems to be the culprit: please switch it off in your quick settings.",
              "Could you open your quick settings and turn airplane mode off?"),
        keywords=("airplane mode",),
        describe=_after(("Okay, airplane mode is {airplane_mode} now.", "Done, I switched it.",
                         "Flight mode is {airplane_mode} now."))),
    "toggle_mobile_data": InstructionSpec(
        asks=("Please open Settings > Network and flip the mobile data switch on.",
              "Could you turn on the mobile data toggle in your phone's settings?"),
        keywords=("mobile data switch", "mobile data toggle"),
        describe=_after(("Done, mobile data is {mobile_data} now.", "Okay, I flipped it.",
                         "I switched mobile data {mobile_data}."))),
    "toggle_device_roaming": InstructionSpec(
        asks=("On the phone itself, please turn on the data roaming switch under Settings > Network.",
              "One more step on your side: flip the roaming switch in your phone's network settings "
              "to on."),
        keywords=("data roaming switch", "roaming switch"),
        describe=_after(("Okay, roaming is {roaming} on the phone now.", "Done, I turned it on.",
                         "Data roaming is switched {roaming} now."))),
    "reset_apn_settings": InstructionSpec(
        asks=("Your phone's access point (APN) settings are not the standard ones: please go to "
              "Settings > Network > APN and choose 'Reset to default'.",
              "Since the APN shows custom, could you reset the APN settings on your phone to the "
              "default ones?"),
        keywords=("apn",),
        describe=_after(("I reset them, the APN says {apn} now.", "Done, reset to default.",
                         "Okay, the APN is back to {apn}."))),
    "restart_device": InstructionSpec(
        asks=("Please restart your phone: turn it off, wait a few seconds and turn it on again.",
              "Could you restart your phone so it reads the SIM card again?"),
        keywords=("restart your phone", "turn your phone off and on"),
        describe=_after(("It's back on, and the SIM says {sim}.", "Okay, it restarted.",
                         "I turned it off and on again."))),
}

BARE_REPORTS = ("Done.", "All set.", "That's taken care of.")
