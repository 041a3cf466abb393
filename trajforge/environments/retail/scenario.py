"""What an online store's customers bring with them: a hand-written bank of backgrounds,
per-intent situations, constraints and fallbacks, written for trajforge by hand, in the
customer's own words, so a blueprint's goal reads as a person with reasons rather than a list of
requests.

An order's contents, status, payment method and amounts are the task data's to decide, so the
situations speak of "that order" or of ``{items}`` and never say what is in an order, how it was
paid, or where it stands.
"""

from __future__ import annotations

from trajforge.environments.tasks import ScenarioSpec, Situation

BACKGROUNDS = (
    "I run a small daycare out of my home, so my shopping happens after the last parent leaves.",
    "Retired from the railway, I've taken up woodworking and have opinions about every tool.",
    "A baby girl arrived in my house last month, and a full night's sleep is a distant memory.",
    "As a hospital pharmacist on nights, I do my online shopping at strange hours.",
    "First-year teacher here, furnishing a classroom and an apartment on a shoestring.",
    "Seventy-two and stubborn, I refuse to let my kids do my shopping for me.",
    "Moving into my first apartment has meant buying everything from forks to a shower curtain.",
    "Most of my paycheck disappears into rent in a city where everything costs too much.",
    "I coach a girls' soccer team and always seem to be buying gear for somebody.",
    "Shopping online is new to me; my granddaughter showed me how over the holidays.",
    "Between two jobs and night classes, I barely have time to set foot in a real store.",
    "Park ranger work keeps me out of reach of a signal for days at a time.",
    "Home is a small farmhouse a long drive from the nearest mall.",
    "Along with my husband, I foster teenagers, so the house is always full of growing feet.",
    "An accident last winter left me using a wheelchair, so ordering online saves me a lot of "
    "hassle.",
    "Sound engineering is my trade, which makes me picky about anything that plays music.",
    "Gift-giving is my love language. I buy presents months in advance and hide them badly.",
    "After years of hospital shifts, I've just moved to a clinic job with normal hours.",
    "Four years of dorm life are behind me, and I finally have a place I can decorate.",
    "The clerks at the post office know me by name because of how much I order.",
    "I'm a graphic designer, which makes me fussy about colors to a fault.",
    "Careful with money since childhood, I compare prices on everything before I buy.",
    "My twins just became teenagers and seem to outgrow their clothes every season.",
    "Long-distance cycling fills my weekends, mostly on back roads far from town.",
    "Living in a tiny studio, I think hard about every object I bring through the door.",
    "Since the office closed, I've worked from my kitchen table and I'm slowly building a proper "
    "setup.",
    "My gardening podcast is recorded in a shed at the bottom of my yard.",
    "My mother moved in with me last spring, and I do the shopping for the whole household now.",
    "I grew up in Seoul and moved here for work, so English is my second language.",
    "Wedding planning is my job, and I'm always juggling a dozen clients and their last-minute "
    "wishes.",
    "Camping is how I spend almost every summer weekend, rain or shine.",
    "A recent divorce means I'm setting up a household from scratch.",
    "I manage a busy restaurant kitchen and shop on my phone between the lunch and dinner rush.",
    "Poor eyesight means I keep the text on my screen enormous.",
    "Recently widowed, I'm learning to handle the things my husband always took care of.",
    "Every product review gets read before I buy anything; I'm a college librarian, after all.",
    "Dance lessons for my daughter and hockey for my son keep my evenings full.",
    "Weekdays I fix buses at the depot, and weekends I play bass in a cover band.",
    "A new job brought me to a city where I don't know a soul yet.",
    "Personal training is how I earn a living, so I wear through workout gear quickly.",
    "Sober for a few years now, I've thrown myself into new hobbies with real enthusiasm.",
    "My apartment is on the top floor of a walk-up, and every delivery is a climb.",
    "The company I work for is three time zones away, so my days start very early.",
    "Every holiday season I end up shopping for my entire extended family.",
    "Pastoring a small church leaves me with very little time to myself.",
    "Recovering from surgery, I'm stuck at home and doing everything online for now.",
    "I teach piano out of my living room, surrounded by sheet music and metronomes.",
    "A lifelong tinkerer, I take apart anything that breaks before I think about replacing it.",
    "My partner is deployed overseas, so I'm running the house alone for a while.",
    "Standing behind a salon chair all day has made me care a lot about comfort.",
    "Gadgets fascinate me, and I'm usually the first among my friends to try something new.",
    "Evenings I volunteer at a literacy center, tutoring adults who are learning to read.",
    "My commute is a long train ride, and that's when most of my shopping gets done.",
    "As a vet tech with two rescue dogs who chew everything, I replace things often.",
    "The house I share with three roommates is loud, messy and always short on mugs.",
    "College has just started for me on the other side of the country.",
    "Real estate photography keeps me driving between listings most of the day.",
    "Stay-at-home dad of a four-year-old who narrates everything I do.",
    "Minimalism is my thing, and I try hard to buy only what I'll actually use.",
    "Working as a flight attendant, I live out of a suitcase most weeks.",
    "My little bakery opens at dawn, so I'm up long before sunrise.",
    "An amateur photographer, I fuss over light and color more than most people.",
    "Hiking the long trails out west has become my retirement project.",
    "Court stenography is my job, so I type faster than I think.",
    "Organizing is my hobby; my closet is sorted by color and my spices alphabetically.",
    "With a toddler at home and no help, I get things done during naps.",
    "I'm a teacher's aide by day and sell crocheted toys online at night.",
    "My eldest leaves for college soon, and I'm piecing together her dorm room.",
    "Mining engineering has me on a fly-in, fly-out roster at a remote site.",
    "Since my knee surgery, deliveries have been a lifeline.",
    "Clutter drives me up the wall, which is funny for someone who works in a used bookstore.",
    "Just turned thirty, and I've finally started buying things I actually like.",
    "Dispatching trucks all day, I have a headset glued to my ear.",
    "Renovating an old bungalow has turned me into a regular online shopper.",
    "With the kids grown, I've taken up pottery, tennis and far too many other hobbies.",
    "Emergency medicine leaves me with little time off, and I guard it fiercely.",
    "Chronic migraines mean I try to keep screen time short.",
    "Here for a year as an exchange student, I'm still figuring out how everything works.",
    "Three generations live under my roof, so someone always needs something.",
    "I build websites for local businesses from a co-working space downtown.",
    "My dad taught me to keep every receipt, and I still have a shoebox full of them.",
    "Marathon training makes me hard on shoes, gear and my own patience.",
    "Research trips on boats keep me at sea for weeks; marine biology is not a desk job.",
    "Music teacher, proud owner of a very old and very loud cat.",
    "Nights I stock shelves at a supermarket, so I sleep through most of the day.",
    "Newly married, I'm trying to merge two households' worth of stuff into one small place.",
    "My apartment sits above a laundromat and always smells faintly of soap.",
    "Living on a fixed pension, I think carefully before spending anything.",
    "I'm a tattoo artist with a shop on the busiest street in town.",
    "Dyslexia makes long messages slow going for me.",
    "A keen home cook, I own more kitchen gadgets than I have cupboard space for.",
    "Insurance adjusting has me driving all over the county every week.",
    "Shopping is not my favorite pastime, and I like to get it over with.",
    "I'm a nanny for two families and carry half my life around in a tote bag.",
    "Recently retired from the navy, I'm settling into a quiet life far from the coast.",
    "There's usually a litter of foster kittens somewhere in my house.",
    "Competitive gaming is my passion, and I care a great deal about my setup.",
    "Raised on a dairy farm, I still wake at dawn even though I live in the city now.",
    "As office manager at a dental practice, I order supplies all day long.",
    "I share an apartment with my brother and split almost everything with him.",
    "Being deaf, I find chat far easier than any phone call.",
    "Lab safety rules keep my phone in a locker for most of my working day.",
    "Back in school at forty-five, I'm training to become a nurse.",
    "Good equipment for my hobbies is the one thing I really splurge on.",
    "Night-shift security at the art museum gives me long, quiet hours.",
    "My daughter is getting married in the fall, and I'm helping with everything.",
    "A freelance illustrator, I work in pajamas and hate wasting a good morning.",
    "Stationed on a base far from my family, I shop online for them and for myself.",
    "Growing up with six siblings taught me to buy everything in bulk.",
    "Coaching college rowing means early mornings on the river, all year round.",
    "Plants fill every corner of my apartment, along with one very judgmental parrot.",
    "My son is blind, so I pay close attention to how easy things are to use.",
    "Translating legal documents has made precision a habit for me.",
    "After twenty years away, I've moved back to the town I grew up in.",
    "Construction work keeps me outdoors from early morning until dusk.",
    "Stand-up comedy is my dream; selling cars at a dealership is my day job.",
    "My elderly neighbor asks me to order things for her, and I'm happy to help.",
    "Retired schoolteacher, still correcting everyone's grammar in my head.",
    "Zookeeping is my job, and my clothes always smell faintly of hay.",
    "Tax season at the accounting firm has me at my desk late most nights.",
    "Last year I started my own cleaning business, and I still do everything myself.",
    "Night owl by nature, I do my best thinking well after midnight.",
    "Saving for a house with my partner means every purchase gets a second look.",
    "Loyal to this store for years, I rarely have a complaint.",
    "Coaching the high school robotics team keeps me elbow-deep in some project or other.",
    "Social anxiety makes phone calls hard, so I stick to chat whenever I can.",
    "Flying cargo planes on long routes, I'm rarely in one place for long.",
    "Architecture school has me up at night building models out of cardboard.",
    "On weekends I look after my grandmother and keep her house stocked.",
    "My glassblowing studio is sweltering all summer, and I spend long days in it.",
    "Delivering rural mail, I know every dirt road in the county.",
    "Four moves in five years have made me an expert at packing boxes.",
    "An apprentice baker, I find flour in places flour should never be.",
    "Horses are my life; I muck out stalls before work and ride after it.",
    "The sudden quiet of an empty nest has me redecorating every room.",
    "Physical therapy is my profession, so I notice posture everywhere, including my own.",
    "Rideshare driving pays the bills while I finish my degree online.",
    "I grew up in Lima and still call my mother every Sunday, usually while shopping.",
    "Birthdays in my family are a big production, and I'm usually the one organizing them.",
)

SITUATIONS: dict[str, tuple[Situation, ...]] = {
    "cancel_order": (
        Situation("I've had a change of heart about that order and would rather it never left the "
                  "warehouse."),
        Situation("I'd rather stop that order now than deal with sending packages back later."),
        Situation("Now that I look at that order again with fresh eyes, it just isn't right for "
                  "me."),
        Situation("I slept on it and decided that order shouldn't go ahead."),
        Situation("Catching the order before it ships seems kinder to everyone than a return."),
        Situation("The move I placed that order for has fallen through, so none of it is needed "
                  "now.", (("reason", "no longer needed"),)),
        Situation("The friend I was shopping for has already been given the same things by "
                  "someone else.", (("reason", "no longer needed"),)),
        Situation("The trip I ordered for was called off when my father got sick.",
                  (("reason", "no longer needed"),)),
        Situation("A yard sale down the street turned up everything I needed for next to nothing.",
                  (("reason", "no longer needed"),)),
        Situation("Money is tighter this month than I planned, and I can live without that order.",
                  (("reason", "no longer needed"),)),
        Situation("After I placed it, my neighbor offered to lend me what I needed, which makes the "
                  "order pointless.", (("reason", "no longer needed"),)),
        Situation("I've decided that money is better spent on my son's school trip.",
                  (("reason", "no longer needed"),)),
        Situation("My summer plans changed completely, and that order doesn't fit into them "
                  "anymore.", (("reason", "no longer needed"),)),
        Situation("The party I was shopping for has been postponed with no new date in sight.",
                  (("reason", "no longer needed"),)),
        Situation("My toddler got hold of my phone while the store app was open.",
                  (("reason", "ordered by mistake"),)),
        Situation("I meant to save my cart for later and tapped the buy button instead.",
                  (("reason", "ordered by mistake"),)),
        Situation("Half asleep late at night, I placed an order I barely remember making.",
                  (("reason", "ordered by mistake"),)),
        Situation("My teenager used my account without asking, and I only found out from the "
                  "confirmation email.", (("reason", "ordered by mistake"),)),
        Situation("I thought I was still comparing options when the order went through.",
                  (("reason", "ordered by mistake"),)),
        Situation("That cart was a wish list I was keeping for my birthday, and I checked it out "
                  "by accident.", (("reason", "ordered by mistake"),)),
        Situation("My cat strolled across the keyboard at exactly the wrong moment.",
                  (("reason", "ordered by mistake"),)),
        Situation("I was only testing whether a coupon code worked and didn't realize the purchase "
                  "had gone through.", (("reason", "ordered by mistake"),)),
    ),
    "cancel_refused": (
        Situation("I've changed my mind about that order and hope it isn't too late to stop it."),
        Situation("A shop near my office sells the same things, and I'd rather pick them up there."),
        Situation("My sister already bought me what was in that order as a surprise."),
        Situation("I placed that order in a rush before a trip that has since been called off."),
        Situation("Seeing the order confirmation again, I realized I'd picked the wrong things."),
        Situation("The project I ordered those supplies for was cancelled at work this week."),
        Situation("My landlord told me I can't use what I bought in the apartment."),
        Situation("A colleague is giving away the very same things, so that order is wasted money."),
        Situation("I ordered it for a hobby I've since given up on."),
        Situation("Reviews I read afterwards put me off the whole order."),
        Situation("My budget took a hit from a car repair, and that order has to go."),
        Situation("I only placed the order to reach free shipping and regret it now."),
        Situation("My partner and I both ordered the same things without telling each other."),
        Situation("It was an impulse buy after a long day, and I've had second thoughts ever since."),
    ),
    "modify_address": (
        Situation("I'll be at my parents' place for a few weeks, and I'd like the order to meet me "
                  "there."),
        Situation("My building's mailroom has lost packages before, so I'd rather it went "
                  "somewhere safer."),
        Situation("At checkout I picked an old address from my saved list without noticing."),
        Situation("While my place is being renovated, I'm sleeping on a friend's sofa."),
        Situation("Going over the confirmation, I realized I'd mistyped the address."),
        Situation("Sending it straight to where it's needed would save me a trip to the post "
                  "office."),
        Situation("Nobody is home during the day where it's headed, and I don't want it left on "
                  "the step."),
        Situation("My office has a front desk that signs for deliveries, which beats my porch."),
        Situation("I'm moving before it's likely to arrive, and the new place is where I'll "
                  "actually be."),
        Situation("Porch thieves have been busy on my street lately."),
        Situation("Couriers never seem to find my house, and a different address has always "
                  "worked better."),
        Situation("I'll be house-sitting for my brother for most of the month."),
        Situation("My landlord is replacing the front entrance, and deliveries to my building are "
                  "chaos right now."),
        Situation("The checkout filled in an address automatically, and I didn't catch it until "
                  "afterwards."),
        Situation("I'm staying at a rental for a long stretch and want the order waiting for me "
                  "when I get there."),
        Situation("Road works have closed off my street, and drivers have been turning back."),
        Situation("My daughter is spending the term with her aunt, and the order is really for "
                  "her."),
    ),
    "modify_payment": (
        Situation("I paid with the wrong method at checkout and only noticed on the confirmation "
                  "email."),
        Situation("I keep personal purchases apart from household ones, and this order landed on "
                  "the wrong side."),
        Situation("The method on that order is one I'm trying to stop using."),
        Situation("My budgeting app tracks spending by payment method, and this order would throw "
                  "it off."),
        Situation("A rewards offer I just read about makes a different method the smarter choice "
                  "for this."),
        Situation("I'm winding down one of my accounts and don't want this order tied to it."),
        Situation("After a talk with my partner, I agreed this one comes out of my own money."),
        Situation("I'd like to spread my spending around this month so nothing gets too high."),
        Situation("Checkout used my default method without asking, and it's not the one I meant."),
        Situation("After a chat with my accountant, I'm rethinking how I pay for things."),
        Situation("That payment method has been giving me trouble lately, and I'd rather avoid it."),
        Situation("My statement is easier to keep tidy if this order is paid some other way."),
        Situation("I went with a method my daughter suggested, and I've since changed my mind."),
        Situation("I keep all my online shopping on PayPal so I can see it in one place.",
                  (("payment", "my PayPal account"),)),
        Situation("Paying through PayPal feels safer to me when I buy things online.",
                  (("payment", "my PayPal account"),)),
        Situation("I forgot my PayPal account was linked until after I'd already checked out.",
                  (("payment", "my PayPal account"),)),
        Situation("A gift card from my coworkers has been sitting unused, and this order is a "
                  "good excuse to spend it.", (("payment", "my gift card"),)),
        Situation("I'd rather use up the balance on my gift card than put this on anything else.",
                  (("payment", "my gift card"),)),
    ),
    "modify_items": (
        Situation("Not long after ordering {items}, I started having second thoughts about the "
                  "{option_name} I chose."),
        Situation("I picked the {option_name} for {items} in a hurry, and it's been nagging at me "
                  "ever since."),
        Situation("My partner saw what I'd ordered and talked me into a different {option_name}."),
        Situation("Reading more reviews of {items} made me rethink the {option_name}."),
        Situation("A friend owns {items} in the {option_name} I picked and isn't thrilled with "
                  "that choice."),
        Situation("I chose the {option_name} while squinting at a tiny phone screen, and I'm no "
                  "longer so sure."),
        Situation("Since nothing has shipped yet, now seems the easiest time to fix the "
                  "{option_name} of {items}."),
        Situation("The {option_name} I went with made sense at midnight and much less sense in "
                  "the morning."),
        Situation("I'd rather get the {option_name} right now than go through an exchange later."),
        Situation("My sister pointed out that the {option_name} I chose for {items} won't suit "
                  "the way I'll use it."),
        Situation("It's meant as a present, and I just learned the person would prefer another "
                  "{option_name}."),
        Situation("I ordered {items} before checking what I already have at home, and the "
                  "{option_name} I picked doesn't go with any of it."),
        Situation("My yoga teacher had a suggestion about {items} when I mentioned what I'd "
                  "ordered.", (("items", "the Yoga Mat"),)),
        Situation("I'll be sitting in {items} for hours every workday, so I want it right from "
                  "the start.", (("items", "the Office Chair"),)),
        Situation("A coach at my running club looked at what I'd ordered and suggested a change.",
                  (("items", "the Running Shoes"),)),
        Situation("The backpack is for my son's first year of middle school, and he has strong "
                  "opinions.", (("items", "the Backpack"),)),
        Situation("My hand is on {items} all day at work, and on reflection the version I picked "
                  "isn't quite right.", (("items", "the Wireless Mouse"),)),
        Situation("The laptop stand has to match the rest of my desk setup, and I doubt the "
                  "version I picked will.", (("items", "the Laptop Stand"),)),
        Situation("Almost everything I own is black, and I should have stuck with that.",
                  (("option", "color black"),)),
    ),
    "exchange_items": (
        Situation("Now that I have {items} in my hands, the {option_name} isn't what I'd pictured."),
        Situation("I'm happy with {items} apart from the {option_name}, which just doesn't work "
                  "for me."),
        Situation("The product page gave me the wrong idea about the {option_name}, and what "
                  "arrived isn't what I expected."),
        Situation("Someone gave me {items} as a present, and I'd like a different {option_name} "
                  "without hurting any feelings."),
        Situation("A few days of living with {items} convinced me the {option_name} I picked was "
                  "a mistake."),
        Situation("My wife kept saying the {option_name} was the wrong call, and I've come around "
                  "to agreeing."),
        Situation("I'd much rather swap than send it back, because otherwise I'm really pleased "
                  "with {items}."),
        Situation("Choosing the {option_name} online was guesswork, and I guessed wrong."),
        Situation("I ordered in a rush before a trip and didn't think hard about the "
                  "{option_name}."),
        Situation("A friend has the same thing with a different {option_name}, and after trying "
                  "hers I'm convinced."),
        Situation("My teenager rolled her eyes at the {option_name} I chose, and honestly she has "
                  "a point."),
        Situation("The {option_name} of {items} doesn't suit the spot I had in mind for it."),
        Situation("Holding {items} in person, I could tell straight away that another "
                  "{option_name} would suit me better."),
        Situation("The lamp sits where I read every night, and the version that came isn't "
                  "quite right for that spot.", (("items", "the Desk Lamp"),)),
        Situation("My laptop and lunch ride in this backpack every day, so the details matter to "
                  "me.", (("items", "the Backpack"),)),
        Situation("Rainy season is almost here, and I want a jacket I'll be glad to put on.",
                  (("items", "the Rain Jacket"),)),
        Situation("I've planned a camping trip with my nephews, and the tent that came isn't the "
                  "one I'd want to bring.", (("items", "the Tent"),)),
        Situation("Headphones stay on my head through long shifts, so I'd like the pair I really "
                  "want.", (("items", "the Headphones"),)),
        Situation("That water bottle goes everywhere with me, so it ought to be exactly right.",
                  (("items", "the Water Bottle"),)),
        Situation("The speaker is meant for backyard get-togethers, and I'd like the version "
                  "that suits them.", (("items", "the Bluetooth Speaker"),)),
        Situation("Black goes with everything in my home, and I wish I'd picked it in the first "
                  "place.", (("option", "color black"),)),
    ),
    "return_items": (
        Situation("I bought {items} on impulse and regretted it before the box was even open."),
        Situation("Once I had {items} at home, I realized I'd never get much use out of the "
                  "purchase."),
        Situation("The quality of {items} isn't what I expected for the price."),
        Situation("I ordered {items} for a trip that ended up being cancelled."),
        Situation("I simply have nowhere to put {items} in my cramped apartment."),
        Situation("I bought {items} for my mother, and it turns out she'd already picked up "
                  "something similar."),
        Situation("My hours at work were cut, and I'd rather have the money than {items}."),
        Situation("Looking at {items} next to the photos on the site, I feel a bit misled."),
        Situation("My roommate already had {items}, so mine would just be duplicates."),
        Situation("I ordered {items} while redecorating, and the new look went in a different "
                  "direction."),
        Situation("I got {items} to thank a friend for her help, and then she moved abroad."),
        Situation("Honestly, I just don't like {items} as much as I thought I would."),
        Situation("A flash sale swept me up, and I bought {items} without thinking it through."),
        Situation("Keeping things I don't use makes me feel guilty, and {items} would be one more "
                  "of those."),
        Situation("My family teased me for buying {items}, and the more I look, the more they "
                  "have a point."),
        Situation("Soon after ordering {items}, I moved somewhere dry, and I doubt I'll ever wear "
                  "it.", (("items", "the Rain Jacket"),)),
        Situation("The camping trip I bought {items} for fell apart when most of the group "
                  "dropped out.", (("items", "the Tent"),)),
        Situation("My office already has great light, so {items} has been sitting in its box.",
                  (("items", "the Desk Lamp"),)),
        Situation("My son decided he'd rather use his brother's old backpack, so the new one has "
                  "no job.", (("items", "the Backpack"),)),
        Situation("My new job handed me a pair of headphones on the first day, so the ones I "
                  "ordered are surplus.", (("items", "the Headphones"),)),
        Situation("I got the new pillow home, and it looks all wrong on my couch.",
                  (("items", "the Throw Pillow"),)),
        Situation("My new desk came with a built-in shelf for the laptop, so the stand is "
                  "redundant.", (("items", "the Laptop Stand"),)),
        Situation("The sunglasses sit awkwardly on my nose, and I'd rather not keep them.",
                  (("items", "the Sunglasses"),)),
        Situation("After I hurt my foot, a physical therapist told me to try a completely different "
                  "kind of shoe.", (("items", "the Running Shoes"),)),
        Situation("A blender was already among my wedding presents, so this one just takes up "
                  "counter space.", (("items", "the Blender"),)),
    ),
    "update_profile_address": (
        Situation("I've just moved across town, and future packages need to find me at the new "
                  "place."),
        Situation("Every order I place still defaults to my old address, which keeps tripping me "
                  "up."),
        Situation("A package nearly went to my old apartment last time because the account still "
                  "had it."),
        Situation("After the divorce, I've settled into a place of my own."),
        Situation("I bought my first house and I'm still getting used to writing the new address."),
        Situation("My landlord sold the building, and I had to find a new apartment in a hurry."),
        Situation("The new tenants at my old place forward things kindly, but I don't want to "
                  "lean on them forever."),
        Situation("I moved in with my girlfriend, and it's time the account caught up."),
        Situation("Now that I've retired, I've downsized to a smaller place near my grandchildren."),
        Situation("A job transfer sent me to a different city."),
        Situation("Before I order anything else, I want the account to show where I actually "
                  "live."),
        Situation("My old place flooded in the spring, and I've moved out for good."),
        Situation("To save money, I've moved back in with my parents for a while."),
        Situation("Somehow the account lists an address I haven't lived at in years."),
        Situation("Correcting the address by hand at every checkout is getting old."),
        Situation("My campus housing changed for the new school year, and the account still shows "
                  "the old dorm."),
        Situation("After years of renting, I've finally closed on a condo."),
    ),
    "order_status": (
        Situation("My neighbor takes in packages while I'm at work, and I'd like to know whether to "
                  "give her a heads-up."),
        Situation("I'm heading out of town soon and want to know what to expect while I'm away."),
        Situation("The tracking page in the app keeps showing an error, so I can't see anything "
                  "there."),
        Situation("That order is tied up with a birthday I'm planning, so I like to keep an eye "
                  "on it."),
        Situation("I've lost track of what I ordered lately and what has already turned up."),
        Situation("I'm mostly just curious, since I like knowing where things stand."),
        Situation("My husband asked about that order this morning, and I didn't have an answer."),
        Situation("I'm planning my week and want to know whether to stay home for a delivery."),
        Situation("The confirmation email went to my spam folder, and I'm not sure what happened "
                  "after that."),
        Situation("Not knowing where an order stands bugs me more than it probably should."),
        Situation("The concierge in my building changed recently, and I'm not sure packages are "
                  "being logged."),
        Situation("Before I order anything else, I want to know where that one is at."),
        Situation("I placed that order on behalf of a friend and promised to keep her posted."),
        Situation("I'm deciding whether to pick up something similar at a local shop in the "
                  "meantime."),
        Situation("Honestly, I can't remember what's happened with that order."),
        Situation("Email notifications stopped reaching me a while back, so I'm checking "
                  "directly."),
        Situation("I'm tidying up my records and want to note down where each order stands."),
    ),
    "product_price": (
        Situation("My brother's birthday is coming up, and the {product} might be just the thing "
                  "for him."),
        Situation("The {product} with {option} has been sitting in my wish list for weeks, and I "
                  "wonder if now is the time."),
        Situation("A friend recommended the {product}, and I'm curious whether it's worth it."),
        Situation("Payday is a few days off, and I want to know what the {product} would set me "
                  "back."),
        Situation("I'm comparing the {product} against one I saw at a shop downtown."),
        Situation("The site keeps loading slowly for me, so asking about the {product} here is "
                  "easier."),
        Situation("The {product} with {option} is on the shortlist for my wedding registry."),
        Situation("My old one finally gave out, and I'm thinking of replacing it with the "
                  "{product}."),
        Situation("I'm furnishing a new apartment on a budget and want to see where the {product} "
                  "fits in."),
        Situation("The {product} caught my eye in an ad, specifically the version with {option}."),
        Situation("Colleagues are chipping in for a farewell gift, and I volunteered to look into "
                  "the {product}."),
        Situation("I'm not buying today, just doing my homework on the {product} before the "
                  "holidays."),
        Situation("A coworker swears by the {product}, and the version with {option} is the one "
                  "I'd want."),
        Situation("My partner handles the budget, and I'd like the price of the {product} before I "
                  "bring it up."),
        Situation("I saw the {product} on a friend's shelf and haven't stopped thinking about it."),
        Situation("My mother dropped a hint that the {product} would make a lovely retirement "
                  "present."),
        Situation("A review video sold me on the {product}, and {option} is the combination I'm "
                  "after."),
    ),
}

CONSTRAINTS = (
    "I'm squeezing this in on my lunch break, so quicker is better.",
    "I'd rather not have to come back about this later.",
    "I'm typing with one thumb while holding a bag of groceries.",
    "Plain language works best for me; retail jargon goes over my head.",
    "I tend to ask a lot of questions before I agree to anything.",
    "I'm in a doctor's waiting room and could be called in at any moment.",
    "A short recap at the end would help me keep track.",
    "Being hurried into decisions is something I really dislike.",
    "My spelling is shaky, so there may be typos.",
    "It's been a long day and my patience is running low.",
    "I'd like to hear exactly what will change before anything is done.",
    "Short replies suit me; long paragraphs make my eyes glaze over.",
    "I'm on a bumpy bus ride, so my messages may come out garbled.",
    "I'd like to keep this friendly and simple.",
    "Online shopping still makes me a little unsure, so I may ask things twice.",
    "One thing at a time is how I like to handle things.",
    "The kids are watching cartoons, and I have until the episode ends.",
    "Too much information at once gets me flustered.",
    "Sarcasm creeps in when I'm annoyed, though I don't mean anything by it.",
    "I'm on a work computer and would rather keep this short.",
    "Knowing what happens next, once everything is done, would put my mind at rest.",
    "Cautious by nature, I like to confirm details before saying yes.",
    "My phone screen is cracked, so reading long messages is a pain.",
    "I'm in a good mood today and in no particular rush.",
    "I tend to overshare, so my messages may wander off topic.",
    "Slow support has burned me before, and I'm a little wary.",
    "I'd like everything sorted in this one chat if possible.",
    "It's past midnight here and I'm fading fast.",
    "Being hard of hearing is why I always choose chat.",
    "English is my third language, so simple wording helps.",
    "I have to leave for an appointment soon and want this wrapped up before then.",
    "I write everything down, so I may ask for something to be repeated.",
    "A polite, businesslike tone suits me better than chattiness.",
    "Emojis and exclamation marks in a reply make me trust it less.",
    "I'm standing in line at the pharmacy while I do this.",
    "Long strings of letters and numbers confuse me easily.",
    "If there's any catch, I'd like to hear about it before agreeing.",
    "My patience holds up fine as long as I'm kept in the loop.",
    "I get nervous about clicking the wrong thing, so I go slowly.",
    "I'm at a café with spotty wifi.",
    "Explaining my reasons more than once is something I'd rather avoid.",
    "Clear yes-or-no answers are my favorite kind.",
    "My shift starts soon, and I'd like to be done before then.",
    "The house is noisy, and I'm only half paying attention.",
    "A headache has me wanting things kept simple.",
    "Easygoing as I am, repeated questions wear me down.",
    "Sales pitches for other products are not what I'm here for.",
    "I'd like the conversation to stay on what I came here for.",
    "A careful reader, I'll notice if something doesn't add up.",
    "My laptop battery is almost gone.",
    "I'm walking the dog and typing at the same time.",
    "I'm in a hurry, but I still want things done right.",
    "Double-checking everything afterward is a habit of mine.",
    "My hands are shaky these days, so typing takes me a while.",
    "Having just woken up, I'm not fully with it yet.",
    "Nerves make me chatty.",
    "Hearing what's going on at each step keeps me calm.",
    "Technical terms lose me quickly.",
    "Between meetings, I may disappear for a minute or two.",
    "A quick confirmation of what's been done would let me log off with peace of mind.",
    "Politeness matters to me, and I try to return it.",
    "I'm doing this on my tablet in bed, so I'm in no state to rush.",
)

FALLBACKS: dict[str, tuple[str, ...]] = {
    "cancel_order": (
        "If the order can't be cancelled, sending it back once it arrives would be fine.",
        "Should cancelling be off the table, I'd at least like to know why.",
        "If it's too late to stop, I can live with that and find a use for everything.",
        "Keeping the order is something I can accept if there's truly no way to cancel it.",
        "If a cancellation isn't possible, hearing what my options are would be enough.",
        "I'd make do with a return after delivery if the cancellation doesn't go through.",
        "Waiting for it to arrive and dealing with it then is acceptable if it can't be stopped.",
    ),
    "cancel_refused": (
        "If it's too late to cancel, I'd at least like to know why.",
        "Should the cancellation not be possible, I can live with keeping the order.",
        "If nothing can be done right now, a clear explanation is all I need.",
        "If the order can't be stopped, I'll deal with it once it's with me.",
        "Keeping the order is fine if the rules really don't allow a cancellation.",
        "If cancelling is off the table, hearing what my options are would be enough.",
    ),
    "modify_address": (
        "If the address can't be changed, I'll arrange for someone to be at the original one.",
        "Should the change not be possible, collecting the package from the first address myself "
        "would be fine.",
        "If it's too late to reroute, I'd like to at least know what my options are.",
        "A neighbor at the current address could hold it for me if the change can't be made.",
        "If the address can't be updated, I'll live with it going where it's headed.",
        "Should a change be out of the question, a clear explanation would be enough for me.",
        "Cancelling and ordering again later would be an acceptable last resort if the address "
        "can't change.",
    ),
    "modify_payment": (
        "If the payment can't be switched, I'll leave it on the current method.",
        "Should the change not go through, I'd just like to know what stood in the way.",
        "Keeping the original method is fine with me if switching isn't allowed.",
        "If it can't be changed now, I'll sort out the money on my side.",
        "A simple no with the reason would be fine if the switch is impossible.",
        "If changing the method is a problem, leaving the order as it is works too.",
    ),
    "modify_items": (
        "If the {option_name} can't be changed before shipping, I'll exchange {items} after it "
        "arrives.",
        "Should that {option_name} be unavailable, I'd keep {items} as ordered.",
        "If the change can't be made, I'd be happy to hear what other choices there are.",
        "Keeping {items} as ordered would be acceptable if switching isn't possible.",
        "If it's too late to change anything, I'll deal with it once the package arrives.",
        "Another {option_name} that's in stock would also make me happy if my first choice is "
        "out.",
        "If the order can't be touched, I'll simply live with the {option_name} I chose.",
    ),
    "exchange_items": (
        "If the exchange can't happen, a return for {items} would be fine too.",
        "Should the {option_name} I want be out of stock, I'd consider a different one.",
        "If swapping isn't possible, I'll keep {items} and make it work.",
        "A refund instead would be acceptable if {items} can't be exchanged.",
        "If an exchange isn't allowed, a clear reason would be enough for me.",
        "Should the exchange fall through, I'll hang on to {items} and pass it on to a friend.",
        "Waiting a while for the right {option_name} is acceptable if the exchange can't go "
        "through today.",
    ),
    "return_items": (
        "If {items} can't be returned, I'd settle for an exchange instead.",
        "Store credit would be fine if a regular refund can't happen.",
        "If a return isn't allowed, I'll keep {items} and find someone who can use the purchase.",
        "Should a return be impossible, I'd at least like to know the reason.",
        "Selling {items} secondhand is my backup if the store can't take the purchase back.",
        "If the return window has closed, I'll accept that and move on.",
        "A refund onto a gift card would be acceptable if the original payment can't be refunded.",
    ),
    "update_profile_address": (
        "If the address can't be saved now, I'll type it in at checkout for the time being.",
        "Should the update fail, I'll double-check the address and come back.",
        "If the profile can't be changed here, updating it on the website later would be fine.",
        "Mail forwarding from my old place can cover me for a while if the change won't go "
        "through.",
        "If something is wrong with the new address, I'd like to hear what so I can fix it.",
        "Waiting a day or two is fine if the change can't be made today.",
    ),
}

SCENARIO = ScenarioSpec(backgrounds=BACKGROUNDS, situations=SITUATIONS, constraints=CONSTRAINTS,
                        fallbacks=FALLBACKS)
