"""How the scripted policies word their dialogue acts: their own phrase banks, or the evaluation bank.

``scripted`` (the default) is the generator's wording: the oracle's confirmation wrappers and
offers of more help, the persona's yes and goodbye lines, the user's "Actually, wait:" before a
change of mind. ``evaluation`` draws those five acts from
``environments/dialogue/banks/eval.jsonl`` (a change of mind opens with one of its withdrawn
yeses, "Yes, go ahead. Actually, no, hold on."), the bank the dialogue-act recogniser is measured
on and the generator otherwise never uses: a scripted episode then reads like a model that
phrases confirmations, consents, changes of mind and closings its own way, while its calls, facts
and final state stay the oracle's. ``trajforge serve-policy --wording evaluation`` serves that
mode, so a build through the endpoint shows whether the checks hold on wording they were not
written for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

WordingName = Literal["scripted", "evaluation"]
# a consent that speaks of one action or object ("yes, cancel it", "put the refund on my card")
# fits only some requests, so the evaluation wording leaves those out of its consents
_SPECIFIC = re.compile(r"\b(cancel|return|exchange|refund|swap|switch|change|ship|send|address|card|order|"
                       r"item|payment|need it|want it|keep it)\w*", re.IGNORECASE)
WORDINGS: tuple[WordingName, ...] = ("scripted", "evaluation")


@dataclass(frozen=True)
class Wording:
    """Phrasings that replace the policies' own; ``None`` keeps theirs. ``confirm`` holds
    templates over ``{action}``, a bare infinitive clause ("cancel order #A1234567 ...")."""

    name: WordingName = "scripted"
    confirm: tuple[str, ...] | None = None
    anything_else: tuple[str, ...] | None = None
    consent: tuple[str, ...] | None = None
    closing: tuple[str, ...] | None = None
    withdrawal: tuple[str, ...] | None = None  # a yes taken back, before a change of mind

    # The scripted policies know their own phrasebook: with these wordings the user knows an
    # offer of more help or a confirmation request, and the agent a consent, by the bank's
    # phrasings as well as by the dialogue-act recogniser, so the dialogue flows as it would
    # between two models and a check meets the wording with only the recogniser to read it.

    def offers_more_help(self, text: str) -> bool:
        return any(text.endswith(offer) for offer in self.anything_else or ())

    def asks_confirmation(self, text: str) -> bool:
        return any(frame(template).search(text) for template in self.confirm or ())

    def consents(self, text: str) -> bool:
        return text in (self.consent or ())

    def withdraws(self, text: str) -> bool:
        """The reply holds a withdrawn yes of the bank (punctuation and case aside: the realiser
        joins it to what follows): whatever else it says, no consent."""
        said = _plain(text)
        return any(w in said for w in _plain_all(self.withdrawal or ()))


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s#]", " ", text.lower()).split())


@cache
def _plain_all(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_plain(t) for t in texts)


@cache
def frame(template: str) -> re.Pattern[str]:
    """A template over ``{action}`` as a regex that finds a message worded by it, the action
    as its ``action`` group (the template's text around it, the action anything between)."""
    head, _, tail = template.partition("{action}")
    return re.compile(re.escape(head) + r"(?P<action>.+?)" + re.escape(tail) + "$", re.DOTALL)


def _last_sentence(text: str) -> str:
    for end in (". ", "! ", "? "):
        text = text.rsplit(end, 1)[-1]
    return text


@cache
def wording(name: WordingName) -> Wording:
    """The named wording (``WORDINGS``); a ``ValueError`` names the choices for any other."""
    if name == "scripted":
        return Wording()
    if name != "evaluation":
        raise ValueError(f"unknown wording {name!r}; choose one of {', '.join(WORDINGS)}")
    text = resources.files("trajforge.environments.dialogue").joinpath("banks", "eval.jsonl").read_text()
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]

    def texts(role: str, label: str) -> list[str]:
        return [r["text"] for r in rows if r["role"] == role and r["label"] == label]

    return Wording(
        name="evaluation",
        confirm=tuple(t for t in texts("agent", "confirm_request") if "{action}" in t),
        # the bank's offers that follow a report keep only the offer, their last sentence
        anything_else=tuple(dict.fromkeys(_last_sentence(t) for t in texts("agent", "anything_else"))),
        consent=tuple(t for t in texts("user", "consent") if not _SPECIFIC.search(t)),
        # a closing that says the user is unhappy is for a goal not met (``Behaviour.ends_unhappy``)
        closing=tuple(r["text"] for r in rows if r["role"] == "user" and r["label"] == "closing"
                      and r["phenomenon"] != "unhappy_closing"),
        # a change of mind at a confirmation opens with one of these, then says what changed
        withdrawal=tuple(r["text"] for r in rows if r["role"] == "user" and r["phenomenon"] == "withdrawn"
                         and not _SPECIFIC.search(r["text"])),
    )
