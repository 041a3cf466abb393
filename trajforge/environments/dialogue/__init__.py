"""Dialogue acts, recognised by meaning: is an agent message a confirmation request or an offer
of further help, is a user reply consent, non-consent or a closing.

Two linear models (one per role) over word uni/bi/tri-grams with negation and contrast marking
(a word after "not"/"no" or after "but"/"actually"/"wait" is a different feature), the first
words and the last sentence, punctuation cues and character trigrams, trained as averaged
perceptrons by ``python -m trajforge.environments.dialogue.train`` on ``banks/train.jsonl``. The
weights are integers, so retraining reproduces ``weights.json`` byte for byte. No torch, no
network; a classification is cached per text.

Why this and not rules or embeddings: six marker phrases and one regex recognised only the
scripted policies' own wording; a sentence-embedding model needs torch, which the core install
does not have. The linear model is measured on ``banks/eval.jsonl``, a bank written separately
from the training bank and from the generator's phrases (disjoint after normalisation, no shared
word 6-gram; tests/environments/test_dialogue_acts.py checks both); benchmarks/dialogue_acts.py
reports per-class precision and recall there (benchmarks/results/dialogue_acts.md).

A reply to a confirmation request is consent only when it is an explicit yes without a hedge,
a withdrawal, a question back, a revision or sarcasm; everything else given in answer to a
proposal (``non_consent``, ``closing``, ``other``) is not consent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from trajforge.environments.dialogue.model import load_models

IDENTITY_MARKERS = ("email", "zip code")

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
