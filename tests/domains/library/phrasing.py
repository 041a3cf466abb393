"""How the library's tasks are worded: identity (two factors), prose, slots, intents, bare reports."""

from __future__ import annotations

from trajforge.environments.tasks import ASKING_SYNONYMS, IdentitySpec, IntentSpec, ProseSpec, SlotSpec

# two-factor: a card number with its PIN, or a full name with date of birth and postal code
IDENTITY = IdentitySpec(
    factors=(("card_number", "pin"), ("name", "date_of_birth", "postal_code")),
    asks=("First I need to identify you: your library card number and PIN, or your full name, date of birth "
          "and postal code.",
          "Could you give me your card number and PIN? If you don't have the card, your full name, date of "
          "birth and postal code will do.",
          "To get started, what are your card number and PIN (or your name, date of birth and postal code)?"),
    keywords=("card number and pin", "your card number", "date of birth"),
    answers=(("My card number is {card_number} and my PIN is {pin}.", "Card {card_number}, PIN {pin}.",
              "It's card {card_number}; the PIN is {pin}."),
             ("I'm {name}, born {date_of_birth}, postal code {postal_code}.",
              "{name}, date of birth {date_of_birth}, postal code {postal_code}.",
              "My name is {name}, I was born on {date_of_birth} and my postal code is {postal_code}.")))

PROSE = ProseSpec(
    role="a library member",
    roles=("You are a library member ({who}).", "Play a patron of the public library ({who}).",
           "Act as a reader with a library card ({who}).", "Role: library member ({who})."),
    synonyms=ASKING_SYNONYMS + (
        ("renew", ("extend",)),
        ("put a hold on", ("reserve",)),
        ("fines", ("late fees",)),
    ))

SLOTS: dict[str, SlotSpec] = {
    "loan": SlotSpec(
        "loan",
        questions=("Which loan is this about? The loan reference (LN- and six digits) or the title works.",
                   "Which of your loans do you mean?"),
        keywords=("which loan", "which of your loans"),
        answers=("It's {value}.", "I mean {value}.", "{value}."),
    ),
    "hold": SlotSpec(
        "hold",
        questions=("Which hold should I look at? The hold reference or the title helps.",
                   "Which of your holds is it?"),
        keywords=("which hold", "which of your holds"),
        answers=("It's {value}.", "{value}.", "I mean {value}."),
    ),
    "format": SlotSpec(
        "format",
        questions=("Which format would you like: hardcover, paperback, large print or audiobook?",
                   "In which format do you want it?"),
        keywords=("which format", "which format would you", "in which format"),
        answers=("The {value}, please.", "{value}.", "I'd like the {value}."),
    ),
    "branch": SlotSpec(
        "branch",
        questions=("Which branch should it wait for you at: OAK, ELM, PINE or BIRCH?",
                   "Where would you like to pick it up?"),
        keywords=("which branch", "pick it up"),
        answers=("The {value} branch, please.", "At {value}.", "I'll collect it at {value}."),
    ),
}

INTENTS: dict[str, IntentSpec] = {
    "renew_loan": IntentSpec(
        "renew_loan", writes=True, core_slots=(), slots=("loan",),
        requests=("I'd like to renew a book I have out.", "Can you renew one of my loans?",
                  "I need a bit more time with a book."),
        actions=("renew loan {loan_ref} ({title}) for another 21 days",
                 "extend loan {loan_ref} of {title} by 21 days"),
        reports=("Loan {loan_ref} ({title}) is renewed and now due {due_date}.",
                 "Done: loan {loan_ref} for {title} now has a due date of {due_date}."),
    ),
    "renew_refused": IntentSpec(
        "renew_refused", writes=False, core_slots=(), slots=("loan",),
        requests=("I'd like to renew a book I have out.", "Can you renew one of my loans?"),
        actions=(),
        reports=("I'm sorry, loan {loan_ref} ({title}) cannot be renewed: {queued} other hold(s) are queued "
                 "for that edition, and a loan cannot be renewed while other members have holds on it. "
                 "Loan {loan_ref} is due {due_date}.",
                 "I'm sorry, loan {loan_ref} ({title}) has already been renewed {renewals} times, which is the "
                 "limit, so it cannot be renewed again. Loan {loan_ref} is due {due_date}."),
    ),
    "loan_due": IntentSpec(
        "loan_due", writes=False, core_slots=("loan",), slots=("loan",),
        requests=("When is {loan} due back?", "Could you tell me the due date of {loan}?"),
        actions=(),
        reports=("Loan {loan_ref} ({title}) is due {due_date}.",
                 "The due date of loan {loan_ref}, {title}, is {due_date}."),
    ),
    "place_hold": IntentSpec(
        "place_hold", writes=True, core_slots=("book",), slots=("book", "format", "branch"),
        requests=("Could you put a hold on {book} for me?", "I'd like to put a hold on {book}.",
                  "Can I get in the queue for {book}?"),
        actions=("place a hold on {title} ({format}, ISBN {isbn}) for card {card_number}, for pickup at "
                 "{branch_code}",
                 "queue card {card_number} for the {format} of {title} (ISBN {isbn}), to collect at "
                 "{branch_code}"),
        reports=("Hold {hold_ref} on {title} is now waiting, at place {position} in the queue, for pickup at "
                 "{branch_code}.",
                 "Your hold {hold_ref} on {title} is now waiting: you are number {position} in the queue, "
                 "pickup at {branch_code}."),
    ),
    "cancel_hold": IntentSpec(
        "cancel_hold", writes=True, core_slots=(), slots=("hold",),
        requests=("I don't need one of my holds any more.", "Can you cancel a hold for me?"),
        actions=("cancel hold {hold_ref} on {title}", "take hold {hold_ref} ({title}) out of the queue"),
        reports=("Hold {hold_ref} on {title} is now cancelled.",
                 "Done: hold {hold_ref} for {title} is now cancelled."),
    ),
    "pay_fines": IntentSpec(
        "pay_fines", writes=True, core_slots=(), slots=(),
        requests=("I'd like to pay off my fines.", "Can I settle my late fees?"),
        actions=("pay the full fine balance of ${balance} on card {card_number} with the card on file",
                 "take ${balance} for the fines on card {card_number}"),
        reports=("Payment {receipt} of ${paid} went through. Card {card_number} now has a fine balance of "
                 "${balance}.",
                 "I took ${paid} under receipt {receipt}. Card {card_number} now owes ${balance}."),
    ),
    "lost_card": IntentSpec(
        "lost_card", writes=False, core_slots=(), slots=(),
        requests=("I lost my library card and need a new one.", "My card is damaged; can I get a replacement?"),
        actions=(),
        reports=("I've passed your request to a librarian.",),
    ),
}

BARE_REPORTS = ("That's taken care of.", "All done on that one.", "That's sorted.")
