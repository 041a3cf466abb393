"""Re-word the scripted policies' dialogue acts with phrasings from the evaluation bank.

The generator side of a transcript is known to this script (it reads the scripted policies'
own templates: the oracle's ``CONFIRM`` wrappers and ``ANYTHING_ELSE`` offers, the user's
``YES`` and ``BYE`` lines), so it can find each confirmation request, consent, offer of more
help and closing, and put a phrasing from ``trajforge/environments/dialogue/banks/eval.jsonl``
in its place: the checks then meet wording the generator never produces. The action a
confirmation request describes (its target included) is kept, so the calls, the final state and
what the request names are unchanged. Deterministic for a seed.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

BANK = Path(__file__).resolve().parent.parent / "trajforge" / "environments" / "dialogue" / "banks" / "eval.jsonl"


def _bank(label: str, role: str, *, templates: bool | None = None) -> tuple[str, ...]:
    rows = [json.loads(line) for line in BANK.read_text().splitlines() if line.strip()]
    out = []
    for row in rows:
        if row["label"] != label or row["role"] != role:
            continue
        is_template = "{action}" in row["text"]
        if templates is None or templates == is_template:
            out.append(row["text"])
    return tuple(out)


def _wrapper(template: str) -> re.Pattern[str]:
    head, _, tail = template.partition("{action}")
    return re.compile(re.escape(head) + r"(?P<action>.+?)" + re.escape(tail) + r"$", re.DOTALL)


@dataclass
class Rewording:
    """Counts of what was re-worded (per act), for the report."""

    confirm_request: int = 0
    consent: int = 0
    anything_else: int = 0
    closing: int = 0


class Reworder:
    def __init__(self) -> None:
        from trajforge.simulation import agents, user
        from trajforge.verifiers.claims import sentences

        self.wrappers = [_wrapper(t) for t in sorted(agents.CONFIRM, key=len, reverse=True)]
        self.offers = tuple(sorted(agents.ANYTHING_ELSE, key=len, reverse=True))
        self.yes = {line for lines in user.YES.values() for line in lines}
        self.bye = set(user.BYE)
        self.eval_confirm = _bank("confirm_request", "agent", templates=True)
        # an offer of more help; the bank's offers after a report keep only their last sentence
        self.eval_offer = tuple(dict.fromkeys(sentences(t)[-1] for t in _bank("anything_else", "agent")))
        self.eval_consent = _bank("consent", "user")
        self.eval_closing = _bank("closing", "user")
        self.counts = Rewording()

    def agent(self, text: str, rng: random.Random) -> str:
        for offer in self.offers:  # a report ends with the offer of more help
            if text.endswith(offer):
                text = text[: -len(offer)] + rng.choice(self.eval_offer)
                self.counts.anything_else += 1
                break
        for pattern in self.wrappers:
            m = pattern.search(text)
            if m:
                action = m.group("action")
                text = text[: m.start()] + rng.choice(self.eval_confirm).format(action=action)
                self.counts.confirm_request += 1
                break
        return text

    def user(self, text: str, rng: random.Random) -> str:
        if text in self.yes:
            self.counts.consent += 1
            return rng.choice(self.eval_consent)
        if text in self.bye:
            self.counts.closing += 1
            return rng.choice(self.eval_closing)
        return text

    def reword(self, role: str, text: str | None, rng: random.Random) -> str | None:
        if not text:
            return text
        if role == "assistant":
            return self.agent(text, rng)
        if role == "user":
            return self.user(text, rng)
        return text
