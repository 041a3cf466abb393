"""What banking customers bring with them: a hand-written bank of backgrounds, per-intent
situations, constraints and fallbacks, written for trajforge by hand, in the customer's own
words, so a blueprint's goal reads as a person with reasons rather than a list of requests.
"""

from __future__ import annotations

from trajforge.environments.tasks import ScenarioSpec, Situation

BACKGROUNDS = (
    "I drive a delivery van six days a week and do my banking from the cab during breaks.",
    "Retired after forty years as a postal clerk, I still keep a paper ledger of every cent.",
    "My wife and I are expecting twins in the spring, and money has become a constant topic "
    "at dinner.",
    "I teach middle school science and grade lab reports late into the night.",
    "Since my divorce, I've been handling the household finances alone for the first time.",
    "I run a taco truck near the university, so my income swings from week to week.",
    "Nursing school keeps me busy, and I work weekends at a pharmacy counter to pay for it.",
    "My mother moved in with me after her fall, and I've taken over paying some of her bills.",
    "I restore vintage motorcycles in my garage and spend far too much on parts.",
    "Banking apps confuse me, so my grandson usually sets things up when he visits.",
    "Freelance translation pays my rent, with clients scattered across several time zones.",
    "I moved here from Lagos two years ago and I'm still learning how banks work in this "
    "country.",
    "Weekends find me at the animal shelter, and I foster kittens whenever there's room.",
    "As a paramedic on rotating shifts, I'm often awake when everyone else is asleep.",
    "My partner and I just bought a drafty old house with a roof that leaks in three places.",
    "Testing software for a living means I notice when numbers don't add up.",
    "Single dad of three here, and I plan every grocery trip down to the last coupon.",
    "I play cello in a community orchestra and teach a handful of private students.",
    "Saving for a wedding next summer has turned me into a hawk about every account.",
    "I farm soybeans with my brother, and the harvest money arrives all at once.",
    "After a heart scare this winter, I'm trying to simplify everything, finances included.",
    "I'm an architect working from home with a very loud parrot for company.",
    "Coaching high school wrestling takes my evenings, and I drive a school bus in the mornings.",
    "Money talk makes me anxious, so I tend to put off conversations like this one.",
    "My alarm goes off before dawn because I'm the pastry chef at a busy bakery.",
    "This is my first real job out of college, and I opened this account for my paychecks.",
    "I care for my husband, who has early dementia, and all the paperwork falls to me now.",
    "Handmade pottery is my trade, and I sell it at craft fairs around the state.",
    "Long-haul trucking keeps me on the road, rarely home more than a few nights a month.",
    "My teenage daughter just landed her first job, and I'm teaching her how to budget.",
    "Nights I guard the parking garage at a hospital, so I run errands at dawn.",
    "A broken ankle has me stuck on the couch for the next few weeks.",
    "Working in insurance claims has taught me to read every clause twice.",
    "I split my time between a city apartment and a lakeside cabin with patchy internet.",
    "Grad school in marine biology means a tiny stipend and a lot of instant noodles.",
    "The hardware store my grandfather opened is mine to manage now.",
    "Widowed at seventy, I'm still getting the hang of doing things online.",
    "A decade behind the bar means most of my income arrives as tips.",
    "My husband took a job overseas, and the money side of things is suddenly all on me.",
    "Teaching yoga at three different studios keeps me zigzagging across town.",
    "It's tax season and I'm an accountant, so my patience is wearing thin.",
    "Birdwatching is my great love, and most weekends I'm out on the marshes with binoculars.",
    "Selling houses keeps me in the car between showings for most of the day.",
    "Having grown up without much, I'm careful with money and check my balances daily.",
    "My shifts at the fire station run a full day and night at a stretch.",
    "My sister and I co-own a flower shop, and I handle the ordering and the books.",
    "At home with a toddler who grabs my phone whenever I look away, I do everything in "
    "stolen minutes.",
    "Writing a dissertation on medieval trade routes, I mostly live on coffee and deadlines.",
    "Partially sighted, I use a screen reader, so long messages take me a while.",
    "I fix cars at a small garage and have very little patience for paperwork.",
    "A job at a wind farm brought me out to the plains last autumn.",
    "This bank has had my business since I opened a savings account as a kid.",
    "Wedding photography is my living, and summer is by far my busiest season.",
    "The dog-walking business I started last spring is finally taking off.",
    "Being in the army reserve, I get called away for training every so often.",
    "Long weekend shifts at the pharmacy leave me wiped out by Monday.",
    "Rec league hockey is my escape, and I spend too much on gear.",
    "Out of work for a few months now, I'm watching every expense closely.",
    "Librarian by trade, I like things organized, labeled and in their place.",
    "After school I tutor kids in math, and on Saturdays I run a small chess club.",
    "My elderly father lives with me, and I keep track of all his medical appointments.",
    "Commercial fishing keeps me offshore for days, usually with a weak signal.",
    "I cut hair and rent a chair at a salon downtown.",
    "Back from a month of backpacking, I'm catching up on all the admin I put off.",
    "Social work leaves me with a heavy caseload and hardly any free time.",
    "To help cover the mortgage, I rent out a spare room to a student.",
    "I analyze data for a living and trust spreadsheets more than people.",
    "I came over from Ukraine and clean offices while I requalify as a dentist.",
    "With twins starting college, tuition is eating through everything I put away.",
    "Driving a city bus on the same route for years, I know every pothole by heart.",
    "I'm a private person, and talking about money always feels a bit awkward.",
    "I build furniture from reclaimed barn wood and sell it online.",
    "Hospice nursing is meaningful work, but some weeks leave me emotionally drained.",
    "Back in my childhood bedroom, I'm living with my parents to save for a place of my own.",
    "An amateur astronomer, I stay up late and sleep in whenever I can.",
    "At my law firm every minute is billed, so I hate waiting around.",
    "In my eighties, I'm proud that I still manage my own banking.",
    "Working on cruise ships for months at a time, I handle my money from wherever the ship "
    "docks.",
    "Kindergarten teaching means loud days and glitter on everything I own.",
    "The plant just moved me to the night shift, and my sleep is all over the place.",
    "A weekend supper club out of my apartment is my side project and my passion.",
    "My girlfriend and I moved in together a month ago, and sharing bills has been a learning "
    "curve.",
    "Flying for a regional airline, I sleep in a different city most nights.",
    "I've just gone self-employed as an electrician after years on someone else's payroll.",
    "Besides playing the organ at church, I keep the books for the parish.",
    "College swimming takes up my mornings, and a partial scholarship covers some of the "
    "costs.",
    "After thirty years in the same town, I'm getting ready to retire by the coast.",
    "ADHD makes staying on top of paperwork a real effort for me.",
    "The tiny game studio I work for sometimes pays late.",
    "Midwifery keeps me on call more often than not.",
    "I keep bees and sell honey at the farmers market every Saturday.",
    "Driving for a couple of delivery apps is how I get by these days.",
    "Courtrooms are my office; I interpret for Spanish and Portuguese speakers.",
    "Chronic back pain means some days I can barely focus on anything.",
    "Becoming a grandmother has filled my weeks with babysitting.",
    "Landscaping is my business, so winter is lean and summer is frantic.",
    "I work in a call center myself, so I know how these chats usually go.",
    "Training for my first marathon, I think about little else.",
    "Studying abroad for a semester, I'm managing everything from the other side of the ocean.",
    "As a rural vet, I get called out to farms at all hours.",
    "My wife always handled the accounts, and since she passed I'm learning them one by one.",
    "Open mics fill my nights, and temp jobs cover the rent.",
    "I'm a union carpenter on a big hospital build downtown.",
    "Writing mystery novels keeps me at odd hours and slightly paranoid.",
    "Chess tournaments take me all over the region most weekends.",
    "Between my son's hospital visits, my schedule is a complete mess.",
    "Evenings I work the floor as a sommelier at a fancy restaurant.",
    "Dispatching trucks, I'm glued to my headset from morning till night.",
    "After retiring from the police, I now volunteer as a school crossing guard.",
    "I design costumes for a small theater company that's always over budget.",
    "Homeschooling four kids means quiet moments are rare in my house.",
    "A promotion to team lead at the lab has doubled my emails overnight.",
    "Pulling espresso shots pays for my art classes.",
    "Winters I work at a ski resort, and summers on a fishing boat.",
    "My commute to the dental office where I clean teeth is an hour each way by train.",
    "My credit took a beating in my twenties, and I'm working hard to rebuild it.",
    "A long hospital stay put my whole life on pause, and I'm only now catching up.",
    "I run a small charity that collects winter coats for kids.",
    "Fixing elevators means I spend half my day in shafts with no signal at all.",
    "Rainy days are when I catch up on errands, since roofing is out of the question.",
    "Local campaigns take up the time I'm not studying political science.",
    "Adopting a retired greyhound has changed my whole routine.",
    "Interpreting sign language at conferences takes me from city to city.",
    "Dealing with complaints at a hotel front desk all day has made me a patient person.",
    "My research contract ends soon, and I have no idea where I'll be living next.",
    "Welding at the shipyard leaves my hands too grimy to touch a phone until evening.",
    "The kitchen is torn apart for a renovation, and everything I own smells of paint.",
    "Technology doesn't scare me, and I usually sort problems out on my own.",
    "Knitting scarves for the whole family keeps this grandfather busy.",
    "Just back ashore after a long contract as a marine engineer, I'm sorting out my affairs.",
    "The factory let me go in the spring, and I've been picking up temp work since.",
    "A retired bookkeeper and crossword fanatic, I notice every figure.",
    "At forty-three and single, I just bought a condo entirely on my own.",
    "Moving between foster placements as a teenager taught me to guard every dollar.",
    "Organic vegetables from my market garden go to restaurants around town.",
)

SITUATIONS: dict[str, tuple[Situation, ...]] = {
    "account_balance": (
        Situation("My landlord wants the deposit for the new lease by the weekend, and I need to "
                  "know whether I can cover it."),
        Situation("I'm thinking of booking a trip for my parents' anniversary and want to see "
                  "what I have to work with."),
        Situation("My paycheck should have landed by now, and I'd like to check before I pay "
                  "anything else."),
        Situation("I've been trying a month with no spending on extras and I'm curious how "
                  "{account} is holding up."),
        Situation("A used car I've had my eye on just came up for sale, and I want to know if I "
                  "can afford it."),
        Situation("My nephew asked to borrow some money for textbooks, and I want to see what I "
                  "can spare."),
        Situation("Every Sunday evening I do a money check-in, and this week the app wouldn't "
                  "load."),
        Situation("A rental application I'm filling in asks roughly what I hold in {account}."),
        Situation("I'm meeting a financial planner tomorrow and want an up-to-date figure for "
                  "{account}."),
        Situation("My brother and I are splitting the cost of a new roof for Mom's house, and I "
                  "need to know what I can put in."),
        Situation("After a weekend away with friends I'm a little afraid to look, but I need to "
                  "know where I stand."),
        Situation("Before paying off a credit card in full, I want to be certain the money is "
                  "there."),
        Situation("Drawing up a budget for the coming year, I want to start from the real "
                  "number rather than a guess."),
        Situation("A bigger apartment has come up in my building, and I want a clear picture of "
                  "{account} first."),
        Situation("My statements stopped arriving by mail and I've lost track of where "
                  "{account} stands."),
    ),
    "transaction_lookup": (
        Situation("My accountant wants the full details of {charge} for my expense claims."),
        Situation("Balancing my checkbook the old-fashioned way, I can't match {charge} to "
                  "anything in my notes."),
        Situation("My roommate and I split costs, and I need the details of {charge} to settle "
                  "up with her properly."),
        Situation("Work reimburses some of my spending, and the expense report needs the "
                  "details of {charge}."),
        Situation("The receipt went through the wash, and I'd like the details of this purchase "
                  "on record anyway."),
        Situation("My spreadsheet of every purchase lost a few entries when my laptop crashed, "
                  "and {charge} is one of them."),
        Situation("I'm trying to work out whether {charge} has gone through yet or is still "
                  "hanging."),
        Situation("Someone in my house has been known to borrow my things, and I'd like the "
                  "facts about {charge} before I bring it up."),
        Situation("The mortgage lender wants me to account for a handful of purchases, and "
                  "{charge} is among them."),
        Situation("A bill I kept at home looks slightly different from {charge}, and I want to "
                  "compare the two."),
        Situation("My memory isn't what it used to be, so I like having the facts about any "
                  "purchase I'm unsure of."),
        Situation("Sorting out my taxes, I want a complete record of {charge} for my files."),
        Situation("A friend paid me back part of {charge} in cash, and I want to note down "
                  "exactly what the purchase was."),
        Situation("Something about {charge} caught my eye on the statement, and I want a closer "
                  "look before deciding anything."),
        Situation("My sister, who helps me keep an eye on my finances, asked me about {charge} "
                  "and I had no good answer."),
    ),
    "dispute_charge": (
        Situation("Something about {charge} is wrong, and I want it put right."),
        Situation("I tried sorting this out with the merchant first and got absolutely nowhere."),
        Situation("I read my statement line by line every week, and {charge} jumped out at me "
                  "straight away."),
        Situation("I'm not one to make a fuss, but this is money I can't afford to let go."),
        Situation("The merchant keeps promising to call me back about it, and the call never "
                  "comes."),
        Situation("I've never shopped at that merchant in my life, and nobody else uses my card.",
                  (("reason", "unrecognized charge"),)),
        Situation("I went through every receipt in my wallet and nothing matches {charge}.",
                  (("reason", "unrecognized charge"),)),
        Situation("I asked everyone in my household, and none of them knows anything about the "
                  "charge.",
                  (("reason", "unrecognized charge"),)),
        Situation("The name on the statement means nothing to me, and I can't think of any "
                  "purchase it might be.", (("reason", "unrecognized charge"),)),
        Situation("I suspect someone copied my card details, because I never made that "
                  "purchase.", (("reason", "unrecognized charge"),)),
        Situation("I paid once at the counter, yet the same purchase shows up on my account a "
                  "second time.", (("reason", "duplicate charge"),)),
        Situation("The card reader froze halfway through, so the cashier ran my card again, and "
                  "both attempts went through.", (("reason", "duplicate charge"),)),
        Situation("I placed one order and got billed for it twice over.",
                  (("reason", "duplicate charge"),)),
        Situation("Scrolling through my statement, I spotted {charge} sitting right beside an "
                  "identical one.", (("reason", "duplicate charge"),)),
        Situation("The price at the register was lower than what ended up coming out of my "
                  "account.", (("reason", "wrong amount"),)),
        Situation("I agreed on a price in advance, and what went through is more than that.",
                  (("reason", "wrong amount"),)),
        Situation("The total on my receipt doesn't match what was actually taken for {charge}.",
                  (("reason", "wrong amount"),)),
        Situation("A discount I was promised never made it onto the bill.",
                  (("reason", "wrong amount"),)),
        Situation("I paid for an order that never arrived, and the seller has stopped answering "
                  "messages.", (("reason", "item not received"),)),
        Situation("The tracking said it was delivered, but nothing ever turned up at my door.",
                  (("reason", "item not received"),)),
        Situation("I paid up front for something that was never handed over to me.",
                  (("reason", "item not received"),)),
        Situation("The shop took my money, then told me the thing I bought was out of stock, "
                  "and nothing came back to me.", (("reason", "item not received"),)),
    ),
    "dispute_refused": (
        Situation("I'm certain I never made that purchase, and I want my money back."),
        Situation("The merchant has stopped replying to my emails, so the bank is my last "
                  "option."),
        Situation("That amount doesn't match anything I agreed to pay."),
        Situation("I was charged for something I had already cancelled."),
        Situation("My sister spotted {charge} and is convinced neither she nor I made it."),
        Situation("Going through my finances line by line, I found that {charge} doesn't sit "
                  "right with me."),
        Situation("What I bought fell apart almost immediately, and the seller refuses to take "
                  "it back."),
        Situation("I feel taken advantage of, and I want to challenge {charge}."),
        Situation("I was billed for a subscription I thought I'd ended."),
        Situation("It looks as if someone may have copied my card details."),
        Situation("I paid for that purchase in cash, so it has no business being on my account."),
        Situation("Money is tight, and I can't afford to lose any of it to a mistake."),
        Situation("A coworker told me the bank can reverse charges like this, so I'm giving it "
                  "a try."),
        Situation("The service was never provided, and I have the messages to prove it."),
    ),
    "dispute_escalated": (
        Situation("This is a serious amount of money, and I can't just let it go."),
        Situation("A charge this size puts a real dent in my plans, and I want it challenged."),
        Situation("I have no idea who made this purchase, and it's far too large to shrug off."),
        Situation("The company promised a full refund, and it never came."),
        Situation("I cancelled well within the allowed time and was still charged in full."),
        Situation("I've argued with the merchant for days and got nowhere."),
        Situation("That kind of money is more than I can afford to lose."),
        Situation("I was charged for the whole package even though I only got part of it."),
        Situation("I'd been putting money aside for months, and a charge this big that I can't "
                  "explain frightens me."),
        Situation("Honestly, I'm furious that a charge like {charge} went through at all."),
        Situation("Given how much money is at stake, I want this handled properly."),
        Situation("I only agreed to a deposit, yet the full price came out in one go."),
        Situation("Someone must have got hold of my card, because this large purchase wasn't "
                  "me."),
        Situation("My hands were shaking when I saw {charge} on my statement."),
    ),
    "transfer_funds": (
        Situation("I like to keep a cushion in each account, and things have got lopsided."),
        Situation("A big bill comes out soon, and I want the money sitting where it will be "
                  "taken from."),
        Situation("I'm reorganizing my finances after reading a book on budgeting."),
        Situation("My paycheck landed in the wrong place, and I want to even things out."),
        Situation("At the start of every month I shuffle money around to keep my budget "
                  "straight."),
        Situation("I got a little carried away with spending lately and need to rebalance."),
        Situation("I've set money aside for a trip and want it in the right account before I "
                  "leave."),
        Situation("Doing this over chat is easier for me than fighting with the app."),
        Situation("My financial adviser suggested I shift some money between my accounts."),
        Situation("I sold my old car and want to put the money where it belongs."),
        Situation("Each of my accounts has its own purpose, and some money ended up in the "
                  "wrong one."),
        Situation("An automatic payment goes out soon, and I'd rather not be caught short."),
        Situation("My budgeting spreadsheet says my accounts are out of line with my plan."),
        Situation("A birthday gift of cash went into the account I don't normally use for it."),
    ),
    "pay_payee": (
        Situation("A bill is due soon, and I'd rather send the money today than risk "
                  "forgetting."),
        Situation("I've been meaning to pay this bill for ages and it keeps slipping my mind."),
        Situation("The payee is already saved on my profile, so this ought to be simple."),
        Situation("A reminder notice arrived in the mail, and I felt embarrassed about it."),
        Situation("I prefer to pay people straight from my account rather than by card."),
        Situation("Before I head out of town, I want all my outstanding bills settled."),
        Situation("The banking app on my phone keeps crashing whenever I try to send a "
                  "payment."),
        Situation("Writing checks is a hassle, and this is the easiest way for me to pay."),
        Situation("I always pay the same day an invoice arrives so it's off my mind."),
        Situation("The money is owed, and I like to pay what I owe on time."),
        Situation("I promised on the phone that I'd send the money today."),
        Situation("A late fee would really sting right now, so I want this sent off."),
        Situation("I'm tidying up my finances, and this payment is the last loose end."),
        Situation("The people I'm paying have always been good to me, and I don't want to keep "
                  "them waiting."),
    ),
    "freeze_card": (
        Situation("I want to stop anything from going through on this card for now."),
        Situation("I'm careful with cards, and when something feels off I lock them first and "
                  "think later."),
        Situation("I'd sleep better knowing nobody can run up charges on that card."),
        Situation("My instinct with any card trouble is to freeze it straight away."),
        Situation("A friend told me to lock a card at the first sign of a problem, and I'm "
                  "taking that advice."),
        Situation("Something is up with this card, and I want it out of action before I decide "
                  "what to do."),
        Situation("I'd like the card put on hold while I sort things out."),
        Situation("I was burned by card fraud once before, so these days I act fast."),
        Situation("I want the card locked before anything else happens with it."),
        Situation("I'm the cautious type and would rather be safe than sorry with this card."),
        Situation("Until I've worked out my next step, I don't want the card usable at all."),
        Situation("I'd rather not take any chances with this card."),
        Situation("Knowing the card can't be used right now would give me some peace of mind."),
    ),
    "unfreeze_card": (
        Situation("My card turned up in the pocket of a jacket I hadn't worn in weeks."),
        Situation("I'd locked my card in a panic, and it was in the glovebox of my car all along."),
        Situation("A neighbor found my card on the sidewalk and dropped it through my mail slot."),
        Situation("The coffee shop down the street had been keeping my card safe behind the counter."),
        Situation("The card had slipped between the couch cushions, and my dog dug it out."),
        Situation("I found the card tucked inside a library book I'd been reading."),
        Situation("The front desk at my gym called to say someone had handed my card in."),
        Situation("The card was in my other wallet the whole time, which is a little embarrassing."),
        Situation("Somehow the card ended up in a box of things I'd packed away for a move."),
        Situation("The cab company's lost property office had my card and mailed it back to me."),
        Situation("My card had fallen behind a drawer at work, and a colleague spotted it."),
        Situation("Now that it's back in my hands, I need it for the week's groceries."),
        Situation("My trip is coming up, and now that the card has turned up I want it "
                  "working before I go."),
        Situation("After two days of searching, I spotted the card sitting in the fruit bowl."),
    ),
    "replace_card": (
        Situation("Ever since my card was {card_problem}, I've been stuck paying for everything "
                  "in cash."),
        Situation("I rely on this card for nearly everything, so I need a new one on the way."),
        Situation("Being without a working card is a real headache with bills to pay."),
        Situation("Having a card that works again would take a weight off my mind."),
        Situation("My card must have fallen out of my pocket at the beach, and I've retraced my "
                  "steps more than once.", (("card_problem", "lost"),)),
        Situation("I've turned the house upside down looking for my card, and it's simply gone.",
                  (("card_problem", "lost"),)),
        Situation("I think I left the card in a cab, and the cab company has no record of it.",
                  (("card_problem", "lost"),)),
        Situation("The card went missing somewhere between the train station and my office.",
                  (("card_problem", "lost"),)),
        Situation("I had the card at the farmers market, and by the time I got home it wasn't "
                  "in my bag.", (("card_problem", "lost"),)),
        Situation("My bag was snatched off an outdoor table at a bistro while I was ordering, "
                  "with my card inside.",
                  (("card_problem", "stolen"),)),
        Situation("Someone broke into my car and took my wallet from the glovebox.",
                  (("card_problem", "stolen"),)),
        Situation("A pickpocket got my wallet on a crowded bus, and I've already filed a police "
                  "report.", (("card_problem", "stolen"),)),
        Situation("My gym locker was forced open, and my wallet was gone.",
                  (("card_problem", "stolen"),)),
        Situation("My apartment was burgled, and the card went along with my wallet.",
                  (("card_problem", "stolen"),)),
        Situation("The chip on my card cracked, and card readers keep rejecting it.",
                  (("card_problem", "damaged"),)),
        Situation("A puppy I was looking after chewed a corner clean off my card.",
                  (("card_problem", "damaged"),)),
        Situation("The card snapped in half when I sat down with my wallet in my back pocket.",
                  (("card_problem", "damaged"),)),
        Situation("The magnetic strip gave out after the card spent a week stuck to the fridge "
                  "with a magnet.", (("card_problem", "damaged"),)),
        Situation("I left my card on the dashboard in the sun, and it came out warped.",
                  (("card_problem", "damaged"),)),
    ),
    "update_phone": (
        Situation("I switched carriers and couldn't keep my old number."),
        Situation("My old number was getting endless spam calls, so I finally changed it."),
        Situation("The number on file was my work phone, and I've since left that job."),
        Situation("I used to be on a family phone plan, and now I've got a line of my own."),
        Situation("The security texts stopped reaching me because the old number is gone."),
        Situation("Coming home after years abroad, I got a local number again."),
        Situation("A scammer got hold of my old number, and I wanted a clean start."),
        Situation("My phone was stolen along with the SIM card, and the new line has a "
                  "different number."),
        Situation("It turns out the bank still has a landline I disconnected long ago."),
        Situation("I've had the new number for a while but kept forgetting to update it here."),
        Situation("My ex still has the old number on a shared plan, and I don't want messages "
                  "going there."),
        Situation("I moved to a cheaper prepaid plan, and it came with a new number."),
        Situation("I nearly got locked out of online banking because the codes went to a dead "
                  "number."),
    ),
    "update_address": (
        Situation("I've downsized to a smaller place that's easier to look after."),
        Situation("My statements keep going to my old apartment, and the new tenants are fed "
                  "up with it."),
        Situation("After years of renting, I finally bought a house."),
        Situation("I moved in with my partner and want my mail coming to the new place."),
        Situation("A new job meant relocating, and I'm still living out of boxes."),
        Situation("My old landlord sold the building, so I had to find somewhere new."),
        Situation("I moved closer to my parents so I can help them out more."),
        Situation("Letters with my account details piling up where I no longer live make me "
                  "nervous."),
        Situation("My mail forwarding with the post office is about to run out."),
        Situation("A burst pipe flooded my old apartment and forced me out for good."),
        Situation("I've bought a place with a garden, which I'd wanted for years."),
        Situation("After my separation, I moved into an apartment of my own."),
        Situation("I want anything the bank mails me to reach the right door."),
        Situation("After years next to a noisy bar, I moved to a quieter street."),
    ),
}

CONSTRAINTS = (
    "I'd rather not be on this chat for long.",
    "I'm typing on my phone, so my messages will be short.",
    "I'd like things explained in plain words, without banking jargon.",
    "I'm on a short break at work and want to wrap this up quickly.",
    "Long lists of options tend to fluster me.",
    "I'm not in the mood for small talk today.",
    "I'd prefer to handle one thing at a time.",
    "English isn't my first language, so I keep my sentences simple.",
    "My battery is low, so I'd like to move quickly.",
    "I'm not great with technology and may need a moment to find things.",
    "I'm feeling stressed, and a calm tone helps me a lot.",
    "I like to double-check details before anything is changed.",
    "I'd rather not have to repeat myself.",
    "I'm somewhere noisy and can only glance at the screen now and then.",
    "I tend to write long messages and say everything at once.",
    "I'm tired after a long shift and want this to be simple.",
    "Straight answers suit me better than long explanations.",
    "I'm multitasking, so my replies may be slow.",
    "I like knowing what's happening at each step.",
    "I want to understand a change before it's made.",
    "I'd prefer not to be rushed.",
    "My glasses are in the other room, so I might make the odd typo.",
    "I'm on a library computer and want to keep this brief.",
    "I'm normally relaxed, but money problems put me on edge.",
    "A friendly, informal tone puts me at ease.",
    "I like things done properly the first time.",
    "I'm a little embarrassed to be asking about this.",
    "I get impatient when things drag on.",
    "I'm sitting in a parked car between appointments.",
    "There's a lot going on around me, so my attention is split.",
    "I want to get this sorted before my bus arrives.",
    "I like to have the full picture before I make up my mind.",
    "Slang and abbreviations tend to lose me.",
    "When I'm worried I can come across as blunt.",
    "I have a habit of over-explaining, so my messages run long.",
    "I'd like to finish this in one go rather than come back later.",
    "I read carefully and will go through every detail.",
    "I'm a bit forgetful, so I jot down whatever I'm told.",
    "I don't like being talked down to.",
    "I'm patient as long as I can tell things are moving.",
    "I'd rather keep personal chit-chat out of it.",
    "It's late at night and I'm a bit drowsy.",
    "I type slowly, one finger at a time.",
    "I'm nervous about making a mistake with my money.",
    "I like to keep my answers short and to the point.",
    "I only have a few minutes before a meeting starts.",
    "Precise figures reassure me more than rough estimates.",
    "I'm in a good mood today and happy to take my time.",
    "Surprises where money is concerned are not my favorite thing.",
    "I keep a written record, so I'll be copying details down as I go.",
    "I'm on a train with a patchy connection.",
    "I'm generally trusting, but I like to understand what's being done.",
    "Bad experiences with support chats have left my patience a little thin.",
    "I'd like to sort all of this out in a single conversation.",
    "I feel more at ease when things are spelled out step by step.",
    "I'm cooking dinner while I do this, so I'm a little distracted.",
    "I'd rather not get into why I'm so careful with money.",
    "Accuracy matters a great deal to me.",
    "I'm a bit shy and don't say much unless asked.",
    "I'm juggling a crying baby on one arm while I type.",
    "Numbers swim in front of my eyes when there are too many at once.",
    "I'm still half asleep, so I may be slow on the uptake.",
    "I'd like to stay calm about this, even though I'm worried.",
    "I'm doing this on a borrowed laptop and want to be quick about it.",
)

FALLBACKS: dict[str, tuple[str, ...]] = {
    "dispute_charge": (
        "If {charge} can't be disputed, I'd at least like to understand why.",
        "Should a dispute be out of the question, a clear explanation of the rules would "
        "satisfy me.",
        "Waiting and trying again later is something I can live with if a dispute can't be filed "
        "today.",
        "Failing a dispute, I'd want to know what else I can do about {charge}.",
        "I'll pursue the merchant directly if the bank can't take it up.",
        "If there's no way to contest it, I'd rather hear that plainly than be strung along.",
    ),
    "transfer_funds": (
        "A smaller transfer for now would do if the full amount can't be moved.",
        "Tomorrow would work too, in case the transfer can't happen today.",
        "Should a limit get in the way, knowing what it is would help me plan around it.",
        "Moving the money myself later in the app is my backup if the transfer doesn't go through.",
        "Splitting it into two smaller transfers would work for me if one big one is blocked.",
        "If there's a hold in the way, I'd like to know when I can try again.",
    ),
    "pay_payee": (
        "If the payment can't go out today, sending it tomorrow would still work.",
        "A partial payment would do for now if the full amount is too much.",
        "Should the payment fail, I'll pay them another way.",
        "If something is off with the payee details, I'll ask them for their current "
        "information.",
        "If it won't go through, I'd at least want to know why before I call them.",
        "Paying by check is my backup if this doesn't work out.",
    ),
    "freeze_card": (
        "If a freeze isn't possible, I'd want the card cancelled instead.",
        "A replacement, with this card shut down, would work for me if a freeze can't be done.",
        "If locking it has to wait, I'll keep it somewhere safe until then.",
        "Should freezing be a problem, I'd like to know what else keeps it from being used.",
        "Watching my statements closely will have to do if the freeze can't go on today.",
        "Closing the card would be better than leaving it open if locking it doesn't work.",
    ),
    "unfreeze_card": (
        "If it can't be unfrozen, I'd take a replacement card instead.",
        "A few days of paying in cash is bearable if the freeze has to stay for now.",
        "Should lifting the freeze take time, I can wait a day or so.",
        "If unfreezing is impossible, I'd want to know what it would take.",
        "A fresh card in the mail would do if this one can't be used again.",
        "I'm willing to check back tomorrow if it can't happen today.",
    ),
    "replace_card": (
        "If a replacement can't be sent, I'd at least want the old card shut off.",
        "A wait for the new card is bearable as long as it's on the way.",
        "Should a replacement not be possible right now, I'll make do with cash for a while.",
        "Since the card was {card_problem}, any fix that keeps my money safe would do.",
        "Trying again later in the week is an option if it can't be replaced today.",
        "A trip to a branch to pick up a new card would be acceptable if mailing one isn't "
        "possible.",
    ),
    "update_phone": (
        "Another day would work if the number can't be updated today.",
        "Going into a branch is an option if the change can't be made over chat.",
        "Should the update fail, being reached by email in the meantime would work for me.",
        "If there's a problem with the new number, I'll double-check it and come back.",
        "If changing it here isn't possible, I'd do it in the app myself.",
        "If it can't be saved right now, I'd at least like to know what's blocking it.",
    ),
    "update_address": (
        "Picking up my mail at a branch would do for now if the address can't be updated.",
        "If it can't be changed online, I'll bring proof of address to a branch.",
        "Should the update not work, I'll keep my mail forwarding going a while longer.",
        "A problem with the new address would just mean I check the details and come back.",
        "Waiting a few days is acceptable if it can't be done today.",
        "Going paperless for a while would suit me if the address can't be changed yet.",
    ),
}

SCENARIO = ScenarioSpec(backgrounds=BACKGROUNDS, situations=SITUATIONS, constraints=CONSTRAINTS,
                        fallbacks=FALLBACKS)
