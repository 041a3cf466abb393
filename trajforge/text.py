"""Sentences: the one rule by which every part of trajforge cuts a dialogue message into sentences.

The claims parser reads a message sentence by sentence, the realiser capitalises the first word of
each, the fault forms drop or swap one, the dialogue-act recogniser and the scripted user read the
question a message ends with. They all cut where this module says:

- a sentence ends at ``.``, ``!`` or ``?`` followed by white space, and at a line break;
- not after a title or a common abbreviation (``Dr.``, ``Mr.``, ``Mrs.``, ``Ms.``, ``St.``,
  ``Apt.``, ``vs.``, ``e.g.``, ``i.e.``): "Dr. Kovacs", "12 Elm St. Apt. 4";
- not after ``No.`` before a number ("order No. 5", "no. 1481788"; "No. Not that one." is two);
- not after ``a.m.`` or ``p.m.`` before a word in lower case ("the 6:40 p.m. departure"; "It
  leaves at 6:40 p.m. Shall I book it?" is two).

``"$12.50"`` has no space after its point, so it never ends a sentence. (The free text of a tool's
output is cut at semicolons too, by the injection detector: ``environments.injection``.)
"""

from __future__ import annotations

import re

_TITLES = ("Dr", "Mr", "Mrs", "Ms", "St", "Apt", "vs", "e.g", "i.e")
_NOT_AFTER_TITLE = "".join(rf"(?<!\b{re.escape(t)}\.)" for t in _TITLES)
_NOT_NUMBER_AFTER_NO = r"(?<!\bNo\.(?=\s+[#\d]))(?<!\bno\.(?=\s+[#\d]))"
_NOT_LOWER_AFTER_TIME = r"(?<!\b[ap]\.m\.(?=\s+[a-z]))(?<!\b[AP]\.M\.(?=\s+[a-z]))"
# the white space that ends a sentence
SENTENCE_BREAK = re.compile(rf"{_NOT_AFTER_TITLE}(?<=[.!?]){_NOT_NUMBER_AFTER_NO}{_NOT_LOWER_AFTER_TIME}\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    out: list[str] = []
    at = 0
    for m in SENTENCE_BREAK.finditer(text):
        out.append(text[at:m.start()])
        at = m.end()
    out.append(text[at:])
    return [s.strip() for s in out if s.strip()]


def closing_question(text: str) -> str:
    """What a message asks: its last sentence when the message ends with a question, else all of
    it. A person answers the question that ends a message: "I see the booking, and it is still
    active. Which date would suit you?" asks for a detail, whatever the sentences before it say;
    "Return the fan? Confirm and I'll do it." ends with a request, and is read whole."""
    parts = sentences(text)
    return parts[-1] if parts and parts[-1].endswith("?") else text
