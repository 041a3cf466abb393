"""Banking intent kinds and slots, with the phrase banks the scripted user and agent draw from."""

from __future__ import annotations

from trajforge.environments.tasks import ASKING_SYNONYMS, IdentitySpec, IntentSpec, ProseSpec, SlotSpec

# two factors in each set: the phone on file and the date of birth, or the email and the passcode
IDENTITY = IdentitySpec(
    factors=(("phone", "date_of_birth"), ("email", "passcode")),
    asks=("Before I look at your accounts I need to verify you: please give me the phone number on "
          "file and your date of birth, or your email and your passcode.",
          "For your security, could you confirm the phone number on your account together with your "
          "date of birth (or your email address together with your passcode)?",
          "First I have to verify your identity. What are your phone number and date of birth, or "
          "your email and passcode?"),
    keywords=("date of birth", "passcode"),
    answers=(("My phone number is {phone} and my date of birth is {date_of_birth}.",
              "It's {phone}, and I was born on {date_of_birth}.",
              "Phone {phone}, date of birth {date_of_birth}."),
             ("My email is {email} and my passcode is {passcode}.",
              "Email {email}, passcode {passcode}.",
              "You'll find me under {email}; the passcode is {passcode}.")))

# a blueprint's goal: "You are a bank customer (...)"; its paraphrases reword a bank's requests
PROSE = ProseSpec(
    role="a bank customer",
    roles=("You are a bank customer ({who}).", "Play a customer of the bank ({who}).",
           "Act as an account holder contacting your bank ({who}).",
           "You're a client of this bank ({who}).", "Role: bank customer ({who})."),
    synonyms=ASKING_SYNONYMS + (
        ("freeze", ("lock", "block")),
        ("unfreeze", ("unlock", "unblock")),
        ("move money", ("transfer money", "shift money")),
        ("dispute", ("contest", "challenge")),
        ("a replacement", ("a new card", "a replacement card")),
        ("balance", ("available money",)),
        ("change", ("update", "switch")),
        ("tell me", ("let me know", "check")),
    ))

SLOTS: dict[str, SlotSpec] = {
    "account": SlotSpec(
        "account",
        questions=("Which account is this about? The account id (like ACC-204518) works, or just "
                   "tell me checking or savings.",
                   "Which of your accounts do you mean?",
                   "Could you tell me which account that is on?"),
        keywords=("which account", "which of your accounts"),
        answers=("It's {value}.", "{value}.", "I mean {value}.", "That's on {value}."),
        # each carries one of the keywords (and no other slot's), so the user hears it as asking
        # for the account; "my savings account" when there are two
        clarify=("I see more than one account that fits: {candidates}. Which account do you mean?",
                 "You have more than one account of that type ({candidates}). Which account is this about?",
                 "More than one of your accounts matches that: {candidates}. Could you tell me which "
                 "account it is?",
                 "I'm seeing {candidates}, and each of them could be it. Which of your accounts is the "
                 "charge on?",
                 "That description fits {candidates}. Which account should I look at?"),
    ),
    "charge": SlotSpec(
        "charge",
        questions=("Which charge is it? The merchant, the amount or the date will do.",
                   "Can you describe the transaction: where, how much or when?"),
        keywords=("which charge", "describe the transaction"),
        answers=("It's {value}.", "{value}.", "I mean {value}."),
    ),
    "reason": SlotSpec(
        "reason",
        questions=("What is the reason for the dispute: unrecognized charge, duplicate charge, "
                   "wrong amount or item not received?",
                   "Which reason for the dispute applies: unrecognized charge, duplicate charge, "
                   "wrong amount, or item not received?"),
        keywords=("reason for the dispute",),
        answers=("{value}.", "The reason is {value}.", "Put it down as {value}."),
    ),
    "from_account": SlotSpec(
        "from_account",
        questions=("Which account should the money come from?",
                   "From which account should I take the money?"),
        keywords=("money come from", "from which account"),
        answers=("From {value}.", "Take it from {value}.", "{value}."),
        # ("from which account" holds the account slot's "which account": not in these)
        clarify=("I see more than one account that fits: {candidates}. Which one should the money "
                 "come from?",
                 "You have more than one account of that type ({candidates}). Where should the money "
                 "come from?",
                 "More than one of your accounts matches that: {candidates}. Which of them should the "
                 "money come from?",
                 "I'm seeing {candidates}, and each of them could be it. Which one should the money "
                 "come from, then?",
                 "That description fits {candidates}. Which of those should the money come from?"),
    ),
    "to_account": SlotSpec(
        "to_account",
        questions=("And which account should it go to?", "Where should the money go: which account?"),
        keywords=("should it go to", "where should the money go"),
        answers=("To {value}.", "Put it in {value}.", "{value}."),
        clarify=("I see more than one account that fits: {candidates}. Which one should it go to?",
                 "You have more than one account of that type ({candidates}). Where should the money "
                 "go?",
                 "More than one of your accounts matches that: {candidates}. Which of them should it "
                 "go to?",
                 "I'm seeing {candidates}, and each of them could be it. Where should the money go, "
                 "exactly?",
                 "That description fits {candidates}. Which of those should it go to?"),
    ),
    "amount": SlotSpec(
        "amount",
        questions=("How much would you like to send?", "What amount should I send?"),
        keywords=("how much would you like", "what amount"),
        answers=("{value}.", "Make it {value}.", "{value}, please."),
    ),
    "payee": SlotSpec(
        "payee",
        questions=("Which saved payee should receive it?", "Who is the payment for? It has to be one of "
                   "your saved payees."),
        keywords=("which saved payee", "who is the payment for"),
        answers=("{value}.", "It's for {value}.", "The payee is {value}."),
    ),
    "card": SlotSpec(
        "card",
        questions=("Which card is this about?", "Which of your cards do you mean? The last four digits "
                   "help."),
        keywords=("which card", "which of your cards"),
        answers=("{value}.", "It's {value}.", "I mean {value}."),
    ),
    "card_problem": SlotSpec(
        "card_problem",
        questions=("Was the card lost, stolen or damaged?",),
        keywords=("lost, stolen or damaged",),
        answers=("It was {value}.", "{value}."),
    ),
    "phone": SlotSpec(
        "phone",
        questions=("What's the new phone number?", "Which phone number should I put on your profile?"),
        keywords=("new phone number", "which phone number"),
        answers=("It's {value}.", "The new number is {value}.", "{value}."),
    ),
    "address": SlotSpec(
        "address",
        questions=("What is the new mailing address?", "Which address should I put on your profile?"),
        keywords=("new mailing address", "which address"),
        answers=("It's {value}.", "The new address is {value}.", "{value}."),
    ),
}

_DISPUTE_REQUESTS = ("I want to dispute {charge}.", "I'd like to dispute {charge}, it doesn't look right.",
                     "Can you help me dispute {charge}?")

# what the agent says as it takes a request up, and with its first read of what the request is
# about (``IntentSpec.takes`` / ``progress``); kinds the user's words cannot tell apart (the
# outcome is the agent's to find out) share them
TAKES_DISPUTE = ("Happy to look into disputing a charge for you.", "Let's take a look at that charge.",
                 "Sure, a charge you don't agree with.", "A dispute, understood.")
PROGRESS_DISPUTE = ("Let me look up the account the charge is on.", "Checking the account with that charge.",
                    "Opening the account to find the charge.")

INTENTS: dict[str, IntentSpec] = {
    "account_balance": IntentSpec(
        "account_balance", writes=False, core_slots=("account",), slots=("account",),
        takes=("Glad to check a balance for you.", "Let's look up that balance.", "Sure, a balance check."),
        progress=("Let me look that account up.", "Checking that account now.", "Pulling up the account."),
        requests=("What's the balance of {account}?", "How much money is in {account} right now?",
                  "Can you tell me the balance of {account}?", "How much do I have in {account} at the moment?",
                  "Could you check what's left in {account}?", "I'd like to know the current balance on {account}.",
                  "Quick question, what's sitting in {account} these days?",
                  "Before I pay a few bills, I want to see how much is in {account}.",
                  "Is there any way to see the balance of {account} from here?",
                  "I need the balance for {account}, please.",
                  "Hi, could you look up how much money {account} has in it?",
                  "I don't know how much is left in {account}. Would you check for me?",
                  "Just wondering what the balance on {account} looks like.",
                  "Mind telling me how much is in {account}?",
                  "I'm worried I might be running low. How much is in {account}?",
                  "Balance of {account}, please."),
        actions=(),
        reports=("Your {account_type} account {account_id} has a balance of ${balance}.",
                 "Account {account_id} ({account_type}) currently holds ${balance}.",
                 "The balance of account {account_id} is ${balance}."),
    ),
    "transaction_lookup": IntentSpec(
        "transaction_lookup", writes=False, core_slots=("charge",), slots=("account", "charge"),
        takes=("Glad to look into a charge for you.", "Let's find that transaction.",
               "Sure, a question about a charge."),
        progress=("Let me look up the account the charge is on.", "Checking the account with that charge.",
                  "Opening the account to find the transaction."),
        requests=("I have a question about {charge}.", "Can you look up {charge} for me?",
                  "Could you check {charge} for me?", "What can you tell me about {charge}?",
                  "I'd like some details on {charge}.",
                  "I'm trying to figure out what {charge} was. Could you pull it up?",
                  "Would you mind finding {charge} and telling me a bit about it?",
                  "I spotted {charge} on my statement and want to know more about it.",
                  "Hi, I'm curious about {charge}. What's the story there?",
                  "I need the details of {charge}, please.",
                  "Something about {charge} has me puzzled. Can you look into it?",
                  "Is there a way to see more about {charge}?", "Quick one, what do you have on {charge}?",
                  "Can we go over {charge} together? I don't quite remember it.",
                  "I keep wondering about {charge} and would like more information on it.",
                  "What's the deal with {charge}?"),
        actions=(),
        reports=("That is transaction {transaction_id} at {merchant}: ${amount} on {date}, and it is "
                 "{status}.",
                 "Transaction {transaction_id} ({merchant}) was ${amount} on {date}; its status is "
                 "{status}.",
                 "I found transaction {transaction_id} at {merchant}: ${amount}, dated {date}, status "
                 "{status}."),
    ),
    "dispute_charge": IntentSpec(
        "dispute_charge", writes=True, core_slots=("charge",), slots=("account", "charge", "reason"),
        takes=TAKES_DISPUTE,
        progress=PROGRESS_DISPUTE,
        found=("I found the charge: transaction {transaction_id} at {merchant}.",
               "That's transaction {transaction_id}, at {merchant} on {date}."),
        requests=_DISPUTE_REQUESTS + (
            "I'd like to file a dispute for {charge}.", "Please open a dispute on {charge}.",
            "I don't think I should have been billed for {charge}. Can I dispute it?",
            "How do I contest {charge}?", "I need to challenge {charge} on my account.",
            "Something's wrong with {charge} and I want to dispute it.", "Is there any way to dispute {charge}?",
            "I want {charge} disputed, please.",
            "Hi, I'm not happy with {charge} and would like to raise a dispute.",
            "I think I need to dispute {charge}. It looks off to me.", "Could a dispute be opened for {charge}?",
            "Honestly, {charge} makes no sense to me, so I'd like to dispute it."),
        actions=("file a dispute on transaction {transaction_id} ({merchant}, ${amount} on {date}) "
                 "with the reason '{reason}'",
                 "dispute transaction {transaction_id}, the ${amount} charge at {merchant} on {date}, "
                 "as '{reason}'"),
        reports=("Dispute {dispute_id} is now {dispute_status}. Transaction {transaction_id} "
                 "({merchant}, ${amount} on {date}) is marked as disputed.",
                 "Transaction {transaction_id} at {merchant} for ${amount} is now disputed. Your "
                 "dispute {dispute_id} is {dispute_status}.",
                 "Done: transaction {transaction_id} ({merchant}, ${amount}) is disputed. Dispute "
                 "{dispute_id} is {dispute_status}."),
    ),
    "dispute_refused": IntentSpec(
        "dispute_refused", writes=False, outcome="refused", core_slots=("charge",), slots=("account", "charge"),
        takes=TAKES_DISPUTE,
        progress=PROGRESS_DISPUTE,
        requests=_DISPUTE_REQUESTS + (
            "I'd like to raise a dispute about {charge}.", "Please help me contest {charge}.",
            "Could you start a dispute on {charge} for me?",
            "I want to challenge {charge}. Something about it is off.",
            "Is it possible to dispute {charge}? I don't believe it's legit.",
            "I have a problem with {charge} and want to dispute it.", "Hi, I need to put in a dispute for {charge}.",
            "What do I need to do to dispute {charge}?", "I'm writing in to dispute {charge}.",
            "Can {charge} still be disputed? It doesn't seem fair to me.",
            "I'd rather not pay for {charge}, so I'm hoping to dispute it.",
            "I think {charge} is a mistake and I want to contest it."),
        actions=(),
        reports=("Transaction {transaction_id} at {merchant} is still {status}. Only posted "
                 "transactions can be disputed, so I can't file a dispute for it yet.",
                 "I see transaction {transaction_id} at {merchant}, and it is {status}. A charge "
                 "can be disputed only once it has posted.",
                 "Transaction {transaction_id} at {merchant} was posted on {date}. A charge can "
                 "only be disputed within 60 days of its date, so this one can no longer be disputed.",
                 "The {merchant} charge {transaction_id} dates from {date}. Disputes have to be filed "
                 "within 60 days, and that window has passed.",
                 "Transaction {transaction_id} at {merchant} already has dispute {dispute_id}. A "
                 "transaction can be disputed only once.",
                 "There is already a dispute on transaction {transaction_id} at {merchant}: "
                 "{dispute_id}. A charge can only be disputed once."),
    ),
    "dispute_escalated": IntentSpec(
        "dispute_escalated", writes=False, outcome="transferred", core_slots=("charge",), slots=("account", "charge"),
        takes=TAKES_DISPUTE,
        progress=PROGRESS_DISPUTE,
        requests=_DISPUTE_REQUESTS + (
            "I want to file a dispute against {charge}.", "Hello, I'm hoping to dispute {charge}.",
            "I need help contesting {charge}. It isn't what I expected.",
            "Could I open a dispute about {charge}, please?", "I'd like to formally dispute {charge}.",
            "There's a problem with {charge}, so I'd like to dispute it.",
            "Can I challenge {charge}? It doesn't add up.",
            "I'm really worried about {charge} and I want to dispute it.",
            "Would it be possible to raise a dispute on {charge}?",
            "I think I have to dispute {charge}. Something went wrong there.",
            "Is there some way I can contest {charge}?", "Please dispute {charge} for me.",
            "How can I get {charge} disputed?"),
        actions=(),
        reports=("I'm handing this over to a colleague who handles large disputes.",),
    ),
    "transfer_funds": IntentSpec(
        "transfer_funds", writes=True, core_slots=(), slots=("from_account", "to_account", "amount"),
        takes=("Happy to help you move money between your accounts.", "Let's set up that transfer.",
               "Sure, a transfer between your accounts."),
        progress=("Let me look at the accounts for the transfer.", "Checking the accounts the money moves between.",
                  "Pulling up your accounts for the transfer."),
        # no balance: one read before a transfer into the account is stale by now
        found=("I have both accounts here: {from_account_id} and {to_account_id}.",
               "I see account {from_account_id} and account {to_account_id} on your profile."),
        requests=("I need to move money between my accounts.",
                  "Can you transfer some money from one of my accounts to another?",
                  "I'd like to move money from one account of mine to another.",
                  "I want to shift some money from one of my accounts into another.",
                  "Could you help me move funds between my own accounts?",
                  "Is it possible to transfer money between two of my accounts?",
                  "Hi, I'd like to make a transfer between my accounts.",
                  "How do I move money across my own accounts?",
                  "I'm hoping to transfer some funds from one account of mine into another.",
                  "Need to move money around between my accounts.",
                  "Can I get some money moved between my accounts, please?",
                  "I think I need to top up one of my accounts from another one I have.",
                  "Would you be able to set up a transfer between my accounts?",
                  "Help me move money from one account to another, please. Both are mine."),
        actions=("transfer {amount} from account {from_account_id} to account {to_account_id}",
                 "move {amount} from {from_account_id} into {to_account_id}"),
        reports=("Transfer {transfer_id} is {transfer_status}: ${amount} moved from {from_account_id} "
                 "to {to_account_id}. Account {from_account_id} now has a balance of ${balance}.",
                 "Done, transfer {transfer_id} of ${amount} is {transfer_status}. The balance of "
                 "account {from_account_id} is now ${balance}."),
    ),
    "pay_payee": IntentSpec(
        "pay_payee", writes=True, core_slots=(), slots=("from_account", "payee", "amount"),
        takes=("Happy to help you pay one of your payees.", "Let's set up that payment.",
               "Sure, a payment to a payee."),
        progress=("Let me look at your payees for the payment.", "Checking the payee and the account to pay from.",
                  "Pulling up your payees for the payment."),
        found=("{payee_name} ({payee_id}) is on your payee list.",
               "I see {payee_name} among your saved payees."),
        requests=("I'd like to send money to one of my saved payees.",
                  "Can you make a payment to a payee of mine?", "I need to pay one of the payees I've saved.",
                  "Could you send a payment to somebody on my payee list?",
                  "How do I pay one of my saved payees?",
                  "Is it possible to send money to a payee I already have saved?",
                  "I want to send a payment to one of the payees on my profile.",
                  "Hi, I need to send some money to a payee of mine.",
                  "Please send a payment to one of my saved payees.",
                  "I have a payee saved already and want to pay them.",
                  "I'm looking to make a payment to one of my payees.", "Need to pay one of my saved payees.",
                  "Would you help me pay a payee that's already on my list?",
                  "There's a saved payee I owe money to. Can I pay them from here?"),
        actions=("send {amount} from account {from_account_id} to your payee {payee_name} ({payee_id})",
                 "pay {payee_name} ({payee_id}) {amount} from account {from_account_id}"),
        reports=("Payment {transfer_id} to {payee_name} is {transfer_status}: ${amount} left account "
                 "{from_account_id}. Account {from_account_id} now has a balance of ${balance}.",
                 "Done, payment {transfer_id} of ${amount} is {transfer_status}. The balance of "
                 "account {from_account_id} is now ${balance}."),
    ),
    "freeze_card": IntentSpec(
        "freeze_card", writes=True, core_slots=(), slots=("card",),
        takes=("Happy to help you lock down a card.", "Let's get that card locked.", "Sure, a card to lock."),
        progress=("Let me look that card up.", "Checking the card you want locked.", "Pulling up your cards."),
        found=("Your {card_type} card {card_id}, ending in {last_four}, is {status} right now.",
               "I see your {card_type} card {card_id} (ending in {last_four}); it is {status}."),
        requests=("I want to freeze one of my cards.", "Can you put a freeze on a card of mine?",
                  "Please freeze a card of mine for now.", "Could you freeze one of my cards?",
                  "I need to lock one of my cards for the time being.",
                  "Is there any way to temporarily freeze a card of mine?", "Hi, I want one of my cards frozen.",
                  "I'd like to block one of my cards so nobody can use it.",
                  "I'm worried about one of my cards and want it frozen.", "How do I freeze a card of mine?",
                  "Freeze one of my cards, please.", "I think I should freeze one of my cards just in case.",
                  "Can a card of mine be frozen for a while?",
                  "Is it possible to stop a card of mine from working for now?",
                  "To be safe, I'd like a freeze put on one of my cards."),
        actions=("freeze your {card_type} card {card_id} ending in {last_four}",
                 "put a freeze on card {card_id} (your {card_type} card ending in {last_four})"),
        reports=("Your {card_type} card {card_id} ending in {last_four} is now {status}.",
                 "Card {card_id} ending in {last_four} is now {status}; no new charges will go "
                 "through on it."),
    ),
    "unfreeze_card": IntentSpec(
        "unfreeze_card", writes=True, core_slots=(), slots=("card",),
        takes=("Glad you found it; let's get that card working again.", "Let's get that card back in use.",
               "Sure, a card to turn back on."),
        progress=("Let me look that card up.", "Checking the card you want back in use.", "Pulling up your cards."),
        found=("Your {card_type} card {card_id}, ending in {last_four}, is {status} right now.",
               "I see your {card_type} card {card_id} (ending in {last_four}); it is {status}."),
        requests=("I found my card again, can you unfreeze it?", "I'd like to unfreeze one of my cards.",
                  "Please lift the freeze on a card of mine.", "Could you unfreeze one of my cards?",
                  "I want to unlock a card I froze earlier.", "Is it possible to take the freeze off a card of mine?",
                  "I'd like to start using a card of mine again. Can you unfreeze it?",
                  "Hi, I need a card of mine unfrozen.", "Please unblock one of my cards.",
                  "How do I unfreeze a card of mine?", "I think it's time to unfreeze one of my cards.",
                  "Need one of my cards unfrozen, please.", "Would you remove the freeze from a card of mine?",
                  "Is there any way to get my card working again? I want the freeze taken off.",
                  "My card turned up after all, so I'd like it unlocked."),
        actions=("unfreeze your {card_type} card {card_id} ending in {last_four}",
                 "lift the freeze on card {card_id} (your {card_type} card ending in {last_four})"),
        reports=("Your {card_type} card {card_id} ending in {last_four} is now {status} again.",
                 "Card {card_id} ending in {last_four} is now {status}; you can use it again."),
    ),
    "replace_card": IntentSpec(
        "replace_card", writes=True, core_slots=("card_problem",), slots=("card", "card_problem"),
        takes=("Happy to help you get a replacement card.", "Let's get you a new card.", "Sure, a replacement card."),
        progress=("Let me look up the card to replace.", "Checking the card that needs replacing.",
                  "Pulling up your cards for the replacement."),
        found=("I see your {card_type} card {card_id}, ending in {last_four}.",
               "Your {card_type} card {card_id} (ending in {last_four}) is on file as {status}."),
        requests=("My card was {card_problem} and I need a replacement.",
                  "I need a new card, mine was {card_problem}.",
                  "Can you send me a replacement card? Mine was {card_problem}.",
                  "My card got {card_problem}. Can I get a new one?",
                  "I need to order a replacement because my card was {card_problem}.",
                  "Could you send me a new card? The old one got {card_problem}.",
                  "Hi, my card was {card_problem} and I'd like it replaced.",
                  "Is it possible to get a replacement card? Mine got {card_problem}.",
                  "I'd like a new card, since mine was {card_problem}.",
                  "Please replace my card. It was {card_problem}.",
                  "Ugh, my card was {card_problem}. I need a replacement.",
                  "How do I get a new card? Mine was {card_problem}.",
                  "I think I need a replacement card, mine got {card_problem}.",
                  "I'm a bit stressed because my card was {card_problem}. Can you issue me a new one?"),
        actions=("replace your {card_type} card {card_id} ending in {last_four} (reported "
                 "{card_problem}) with a new card",
                 "issue a new {card_type} card in place of card {card_id} ending in {last_four}, "
                 "which was {card_problem}"),
        reports=("Card {card_id} ending in {last_four} is now {status}. Your new {card_type} card "
                 "{new_card_id} ending in {new_last_four} is {new_status}.",
                 "I've replaced card {card_id} ending in {last_four}, which is now {status}. The new "
                 "card {new_card_id} ending in {new_last_four} is {new_status}."),
    ),
    "update_phone": IntentSpec(
        "update_phone", writes=True, core_slots=(), slots=("phone",),
        takes=("Happy to help you update your phone number.", "Let's get your phone number changed.",
               "Sure, a new phone number for your profile."),
        progress=("Let me open your profile to change the phone number.",
                  "I'll pull up your profile to update the number."),
        requests=("I got a new phone number and need to update my profile.",
                  "Please change the phone number on my profile.",
                  "My phone number changed. Can you update it on my profile?",
                  "I'd like to update the phone number you have for me.",
                  "Could you put a new phone number on my profile?",
                  "I switched numbers, so my profile needs the new one.", "Hi, I need to change my contact number.",
                  "How do I update the phone number on my profile?",
                  "The phone number on my profile is out of date. Can you change it?",
                  "Please update my phone number.",
                  "I've got a new mobile number and want my profile to show it.",
                  "Is there a way to change the number I have on file?",
                  "I think my profile still has my old phone number. I need it changed.",
                  "Need to swap out the phone number on my profile.",
                  "Would you update my profile with a new phone number?"),
        actions=("update the phone number on your profile to {phone}",
                 "set the phone number on your profile to {phone}"),
        reports=("The phone number on your profile is now {phone}.",
                 "Your profile now has the phone number {phone}."),
    ),
    "update_address": IntentSpec(
        "update_address", writes=True, core_slots=(), slots=("address",),
        takes=("Happy to help you update your mailing address.", "Let's get your address changed.",
               "Sure, a new mailing address for your profile."),
        progress=("Let me open your profile to change the mailing address.",
                  "I'll pull up your profile to update where your mail goes."),
        requests=("I moved and need to update the mailing address on my profile.",
                  "Please change the address on my profile.", "I have a new address. Can you update my profile?",
                  "Could you change my mailing address?", "I'd like to update where my mail goes.",
                  "I recently moved, so my address on file needs changing.",
                  "Hi, I need a new mailing address put on my profile.",
                  "How do I update the address on my profile?", "Please update my address.",
                  "My profile still has my old address. Can you fix that?",
                  "I've relocated and want my profile to have my new address.",
                  "Is it possible to change the address you have for me?",
                  "I think my mailing address needs updating, I just moved.",
                  "Need my address changed on my profile.",
                  "Would you update the mailing address on my profile for me?"),
        actions=("update the mailing address on your profile to {address}",
                 "set the address on your profile to {address}"),
        reports=("The mailing address on your profile is now {address}.",
                 "Your profile now has the address {address}."),
    ),
}

# Reports that leave the required outputs out (the fault-injecting agent's ``missing_output``).
BARE_REPORTS = ("Done, that's taken care of.", "All set on that one.", "That one is sorted now.")
