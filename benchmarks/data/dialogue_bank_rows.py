"""How the dialogue-act banks' ``found_prefix``, ``slot_question_action`` (``TRAIN_SLOT_ACTIONS``) and
``unhappy_closing`` rows were made (session 14, issue 17's agent that says what it found).

An agent that says what it found before it asks ("Your order is still pending. Shall I cancel
it?") was read as ``other`` by the recogniser trained without such messages. The rows here are a
statement of what the agent looked up (hand-written, ``TRAIN_FOUND`` for train.jsonl and a
different ``EVAL_FOUND`` for eval.jsonl, neither the generator's ``IntentSpec.found`` lines) put
before a row of the same bank (a confirmation request, a question for a detail, an offer of more
help; never a template), keeping that row's label. eval.jsonl also gets unhappy closings
(``EVAL_UNHAPPY``); train.jsonl gets hand-written questions for a detail that name an action
("Which flight should I book you on?", label ``other``). ``TRAIN_UNHAPPY`` is not used: with it
in train.jsonl the user model read two more of writer2's consents wrong.

    .venv/bin/python benchmarks/data/dialogue_bank_rows.py train   # then eval; then retrain; writer3 or writer4 for its bank

``train`` also adds the trained writers' rows (``TRAINED_WRITERS``: writer5, writer6) and the rows written
for the generator's phrase families they had made misread (``written_for_generator``).
"""
import hashlib
import json
import random
import re
import runpy
import sys
from pathlib import Path

TRAIN_FOUND = [
 "Your order from March 2 is still being packed.", "I pulled up order 4471; it hasn't shipped yet.",
 "I can see the jacket order, and it was delivered last Friday.", "That purchase is marked as processing.",
 "The blender in that order cost $49.99.", "Your account shows two open orders.",
 "Found it: booking ZX81QP, economy, two passengers.", "Your flight on the 12th is on time.",
 "The reservation was made on April 3 and is still active.", "Flight 2290 has three seats left in business.",
 "I see you have one checked bag on that trip.", "That ticket is a basic economy fare.",
 "Your checking account has $1,240.18 available.", "The card ending in 0042 is currently active.",
 "That charge of $87.10 at City Market posted on June 4.", "I see a pending transfer of $300 from savings.",
 "Your daily limit has $2,000 left today.", "The payee Oak Street Rentals is already saved.",
 "Line 555-0199 is on the Starter plan at $30 a month.", "Your bill for October is $72.45, due on the 20th.",
 "I can see the line is suspended right now.", "You have 2.1GB of data left this cycle.",
 "Roaming is currently switched off on that line.", "The Family 50 plan costs $90 a month.",
 "Policy HP-2231 is in force until next May.", "Your room at the Harbor Inn is booked for two nights.",
 "The appointment on Thursday at 3pm is confirmed.", "Your meter reading from last month was 4,120 kWh.",
 "The parcel is at the local depot.", "The rental car is reserved for pickup at 9am.",
 "Okay, I have the order in front of me.", "I've looked it up: the item is in stock in blue.",
 "Your profile lists 22 Birch Road as the address.", "The phone number on file ends in 7781.",
 "That subscription renews on the first of the month.", "I found the dispute you opened in May; it's closed.",
 "The refund for that return went out on Monday.", "According to our records, the warranty is still valid.",
 "Thanks for waiting. The order is eligible for a return.", "Good news, the new size is available.",
 "I checked, and the fare difference would be $35.", "The replacement card would arrive in about five days.",
 "Your gift card balance is $18.75.", "The store credit on your account is $40.",
 "Right now the order is set to ship to your work address.", "I have your savings account open here.",
 "I see the charge was made in euros.", "There's a $15 change fee on this fare.",
 "Your plan includes unlimited calls.", "The invoice lists three items.",
]
EVAL_FOUND = [
 "I've located your purchase from last Tuesday; it's awaiting dispatch.", "The sofa order is showing as out for delivery.",
 "Ticket 88213 was issued in premium economy.", "Your connecting flight leaves from gate B7.",
 "Your savings balance stands at $5,310.02.", "The debit card ending in 9920 was frozen yesterday.",
 "The plan on that number is Unlimited Plus, $65 per month.", "Last month's statement came to $58.30.",
 "Your lease renewal is dated for August.", "The washing machine is still under its two-year cover.",
 "I have the booking for the lake cabin here.", "The package was scanned at the sorting centre this morning.",
 "Looking at the account, the autopay is switched on.", "The hotel shows a late checkout already added.",
 "Your prescription has one refill remaining.", "The gym membership is paused until June.",
 "Per the system, the item price dropped to $24.", "The transaction from Corner Cafe is still pending.",
 "That number has international calling turned off.", "Your loyalty points total 12,400.",
 "I see the address change request from last week.", "The tickets are for the 7:30 showing.",
 "The electricity tariff on file is the night saver.", "Both passengers are listed on the booking.",
 "Your order total came to $213.60, paid by card.", "The warranty claim was opened on the 3rd.",
 "That device is paired with your account.", "The course enrolment closes on Friday.",
 "The van hire is booked with the extra insurance.", "I can see two payment methods saved.",
]
def compose(rows, found, seed, n_conf, n_other, n_else):
    rng = random.Random(seed)
    agent = [r for r in rows if r["role"] == "agent" and "{" not in r["text"]
             and r["phenomenon"] not in ("template", "action_fill")]
    conf = [r for r in agent if r["label"] == "confirm_request"]
    other = [r for r in agent if r["label"] == "other" and r["text"].rstrip().endswith("?")]
    anyelse = [r for r in agent if r["label"] == "anything_else"]
    out = []
    for pool, n in ((conf, n_conf), (other, n_other), (anyelse, n_else)):
        for r in rng.sample(pool, min(n, len(pool))):
            out.append({"text": f"{rng.choice(found)} {r['text']}", "role": "agent", "label": r["label"],
                        "phenomenon": "found_prefix"})
    return out
TRAIN_UNHAPPY = [
 "No, that's it. Pretty disappointing, honestly. Bye.", "Nothing else. I'm not thrilled about the outcome, but thanks.",
 "No. Not the result I was hoping for. Goodbye.", "That's all. I'm unhappy it couldn't be sorted, but okay.",
 "Nope. Kind of a letdown, to be honest. Bye.", "No, I guess that's it, even though I'm still annoyed.",
 "Nothing more. I expected better, frankly. Have a good day.", "No thanks. Frustrating, but I understand. Bye.",
 "That's everything. Not happy about it, but there we go.", "No, that's all. I'll have to find another way, I suppose.",
 "No more questions. Still upset about the refund though. Bye.", "Nah, that's it. Shame it couldn't be done.",
 "No, nothing else. This was a waste of my afternoon, but goodbye.", "That will be all. I remain dissatisfied. Good day.",
 "No. I'm disappointed, but I'll leave it there.", "Nothing else, sadly. I really wanted that sorted. Bye.",
 "No, that's it. Not impressed, to be honest.", "I think we're done. Unhappy with this, but thank you anyway.",
 "No, that's all for today. Hope you change that rule someday.", "Nope, all done. Annoying outcome, but fine. Bye.",
 "No, thanks. I'll take my business elsewhere next time.", "That's all, though I'm not satisfied. Goodbye.",
 "No. Well, that didn't go how I wanted. Bye now.", "No, nothing further. Quite a disappointment.",
 "All done, I suppose. Not what I needed, but thanks for trying.", "No, that covers it. A bit let down, honestly.",
 "Nothing else for now. I'll complain about this elsewhere.", "No, I'm done. Bad experience overall. Bye.",
 "That's it, I guess. Not the answer I wanted. Take care.", "No, we're done here. I'm not pleased, but goodbye.",
 "No. It is what it is. Bye.", "No other questions. Still think this policy is unfair. Bye.",
 "That's all. Disappointed, but thanks for explaining.", "No, that's everything. Can't say I'm happy. Goodbye.",
 "No, just that. Such a hassle for nothing. Bye.", "Nope. Guess I'm stuck with it then. Bye.",
 "No, all done. I really hoped you could help with that one.", "Nothing else. I'm frustrated, but I appreciate your time.",
 "No. Oh well, that's that. Goodbye.", "That's all from me. Not the best day. Bye.",
]
EVAL_UNHAPPY = [
 "No, nothing more. I'm quite let down by this, goodbye.", "That's all, sadly. Not a great result for me. Bye.",
 "Nope. Can't believe it couldn't be fixed. Goodbye.", "No. I'm leaving this chat pretty unhappy. Bye.",
 "Nothing else, though this was really disappointing. Take care.", "No, that's everything. Very unsatisfying. Good day.",
 "No, I'm done. Annoyed, but thanks for your time.", "That'll be all. I'm not happy about the refusal. Bye.",
 "No more for today. This wasn't what I wanted. Goodbye.", "No, nothing. Quite frustrating, all told. Bye.",
 "All done I guess. Pretty bummed about it. Bye.", "No, no more questions. I'll consider my options. Goodbye.",
 "Nothing else. Feeling a bit cheated, honestly. Bye.", "No, that wraps it up. Not satisfied at all.",
 "That's it. Still think it should have been allowed. Goodbye.", "No, we can end here. It's a pity. Bye.",
 "Nah, I'm done. Not a good outcome. Cheers anyway.", "No, thank you. This left a sour taste. Goodbye.",
 "No, that's all I had. Really not ideal. Bye.", "Nothing further. Unfortunate, but goodbye.",
 "No, that's all. Hugely disappointing. Bye bye.", "We're done. I'm unhappy with the service today.",
 "No thanks, nothing else. Upsetting, but okay. Bye.", "No, I'll leave it. Not pleased one bit. Goodbye.",
 "That's all, I suppose. Rather disappointing. Bye.",
]
TRAIN_UNHAPPY += [
 "No, though I'm really not pleased with how it turned out.", "No, but I'm annoyed nothing could be done. Bye.",
 "No, although honestly this has been frustrating.", "Nope, though I'm disappointed you couldn't do it.",
 "No, but that really wasn't the answer I needed. Goodbye.", "No, though it's a shame. Thanks regardless.",
 "No, but I'm unhappy about that refusal. Goodbye.", "Nothing else, although I'm quite upset about it.",
 "No, but this left me worse off than before. Bye.", "No, though I'll be looking for other options now.",
 "No, even though I'm not satisfied. Thanks anyway.", "No, but I'm not happy. Bye for now.",
]
# questions for a detail that name an action: a slot question, not a request for permission
TRAIN_SLOT_ACTIONS = [
 "Which flight should I book you on?", "What size should I switch it to?", "Which seat should I put you in?",
 "What date should I move the trip to?", "Which account should I send it from?", "Which plan should I change you to?",
 "What colour should I swap it for?", "Where should I ship the replacement?", "Which card should I charge the fee to?",
 "What address should I update it to?", "Which hotel should I move the booking to?", "What time should I reschedule you for?",
 "Okay. Which room type should I upgrade you to?", "Thanks. What amount should I transfer?",
 "Got it. Which line should I add the data to?", "Sure. Which order should I cancel?",
 "Alright. Which item should I return for you?", "Right. What name should I change it to?",
 "Noted. Which bag option should I add?", "Thank you. What speed tier should I move you to?",
]


def slot_actions(texts):
    return [{"text": t, "role": "agent", "label": "other", "phenomenon": "slot_question_action"} for t in texts]


def unhappy(texts):
    return [{"text": t, "role": "user", "label": "closing", "phenomenon": "unhappy_closing"} for t in texts]

# offers of more help that hold "me to" (as requests for permission do): written in session 15
TRAIN_ELSE_ME = [
 "Anything else you want me to check while I'm in your account?", "Is there another booking you'd like me to review?",
 "Would you like me to look into anything else today?", "Any other charges you want me to go over?",
 "Is there something else you need me to take care of?", "Are there other lines you'd like me to look at?",
 "Anything more you'd like me to do for you today?", "Is there any other reservation you want me to pull up?",
 "Do you want me to help with anything else?", "Any other accounts you'd like me to check on?",
 "Is there another item you'd like me to look into?", "Can I look into anything else for you, or are we all set?",
 "Anything else you'd want me to handle before we finish?", "Are there other payments you'd like me to review?",
 "Is there one more thing you'd like me to sort out?", "Would you like me to check on any of your other orders?",
]


# choice questions (a detail to pick, not a yes or no to an action): written in session 15
TRAIN_CHOICES = [
 "Do you want the money back on your card or kept as store credit?", "Would you like a window or an aisle seat?",
 "Do you want the new card sent to your home or to your office?", "Should the refund go to the Visa or to the gift card?",
 "Would you prefer the 8am or the 2pm flight?", "Do you want it in black or in grey?",
 "Is this for the checking account or the savings account?", "Do you want the upgrade now or from your next bill?",
 "Would you like the replacement or a refund?", "Do you want me to use the card ending 4410 or the one ending 0918?",
 "Should I look at the March order or the April one?", "Do you want the paper statement or the e-mail version?",
]


def held_out(template):
    """A fixed fifth of the action templates, kept out of train.jsonl: with the generator's actions
    (never trained on) they measure whether a request is read the same whatever it asks to do."""
    return hashlib.sha256(template.encode()).digest()[0] % 5 == 0


def _grams(text):
    words = " ".join(re.sub(r"[^\w\s]", " ", re.sub(r"\{[a-z_]+\}", " ", text.lower())).split()).split()
    return {tuple(words[i:i + 6]) for i in range(len(words) - 5)}


def action_rows(base, seed, per_template=6):
    """``action_template`` rows (session 15): action_lists.py's hand-written templates (a fifth held
    out) filled with its hand-written actions, a third of them after a statement of what the agent
    found; confirmation requests and messages that name an action without asking to do it. A row
    that shares a word 6-gram with eval.jsonl is dropped (the banks' disjointness rule, tested in
    tests/environments/test_dialogue_acts.py); eval.jsonl is read for that filter only."""
    lists = runpy.run_path(str(Path(__file__).with_name("action_lists.py")))
    rng = random.Random(seed)
    banks = Path(__file__).resolve().parents[2] / "trajforge/environments/dialogue/banks"
    eval_grams = set().union(*(_grams(json.loads(line)["text"])
                               for line in (banks / "eval.jsonl").read_text(encoding="utf-8").splitlines()
                               if line.strip()))
    out = []
    for key, label in (("TRAIN_CONFIRM_TEMPLATES", "confirm_request"), ("TRAIN_ACTION_OTHER_TEMPLATES", "other")):
        for template in lists[key]:
            if held_out(template):
                continue
            for action in rng.sample(lists["TRAIN_ACTIONS"], per_template):
                text = template.replace("{action}", action)
                if rng.random() < 1 / 3:
                    text = f"{rng.choice(lists['TRAIN_FOUND_LEADS'])} {text}"
                out.append({"text": text, "role": "agent", "label": label, "phenomenon": "action_template"})
    # the same leads before questions for a detail and offers of more help, so that a statement of
    # what was found followed by a question is not taken for a request for permission
    for row in compose(base, lists["TRAIN_FOUND_LEADS"], seed, 0, 160, 80):
        out.append(dict(row, phenomenon="action_template"))
    for text in TRAIN_CHOICES:
        out.append({"text": text, "role": "agent", "label": "other", "phenomenon": "action_template"})
        lead = rng.choice(lists["TRAIN_FOUND_LEADS"])
        out.append({"text": f"{lead} {text}", "role": "agent", "label": "other", "phenomenon": "action_template"})
    for text in TRAIN_ELSE_ME:  # alone and after a report of what was done or found
        out.append({"text": text, "role": "agent", "label": "anything_else", "phenomenon": "action_template"})
        lead = rng.choice(lists["TRAIN_FOUND_LEADS"])
        out.append({"text": f"{lead} {text}", "role": "agent", "label": "anything_else", "phenomenon": "action_template"})
    return [r for r in out if not _grams(r["text"]) & eval_grams]


def _norm(text):
    return " ".join(re.sub(r"[^\w\s]", " ", re.sub(r"\{[a-z_]+\}", " ", text.lower())).split())


HELD_OUT_WRITERS = {
    "writer3": "A third writer's 705 replies to confirmation requests, written in session 15. (Two thirds of "
               "it in train.jsonl were tried: writer2's consent recall rose from 0.853 to 0.881, writer3's held "
               "third did not move (R 0.935) and the generator's phrases were no longer all read right, so none "
               "of it is trained on.)",
    "writer4": "A fourth writer's 330 replies to confirmation requests in twelve phenomena (consents with "
               "thanks, agreeing idioms, grudging, with a negated reason or a question after; refusals naming "
               "the action, yes-lookalikes, polite refusals, questions first, conditions, deferrals, revisions, "
               "sarcasm), written in session 23 by a helper that saw no bank, no generator phrase and no test. "
               "(Two thirds of it in train.jsonl were tried: writer3's errors fell from 43 to 36, writer2's "
               "from 28 to 27, but dev's rose from 7 to 10 and the held third's from 10 to 14, so none of it "
               "is trained on.)",
    "writer7": "A seventh writer's 723 replies to confirmation requests in 16 consent and 15 non-consent "
               "phenomena across 131 requests of many businesses, written in session 27 by a helper that saw no "
               "bank, no generator phrase and no test. (Trained on whole, as writer5 and writer6 are, it moved "
               "nothing: the other held-out writers' consent errors 61 -> 63, eval's 14 -> 15, writer8's 27 -> "
               "27, so none of it is trained on.)",
    "writer8": "An eighth writer's 516 replies to confirmation requests in 21 consent and 22 non-consent "
               "phenomena (polarity flips after \"do you mind\", replies in other languages, echoes of the "
               "action, counter-proposals among them), written in session 27 by a helper that saw no bank, no "
               "generator phrase and no test, as a held-out measure only.",
}


def _taken(banks_read, base=()):
    """The normalised texts a new row may not have (those of ``banks_read`` and ``base``, the
    generator's phrases and the scripted policies' fragments) and eval.jsonl's word 6-grams."""
    from trajforge.environments.dialogue.evaluate import generator_fragments, generator_phrases

    banks = Path(__file__).resolve().parents[2] / "trajforge/environments/dialogue/banks"
    taken, eval_grams = {_norm(r["text"]) for r in base}, set()
    for name in banks_read:
        for line in (banks / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                text = json.loads(line)["text"]
                taken.add(_norm(text))
                if name == "eval":
                    eval_grams |= _grams(text)
    taken |= {_norm(r["text"]) for r in generator_phrases()} | {_norm(t) for t in generator_fragments()}
    return taken, eval_grams


def held_out_rows(writer):
    """A held-out writer's rows (``<writer>.jsonl`` here; each with the agent's request it answers
    as ``context``; ``HELD_OUT_WRITERS`` says who wrote them), for ``banks/<writer>.jsonl``: held
    out whole. A row whose text (normalised) is in another bank or among the generator's phrases,
    or among the scripted policies' fragments, or that shares a word 6-gram with eval.jsonl, is
    dropped."""
    others = ("eval", "dev", "dev2", "writer2", "train", *(w for w in HELD_OUT_WRITERS if w < writer))
    taken, eval_grams = _taken(others)
    source = Path(__file__).with_name(f"{writer}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in source if line.strip()]
    return [r for r in rows if _norm(r["text"]) not in taken and not _grams(r["text"]) & eval_grams]


# A fifth writer (session 25): 768 replies to confirmation requests, consents and non-consents in
# nineteen phenomena with the request each answers, written by a helper that saw no bank, no
# generator phrase and no test (``writer5.jsonl`` here). Unlike writer3 and writer4 it is trained
# on, whole: trained without it, the held-out writers' errors are writer2 28, writer3 43, writer4 26;
# with it 25, 31, 21 (dev 7 -> 5, dev2 1 -> 6). With it alone three of the generator's phrases were
# misread (a redirect after a request, "Actually, I changed my mind. Please swap ...", as consent;
# two "Oh, nope, ... Thanks a bunch!" closings as non-consent): the rows below, written for those two
# families in other words, put them right.
# A sixth writer (session 25): 670 replies to confirmation requests in eleven consent and seventeen
# non-consent phenomena across registers (terse, chat, dictated, non-native, elderly formal, emoji),
# and 260 replies to an offer of more help (160 closings, 100 new requests or questions), by a helper
# that saw no bank, no generator phrase and no test (``writer6.jsonl`` here). Trained on: its consents,
# non-consents and closings, without its polite refusals by thanks ("I'm good, thanks.": read without
# the message it answers, the same text as a closing; with them three of dev2's closings were read as
# non-consent) and without its replies that go on after an offer (with them the held-out writers'
# consent errors were 70 instead of 58). Held-out writers' consent errors with writer5 in: 77; with
# writer6's replies to requests: 60 (63 without its polite refusals); with its closings too: 58, and
# as shipped, once a row the scripted user says verbatim ("Of course.") was filtered out: 61
# (writer2 18, writer3 25, writer4 18 of 287, 597, 291; dev 4, dev2 4). dev2's "nah ty" closing is
# read as a refusal with any of writer6 in.
TRAINED_WRITERS = {"writer5": (("consent", "non_consent"), ()),
                   "writer6": (("consent", "non_consent", "closing"), ("thanks_decline",))}
TRAIN_CHANGED_MIND = [
 "Actually, I've changed my mind. I'd rather exchange the jacket for a bigger size.",
 "Actually, I changed my mind. Could you switch the colour of the kettle on that order instead?",
 "Actually, I've changed my mind about that. Please move the booking to Sunday instead.",
 "Hmm, I changed my mind. Put the refund on my gift card rather than the card.",
 "Actually, I changed my mind. Please change the size of the trainers in my order to a 10.",
 "Actually, scratch that, I changed my mind. I want to return the lamp, not exchange it.",
 "Hold on, I'd rather do something else: please swap the strap colour on the watch I ordered.",
 "Wait, on second thought, change the delivery address on that order instead.",
 "On second thought, I'd like the blue one rather than the green. Can you change that?",
 "Actually, I changed my mind, please upgrade me to business instead of moving the date.",
 "I changed my mind. Could you send the money from my savings account, not checking?",
 "Actually, I changed my mind: please just freeze the card instead of replacing it.",
 "Actually, I've had a rethink. Please swap the size of the hoodie in my order to large.",
 "Hmm, actually, I changed my mind. Make it the 5GB top-up instead.",
 "Sorry, actually, I changed my mind. Please cancel the other order, not this one.",
]
TRAIN_NOPE_CLOSINGS = [
 "Oh, nope, I think that covers everything. Thanks a lot!",
 "Nope, that was everything, thanks a ton!",
 "Oh no, nothing else, you've been great. Thanks a bunch.",
 "Oh, nope, I'm all sorted now. Cheers!",
 "Nope, that's the lot. Thanks so much!",
 "Oh, nope, that was my last question. Thank you!",
 "Oh nope, you've covered it all. Many thanks!",
 "Nope, I'm good now, thanks a bunch.",
]


def trained_writer_rows(writer, base):
    """A writer's rows for train.jsonl (phenomenon ``<writer>:<tag>``, no context) of the labels and
    phenomena ``TRAINED_WRITERS`` takes from it: those whose text
    (normalised) is in no other bank, not in ``base`` and not among the generator's phrases, and
    that share no word 6-gram with eval.jsonl."""
    taken, eval_grams = _taken(("eval", "dev", "dev2", "writer2", *HELD_OUT_WRITERS), base)
    source = Path(__file__).with_name(f"{writer}.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for r in (json.loads(line) for line in source if line.strip()):
        labels, left_out = TRAINED_WRITERS[writer]
        if r["label"] in labels and r["phenomenon"] not in left_out and _norm(r["text"]) not in taken \
                and not _grams(r["text"]) & eval_grams:
            taken.add(_norm(r["text"]))
            out.append({"text": r["text"], "role": "user", "label": r["label"],
                        "phenomenon": f"{writer}:{r['phenomenon']}"})
    return out


def written_for_generator():
    """TRAIN_CHANGED_MIND (non-consent) and TRAIN_NOPE_CLOSINGS (closing) as train.jsonl rows."""
    return ([{"text": t, "role": "user", "label": "non_consent", "phenomenon": "changed_mind"}
             for t in TRAIN_CHANGED_MIND]
            + [{"text": t, "role": "user", "label": "closing", "phenomenon": "nope_closing"}
               for t in TRAIN_NOPE_CLOSINGS])


MADE = {"found_prefix", "unhappy_closing", "slot_question_action", "action_template",
        "changed_mind", "nope_closing"}  # the rows made here (and every trained writer's)

if __name__ == "__main__":
    which = sys.argv[1]
    if which in HELD_OUT_WRITERS:  # a held-out bank of its own
        out = Path(__file__).resolve().parents[2] / f"trajforge/environments/dialogue/banks/{which}.jsonl"
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in held_out_rows(which)),
                       encoding="utf-8")
        sys.exit(0)
    bank = Path(__file__).resolve().parents[2] / "trajforge/environments/dialogue/banks" / f"{which}.jsonl"
    lines = [line for line in bank.read_text(encoding="utf-8").splitlines() if line.strip()]
    # a rerun makes the same rows again; every other row is kept as it is written
    kept = [line for line in lines if json.loads(line)["phenomenon"] not in MADE
            and json.loads(line)["phenomenon"].split(":")[0] not in TRAINED_WRITERS]
    base = [json.loads(line) for line in kept]
    if which == "train":
        new = compose(base, TRAIN_FOUND, 7, 260, 160, 60) + slot_actions(TRAIN_SLOT_ACTIONS) + action_rows(base, 15)
        for writer in TRAINED_WRITERS:  # no text twice: each writer's filter sees the rows before it
            new += trained_writer_rows(writer, base + new)
        new += written_for_generator()
    else:
        new = compose(base, EVAL_FOUND, 11, 150, 80, 40) + unhappy(EVAL_UNHAPPY)
    made = [json.dumps(r, ensure_ascii=False) for r in new]
    bank.write_text("".join(line + "\n" for line in kept + made), encoding="utf-8")
    print(f"{which}: {len(base)} rows kept, {len(new)} made", file=sys.stderr)
