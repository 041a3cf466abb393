"""What a domain declares so that facts an agent states can be checked against its tools.

A domain lists the **attributes** an agent may state about its entities (a status, an amount,
an availability), each with a type the claim finder knows how to read in prose, and turns the
records its tools return into ``ClaimRecord``s: which entity a record is, how prose names it,
and the values of its attributes. ``trajforge.verifiers.claims`` does the rest generically: it
finds typed claims in the agent's sentences, ties each to the entity the sentence (or its
message) names, and compares it with the most recent tool output about that entity.

Ids are compared after the domain's normalisation (``Domain.id_forms``): an id written with or
without its prefix (``A1234567`` and ``#A1234567``) names the same entity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class AttributeType(StrEnum):
    status = "status"  # one word or phrase of a closed vocabulary ("pending", "return requested")
    money = "money"  # an amount: "$12.50"
    flag = "flag"  # a yes/no property stated in words ("available" / "out of stock")
    phrase = "phrase"  # a free-text value the tools showed for some entity, said verbatim (an address)
    date = "date"  # a calendar date: "2026-05-19", "May 19, 2026", "19 May"


@dataclass(frozen=True)
class Attribute:
    """A property an agent may state. ``vocabulary``: a status's values. A flag's ``yes`` and
    ``no`` phrases (lower case; a ``yes`` phrase after a negation reads as ``no``);
    ``state_if``: the flag value that must be said whenever anything else is said about the
    entity (an unavailable variant's price without its unavailability misleads)."""

    name: str
    type: AttributeType
    vocabulary: tuple[str, ...] = ()
    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()
    state_if: bool | None = None


@dataclass(frozen=True)
class ClaimRecord:
    """One entity as a tool output showed it. ``names``: ways prose names it, each a tuple of
    parts that must all appear in a sentence (an id; or a product name and its options);
    ``values``: attribute name -> the values the output showed (money: every amount of the
    record, since a report may state any of them)."""

    kind: str
    key: str
    names: tuple[tuple[str, ...], ...]
    values: dict[str, tuple[Any, ...]] = field(default_factory=dict)

