"""The features a message is scored on.

Two kinds, both named strings the linear model weights:

* lexical: word uni/bi/tri-grams with negation and contrast marking (a word after "not"/"no" or
  after "but"/"actually"/"wait" is a different feature), the opening, the last sentence,
  punctuation cues and character trigrams (for typos);
* structural cues (``cue:`` features), the linguistic shape of a dialogue act, which transfers
  across wordings far better than n-grams: for agent messages, whether the last sentence is a
  question, whether a question asks permission for an action ("shall I ...", "do you want me
  to ...", "is that okay?", "go ahead?"), whether the message states an intended action ("I'll",
  "I can"), asks for a slot ("which ...", "what is your ..."), offers further help or says
  goodbye; for user replies, whether the reply opens with an affirmation or a negation, whether a
  contrast or hedge follows the affirmation ("yes, but ...", "sure, wait"), whether it asks a
  question, carries sarcasm ("oh great, ..."), or closes the conversation ("that's all, bye");
  whether its last sentence is an instruction to act that nothing after takes back, a go-ahead
  is followed by a question about afterwards, the yes carries a condition ("only if"), an
  agreeing negated idiom ("no problem", "no rush", "don't worry about ...") or a negated reason ("I
  don't need it", "nobody uses it"); whether a clause opens with an instruction to perform a
  service action in any domain (``_ACTION_VERBS``: "rebook me", "freeze it", "yes, send the
  wire"); the scope of a negation (one that governs an action, "don't cancel", "not yet", against
  one that does not, "no rush on the refund"); a question asked before any go-ahead; a deferral
  ("let me check first", "before you ..."); and, for agent messages, greetings ("what can I do for
  you?") and "please confirm you want ..." requests.

A few emoji are read as words (thumbs up and down, thanks, thinking); a message of punctuation
only ("?") has a feature of its own rather than none.

Identifiers, amounts and e-mail addresses are replaced by a class token first, so that a
confirmation request for ``#A1234567`` and one for "your most recent order" share features.
"""

from __future__ import annotations

import re
from functools import lru_cache

_EMAIL = re.compile(r"\S+@\S+\.\w+")
_ID = re.compile(r"#?\b[a-z]?\d{4,}\b|#\w+")
_MONEY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|\.\.\.|[?!.,;:\-()]")
_SENTENCE_END = {".", "?", "!", ";", "...", "-", ":"}
_NEGATORS = {"no", "not", "never", "nope", "nah", "dont", "don't", "without", "nothing", "neither", "nor"}
_CONTRAST = {"but", "actually", "wait", "though", "however", "instead", "rather", "hold", "hang", "scratch",
             "hmm", "except", "unless", "only", "although"}


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"(?:^| )(?:" + "|".join(alternatives) + r")(?= |$)")


# --- agent cues (matched on space-joined tokens, ids/amounts already class tokens) ---
_PERMISSION = _rx(
    r"(?:shall|should|can|may|could|do|must) i(?: (?:go ahead|just|now|then|also|please))*"
    r" (?!help|assist|get|have|ask|see|find|look|check|know|verify|confirm your|take your|grab|do for|do to help|"
    r"do today)\w+",
    r"(?:shall|should) we", r"(?:do|would|will) you (?:like|want|need) me to", r"(?:want|like) me to",
    r"(?:do|would|will) you (?:like|want) (?:the|that|this|it|your|me|us|them|those)",
    r"(?:is|does|would|will) (?:that|this|it|everything|all (?:of )?that)"
    r" (?:sound|look|work|be|seem)(?: (?:ok|okay|good|right|fine|alright|all right|correct|acceptable))?",
    r"(?:is|would) (?:it|that|this) (?:be )?(?:ok|okay|fine|alright|all right|acceptable|good)",
    r"(?:are|would) you (?:be )?(?:ok|okay|fine|happy|good|alright|comfortable|sure|ready)",
    r"ok(?:ay)?", r"(?:ok|okay) (?:with you|by you|to (?:go|proceed|continue|do|submit|cancel|process)\w*)",
    r"(?:go|going) ahead", r"proceed\w*", r"confirm\w*", r"(?:good|ready|clear) to go", r"green light",
    r"go - ahead", r"(?:your|the|an?) (?:ok|okay|approval|permission|consent|confirmation|authori[sz]ation)",
    r"(?:can|could|would) you (?:confirm|approve|authori[sz]e)", r"(?:do|will) you (?:confirm|approve|authori[sz]e)",
    r"(?:let me know|tell me) (?:if|whether) (?:you|i|that|this|it)", r"just say (?:yes|the word|so|go)",
    r"(?:shall|should) i", r"sounds? good",
    r"(?:fine|alright|all right|good) (?:with you|by you|if i)", r"(?:mind if|happy for me|happy if) ",
    r"(?:may|can) (?:we|i) (?:go|proceed)",
)
_TAG_Q = _rx(r"yes or no", r"right", r"correct", r"agreed", r"deal", r"go", r"sure", r"yes", r"ok(?:ay)?", r"good",
             r"fine", r"alright", r"proceed", r"confirm\w*", r"now", r"then", r"shall i", r"shall we")
_SLOT_Q = _rx(
    r"which", r"what(?:'s| is| was| are) (?:your|the)", r"what \w+ (?:is|was|would|do|did)",
    r"(?:could|can|would) you (?:give|tell|share|provide|send|point|let) me", r"could i (?:get|have)",
    r"(?:can|may) i (?:get|have|ask)", r"please (?:share|provide|give|tell)", r"how (?:many|much) ",
    r"do you (?:know|have|remember|recall)",
    r"(?:or|and) (?:your )?(?:name|\w+ code|date of birth|email|pin|passcode)", r"where ",
    r"what (?:size|color|colour|option|item|address|card|payment|method|reason)",
)
_ELSE = _rx(
    r"anything else", r"something else", r"anything more", r"(?:anything|something) (?:further|additional)",
    r"(?:is|will|would) (?:that|this) be all", r"(?:is|was) that all", r"that be all", r"that's all",
    r"(?:else|more|further) (?:i|we) can", r"(?:else|more) (?:for|to|on)", r"other (?:questions|orders|order|items)",
    r"anything (?:i can|we can|on your mind|today)", r"what else",
    r"(?:help|assist) (?:with|you with) (?:more|another)",
    r"(?:need|want) (?:more|anything)", r"(?:any|more|other) (?:questions|concerns)", r"else today",
)
_INTENT = _rx(
    r"i'll", r"i will", r"i'm (?:going|about|ready|prepared|happy|able) to", r"i am (?:going|about|ready|able) to",
    r"i can(?! see| tell| find)", r"i could(?! see| find)", r"let me", r"i'd (?:like to|be happy to|go ahead)",
    r"i would", r"i'm set to",
    r"the plan", r"here's what", r"to (?:confirm|recap|summari[sz]e)", r"just to (?:confirm|be sure|double)",
    r"you'd like (?:me )?to", r"you want (?:me )?to", r"this (?:will|would)",
)
_BYE = _rx(
    r"have an? (?:nice|good|great|lovely|wonderful|pleasant) \w+", r"good ?bye", r"bye", r"take care",
    r"(?:we're|we are|you're|you are|we've|i'm|that's|it's) (?:all )?(?:done|set|sorted|finished)",
    r"covers? (?:it|everything)", r"enjoy", r"thanks for (?:contacting|reaching|chatting|calling|shopping)",
    r"(?:glad|happy) (?:i|we) could", r"pleasure", r"(?:until|see you) next time", r"cheers",
)
_REPORT = _rx(
    r"(?:is|are|was|has been|have been) (?:now|updated|cancel\w+|refunded|changed|switched|set|pending|"
    r"processed|shipped|delivered|requested|placed|submitted|started|confirmed|done|complete\w*)",
    r"done", r"all set", r"cost\w*", r"zzmoney", r"will (?:be|go|now|arrive|ship)", r"goes back",
    r"(?:is|are) (?:in stock|available|sold out)", r"price", r"shows? ", r"i can see", r"i see", r"looks like",
    r"i(?:'ve| have) (?:found|checked|looked)", r"(?:it|there) (?:is|are|was|were|appears?)",
)
_GREET = _rx(r"hi", r"hello", r"hey", r"welcome", r"good (?:morning|afternoon|evening)", r"how (?:can|may) i help",
              r"what can i (?:do|help)", r"how can we help", r"what brings you", r"thanks for (?:getting in touch|"
              r"reaching out|contacting)")
_CONFIRM_WANT = _rx(r"(?:please )?confirm (?:that )?(?:you(?:'d| would)? (?:want|like|agree|are happy)|you're happy|"
                    r"i (?:can|should|may))", r"(?:please )?confirm (?:and|to) (?:i'll|i will)")
_APOLOGY = _rx(r"sorry", r"apolog\w+", r"unfortunately", r"i'm afraid", r"can't", r"cannot",
               r"not (?:allowed|possible)", r"didn't go through", r"policy", r"unable")

# --- user cues ---
_AFFIRM = _rx(
    r"y+e+s+", r"yeah+", r"yea", r"yep+", r"yup+", r"ya", r"sure(?:ly)?", r"ok(?:ay|ey|ie|s)?", r"k", r"kk",
    r"alright",
    r"all right", r"aye", r"please (?:do|go|proceed|continue|cancel|submit|process|make|change|update|return)\w*",
    r"go (?:ahead|for it|on)", r"do it", r"sounds? (?:good|great|fine|perfect|right|ok|okay|about right)",
    r"that (?:works|sounds|looks|is (?:fine|right|correct|good|perfect))",
    r"that's (?:fine|right|correct|good|perfect|it)",
    r"perfect", r"absolutely", r"definitely", r"of course", r"correct", r"confirm(?:ed)?", r"fine", r"let's do it",
    r"let's", r"proceed", r"agreed?", r"deal", r"certainly", r"exactly", r"right", r"great", r"good", r"cool",
    r"affirmative", r"approved?", r"works for me", r"by all means", r"indeed", r"totally", r"for sure",
    r"why not", r"sounds", r"lgtm", r"ja", r"si", r"oui", r"y", r"zzthumbsup",
)
_NEG_OPEN = _rx(r"no+", r"zzthumbsdown", r"nothing", r"nah", r"nope", r"not", r"don't", r"do not", r"never",
                r"negative", r"cancel that",
                r"stop", r"wait", r"hold on", r"hang on", r"hmm+", r"um+", r"uh+", r"actually", r"i don't",
                r"i'd rather not", r"rather not", r"please don't", r"please do not", r"forget")
_HEDGE = _rx(
    r"but", r"actually", r"wait", r"hold on", r"hold off", r"hang on", r"not yet", r"however", r"first",
    r"before (?:you|that|we|i)", r"instead", r"changed my mind", r"on second thought", r"second thoughts?",
    r"not sure", r"unsure", r"let me (?:think|check|see|look|ask|verify|confirm|double)", r"think (?:about|it over)",
    r"maybe", r"perhaps", r"i guess", r"i suppose", r"probably", r"rather", r"prefer", r"hmm+", r"scratch that",
    r"never ?mind", r"forget (?:it|that|about)", r"no wait", r"one (?:sec|second|moment|minute)", r"later",
    r"don't", r"do not", r"not", r"no", r"nope", r"nah", r"stop", r"cancel that", r"hesitant", r"unless",
    r"depends", r"if", r"only if", r"or", r"why", r"how",
    r"what(?! i (?:want|wanted|need|needed|asked|ordered|expected|meant|had in mind|was hoping|hoped))", r"which",
    r"wrong", r"meant",
    r"i'll (?:get back|think|call|check|come back)", r"give me", r"keep", r"leave",
)
_SARCASM = _rx(
    r"oh (?:sure|great|yes|yeah|wonderful|brilliant|perfect|fantastic|lovely|joy|good|wow|fine|absolutely|totally)",
    r"why not", r"totally", r"like i have a choice", r"whatever", r"yeah right", r"sure(?: ,| thing ,)? because",
    r"thanks a lot", r"just (?:great|perfect|lovely|wonderful|fantastic|brilliant)", r"waste", r"as if",
    r"great service", r"what a", r"love (?:that|how|it when)", r"can't wait", r"how (?:lovely|wonderful|nice)",
    r"no rush", r"take your time", r"clearly", r"obviously", r"of course you", r"because that", r"genius",
    r"ugh", r"wow", r"lovely", r"brilliant", r"fantastic", r"wonderful", r"amazing", r"again", r"another",
)
_CLOSE = _rx(
    r"(?:that's|that is) (?:all|it|everything|about it)(?! (?:correct|right|good|fine|true|perfect|i (?:want|asked)))",
    r"that(?:'ll| will) be (?:all|it)",
    r"nothing (?:else|more|further)", r"(?:good ?)?bye\w*", r"have an? (?:good|nice|great|lovely) \w+",
    r"(?:i'm|i am|we're|we are) (?:all )?(?:good|set|done|fine|sorted)(?! with)", r"all (?:good|set|done|sorted)",
    r"no more", r"(?:that )?covers? (?:it|everything)", r"(?:done|finished) for (?:today|now)", r"take care",
    r"see (?:you|ya)", r"cheers", r"that'?s? (?:all|it) (?:for|from) (?:me|today|now)", r"i think that's",
    r"no(?: ,)? thanks?(?: you)?(?! to| on| for the)", r"no(?: ,)? thank you(?! to| on| for the)",
    r"nope(?: ,)? thanks?", r"thanks? (?:again|so much|a lot)",
    r"all for (?:today|now)", r"nothing", r"later", r"that's everything", r"we're done", r"i'm good(?! with)",
)
_GO = _rx(r"go (?:ahead|for it|on)", r"proceed", r"do (?:it|that|this|so)", r"please do", r"cancel", r"refund",
          r"return", r"submit", r"change", r"swap", r"switch", r"update", r"process", r"confirm(?:ed)?",
          r"approved?", r"exchange", r"make (?:it|the)", r"put", r"send", r"charge", r"you (?:can|may)",
          r"let's", r"i (?:agree|approve|accept)", r"(?:yes|yeah|sure) ,? please", r"that's (?:right|correct)",
          r"correct", r"right")
_THANKS = _rx(r"thanks?\w*", r"thank you", r"ty", r"thx", r"appreciate\w*", r"cheers")
_REQUEST = _rx(r"i need", r"i'd like", r"i want", r"can you", r"could you", r"i also", r"one more",
               r"another", r"also", r"my other", r"how about", r"what about", r"where", r"when", r"can i")


# consent-specific cues: an instruction to act that nothing after it takes back, a condition put on
# the yes, negated idioms that agree ("no problem"), a reason for the yes that happens to hold a
# negation ("I don't need it"), and a question about what happens after the action (timing)
# the actions a user tells an agent to take (retail, airline, banking, telecom), for the imperative
# cue: such a verb opening a clause ("rebook me", "freeze it", "yes, send the wire") is a go-ahead
_ACTION_VERBS = (r"(?:cancel|rebook|book|freeze|unfreeze|block|unblock|send|transfer|wire|switch|move|change|swap|"
                 r"refund|return|port|unlock|reset|restart|reboot|add|remove|drop|close|file|submit|process|apply|"
                 r"upgrade|downgrade|replace|exchange|issue|reissue|activate|suspend|waive|update|order|put|end|"
                 r"renew|extend|schedule|set|charge|dispute|reverse|release|lower|raise|open|start|arrange|credit|"
                 r"void|delete|take|ship|reroute|reserve|pay|deliver|post|sign|enrol|enroll|hold|lock|check)")
_IMPERATIVE = re.compile(r"(?:^|, )(?:(?:please|pls|plz|just|then|and|so|kindly|yes|yeah|yep|yup|ok|okay|sure|"
                         r"alright|go ahead and|go on and|right|fine|great|perfect)(?: ,)? )*" + _ACTION_VERBS
                         + r"(?= (?:me|it|that|this|them|those|these|the|my|our|his|her|both|all|a|an|one|away|over|"
                         r"up|off|ahead|zzid|zzmoney|right|now|in|out|asap|today|tomorrow|please|pls)\b|$| ,)")
_GO_PHRASE = re.compile(r"(?:^| )(?:go (?:right )?(?:ahead|for it|on)|do it|do that|proceed|carry (?:on|it out)|"
                        r"please (?:do|proceed|continue|cancel|submit|process|return|swap|change|update|refund)"
                        r"|make it happen|get it done|go through with it|finali[sz]e it|you can (?:go|proceed|do))"
                        r"(?= |$)|(?:^| )(?:yes|yeah|yep|yup|sure|ok|okay)(?: ,)? please$|" + _IMPERATIVE.pattern)
_TAKE_BACK = _rx(r"wait", r"actually", r"no", r"not", r"don't", r"dont", r"stop", r"hold", r"hang", r"never ?mind",
                 r"nvm", r"forget", r"later", r"yet", r"first", r"instead", r"unless", r"if", r"only", r"rather",
                 r"scratch", r"changed", r"second thoughts?", r"before", r"until", r"but")
_CONDITION = _rx(r"as long as", r"so long as", r"only if", r"if", r"provided", r"providing", r"on (?:the )?condition",
                 r"once you\w*", r"assuming", r"unless", r"but first", r"not until", r"after you", r"as soon as you",
                 r"if and only if", r"on condition")
_AGREE_IDIOM = _rx(r"no problem", r"no worries", r"no objections?", r"not a problem", r"no concerns?", r"no issues?",
                   r"(?:don't|do not) mind", r"nothing (?:wrong|to change|to add)", r"no complaints",
                   r"no doubts?", r"without a doubt", r"(?:don't|do not) see (?:any|a) (?:issue|problem)\w*",
                   r"no (?:rush|hurry|need|stress|trouble|bother|big deal|pressure)",
                   r"not (?:fussed|bothered|an issue)",
                   r"(?:doesn't|does not|won't|wouldn't) matter", r"(?:don't|do not) (?:worry|bother)",
                   r"(?:can't|cannot) (?:see|think of) (?:why|a reason|any reason)", r"nothing against",
                   r"(?:don't|do not) have (?:a|any) (?:problem|issue|objection)s?", r"no reason not to")
_REASON_NEG = _rx(r"(?:don't|do not|won't|never|haven't|didn't|wouldn't|isn't|aren't|wasn't|can't|no longer)"
                  r" (?:really |even |ever )?(?:need|want|use|using|used|wear|fit|care|live|travel|watch|call|remember|"
                  r"find|authori[sz]e|order|make|go|get|have time|be (?:needing|using|travel\w*|going))\w*",
                  r"no longer", r"not (?:needed|using|in use|worth|enough|going|travel\w*|something i)",
                  r"(?:nobody|no one|none of us)", r"no (?:use|need) for", r"never (?:arrived|came|worked)",
                  r"(?:didn't|doesn't|don't) (?:fit|work|suit)\w*", r"not ideal", r"not thrilled", r"not my favou?rite",
                  r"unsure at first", r"hoped for")
_AFTER_Q = _rx(r"when", r"how (?:long|soon|many days)", r"roughly when", r"about how long",
               r"will i (?:get|receive|see)", r"do i get", r"and i'll get", r"what time",
               r"will (?:it|they|the|that|you|my|i)", r"do i (?:need|have) to", r"should i")


# a negation that governs an action ("don't cancel", "not yet", "no, leave it") against one that does not
# ("no rush on the refund", "I don't need it", "not thrilled about the fee"): only the first refuses
_NEG_ACTION = re.compile(r"(?:^| )(?:no|not|don't|dont|do not|never|nope|nah|please don't|won't let you)"
                         r"(?: (?:please|just|really|,))* (?:" + _ACTION_VERBS[3:-1] + r"|do|go|proceed|touch|"
                         r"yet|now|today|that|this|it|the|my|keep|leave|agree|accept|want (?:to|the|a|that|it)|"
                         r"like (?:that|it|the)|sure|ready|comfortable|happy)\b")
_ANY_NEG = re.compile(r"(?:^| )(?:no|not|don't|dont|do not|never|nope|nah|\w+n't|none|nothing|nobody|no one)(?= |$)")


# the user will do something first ("let me measure", "I need to ask my wife", "before you swap it")
_DEFER = _rx(r"let me (?:\w+ )?(?:check|think|go|see|look|ask|talk|find|measure|call|speak|confirm|double|read|"
             r"grab|get)",
             r"i (?:need|have|want) to (?:check|think|talk|ask|speak|call|look|see|find|read|compare|confirm)",
             r"before (?:you|that|we|i|anything|agreeing|deciding)",
             r"i'll (?:check|think|ask|talk|call|decide|get back)",
             r"give me (?:a|one|some|time)", r"(?:come|get) back to you")


def _go_clean(sentence: str) -> bool:
    """The sentence holds an instruction to act and nothing after the last one takes it back."""
    hits = list(_GO_PHRASE.finditer(sentence))
    if not hits:
        return False
    before = sentence[:hits[-1].start()].split()[-2:]
    negated = any(w in _NEGATORS or w.endswith("n't") or w == "dont" for w in before)
    return not negated and not _TAKE_BACK.search(sentence[hits[-1].end():])


@lru_cache(maxsize=16384)
def _char_trigrams(word: str) -> tuple[str, ...]:
    padded = f"<{word}>"
    return tuple("c:" + padded[i:i + 3] for i in range(len(padded) - 2))


_EMOJI = {"\U0001f44d": " zzthumbsup ", "\U0001f44c": " zzthumbsup ", "\u2705": " zzthumbsup ",
          "\u2714": " zzthumbsup ", "\U0001f44e": " zzthumbsdown ", "\u274c": " zzthumbsdown ",
          "\U0001f64f": " zzthanks ", "\U0001f914": " zzthinking ", "\U0001f644": " zzeyeroll ",
          "\U0001f642": " zzsmile ", "\U0001f60a": " zzsmile ", "\U0001f600": " zzsmile ", "\U0001f44b": " zzwave "}
_EMOJI_RX = re.compile("|".join(map(re.escape, _EMOJI)))


def tokens(text: str) -> list[str]:
    low = text.lower().replace("\u2019", "'").replace("\u2014", " - ").replace("\u2013", " - ")
    low = _EMOJI_RX.sub(lambda m: _EMOJI[m.group()], low)
    low = _EMAIL.sub(" zzemail ", low)
    low = _MONEY.sub(" zzmoney ", low)
    low = _ID.sub(" zzid ", low)
    return _TOKEN.findall(low)


_CUE_END = {".", "?", "!", ";", "..."}


def _sentences(toks: list[str]) -> list[tuple[str, str]]:
    """(joined words and commas, end punctuation) per sentence; brackets dropped."""
    out: list[tuple[str, str]] = []
    cur: list[str] = []
    for t in toks:
        if t in ("(", ")"):
            continue
        if t in _CUE_END:
            if cur:
                out.append((" ".join(cur), t))
                cur = []
            elif out and t in "?!":
                out[-1] = (out[-1][0], t)
            continue
        cur.append(t)
    if cur:
        out.append((" ".join(cur), ""))
    return out


_WH_OPEN = re.compile(r"(?:(?:ok(?:ay)?|thanks|got it|so|and|alright|sure) ,? )?"
                      r"(?:which|what|where|when|how|who|whom|why)\b")
_YN_OPEN = re.compile(r"(?:(?:ok(?:ay)?|thanks|got it|so|and|alright|sure) ,? )?"
                      r"(?:shall|should|can|could|may|might|would|will|do|does|did|is|are|am|was|want|ok(?:ay)?|"
                      r"are|have|has|mind|fine|good|happy|ready|any|anything)\b")
_AGENT_TAGS = (("apology", _APOLOGY), ("bye", _BYE), ("else", _ELSE), ("greet", _GREET), ("intent", _INTENT),
               ("perm", _PERMISSION), ("confirm_want", _CONFIRM_WANT),
               ("report", _REPORT), ("slot", _SLOT_Q))


def agent_cues(toks: list[str]) -> set[str]:
    sents = _sentences(toks)
    if not sents:
        return set()
    out: set[str] = set()
    tagged = [[name for name, rx in _AGENT_TAGS if rx.search(s)] for s, _ in sents]
    last, end = sents[-1]
    lastq = end == "?"
    out.add("cue:lastq" if lastq else "cue:last_not_q")
    q_tags: set[str] = set()
    for (_, e), names in zip(sents, tagged, strict=True):
        if e == "?":
            q_tags.update(names)
            out.add("cue:anyq")
    last_tags = tagged[-1]
    q_or_n = "q" if lastq else "nq"
    for name in {n for names in tagged for n in names}:
        out.add(f"cue:{name}")
    for name in last_tags:
        out.add(f"cue:{name}_last")
        out.add(f"cue:{name}_last_{q_or_n}")
    for name in q_tags:
        out.add(f"cue:{name}_inq")
    if lastq:  # a wh-question asks for a value, a yes/no question may ask permission; "A or B?" asks a choice
        kind = "wh" if _WH_OPEN.match(last) else "yn" if _YN_OPEN.match(last) else "other"
        out.add(f"cue:lastq_{kind}")
        if " or " in f" {last} " and not last.endswith(" or not"):
            out.add("cue:choice_q")
            out.add(f"cue:choice_q_{kind}")
    if lastq and len(last.split()) <= 4 and _TAG_Q.search(last):
        out.add("cue:tag_q")
        out.add("cue:perm_last_q")
    out.add("cue:lastset:" + "+".join(last_tags) + ("?" if lastq else "."))
    if len(sents) > 1:
        out.add("cue:firstset:" + "+".join(n for n in tagged[0] if n in ("apology", "intent", "perm", "report")))
    out.add(f"cue:lastlen:{min(len(last.split()) // 3, 5)}{'?' if lastq else '.'}")
    return out


def user_cues(toks: list[str]) -> set[str]:
    sents = _sentences(toks)
    if not sents:
        return set()
    out: set[str] = set()
    whole = " ".join(s for s, _ in sents)
    first = sents[0][0]
    first_clause = first.split(" , ")[0]
    aff = _AFFIRM.match(first_clause) is not None or _AFFIRM.match(first) is not None
    neg = _NEG_OPEN.match(first) is not None
    if aff:
        out.add("cue:aff_open")
    if neg:
        out.add("cue:neg_open")
    rest_words = whole.split()
    # what follows the opening clause
    opening_len = len(first_clause.split())
    tail = " ".join(rest_words[opening_len:])
    hedge_tail = bool(_HEDGE.search(tail))
    hedge_any = bool(_HEDGE.search(whole))
    if hedge_any:
        out.add("cue:hedge")
    if aff and hedge_tail:
        out.add("cue:aff_then_hedge")
    if aff and not hedge_tail:
        out.add("cue:aff_clean")
    questions = [s for s, e in sents if e == "?"]
    if questions:
        out.add("cue:q")
        out.add("cue:aff_q" if aff else "cue:noaff_q")
    if sents[-1][1] == "?":
        out.add("cue:endq")
    sarcasm = bool(_SARCASM.search(whole))
    if sarcasm:
        out.add("cue:sarcasm")
        if aff:
            out.add("cue:aff_sarcasm")
    close = bool(_CLOSE.search(whole))
    close_last = bool(_CLOSE.search(sents[-1][0]))
    thanks = bool(_THANKS.search(whole))
    request = bool(_REQUEST.search(whole))
    if close:
        out.add("cue:close")
        out.add("cue:close_" + ("neg" if neg else "aff" if aff else "plain"))
    if close_last:
        out.add("cue:close_last")
    if thanks:
        out.add("cue:thanks")
        if neg:
            out.add("cue:neg_thanks")
    if request:
        out.add("cue:request")
    imperative = [bool(_IMPERATIVE.search(x)) and _go_clean(x) for x, _ in sents]
    go = bool(_GO.search(whole)) or any(imperative)
    if any(imperative):
        out.add("cue:imperative")
        out.add("cue:imperative_" + ("first" if imperative[0] else "later"))
    neg_action = bool(_NEG_ACTION.search(whole))
    any_neg = bool(_ANY_NEG.search(whole))
    if any_neg:
        out.add("cue:neg_action" if neg_action else "cue:neg_benign")
        if (aff or go) and not neg_action:
            out.add("cue:yes_benign_neg")
    elif not aff and not go and not questions:
        out.add("cue:no_yes_no_neg")  # neither a yes, an instruction, a negation nor a question
    if go:
        out.add("cue:go")
    out.add("cue:go_close:" + ("G" if go else "") + ("C" if close else "") + ("A" if aff else "")
            + ("N" if neg else ""))
    out.add("cue:shape:" + "".join(("A" if aff else "") + ("N" if neg else "") + ("H" if hedge_tail else "")
                                   + ("Q" if questions else "") + ("C" if close else "") + ("R" if request else "")))
    out.add(f"cue:nsent:{min(len(sents), 3)}")
    last_s, last_e = sents[-1]
    if last_e != "?" and _go_clean(last_s):
        out.add("cue:go_last_clean")
        out.add("cue:go_last_clean_" + ("aff" if aff else "neg" if neg else "plain"))
    statements_before = [s for s, e in sents[:-1] if e != "?"]
    if last_e == "?" and statements_before and _go_clean(statements_before[-1]) and _AFTER_Q.search(last_s):
        out.add("cue:go_then_after_q")
    elif questions:  # a question not preceded by a clean go-ahead: asked before consenting
        out.add("cue:q_before_go" + ("_aff" if aff else ""))
    if _DEFER.search(whole):
        out.add("cue:defer")
    if _CONDITION.search(whole):
        out.add("cue:condition")
        if aff:
            out.add("cue:aff_condition")
    if _AGREE_IDIOM.search(whole):
        out.add("cue:agree_idiom")
    if _REASON_NEG.search(whole):
        out.add("cue:reason_neg")
    return out


def features(text: str, role: str = "") -> list[str]:
    """The (distinct, sorted) feature names of a message; empty for an empty message. ``role``
    (``agent`` or ``user``) adds that role's structural cues."""
    toks = tokens(text)
    if not toks:
        return []
    out: set[str] = set()
    negated = contrasted = False
    words: list[str] = []
    sentences: list[list[str]] = [[]]
    toks_nb = [t for t in toks if t != "("]  # a closing bracket ends a negation's scope, then goes
    for t in toks_nb:
        if t == ")":
            negated = False
            continue
        if t in _SENTENCE_END or t in {",", "!"}:
            negated = False
            if t in _SENTENCE_END:
                sentences.append([])
            continue
        mark = ("N_" if negated else "") + ("C_" if contrasted else "")
        out.add("w:" + mark + t)
        out.add("w:" + t)
        words.append(t)
        sentences[-1].append(t)
        if t in _NEGATORS or t.endswith("n't"):
            negated = True
        if t in _CONTRAST:
            contrasted = True
    toks_nb = [t for t in toks_nb if t != ")"]
    if not words:  # punctuation only ("?", "...")
        return sorted({"nowords", *("p:" + t for t in toks_nb)})
    seq = ["<s>", *toks_nb, "</s>"]
    for a, b in zip(seq, seq[1:], strict=False):
        out.add(f"b:{a}_{b}")
    for a, b, c in zip(seq, seq[1:], seq[2:], strict=False):
        out.add(f"t:{a}_{b}_{c}")
    sentences = [s for s in sentences if s]
    if sentences:
        first, last = sentences[0], sentences[-1]
        out.add("f:" + first[0])
        out.add("f2:" + "_".join(first[:2]))
        for t in last:
            out.add("l:" + t)
        out.add("l2:" + "_".join(last[:2]))
        for a, b in zip(last, last[1:], strict=False):
            out.add(f"lb:{a}_{b}")
        out.add(f"nsent:{min(len(sentences), 4)}")
    out.add(f"len:{min(len(words) // 3, 8)}")
    last_punct = next((t for t in reversed(toks_nb) if t in _SENTENCE_END or t in {",", "!"}), "")
    out.add("end:" + (toks_nb[-1] if toks_nb[-1] in _SENTENCE_END or toks_nb[-1] == "!" else "word"))
    out.add("lastp:" + last_punct)
    if "?" in toks_nb:
        out.add("q")
    if contrasted:
        out.add("contrast")
    for w in set(words):
        out.update(_char_trigrams(w))
    if role == "agent":
        out |= agent_cues(toks_nb)
    elif role == "user":
        out |= user_cues(toks_nb)
    return sorted(out)
