"""What telecom customers bring with them: a hand-written bank of backgrounds, per-intent
situations, constraints and fallbacks, written for trajforge by hand, in the customer's own
words, so a blueprint's goal reads as a person with reasons rather than a list of requests.

Situations state only what every task of their kind implies: a no-data customer is at home
with a phone that cannot get online, a roaming customer is abroad without service, a
suspended line is to be resumed. Nothing names the phone's faulty setting, the country, a
bill's status or amount: the tools decide those.
"""

from __future__ import annotations

from trajforge.environments.tasks import ScenarioSpec, Situation

BACKGROUNDS = (
    "I run a one-woman bakery out of a converted garage and take most orders by text.",
    "Retired from the railways, I spend my mornings on crosswords and my afternoons at the allotment.",
    "My husband and I just had a baby girl, and a full night's sleep is a distant memory.",
    "Pushing trolleys as a hospital porter on the night shift, I sleep through most of the day.",
    "Most of my work as a freelance illustrator arrives through email and messaging apps.",
    "At seventy-eight, I'm still getting to grips with the smartphone my granddaughter picked out for me.",
    "Since moving back in with my parents after university, I've been job hunting full time.",
    "Weekends belong to the girls' youth football team I coach, and I run the parents' group chat too.",
    "Hauling timber over the mountain passes, I can go days with my phone as my only link home.",
    "June is wedding season, and as a florist my phone never stops buzzing.",
    "New to the city and not knowing many people yet, I lean on my phone to find my way around.",
    "My mother has dementia, so my phone stays on loud day and night in case the care home rings.",
    "Plumbing is my trade, and nearly every job I get starts with a phone call.",
    "Chemistry is what I teach, to teenagers who are far better with gadgets than I am.",
    "Twenty years as a locksmith have taught me that things break at the worst possible moment.",
    "A doctoral student in linguistics, I live on a tiny stipend and a great deal of lentil soup.",
    "After leaving the fire service last spring, I took up woodturning and haven't looked back.",
    "My teenage son treats his phone like a body part, and I'm forever nagging him to put it down.",
    "Selling vintage clothes online, I photograph and list everything from my phone.",
    "Driving for a rideshare app means a working phone is quite literally how I earn a living.",
    "Back on my feet after months of chemo, I'm slowly putting my life back in order.",
    "Sheep and a pair of collies are my daily company on a hillside farm.",
    "Deaf since birth, I text far more than I ever call.",
    "I work the checkout at a supermarket and grab every extra shift that's offered.",
    "As a single mum of two boys, I get my admin done after they've gone to sleep.",
    "Producing a podcast has me recording interviews in kitchens and offices all over town.",
    "Having lived in four countries, I've dealt with more phone companies than I can count.",
    "Keeping the books for three little shops fills my days with receipts.",
    "Nights I guard a warehouse on the edge of town, mostly alone with a flask of tea.",
    "My wife usually takes care of the household paperwork, but she's away caring for her sister.",
    "Summers I guide kayak tours along the coast, and winters I repair the boats.",
    "Hairdressing is my job, and every appointment I have is booked by text message.",
    "A stroke last year slowed me down, and my typing is still a little clumsy.",
    "During service my phone lives in a locker, since I'm a sous-chef at a busy bistro.",
    "Studying for the bar exam has swallowed my entire life this season.",
    "The community choir I direct rehearses twice a week, and I organize everything by group chat.",
    "I moved here from Manila to work as a nurse, and my family calls me every Sunday.",
    "Before dawn I deliver newspapers, and then I head to my day job at a print shop.",
    "Stay-at-home dad to triplets, I've stopped noticing the coffee stains on everything I own.",
    "Carpentry is my trade, and the phone always seems to ring when I'm halfway up a ladder.",
    "With my daughter expecting her first baby, I want to be reachable the moment things start.",
    "Gardening is my retirement project, and so far the tomatoes are winning.",
    "Long rotations as a junior doctor at a teaching hospital leave me with scraps of free time.",
    "Having just separated from my partner, I'm untangling everything that used to be shared.",
    "Selling insurance door to door, I treat my car as an office.",
    "A lifelong tinkerer, I usually try to fix my own gadgets before asking anyone for help.",
    "Piano lessons happen in my living room, and I keep the schedule in a calendar app.",
    "Working as a flight attendant, I wake up in a different hotel room most mornings.",
    "Just turned eighteen, I got my first phone contract in my own name this year.",
    "Volunteering with mountain rescue means I have to be reachable at short notice.",
    "Hospitals hire me to interpret Arabic and French, often over the phone.",
    "My parents speak very little English, so their paperwork lands on my desk along with mine.",
    "Restoring old pianos is my job, and it's slow, dusty, wonderful work.",
    "Bicycles are my business: I sell them, fix them, and answer the phone with greasy hands.",
    "It's the end of the quarter at the accounting firm where I work, and I'm running on fumes.",
    "Epilepsy means I can't drive, so my phone is how I book lifts and check bus times.",
    "Every day I walk the same postal round through the old town, rain or shine.",
    "Phone calls make me anxious, and I much prefer to write things down.",
    "With a new puppy in the house, nothing happens on schedule anymore.",
    "Semi-retired now, I still consult a couple of days a week for my old engineering firm.",
    "Three small kids and two very busy parents keep me on my toes as a nanny.",
    "Weekends I play bass in a covers band that gigs in pubs around the county.",
    "Managing social media for a fashion brand, I get twitchy if I'm offline for even an hour.",
    "Bookings for the little bed and breakfast I run by the sea come in at all hours.",
    "Since losing my husband in the spring, the bills and contracts he dealt with have landed on my desk.",
    "Coordinating my warehouse team's shifts over group messages eats half my day.",
    "Waitressing by day and cleaning offices at night leaves me very little spare time.",
    "As a geology student, I spend field weeks in places with no coffee shop for miles.",
    "Blind since my twenties, I use my phone with a screen reader for nearly everything.",
    "Dog grooming is my business, and I run it out of a converted van.",
    "Most of my day at the dental surgery is spent on the phone with nervous patients.",
    "Grandmother to eleven, I've become the family's unofficial calendar.",
    "Retired from teaching, I now spend my weekdays volunteering at the local museum.",
    "Working in IT support, I'm usually the one fixing everybody else's phones.",
    "Ever since my diabetes diagnosis, an app on my phone has been tracking my blood sugar.",
    "Boxing keeps me sane, and I train at a gym across town most evenings.",
    "Under the buses at the depot is where I spend my day, fixing engines.",
    "Stage managing for a theatre means long evenings with a headset clamped to my ear.",
    "Rain or shine, I cycle to work and listen to audiobooks along the way.",
    "A retired army officer, I like things done properly and by the book.",
    "Caring for my disabled brother, I spend half my week coordinating his appointments.",
    "At twenty-two, I run a small online shop selling hand-poured candles.",
    "The café I own opens at dawn, so I do my paperwork in the quiet hour before.",
    "Distance running is my passion, and on Saturdays I coach a small group of beginners.",
    "My father is ninety and lives alone, so I phone him every single evening.",
    "Court stenography keeps me in rooms where phones must stay switched off for hours.",
    "Show rabbits are my hobby, and I sell the odd one to families looking for a pet.",
    "Presenting the breakfast show on local radio means my day starts in the dark.",
    "English is my second language; I grew up in Poland and came here for work.",
    "Going back to university at forty-five to study nursing was the bravest thing I've done.",
    "Sewing costumes for conventions started as a hobby and has taken over the spare room.",
    "Driving a black cab in the city centre, I work mostly the late shift.",
    "After twelve years in the navy, I'm still adjusting to civilian life and an office job.",
    "Tattooing is my craft, and my studio sits above a record shop.",
    "My partner is serving overseas, and video calls are how I stay close to him.",
    "As an au pair from Brazil, I'm living with a host family for the year.",
    "Migraines plague me, and on bad days I keep every screen dimmed right down.",
    "Six weeks into my first job as a junior developer, I'm still working out adult life.",
    "Eggs and cheese from my little farm shop get ordered mostly by message.",
    "A retired nurse, I now drive elderly neighbours to their appointments.",
    "Patrolling trails as a park ranger keeps me far from town for most of the day.",
    "Every summer I run a children's sailing camp on the lake.",
    "Stained glass is what I restore, mostly for old village churches.",
    "Three generations live under my roof, and I'm the one everyone brings their tech problems to.",
    "Medical coding is my work-from-home job, and it keeps me glued to my desk.",
    "My newborn feeds every couple of hours, so I do everything one-handed.",
    "Spin classes at dawn are my job; I teach at a gym near the station.",
    "Recently moved into sheltered housing, I'm still getting used to a new routine.",
    "Building websites for small businesses, I juggle more clients than I probably should.",
    "Loading lorries at the docks, I start my shift before sunrise.",
    "People ring me at every hour, since I'm the vicar of a scattered rural parish.",
    "I've just moved into my first flat and I'm still waiting for the sofa to arrive.",
    "My aunt's cats need feeding while she's in hospital, so I'm crossing town twice a day.",
    "Event planning has me juggling weddings and corporate dinners all season.",
    "Shy by nature, I get flustered when technology misbehaves.",
    "Handmade jewellery is what I sell at weekend markets, taking card payments on my phone.",
    "Honestly, phones mystify me; my late wife was the one who understood them.",
    "Plastering walls all day, I find a film of dust on my phone by the evening.",
    "In my final year of medical school, I live between the library and the wards.",
    "Dance classes at my studio run late into the night, and I teach most of them.",
    "Fostering teenagers keeps my house lively and my phone very busy.",
    "Operating a tower crane, I spend my shifts high above the city.",
    "A born night owl, I do all my admin long after midnight.",
    "The local football club's accounts are in my hands as volunteer treasurer.",
    "A small optician's practice on the high street is mine, and I run it with one assistant.",
    "Since my hip replacement, I've been stuck indoors far more than I'd like.",
    "Lifeguarding at the city pool pays for my studies the rest of the year.",
    "Growing up on an island with a single payphone, I still marvel at mobile phones.",
    "Covering a huge sales territory, I live out of hotels half the week.",
    "My twin sister and I talk on the phone every day, sometimes for hours.",
    "Fitting kitchens takes me to building sites all over the region.",
    "Headteacher of a busy primary school, I'm never far from a small crisis.",
    "Streaming video games is my side hustle, on top of a day job in a warehouse.",
    "Delivering food by bicycle around the city is how I pay my rent.",
    "Born and raised in this town, I know everyone, and everyone has my number.",
    "Amateur radio is my hobby, which makes me fussier than most about reception.",
    "Caretaking a block of flats means residents ring me about every leak and lost key.",
    "An injury put me out of work a while ago, and I'm watching every penny.",
    "Harvest at the vineyard where I work is all-consuming, and it's happening now.",
    "Quiet by nature, I mostly use my phone for music and messages from my grandchildren.",
    "Ten years of night shifts at a bakery have turned my body clock upside down.",
    "Organizing protests for a tenants' union takes up most of my evenings.",
)

SITUATIONS: dict[str, tuple[Situation, ...]] = {
    "no_data": (
        Situation("Without mobile data I can't check the bus times, "
                  "and I've already missed one because of it."),
        Situation("My work rota comes through an app on the phone "
                  "on {line}, and it only updates when I'm online."),
        Situation("Maps get me to my clients' houses, and the phone "
                  "on {line} won't load them once I'm off wifi."),
        Situation("My daughter's school posts updates in an app, and I keep missing them while I'm out."),
        Situation("Paying for parking happens on my phone, and the "
                  "app just spins the moment I leave the house."),
        Situation("A courier wants me to confirm a delivery slot "
                  "through an app, and I can't get online outside."),
        Situation("The whole point of a phone plan, for me, is being "
                  "able to get online on the go, and right now I can't."),
        Situation("An email about a job interview could land "
                  "any minute, and I won't see it while I'm out."),
        Situation("My glucose monitor sends readings through the "
                  "phone on {line}, so being offline worries me."),
        Situation("Driving for a delivery app is how I earn money, and every hour without data costs me."),
        Situation("Streaming music on my commute is the only thing "
                  "that keeps me sane, and it has stopped working."),
        Situation("My sister is posting photos of her new baby in "
                  "the family chat, and nothing loads on my phone."),
        Situation("It all worked fine last week, so I'm puzzled about what changed."),
        Situation("Not being very technical, I have no idea why "
                  "the phone on {line} stopped getting online."),
        Situation("Away from home wifi, my phone can't load even a "
                  "simple web page, which turns errands into a chore."),
        Situation("Links to my son's hospital appointments come "
                  "by text, and I can't open them when I'm out."),
        Situation("Clocking in for my shift happens in an app, and "
                  "my manager has noticed I haven't been doing it."),
        Situation("My elderly dad video calls me when he gets confused, "
                  "and I'd hate to miss him because my phone is offline."),
        Situation("Train tickets live in an app on my phone, and "
                  "I'd rather not be stuck at the barrier again."),
    ),
    "roaming_abroad": (
        Situation("Visiting my grandmother overseas, I promised my kids I'd send them photos every day."),
        Situation("My company sent me abroad for a trade fair, and clients need to reach me on {line}."),
        Situation("This trip is my honeymoon, and I'd love to share a few pictures with my family."),
        Situation("My flight landed hours ago, and I still can't "
                  "book a taxi or let anyone know I arrived safely."),
        Situation("Backpacking for a few weeks, I need maps to find the hostels I've booked."),
        Situation("My father is unwell back home, so I need to be "
                  "reachable on {line} the whole time I'm away."),
        Situation("The hotel wifi only reaches the lobby, and I "
                  "need my phone to work once I'm out exploring."),
        Situation("A friend's wedding brought me abroad, and I'm "
                  "the one coordinating transport for the guests."),
        Situation("A work emergency could blow up any day this "
                  "week, and my boss expects to reach me on {line}."),
        Situation("I'm on a short language course abroad, and "
                  "the school sends all its messages to my phone."),
        Situation("The rental car's navigation is in a language I "
                  "can't read, so I'm counting on my phone's maps."),
        Situation("Security codes for my online banking go to {line}, and I can't log in without them."),
        Situation("Travelling with my young son, I feel uneasy having no way to call for help."),
        Situation("A conference brought me here, and I need my "
                  "phone to find the venues and meet colleagues."),
        Situation("My sister is due to give birth any day, and I "
                  "don't want to miss the news while I'm abroad."),
        Situation("House-sitting for a friend abroad, I'm the contact her alarm company calls on {line}."),
        Situation("The tour guide coordinates everything by message, "
                  "and right now I'm cut off from the group."),
        Situation("My lawyer needs to call me about property papers I came abroad to sign."),
    ),
    "roaming_refused": (
        Situation("Staying with my in-laws abroad, I haven't been "
                  "able to use the phone on {line} since I arrived."),
        Situation("On a business trip, I have to call my team before a meeting this afternoon."),
        Situation("As one of the chaperones on a school trip abroad, "
                  "I need the other teachers to be able to reach me."),
        Situation("My best friend is getting married abroad this weekend, "
                  "and I'm supposed to stay in touch with the venue."),
        Situation("Hiking without a working phone makes me nervous, "
                  "and this walking holiday has some remote trails."),
        Situation("The airline lost my suitcase and promised to call me on {line} when it turns up."),
        Situation("A client keeps moving a meeting around, and I'm waiting to hear the new time."),
        Situation("A funeral brought me overseas, and I need to "
                  "coordinate with cousins I've never met in person."),
        Situation("Seeing the village where my grandparents grew up, "
                  "I'd love to share it with my mum as it happens."),
        Situation("My teenage daughter is staying with a friend's family "
                  "back home, and she needs to be able to call me."),
        Situation("Meeting a friend at a big train station abroad is hopeless if I can't message her."),
        Situation("The volunteer project I joined abroad sends its daily updates by text."),
        Situation("The host of the apartment I rented sends the "
                  "door code by message, and I'm standing outside."),
        Situation("Travelling with my elderly mother, I'd feel much "
                  "better with a phone that works in an emergency."),
        Situation("My support crew needs to reach me during a cycling race I came abroad to ride."),
        Situation("Every booking and direction for this trip sits "
                  "in emails I can't open without a connection."),
    ),
    "change_plan": (
        Situation("Since I started working from home, the way I use my phone has changed completely."),
        Situation("Going through my spending with a budgeting app, I "
                  "realised my phone plan doesn't match how I use it."),
        Situation("A friend walked me through the plans on offer, and mine no longer seems the right fit."),
        Situation("Stopping my daily train commute has changed my phone habits more than I expected."),
        Situation("I've been on the same plan for ages without ever comparing it to the others."),
        Situation("With my son moved out, my phone use looks nothing like it did a year ago."),
        Situation("A new job with a different routine has me rethinking what I need from my line."),
        Situation("Retirement is close, and I'm trimming "
                  "every bill I can, the phone included.", (("plan", "Basic 5GB"),)),
        Situation("Wifi covers me at home and at work, so paying "
                  "for a pile of mobile data feels wasteful.", (("plan", "Basic 5GB"),)),
        Situation("Money is tight since I went part-time, "
                  "and I barely touch mobile data anyway.", (("plan", "Basic 5GB"),)),
        Situation("Watching football on the go is my weakness, and "
                  "I'm sick of keeping an eye on the data counter.", (("plan", "Unlimited 100GB"),)),
        Situation("My flat has no broadband, so the "
                  "hotspot on my phone is my only internet.", (("plan", "Unlimited 100GB"),)),
        Situation("A new job has me flying abroad every few weeks, "
                  "so a plan made for travel seems sensible.", (("plan", "Travel 20GB"),)),
        Situation("Visiting my parents overseas has become a "
                  "regular thing, and a travel plan would suit that.", (("plan", "Travel 20GB"),)),
        Situation("Plenty of data with roaming thrown in sounds "
                  "like exactly what my year ahead needs.", (("plan", "Max 40GB"),)),
        Situation("Between the trips I have coming up and the videos I "
                  "watch, a big allowance that works abroad appeals to me.", (("plan", "Max 40GB"),)),
        Situation("A plan in the middle of the range feels "
                  "right for how I use my phone these days.", (("plan", "Plus 15GB"),)),
        Situation("Something sensible, neither the smallest "
                  "nor the biggest plan, is what I'm after.", (("plan", "Plus 15GB"),)),
    ),
    "data_topup": (
        Situation("The phone on {line} has been my laptop's hotspot while my broadband is being repaired."),
        Situation("The kids watched cartoons the whole drive to "
                  "their grandparents' house, and that ate my data."),
        Situation("There's no way I can go without mobile data until my allowance resets."),
        Situation("Navigating with my phone all day for work, I lost the maps the moment my data ran out."),
        Situation("Video calls with my girlfriend, who lives abroad, "
                  "burned through my data faster than I expected."),
        Situation("My online course has video lectures, and "
                  "watching them on the train drained my allowance."),
        Situation("Some big files have to reach a client before the weekend, and I'm nowhere near wifi."),
        Situation("The phone on {line} ran dry just as I'm waiting on messages about a flat viewing."),
        Situation("Uploading holiday photos to the cloud used far more data than I thought it would."),
        Situation("My son borrowed my phone for a weekend of online gaming, and now the data is gone."),
        Situation("Running without my music is miserable, and the app "
                  "on {line} stopped streaming halfway round the park."),
        Situation("A little extra is all I need to see "
                  "me through to the end of the cycle.", (("size", "1GB"),)),
        Situation("I'm on wifi most of the time, so just "
                  "a small amount should tide me over.", (("size", "1GB"),)),
        Situation("A modest top-up should cover the few "
                  "errands I still have before the cycle ends.", (("size", "2GB"),)),
        Situation("Only emails and messages really matter "
                  "to me, so a small top-up will be plenty.", (("size", "2GB"),)),
        Situation("A busy week of site visits lies ahead, "
                  "so a decent chunk of data makes sense.", (("size", "5GB"),)),
        Situation("Heavy travel is coming up, and I'd rather "
                  "add a generous amount than run out again.", (("size", "10GB"),)),
        Situation("Relatives who couldn't make it want me to stream "
                  "my niece's graduation, which needs a lot of data.", (("size", "10GB"),)),
    ),
    "pay_bill": (
        Situation("My salary came in this morning, so I want {bill} off my list while the money is there."),
        Situation("Having anything hanging over me drives me mad, and {bill} has been nagging at me."),
        Situation("I'm going away soon and don't want {bill} to be the one thing I forget."),
        Situation("Reminder emails about {bill} keep popping up, and I'd like them to stop."),
        Situation("My husband normally handles the phone bill, "
                  "but he's in hospital, so {bill} falls to me."),
        Situation("Paying {bill} in a chat is easier than remembering yet another password for the app."),
        Situation("A mortgage application is in progress, and I want my record spotless."),
        Situation("This weekend I'm tidying up my finances, starting with {bill}."),
        Situation("I'd rather settle {bill} now than lie awake worrying about the line being cut off."),
        Situation("The app threw an error every time I tried to pay {bill}, so I'm trying here instead."),
        Situation("I set a reminder to pay {bill} and then cheerfully ignored it for days."),
        Situation("My mum gave me some birthday money, and putting it towards {bill} feels responsible."),
        Situation("I promised myself I'd pay {bill} the moment a "
                  "client settled my invoice, and they just did."),
        Situation("Seeing {bill} still open bugs me, because I like my accounts tidy."),
        Situation("According to my budgeting spreadsheet, {bill} is the last thing left to pay."),
        Situation("Being unemployed for a while put me behind on things, "
                  "and now that I'm working again I'm catching up."),
    ),
    "resume_line": (
        Situation("My son's phone runs on {line}, and he starts at a new school next week."),
        Situation("Getting {line} back matters, because it's the number printed on all my business cards."),
        Situation("Without {line} my clients have no way of reaching me."),
        Situation("My mother relies on {line} to call me, and she's been cut off."),
        Situation("A new employer is sending onboarding texts to {line}, and they aren't getting through."),
        Situation("The doctor's surgery only has {line} on file for appointment reminders."),
        Situation("Years of contacts know me by {line}, and I don't want to lose that number."),
        Situation("Now that my finances are back in order, I'd like {line} up and running again."),
        Situation("My alarm company rings {line} if anything happens at the house, so it matters."),
        Situation("Every day without {line} is a day my small business loses work."),
        Situation("My daughter is coming home from university, and {line} is the number she uses."),
        Situation("How {line} ended up suspended is a mystery to me, but I need it back."),
        Situation("A courier is supposed to call {line} about a "
                  "delivery, and right now it can't even ring."),
        Situation("My grandfather's emergency button dials {line} if he falls, so it has to work."),
        Situation("Friends have been telling me for days that they can't get through on {line}."),
        Situation("Recruiters have {line} as my contact, and I'm in the middle of job hunting."),
    ),
    "bill_question": (
        Situation("My partner and I split the household bills, "
                  "and I need to tell him what {bill} comes to."),
        Situation("Planning next month's budget, I want to know where {bill} fits in."),
        Situation("Work reimburses part of my phone costs, and "
                  "the claim form needs the figure from {bill}."),
        Situation("The email with {bill} went to an old address of mine, so I never saw the details."),
        Situation("Keeping track of due dates has been hard for "
                  "me lately, so I'd like the details of {bill}."),
        Situation("My accountant asked for {bill} for my self-employed tax return."),
        Situation("Finding bills in the app defeats me every time, so asking about {bill} is easier."),
        Situation("Knowing what {bill} comes to will help me decide what I can spend this weekend."),
        Situation("It feels like {bill} might be higher than usual, "
                  "and I'd like to check before I start worrying."),
        Situation("A landlord wants a recent household bill with "
                  "my application, so I'm checking {bill} first."),
        Situation("A paper diary holds all my due dates, and {bill} is missing from it."),
        Situation("My pay arrives on a fixed day each month, and I like to line bills up against it."),
        Situation("The letter about {bill} got soaked in the rain, and the figures are a blur."),
        Situation("Before filing {bill} away with my records, I want to confirm what it says."),
        Situation("Whether {bill} is settled or still waiting, I'd like to know exactly where it stands."),
        Situation("My daughter helps me with money, and she asked me to find out the details of {bill}."),
    ),
    "outage": (
        Situation("Working from home, I take calls from patients "
                  "on {line}, so losing signal is a big problem."),
        Situation("My mum is in hospital, and the ward rings me on {line} with updates."),
        Situation("A call about a job offer could come any time now, and I can't risk missing it."),
        Situation("Being disabled and mostly housebound, my phone is my lifeline to everyone."),
        Situation("The landline was disconnected years ago, so {line} is the only phone in the house."),
        Situation("Customers book my cleaning service by calling {line}, and I can't afford to miss them."),
        Situation("My elderly neighbour calls me on {line} whenever she needs help getting up the stairs."),
        Situation("My wife is heavily pregnant, and I can't be without a working phone at home right now."),
        Situation("The surgery said it would ring {line} with my test results today."),
        Situation("Being on call for my job this week, I have to answer within minutes."),
        Situation("My teenager is out at a party, and I want to be reachable if she needs a lift home."),
        Situation("At first I thought my phone was broken, but "
                  "my neighbour seems to have no signal either."),
        Situation("Having checked the phone over and found nothing "
                  "wrong, I suspect something bigger is going on."),
        Situation("A delivery is due today, and the courier always phones when he's outside."),
        Situation("My dad calls every evening at the same hour, and he'll panic if he can't get through."),
        Situation("The carers who visit my mother text {line} when they're running late."),
    ),
}

CONSTRAINTS = (
    "I'm typing with one thumb while holding a bag of shopping.",
    "Technical terms like APN go straight over my head, so plain words help.",
    "I'd rather not stay on this chat any longer than necessary.",
    "There's only a short break between my classes, so I'm keen to be quick.",
    "Before anything on my account changes, I like to hear what is about to happen.",
    "Short, clear steps work best for me.",
    "Long paragraphs of instructions make my eyes glaze over.",
    "I tend to fire off several short messages in a row instead of one long one.",
    "Being a little hard of hearing, I find writing far easier than calling.",
    "Patience comes easily to me as long as I'm kept in the loop.",
    "Explaining my situation twice is something I'd rather avoid.",
    "My eyesight isn't great, so I might ask for something to be said again.",
    "At work, I can only reply in the gaps between customers.",
    "Normally I'm polite, but it has been a frustrating week.",
    "Pushy sales talk puts me off, so I'm a little on guard.",
    "Having things confirmed before they happen puts me at ease.",
    "My spelling falls apart when I type fast.",
    "A few questions are fine, but being asked the same thing twice wears me down.",
    "In a hurry today, I'll keep my replies brief.",
    "I'd like to understand what went wrong, not just have it fixed.",
    "Customer service chats have let me down before, so I like things spelled out.",
    "Technology makes me nervous, and I worry about pressing the wrong thing.",
    "Chatty by nature, I may wander off topic now and then.",
    "A friendly tone suits me better than a formal one.",
    "Formal, businesslike answers suit me best.",
    "Fasting today has left me a bit low on energy.",
    "My kids are shouting in the background, so I'm rather distracted.",
    "A meeting starts soon, and I'd like this wrapped up before then.",
    "If there's a step I have to do myself, I'd like it explained one move at a time.",
    "Emojis and exclamation marks irritate me slightly.",
    "A heavy cold has left my head foggy today.",
    "It helps me to be told roughly how long something will take.",
    "Waiting without any update makes me anxious.",
    "I'm not in a bad mood, just very tired.",
    "Capital letters and punctuation are not my strong suit when I type.",
    "Anything important gets copied straight into my notes app.",
    "Sarcasm goes over my head, so straightforward language works best.",
    "Finishing everything in this one chat would make my day.",
    "Surprise charges make me nervous, so I like to hear about any costs before they happen.",
    "My hands shake a little, so typing takes me a while.",
    "Stress makes me blunt, and I'm fairly stressed right now.",
    "Hours on hold with another company earlier have worn my patience thin.",
    "Sorting things out myself is my habit, and I only ask for help when I'm truly stuck.",
    "Long gaps between replies make me wonder whether anyone is still there.",
    "One clear answer is worth more to me than a list of possibilities.",
    "Honesty matters more to me than a quick fix.",
    "Canned, robotic replies wear me out; a real conversation is what I'm hoping for.",
    "It's my day off, so there's no rush at all.",
    "Whenever I'm unsure of something I tend to apologise a lot.",
    "Beyond calls and messages, I know very little about how phones work.",
    "Being fairly tech-savvy, I don't mind a bit of jargon.",
    "Writing in my second language, I sometimes phrase things oddly.",
    "A quick summary at the end would help me remember what happened.",
    "When asked to do something on my phone, I like to know the reason.",
    "Dealing with this now beats letting it drag into tomorrow.",
    "Easily distracted, I stay on track best with short messages.",
    "Not knowing for sure that a change went through makes me uneasy.",
    "A little humour is welcome; it has been a long day.",
    "In between feeding the baby and hanging out the washing, I'm squeezing this in.",
    "Being rushed into decisions is something I dislike.",
    "My phone is the thing I'm least confident with, so I go slowly.",
    "Reading on a small screen strains my eyes, so brief messages are kinder.",
)

FALLBACKS: dict[str, tuple[str, ...]] = {
    "roaming_abroad": (
        "If roaming can't be switched on, I'll lean on hotel wifi for the rest of the trip.",
        "Buying a local SIM card for a few days is a fallback I could live with.",
        "Should {line} stay without service abroad, I'd at least like to know why.",
        "Waiting until tomorrow for roaming is bearable if it can't happen right away.",
        "Messaging over wifi will do for now if my phone can't be set up for roaming.",
        "A clear explanation of what's blocking roaming on {line} would be enough for today.",
        "A few days offline won't ruin the trip if there's truly no way to get roaming working.",
    ),
    "change_plan": (
        "If that plan isn't available to me right now, staying "
        "on my current one until the next cycle is fine.",
        "Should the switch be blocked this month, I'm happy to try again once the billing cycle resets.",
        "Hearing about a similar plan would be welcome if the one I picked can't be done.",
        "If the change can't go through, understanding the reason would satisfy me.",
        "Keeping my current plan a little longer is no disaster if the change isn't allowed.",
        "Making the switch another day works for me if it can't happen today.",
    ),
    "data_topup": (
        "If a top-up can't be added, I'll stick to wifi until my data resets.",
        "A smaller top-up would do if the amount I asked for is too much for {line}.",
        "Should more data be out of the question, knowing when my allowance renews would help.",
        "If the top-up fails, calls and texts will get me by for a while.",
        "Waiting a day for the extra data is fine if it can't go on right away.",
        "If nothing more can be added to {line}, a clear word about the limits would help me plan.",
    ),
    "pay_bill": (
        "If {bill} can't be paid in this chat, I'll pay it through the app later.",
        "Should the payment not go through, trying again after the weekend is fine with me.",
        "If there's a problem with {bill}, knowing what it is would be enough for today.",
        "Paying in person at a shop is my backup if it can't be done here.",
        "If it turns out {bill} is already settled, I'll be glad to hear it.",
        "A pointer to another way of paying would do if this doesn't work.",
    ),
    "resume_line": (
        "If {line} can't be turned back on today, I'd like to know what it would take.",
        "Waiting a day or two is acceptable as long as the line comes back eventually.",
        "Should resuming be impossible right now, borrowing my partner's phone will tide me over.",
        "If something on the account is holding {line} back, I'm willing to deal with that first.",
        "A clear next step would satisfy me if the line can't be resumed right now.",
        "Getting by on wifi and messaging apps is fine for a bit if {line} has to stay off.",
    ),
}

SCENARIO = ScenarioSpec(backgrounds=BACKGROUNDS, situations=SITUATIONS, constraints=CONSTRAINTS,
                        fallbacks=FALLBACKS)
