"""Dialogue acts, recognised by meaning: is an agent message a confirmation request or an offer
of further help, is a user reply consent, non-consent or a closing.

Two linear models (one per role), each a bag of nine margin averaged perceptrons (integer
updates, margin 20, each member in its own seeded order over the whole bank; the members' integer
weights summed, so the bag is one linear model and costs no more to apply) trained by
``python -m trajforge.environments.dialogue.train`` on ``banks/train.jsonl`` (4,819 rows:
fragment-composed sentences plus ~2,900 hand-written ones, in retail, airline, banking and
telecom wording).
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
word 6-gram; tests/environments/test_dialogue_acts.py checks both): confirm_request P 0.993
R 0.996, anything_else P 1.000 R 0.985, consent P 0.988 R 0.970, non_consent P 0.970 R 0.988,
closing P 0.975 R 0.983 (the nine-member bag with ~650 more hand-written multi-domain rows
and the negation-scope, deferral and question-first cues; before them consent R 0.964; the
identity-question cue lost its retail words and 26 agent rows taught that "Which seat should
I ...?" asks for a fact, after which anything_else recall fell from 1.000 to 0.985); the
generator's own phrases, all four domains' (1,334), are all read right. Consent recall (and
so non-consent precision) and closing precision are still below the 98% target on eval,
although dev and dev2 (below) are above it: the gap between the tuning banks and eval is itself
the finding.

Model choices are made on ``banks/dev.jsonl`` (534 hand-written replies to a confirmation request,
265 consents, 269 non-consents; disjoint from train, eval and the generator's phrases, no word
6-gram shared with eval) and ``banks/dev2.jsonl`` (598 rows written later and harder: courtesy
tails, negations inside reasons, withdrawn and conditional yeses, questions back, emoji, four
domains; dev2 consent P 1.000 R 0.990, non_consent P 0.990 R 1.000 after tuning on it, so
optimistic), never on eval. On it the shipped model has consent P 0.992 R 0.989,
non_consent P 0.989 R 0.993 (5 errors of 534; before the ~900 replies added to train: 0.981/0.962
and 0.964/0.981, 15 errors; the single perceptron: 0.959/0.880 and 0.890/0.963). dev's
labelling: consent is a yes or an instruction to act, possibly hesitant ("ok fine, do it", "not
ideal but yes, go ahead"), with a reason, a thank-you, an agreeing negated idiom ("no problem, go
ahead") or, after the go-ahead, a question about what happens afterwards ("Yes, go ahead. How
long will the refund take?"); non-consent is a no, a hedge, a withdrawn yes, a question asked
before consenting, a condition on the yes ("only if it's free"), an off-topic turn, sarcasm, a
revision, or a polite refusal ending the conversation.

Why this and not rules or embeddings: six marker phrases and one regex recognised only the
scripted policies' own wording; a sentence-embedding model needs torch, which the core install
does not have.

A reply to a confirmation request is consent only when it is an explicit yes without a hedge,
a withdrawal, a question back, a revision or sarcasm; everything else given in answer to a
proposal (``non_consent``, ``closing``, ``other``) is not consent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from trajforge.environments.dialogue.model import load_models

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


@lru_cache(maxsize=8192)
def _agent(text: str) -> AgentAct:
    if not text.strip():
        return AgentAct("other", 1.0)
    label, score = load_models()["agent"].predict(text)
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
