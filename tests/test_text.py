"""The one sentence rule (trajforge.text) that the claims parser, the realiser, the fault forms,
the dialogue-act recogniser and the scripted user share."""

from __future__ import annotations

import pytest

from trajforge.simulation.realise import sentence_case
from trajforge.text import closing_question, sentences


@pytest.mark.parametrize(("text", "expected"), [
    ("It costs $12.50. Shall I add it?", ["It costs $12.50.", "Shall I add it?"]),
    ("Dr. Kovacs lives at 12 Elm St. Apt. 4. Is that right?", ["Dr. Kovacs lives at 12 Elm St. Apt. 4.",
                                                               "Is that right?"]),
    ("May I cancel order no. 1481788 now?", ["May I cancel order no. 1481788 now?"]),
    ("Order No. #12 is here. No. Not that one!", ["Order No. #12 is here.", "No.", "Not that one!"]),
    ("Take the 6:40 p.m. departure? It leaves at 6:40 p.m. Shall I book it?",
     ["Take the 6:40 p.m. departure?", "It leaves at 6:40 p.m.", "Shall I book it?"]),
    ("Use the e.g. field. Done!\nNext line", ["Use the e.g. field.", "Done!", "Next line"]),
    ("  ", []),
])
def test_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_the_question_a_message_ends_with() -> None:
    assert closing_question("I see the booking, and it is active. Which date suits you?") == "Which date suits you?"
    assert closing_question("Return the fan? Confirm and I'll do it.") == "Return the fan? Confirm and I'll do it."
    assert closing_question("Shall I?") == "Shall I?"


def test_the_realiser_capitalises_where_the_rule_cuts() -> None:
    assert sentence_case("no. not that one! why? ok") == "No. Not that one! Why? Ok"
    assert sentence_case("the 6:40 p.m. departure is full. the next one is at 9 p.m. Shall I?") == (
        "The 6:40 p.m. departure is full. The next one is at 9 p.m. Shall I?")
    assert sentence_case("see Dr. lee at 12 Elm St. tomorrow.") == "See Dr. lee at 12 Elm St. tomorrow."
