"""The surface realiser of the scripted policies: parts composed into sentences, not concatenated.

A message is built from parts (a template and its values: a greeting, a lead, a request, the
details given with it, a thank-you) and ``realise`` joins them as a writer would:

- a part that continues an unfinished sentence (after a comma, or after a connective such as
  "and" that ends without punctuation) starts in lower case, unless it starts with a value (a
  name, a product, an id) or with "I"; the case is decided on the template, before it is filled,
  so a value keeps its own capitals ("Oh sure, it's the one Ana Silva sent");
- every sentence starts with a capital, also one that starts with a value given in lower case
  ("The original payment method."); an e-mail address, which has no capital form, is left as it is;
- spacing is normalised: one space between parts, none before punctuation.

``compose`` spells out every combination of a few lists of parts (opener x statement x question),
so a phrase bank built from parts is still a plain tuple of texts that the dialogue-act tests can
read whole. Nothing here knows a domain.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from trajforge.text import SENTENCE_BREAK

# a first word that keeps its capital mid-sentence: "I" and its contractions
_KEEPS_CAPITAL = re.compile(r"I(?:'[a-z]+)?\b")


@dataclass(frozen=True)
class Part:
    """A template and the values that fill it (``str.format`` placeholders)."""

    template: str
    values: Mapping[str, str] = field(default_factory=dict)

    def fill(self, *, continues: bool = False) -> str:
        """The part's text; ``continues``: it goes on a sentence begun before it."""
        template = lower_first(self.template) if continues else self.template
        return template.format_map(self.values) if self.values else template


def lower_first(template: str) -> str:
    """A template's first word in lower case, unless it is a placeholder, "I", or an acronym."""
    head = template.lstrip()
    if not head or not head[0].isupper() or _KEEPS_CAPITAL.match(head):
        return template
    word = re.match(r"[\w']+", head)
    if word is None or (len(word.group()) > 1 and word.group()[1:2].isupper()):
        return template  # "ID", "PIN", "SIM"
    at = len(template) - len(head)
    return template[:at] + head[0].lower() + head[1:]


def _capital(word: str) -> str:
    if "@" in word or not word[:1].isalpha() or not word[:1].islower():
        return word
    return word[0].upper() + word[1:]


def sentence_case(text: str) -> str:
    """Every sentence of ``text`` (as ``trajforge.text`` cuts it) starting with a capital (an
    e-mail address left as it is)."""
    text = text.strip()
    if not text:
        return text
    first = re.match(r"(\S+)", text)
    if first is not None:
        text = _capital(first.group(1)) + text[first.end():]
    out: list[str] = []
    at = 0
    for m in SENTENCE_BREAK.finditer(text):
        word = re.match(r"\S+", text[m.end():])
        if word is None:
            continue
        out += [text[at:m.end()], _capital(word.group(0))]
        at = m.end() + word.end()
    return "".join(out) + text[at:]


def _continues(text: str) -> bool:
    """Whether a part after ``text`` goes on the same sentence: ``text`` ends with a comma or
    a dash, or with a word (a connective: "and", "so"), not with a full stop, ! ? or colon."""
    tail = text.rstrip()
    return bool(tail) and (tail.endswith((",", "-", "\u2014")) or tail[-1].isalpha())


def realise(parts: Iterable[Part | str]) -> str:
    """Join parts into a message (module docstring): strings are literal parts."""
    text = ""
    for part in parts:
        part = part if isinstance(part, Part) else Part(part)
        if not part.template.strip():
            continue
        piece = part.fill(continues=_continues(text)).strip()
        text = f"{text.rstrip()} {piece}" if text else piece
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    return sentence_case(re.sub(r"\s{2,}", " ", text))


def compose(*slots: Iterable[str]) -> tuple[str, ...]:
    """Every combination of one text from each slot, realised (an empty text leaves a slot
    out), each once, in order: a phrase bank built from parts, spelled out."""
    out = (realise(choice) for choice in itertools.product(*[tuple(s) for s in slots]))
    return tuple(dict.fromkeys(t for t in out if t))
