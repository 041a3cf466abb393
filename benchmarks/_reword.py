"""Re-word the scripted policies' dialogue acts with phrasings from the evaluation bank.

The generator side of a transcript is known to this script (it reads the scripted policies'
own templates: the oracle's ``CONFIRM`` wrappers and ``ANYTHING_ELSE`` offers, the user's
``YES`` and ``BYE`` lines), so it can find each confirmation request, consent, offer of more
help and closing, and put a phrasing of the evaluation bank in its place
(``trajforge.simulation.wording.wording("evaluation")``, from
``trajforge/environments/dialogue/banks/eval.jsonl``): the checks then meet wording the
generator never produces. The action a confirmation request describes (its target included)
is kept, so the calls, the final state and what the request names are unchanged.
Deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


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
        from trajforge.simulation.wording import frame, wording

        self.wrappers = [frame(t) for t in sorted(agents.CONFIRM, key=len, reverse=True)]
        self.offers = tuple(sorted(agents.ANYTHING_ELSE, key=len, reverse=True))
        self.yes = {line for lines in user.YES.values() for line in lines}
        self.bye = set(user.BYE)
        bank = wording("evaluation")  # the same phrasings as the policies' evaluation wording
        assert bank.confirm and bank.anything_else and bank.consent and bank.closing
        self.eval_confirm, self.eval_offer = bank.confirm, bank.anything_else
        self.eval_consent, self.eval_closing = bank.consent, bank.closing
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
