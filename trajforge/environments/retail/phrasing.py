"""Retail intent kinds and slots, with the phrase banks the scripted user and agent draw from."""

from __future__ import annotations

from trajforge.environments.tasks import ASKING_SYNONYMS, IdentitySpec, IntentSpec, ProseSpec, SlotSpec

# a customer authenticates with their email, or with their name and zip code
IDENTITY = IdentitySpec(
    factors=(("email",), ("name", "zip")),
    asks=("Before I look at your account, could you give me your email address, or your full name and zip code?",
          ("I'll need to verify your identity first: what's your email, "
           "or your first and last name plus zip code?"),
          "To get started, please share the email on your account (or your name and zip code)."),
    keywords=("email", "zip code"),
    answers=(("My email is {email}.", "It's {email}.", "You can find me under {email}."),
             ("I'm {name}, zip code {zip}.", "{name}, and my zip code is {zip}.")))

# a blueprint's goal: "You are a customer (...)"; its paraphrases reword a store's requests
PROSE = ProseSpec(
    role="a customer",
    roles=("You are a customer ({who}).", "Play a shopper ({who}).",
           "Act as a customer of the store ({who}).", "You're a client of this shop ({who}).",
           "Role: store customer ({who})."),
    synonyms=ASKING_SYNONYMS + (
        ("return", ("send back", "give back")),
        ("send back", ("return",)),
        ("cancel", ("call off", "cancel out")),
        ("change", ("update", "alter", "switch")),
        ("exchange", ("swap", "trade")),
        ("swap", ("exchange", "switch")),
        ("different", ("another", "other")),
        ("tell me", ("let me know", "check")),
        ("a refund for", ("my money back for", "to be refunded for")),
        ("one of my orders", ("an order of mine", "one order")),
        ("status", ("state", "progress")),
        ("price", ("cost",)),
        ("available", ("in stock",)),
    ))

SLOTS: dict[str, SlotSpec] = {
    "order": SlotSpec(
        "order",
        questions=("Which order is this about? The order ID (like #W1234567) helps, or just describe it.",
                   "Could you tell me which order you mean? The order number works best.",
                   "Which order would that be?",
                   "Can you point me to the order in question?"),
        keywords=("which order", "order id", "order number", "order in question"),
        answers=("It's {value}.", "The order is {value}.", "{value}.", "That would be {value}."),
    ),
    "items": SlotSpec(
        "items",
        questions=("Which item from that order do you mean?", "Which items are we talking about?",
                   "Which product in the order is it?"),
        keywords=("which item", "which product"),
        answers=("{value}.", "It's {value}.", "I mean {value}."),
    ),
    "option": SlotSpec(
        "option",
        questions=("Which variant would you like instead?", "What option would you like to switch to?",
                   "Which new version do you want?"),
        keywords=("which variant", "what option", "which new version"),
        answers=("I'd like {value} instead.", "{value}, please.", "Let's go with {value}."),
    ),
    "payment": SlotSpec(
        "payment",
        questions=("Which payment method should the money go to or come from?",
                   "Which payment method would you like to use for this?",
                   "Where should I send the refund: the original payment method or a gift card?"),
        keywords=("which payment method", "send the refund", "money go to"),
        answers=("Please use {value}.", "{value}.", "Let's use {value}."),
    ),
    "address": SlotSpec(
        "address",
        questions=("What is the new address?", "Could you give me the full new address?",
                   "What address should I use?"),
        keywords=("new address", "what address"),
        answers=("It's {value}.", "The new address is {value}.", "{value}."),
    ),
    "reason": SlotSpec(
        "reason",
        questions=("May I ask the reason for the cancellation: no longer needed, or ordered by mistake?",
                   "What's the reason for cancelling (no longer needed / ordered by mistake)?"),
        keywords=("reason",),
        answers=("{value}.", "The reason is: {value}.", "Put it down as {value}."),
    ),
}

INTENTS: dict[str, IntentSpec] = {
    "cancel_order": IntentSpec(
        "cancel_order", writes=True, core_slots=(), slots=("order", "reason"),
        found=("I see order {order_id}, and it is still {status}.",
               "Order {order_id} shows as {status}."),
        requests=("I need to cancel an order.", "Can you cancel one of my orders?",
                  "I'd like to cancel my order."),
        actions=("cancel order {order_id} with the reason '{reason}'",
                 "cancel your order {order_id} (reason: {reason}) and refund the original payment method"),
        reports=("Done: order {order_id} is now {status}, and ${refund} will be refunded to the original "
                 "payment method.",
                 "Your order {order_id} has been {status}. A refund of ${refund} is on its way to the "
                 "original payment method.",
                 "Order {order_id} is {status}; ${refund} goes back to the payment method you used."),
    ),
    "modify_address": IntentSpec(
        "modify_address", writes=True, core_slots=(), slots=("order", "address"),
        found=("I see order {order_id}, and it is still {status}.",
               "Order {order_id} is {status} at the moment."),
        requests=("I need to change the shipping address on an order.",
                  "Can you update where one of my orders ships to?"),
        actions=("change the shipping address of order {order_id} to {address}",
                 "ship order {order_id} to {address} instead"),
        reports=("Order {order_id} will now ship to {address}.",
                 "The shipping address of order {order_id} is updated to {address}.",
                 "Done: order {order_id} is still {status} and now goes to {address}."),
    ),
    "modify_payment": IntentSpec(
        "modify_payment", writes=True, core_slots=(), slots=("order", "payment"),
        found=("Order {order_id} is still {status}.",
               "I've found order {order_id}; it shows as {status}."),
        requests=("I'd like to pay for one of my orders with a different payment method.",
                  "Can I change how I pay for an order?"),
        actions=("switch the payment of order {order_id} to {payment}",
                 "charge order {order_id} to {payment} and refund the current method"),
        reports=("Order {order_id} is now paid with {payment}.",
                 "The payment method of order {order_id} is switched to {payment}.",
                 "Order {order_id} is still {status} and now paid with {payment}."),
    ),
    "modify_items": IntentSpec(
        "modify_items", writes=True, core_slots=("items", "option_name"),
        found=("Order {order_id} is still {status}.",
               "I see order {order_id}, currently {status}."),
        slots=("order", "items", "option"),
        requests=("I'd like to change the {option_name} of {items} in an order that hasn't shipped.",
                  "Could I get a different {option_name} for {items} I ordered? It hasn't shipped yet."),
        actions=(("change {items} in order {order_id} to {option}, "
                  "settling the price difference on the original payment method"),
                 ("swap {items} in order {order_id} for {option}, "
                  "with the difference going through your original payment method")),
        reports=("Order {order_id} is updated: {items} is now {option}. The price difference of "
                 "${difference} for order {order_id} is {settled}.",
                 "All set: {items} is now {option}. For order {order_id}, the price difference of "
                 "${difference} is {settled}.",
                 "Order {order_id} now has {items} in {option}. The difference of ${difference} on "
                 "order {order_id} is {settled}."),
    ),
    "return_items": IntentSpec(
        "return_items", writes=True, core_slots=("items",), slots=("order", "items", "payment"),
        found=("I see order {order_id}, and it was {status}.",
               "Order {order_id} shows as {status}."),
        requests=("I want to return {items}.", "Can I send back {items}?",
                  "I'd like a refund for {items}."),
        actions=("return {items} from order {order_id}, with the refund going to {payment}",
                 "start a return of {items} from order {order_id} and refund {payment}"),
        reports=("The return for order {order_id} is requested: ${refund} will be refunded to {payment}.",
                 "Return started: order {order_id} is now {status}. You'll get ${refund} back to {payment}.",
                 "Order {order_id} is {status}, and ${refund} will go to {payment}."),
    ),
    "exchange_items": IntentSpec(
        "exchange_items", writes=True, core_slots=("items", "option_name"),
        found=("I see order {order_id}, and it was {status}.",
               "Order {order_id} shows as {status}."),
        slots=("order", "items", "option"),
        requests=("I'd like to exchange {items} for a different {option_name}.",
                  "Can I swap {items} for another {option_name}?"),
        actions=(("exchange {items} from order {order_id} for {option}, "
                  "settling the price difference on the original payment method"),
                 "request an exchange of {items} in order {order_id} for {option}"),
        reports=("Your exchange for order {order_id} is requested, and the order is now {status}. "
                 "The price difference of ${difference} for order {order_id} is {settled}.",
                 "Exchange for order {order_id} is in ({status}). Order {order_id}'s difference of "
                 "${difference} is {settled}."),
    ),
    "update_profile_address": IntentSpec(
        "update_profile_address", writes=True, core_slots=(), slots=("address",),
        found=("The address on your profile is currently {address}.",
               "Right now your profile has {address} as its address."),
        requests=("I moved and need to update the address on my account.",
                  "Please change the default address on my profile."),
        actions=("update the default address on your profile to {address}",
                 "set your account address to {address}"),
        reports=("Your profile address is now {address}.", "Your account address is updated."),
    ),
    "cancel_refused": IntentSpec(
        "cancel_refused", writes=False, outcome="refused", core_slots=(), slots=("order",),
        requests=("I need to cancel an order.", "Can you cancel one of my orders?",
                  "I'd like to cancel my order."),
        actions=(),
        # the blocking fact is the status; no other status word, or it would read as a claim
        reports=("I'm sorry, I can't cancel order {order_id}: it is already {status}. Our policy allows a "
                 "cancellation only while an order waits to be prepared, before the warehouse starts on it.",
                 "Unfortunately order {order_id} can no longer be cancelled: it is {status}, and an order "
                 "can only be cancelled before the warehouse begins preparing it.",
                 "Order {order_id} is {status}, so I'm not able to cancel it. Cancelling is possible only "
                 "until the warehouse starts preparing an order."),
    ),
    "order_status": IntentSpec(
        "order_status", writes=False, core_slots=(), slots=("order",),
        requests=("Can you tell me the status of an order?", "Where is my order at?",
                  "I'd like to check on an order."),
        actions=(),
        reports=("Order {order_id} is currently {status}.", "The status of {order_id} is: {status}.",
                 "Order {order_id} shows as {status} right now."),
    ),
    "product_price": IntentSpec(
        "product_price", writes=False, core_slots=("product", "option"), slots=(),
        requests=("How much is the {product} with {option}, and is it available?",
                  "Could you check the price and availability of the {product} with {option}?"),
        actions=(),
        # the availability is a sentence of its own, after the one naming the variant
        reports=("The {product} with {option} costs ${price}. That variant is {available}.",
                 "The {product} with {option} is ${price} at the moment. It is {available}.",
                 "The price of the {product} with {option} is ${price}. Right now it is {available}."),
    ),
}

# Reports that leave the required outputs out (the fault-injecting agent's ``missing_output``).
BARE_REPORTS = ("Done, that's taken care of.", "All set on that one.", "That one is sorted out now.")
