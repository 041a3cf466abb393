"""Dialogue acts, recognised by meaning: is an agent message a confirmation request or an offer
of further help, is a user reply consent, non-consent or a closing.

Two linear models (one per role), each a bag of nine margin averaged perceptrons (integer
updates, margin 20, each member in its own seeded order over the whole bank; the members' integer
weights summed, so the bag is one linear model and costs no more to apply) trained by
``python -m trajforge.environments.dialogue.train`` on ``banks/train.jsonl`` (8,405 rows:
fragment-composed sentences plus ~3,700 hand-written ones, in retail, airline, banking and
telecom wording and, from the second writer below, insurance, hotels, appointments, utilities,
delivery, rentals and more).
The features (:mod:`features`) are of two kinds: lexical (word uni/bi/tri-grams with negation
and contrast marking, the opening, the last sentence and its bigrams, punctuation cues,
character trigrams for typos) and structural cues that transfer across wordings: for agent
messages, whether the last sentence is a question, a yes/no, wh- or choice ("A or B?") question,
whether a question asks permission for an action ("shall I ...", "do you want me to ...", "is
that okay?"), whether the message states an intended action, asks for a slot, offers further help,
reports a result, apologises or says goodbye, and where (last sentence, any question, opening);
for user replies, whether the reply opens with an affirmation or a negation, whether a hedge or
contrast follows the yes, whether it asks a question, carries sarcasm cues, closing cues,
thanks, a new request or an instruction to go ahead, whether the last sentence is an instruction
to act that nothing after it takes back, a go-ahead followed by a question about what happens
after (timing), a condition put on the yes ("as long as", "only if", "once you"), an agreeing
negated idiom ("no problem", "no objection") and a reason for the yes that holds a negation ("I
don't need it"). The weights are integers, so retraining
reproduces ``weights.json`` byte for byte. No torch, no network; a classification is cached per
text (about 140 us on first sight, on a shared 2-core machine).

Measured (benchmarks/results/dialogue_acts.md) on ``banks/eval.jsonl``, a bank written separately
from the training bank and from the generator's phrases (disjoint after normalisation, no shared
word 6-gram; tests/environments/test_dialogue_acts.py checks both): confirm_request P 0.999
R 1.000, anything_else P 1.000 R 0.994, consent P 0.979 R 0.979, non_consent P 0.979 R 0.979,
closing P 0.980 R 0.993 (since ``banks/train.jsonl`` took a fifth and a sixth writer's replies,
below; before: consent P 0.976 R 0.970, non_consent P 0.970 R 0.976, closing P 0.979 R 0.979);
the generator's own phrases, all four domains' (20,731 with what the agent found before a
confirmation and its answers to the user's behaviours), are all read right. Consent and
non-consent are one or two errors short of 98% on eval (6-7 consents missed and 7-8 non-consents
taken for consent on five training seeds; the shipped seed misses 7 and takes 7).

An agent that says what it found before it asks ("The order shows as pending. Let me know if I
should cancel it.") is read as ``other`` more often: both banks got such messages (``found_prefix`` rows: a hand-written
statement, different in train and eval, before a row of the same bank;
``benchmarks/data/dialogue_bank_rows.py``). On eval's 270 of them the model read
confirm_request at P 0.993 R 1.000 before and after retraining; in 300 retail episodes worded
from the evaluation bank whose agent says what it found, confirmation requests misread fell from
20 writes to 14 (5 when the agent says nothing before asking).

A message that ends with a question is a confirmation request only when that question, read on
its own, is one (``trajforge.text.closing_question``): a person answers the question a message
ends with, so "Thanks. I see both accounts on your profile. What amount should I send?" asks for a
detail, although its last two sentences together read as a request to the model. The scripted
user, the confirmation check and the claims check (whose phrase claims a proposal does not make)
all take this one reading. In 1,200 oracle episodes of the four built-in domains (9,493 agent
messages) it changed 7 readings, all banking questions for an amount after a found line; on the
evaluation bank it removed 3 of 4 false requests and no true one.

Whatever the action: a request is read by its form, not by what it asks to do. The evaluation
bank's 44 request templates filled with the generator's actions (long, with addresses, reasons in
brackets, price settlements; never in a training bank), alone and after what the agent found,
were read right 96.6% of the time ("Let me know if I should cancel your order (reason: no
longer needed) and refund the original payment method. Ready when you are." was ``other``); in
2,000 oracle episodes re-worded from the evaluation bank, 66 writes failed confirmation for it.
Three changes (session 15): ``action_template`` rows in train.jsonl (a writer who saw neither the
evaluation bank nor the generator's phrasing wrote 120 long actions in many domains, 70 request
templates, 50 templates that name an action without asking, 40 found lines;
``benchmarks/data/action_lists.py``, composed by ``benchmarks/data/dialogue_bank_rows.py``, a
fifth of the templates held out), a negation's scope ends at a closing bracket, and a message read
as ``other`` is read again from its last ``TAIL_SENTENCES`` sentences (what an agent asks comes
last; a long preamble of asides and findings dilutes it). Now 99.56%; the held-out templates
99.44% (95.4% before), their non-requests 95.7% ``other`` (96.1%; one template, "With your
approval on record, I'm starting the request to ...", is read as a request); re-worded episodes'
writes misread for the request: 3 in 2,000.

``banks/writer2.jsonl`` is the harder measure: 375 replies (with the agent message each answers)
by a second writer who never saw any bank or the generator's phrases, asked for hard cases
(consents with no yes-word, negated reasons, grudging yeses, slang; yeses taken back, conditions,
deferrals), held out from training (the writer's other 789 rows are in train.jsonl). The model
trained without any of the writer's rows read its consents at P 0.968 R 0.753 (on a third of
them; non_consent P 0.778); with two thirds in training: consent P 0.946 R 0.853, non_consent
P 0.867 R 0.951. An n-gram linear model does not reach 98% on wording this far from its
training bank; frozen all-MiniLM-L6-v2 sentence embeddings with logistic regression did worse
(consent R 0.55 on the writer's bank).

Model choices are made on ``banks/dev.jsonl`` (534 hand-written replies to a confirmation request,
265 consents, 269 non-consents; disjoint from train, eval and the generator's phrases, no word
6-gram shared with eval) and ``banks/dev2.jsonl`` (598 rows written later and harder: courtesy
tails, negations inside reasons, withdrawn and conditional yeses, questions back, emoji, four
domains; dev2 consent P 1.000 R 0.995, non_consent P 0.995 R 1.000 after tuning on it, so
optimistic: the second writer's rows took its consent recall to 0.976, and 42 rows written for
its errors brought it back), never on eval. On dev the shipped model has consent P 0.992
R 0.981, non_consent P 0.982 R 0.993 (7 errors of 534; before the ~900 replies added to train
in session 6: 0.981/0.962 and 0.964/0.981, 15 errors; the single perceptron: 0.959/0.880 and
0.890/0.963). A margin of 10 instead of 20 misread two of the generator's phrases. dev's
labelling: consent is a yes or an instruction to act, possibly hesitant ("ok fine, do it", "not
ideal but yes, go ahead"), with a reason, a thank-you, an agreeing negated idiom ("no problem, go
ahead") or, after the go-ahead, a question about what happens afterwards ("Yes, go ahead. How
long will the refund take?"); non-consent is a no, a hedge, a withdrawn yes, a question asked
before consenting, a condition on the yes ("only if it's free"), an off-topic turn, sarcasm, a
revision, or a polite refusal ending the conversation.

Why this and not rules or embeddings: six marker phrases and one regex recognised only the
scripted policies' own wording; a sentence-embedding model needs torch, which the core install
does not have.

``banks/writer3.jsonl`` (session 15) is a third writer's 597 replies to confirmation requests,
each with the request it answers, written without sight of any bank, the generator or the tests,
never trained on: consent P 0.943 R 0.907, non_consent P 0.915 R 0.948. Weakest: consents that
only thank or acknowledge (0.743 read right), non-consents that open like a yes ("Yes, I saw
that, but I'd rather keep it": 0.767), hesitant consents and consents with no yes-word (0.86).
Two thirds of it in train.jsonl were tried: writer2's consent recall rose from 0.853 to 0.881,
writer3's own held third did not move and the generator's phrases were no longer all read
right, so it stays a measure only (``benchmarks/data/dialogue_bank_rows.py``).

``banks/writer4.jsonl`` (session 23) is a fourth writer's 291 replies to confirmation requests in
twelve phenomena, held out whole: consent P 0.955 R 0.864, non_consent P 0.873 R 0.958 (consents
with a negated reason 0.733, agreeing idioms 0.826). Tried then on all held-out writers and not
kept (``benchmarks/results/dialogue_acts.md``, last section): a consent model for replies only,
a go-ahead cue outside a negation's scope, two thirds of writer4 in training, an MLP over the
same features; none lowered the independent writers' errors by more than a few. A fine-tuned
all-MiniLM-L6-v2 made 78 errors on writer2-4 against the shipped model's 97 (more on dev and
dev2), still short of 98%, and it needs torch.

A fifth and a sixth writer (session 25, ``benchmarks/data/writer5.jsonl`` and ``writer6.jsonl``:
768 replies to confirmation requests in nineteen phenomena; 930 replies to requests and to offers
of more help across registers, chat, dictated, non-native, elderly and emoji among them; each
written by a helper that saw no bank, no generator phrase and no test) are trained on (738 and 690
rows after the banks' filter; writer6 without its polite refusals by thanks, which are closings to a
model that reads a reply alone, and without its replies that go on after an offer), with 23 rows
written for two families of the generator's phrases the fifth writer made misread (a redirect after
a request, "nope" closings; ``benchmarks/data/dialogue_bank_rows.py``). Chosen on the held-out
banks: the independent writers' consent errors fell from 97 to 61 (writer2 28 -> 18, writer3
43 -> 25, writer4 26 -> 18; consent recall 0.902, 0.948, 0.898), dev's from 7 to 4 and dev2's from
1 to 4 (one of dev2's 36 closings, "nah ty", is now read as a refusal).

A seventh and an eighth writer (session 27, ``banks/writer7.jsonl`` and ``writer8.jsonl``: 596
and 494 replies to confirmation requests after the banks' filter, in 31 and 43 phenomena across
many businesses, each by a helper that saw no bank, no generator phrase and no test) are held out
whole: consent P 0.956 R 0.940 and P 0.941 R 0.945. Independent writers' replies are read right
about 95% of the time, eval's 97.9%. Tried and not kept: the seventh writer trained on whole
(the other held-out writers' consent errors 61 -> 63, eval's 14 -> 15, writer8's 27 -> 27), and
cues of how a long reply ends ("... so yes, please cancel it", where writer7's rambling consents
are read right half the time; no bank moved by more than one error). More independent data and
more cues no longer move this linear model.

The user model reads a reply without the message it answers; "Ok, thanks." or "You got it,
thanks." after a confirmation request are consents to the evaluation bank's writer and ``other`` or
``closing`` to the model (train.jsonl has "Ok, thanks for checking." as an acknowledgement of
information, ``other``): these account for most of the re-worded episodes that fail confirmation.

A reply to a confirmation request is consent only when it is an explicit yes without a hedge,
a withdrawal, a question back, a revision or sarcasm; everything else given in answer to a
proposal (``non_consent``, ``closing``, ``other``) is not consent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from trajforge.environments.dialogue.model import load_models
from trajforge.text import closing_question, sentences

AgentLabel = Literal["confirm_request", "anything_else", "other"]
UserLabel = Literal["consent", "non_consent", "closing", "other"]


@dataclass(frozen=True)
class AgentAct:
    label: AgentLabel
    score: float  # the winning label's softmax share of the model's scores (1.0 for an empty text)


@dataclass(frozen=True)
class UserAct:
    label: UserLabel
    score: float


TAIL_SENTENCES = 2


@lru_cache(maxsize=8192)
def _agent(text: str) -> AgentAct:
    if not text.strip():
        return AgentAct("other", 1.0)
    model = load_models()["agent"]
    label, score = model.predict(text)
    if label == "other":  # what an agent asks is said last: read the closing sentences on their own too
        parts = sentences(text)
        if len(parts) > TAIL_SENTENCES:
            tail_label, tail_score = model.predict(" ".join(parts[-TAIL_SENTENCES:]))
            if tail_label == "confirm_request":
                label, score = tail_label, tail_score
    if label == "confirm_request":  # and the question it ends with asks it: not a found line, then a question
        asked = closing_question(text)  # for a detail ("I see both accounts. What amount should I send?")
        if asked != text and model.predict(asked)[0] != "confirm_request":
            return AgentAct("other", score)
    return AgentAct(label, score)  # type: ignore[arg-type]


@lru_cache(maxsize=8192)
def _user(text: str) -> UserAct:
    if not text.strip():
        return UserAct("other", 1.0)
    label, score = load_models()["user"].predict(text)
    return UserAct(label, score)  # type: ignore[arg-type]


def classify_agent(text: str | None) -> AgentAct:
    """What an agent message does: ask permission for an action, offer further help, or other."""
    return _agent(text or "")


def classify_user(text: str | None) -> UserAct:
    """What a user message does: consent, non-consent, close the conversation, or other."""
    return _user(text or "")


def is_affirmative(text: str | None) -> bool:
    """The user consents to the action just proposed: an explicit yes, nothing taking it back."""
    return classify_user(text).label == "consent"


def is_confirmation_request(text: str | None) -> bool:
    """The agent asks the user's permission to perform an action it describes."""
    return classify_agent(text).label == "confirm_request"


def asks_anything_else(text: str | None) -> bool:
    """The agent offers further help (asks whether there is anything else)."""
    return classify_agent(text).label == "anything_else"
