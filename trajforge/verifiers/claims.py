"""Grounded claims: every fact the agent states about an entity agrees with what the tools said.

How claims are found (structured patterns per attribute type, from the domain's declaration,
``environments.claims``):

- **money**: an amount written with a dollar sign ("$12.50", "$1,024");
- **status**: a value of the attribute's vocabulary after a predicate cue in the three words
  before it ("is", "was", "has been", "now", "currently", "still", "shows (as)", "marked
  (as)", "status"); "only pending orders can be cancelled" states no status; a negation in
  the cue ("is not delivered") states that the status is something else;
- **flag**: one of the attribute's ``no`` phrases ("out of stock"), or a ``yes`` phrase
  ("available"), read as ``no`` after a negation ("not available", "isn't in stock");
- **phrase**: a value the tools showed for any entity of the attribute (an address), said
  verbatim, in a sentence that states rather than proposes (none of "can", "could", "would",
  "shall", "'ll", "going to", "to confirm": a confirmation describes what a write will do);
- **date**: an ISO date or a month-name date ("May 19", "19 May 2026").

Sentences that are questions state nothing. Each claim belongs to the entity named nearest to
it in its sentence among the records that have that attribute, or else to the last such entity
named earlier in the same message; a claim with no entity named fails ("names no entity"). It
must agree with the most recent tool output about that entity before the message (a money
claim with any amount of the record: a refund, a price, a balance). A flag with ``state_if``
(an unavailable variant) must be stated whenever anything else is said about its entity.

What it cannot see: facts in a form the patterns do not read (an amount in words, a status as
a verb phrase, "(pending)" without a predicate), relations between entities (which card a
refund went to), and arithmetic the agent did itself (a total no tool returned fails, a
correct one included). ``trajforge.verifiers.judge`` can add an LLM's opinion when configured.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from trajforge.environments.base import Domain, Observation
from trajforge.environments.claims import Attribute, AttributeType, ClaimRecord
from trajforge.environments.dialogue import is_confirmation_request
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, ToolMessage, agent_view
from trajforge.text import sentences

_MONEY = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_CUES = {"is", "was", "are", "were", "been", "now", "currently", "still", "shows", "show",
         "showing", "marked", "status", "as", "reads", "listed", "s"}
_NEGATIONS = {"not", "no", "never", "isn", "wasn", "aren", "t", "longer"}
_WORD = re.compile(r"[a-z0-9]+")
_PROPOSAL = re.compile(r"\b(can|could|would|shall|should|'ll|will be able|going to|to confirm|like me to|"
                       r"want me to|about to)\b|\bthe plan\b(?=\s*(?:is\b|:))", re.IGNORECASE)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                       "nov", "dec"), start=1)}
# a month's full name or its three-letter form ("Mar", "Mar."), not any word starting so ("Marriott")
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
          r"|(?:jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?(?![a-z]))")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NAMED_DATE = re.compile(rf"\b(?:(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?"
                         rf"\s+(?:of\s+)?(?P<m2>{_MONTH}))(?:,?\s+(?P<y>\d{{4}}))?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    attribute: Attribute
    value: Any
    negated: bool
    start: int  # offset in the sentence
    text: str


@cache  # the vocabularies and entity names recur in every message of every trajectory
def _phrase(phrase: str) -> re.Pattern[str]:
    """``phrase`` as whole words, in any case; not the tail of a contraction ("I'm" does not name
    size M, "let's" not size S), while a quoted value ("the reason 'no longer needed'") is found."""
    return re.compile(r"(?<![\w])(?<!\w['\u2019])" + r"\s+".join(map(re.escape, phrase.split())) + r"(?![\w])",
                      re.IGNORECASE)


def _words_before(sentence: str, at: int, n: int = 3) -> list[str]:
    return _WORD.findall(sentence[:at].lower())[-n:]


def _dates(sentence: str) -> Iterable[tuple[int, str, str]]:
    """(offset, ISO month-day or full date, the text) of each date in a sentence."""
    for m in _ISO_DATE.finditer(sentence):
        yield m.start(), m.group(0), m.group(0)
    for m in _NAMED_DATE.finditer(sentence):
        month = _MONTHS[(m.group("m1") or m.group("m2"))[:3].lower()]
        day = int(m.group("d1") or m.group("d2"))
        if not 1 <= day <= 31:
            continue
        year = m.group("y")
        yield m.start(), (f"{year}-" if year else "") + f"{month:02d}-{day:02d}", m.group(0)


def find_claims(sentence: str, attributes: Sequence[Attribute],
                phrases: dict[str, set[str]] | None = None, proposing: bool = False) -> list[Claim]:
    """The typed claims a declarative sentence makes (none for a question). ``phrases``: for
    each phrase attribute, the values the tools showed for any entity. ``proposing``: the
    sentence is part of a proposal (its message asks permission for an action), so the
    values it names are what the action would set, not what is (phrases are not claims)."""
    if sentence.rstrip().endswith("?"):
        return []
    out: list[Claim] = []
    proposes = proposing or bool(_PROPOSAL.search(sentence))
    for attribute in attributes:
        if attribute.type is AttributeType.phrase:
            if proposes:
                continue
            for value in sorted((phrases or {}).get(attribute.name, ()), key=len, reverse=True):
                m = _phrase(value).search(sentence)
                if m:
                    out.append(Claim(attribute, value, False, m.start(), m.group(0)))
            continue
        if attribute.type is AttributeType.date:
            out += [Claim(attribute, value, False, at, text) for at, value, text in _dates(sentence)]
            continue
        if attribute.type is AttributeType.money:
            for m in _MONEY.finditer(sentence):
                out.append(Claim(attribute, float(m.group(1).replace(",", "")), False, m.start(), m.group(0)))
        elif attribute.type is AttributeType.status:
            taken: list[tuple[int, int]] = []
            for value in sorted(attribute.vocabulary, key=len, reverse=True):
                for m in _phrase(value).finditer(sentence):
                    if any(a < m.end() and m.start() < b for a, b in taken):
                        continue
                    before = _words_before(sentence, m.start())
                    if not _CUES & set(before):
                        continue
                    taken.append((m.start(), m.end()))
                    out.append(Claim(attribute, value, bool(_NEGATIONS & set(before)), m.start(), m.group(0)))
        else:
            taken = []
            for words, flag in ((attribute.no, False), (attribute.yes, True)):
                for phrase in words:
                    for m in _phrase(phrase).finditer(sentence):
                        if any(a < m.end() and m.start() < b for a, b in taken):
                            continue
                        taken.append((m.start(), m.end()))
                        negated = bool(_NEGATIONS & set(_words_before(sentence, m.start(), 2)))
                        out.append(Claim(attribute, flag != negated, False, m.start(), m.group(0)))
    return out


def _holds(claim: Claim, record: ClaimRecord) -> bool:
    shown = record.values.get(claim.attribute.name, ())
    if claim.attribute.type is AttributeType.date:  # a month and day match the date they name
        return any(str(v) == claim.value or str(v)[5:] == claim.value for v in shown)
    if claim.attribute.type is AttributeType.phrase:
        return any(str(v).lower() == claim.value.lower() for v in shown)
    if claim.attribute.type is AttributeType.money:
        return any(isinstance(v, (int, float)) and abs(float(v) - claim.value) < 0.005 for v in shown)
    if claim.attribute.type is AttributeType.status:
        said = claim.value.lower()
        matches = any(str(v).lower() == said for v in shown)
        return not matches if claim.negated else matches
    return claim.value in shown


class _Mentions:
    """Where a sentence names the entities seen so far (ids after the domain's normalisation)."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain

    def _find(self, part: str, text: str) -> int:
        m = _phrase(self.domain.canonical_ids(part)).search(text)
        return m.start() if m else -1

    def named(self, records: Iterable[ClaimRecord], sentence: str) -> list[tuple[int, int, ClaimRecord]]:
        """(position, specificity, record) for each record the sentence names."""
        text = self.domain.canonical_ids(sentence)
        out = []
        for record in records:
            for name in record.names:
                at = [self._find(p, text) for p in name]
                if at and min(at) >= 0:
                    out.append((min(at), len(name), record))
                    break
        return out


def _own_name(claim: Claim, record: ClaimRecord) -> bool:
    """Whether a phrase claim is the record's own name ("flight HA152" names the flight, and
    says nothing about it): it can only be a claim about another entity in the sentence."""
    return claim.attribute.type is AttributeType.phrase and any(
        str(claim.value).lower() == part.lower() for name in record.names for part in name)


def _owner(claim: Claim, named: list[tuple[int, int, ClaimRecord]],
           context: list[ClaimRecord]) -> ClaimRecord | None:
    having = [(pos, spec, r) for pos, spec, r in named if claim.attribute.name in r.values]
    if any(not _own_name(claim, r) for _, _, r in having):
        having = [(pos, spec, r) for pos, spec, r in having if not _own_name(claim, r)]
    if having:
        # the most specific name (a variant over its product), then the nearest, preceding first
        best = max(spec for _, spec, _ in having)
        nearest = sorted(((pos > claim.start, abs(pos - claim.start)), r)
                         for pos, spec, r in having if spec == best)
        return nearest[0][1] if nearest else None
    return next((r for r in reversed(context) if claim.attribute.name in r.values), None)


def message_problems(domain: Domain, text: str, latest: dict[tuple[str, str], ClaimRecord]) -> list[str]:
    """What is wrong with the claims of one agent message, given the latest record per entity."""
    mentions = _Mentions(domain)
    records = list(latest.values())
    phrases: dict[str, set[str]] = {a.name: {str(v) for r in records for v in r.values.get(a.name, ())}
                                    for a in domain.claim_attributes if a.type is AttributeType.phrase}
    context: list[ClaimRecord] = []
    problems: list[str] = []
    claimed: dict[tuple[str, str], set[str]] = {}
    # a confirmation request, however worded ("The next step is to set ... Would you like me to
    # do that?"), proposes what its sentences describe: the recogniser says so, not a word list
    proposing = is_confirmation_request(text)
    for sentence in sentences(text):
        named = mentions.named(records, sentence)
        for claim in find_claims(sentence, domain.claim_attributes, phrases, proposing):
            owner = _owner(claim, named, context)
            if owner is None:
                problems.append(f"states {claim.attribute.name} '{claim.text}' without naming what it is about")
                continue
            claimed.setdefault((owner.kind, owner.key), set()).add(claim.attribute.name)
            # a sentence naming an entity and one of its parts ("the Lamp in order A1 ... $4") may
            # state either's value; two entities of one kind are never interchangeable (but not a
            # whole for its own variant: a variant's parent shows every variant's value)
            parts = {p for name in owner.names for p in name}
            others = [r for _, _, r in named if r.kind != owner.kind and claim.attribute.name in r.values
                      and not any(set(name) <= parts for name in r.names) and not _own_name(claim, r)]
            if not _holds(claim, owner) and not any(_holds(claim, r) for r in others):
                shown = ", ".join(map(str, owner.values.get(claim.attribute.name, ()))) or "nothing"
                problems.append(f"says {claim.attribute.name} '{claim.text}' of {owner.kind} {owner.key}; "
                                f"the tools showed {shown}")
        context += [r for _, _, r in sorted(named, key=lambda x: x[0])]
    for (kind, key), said in claimed.items():
        record = latest[(kind, key)]
        for attribute in domain.claim_attributes:
            if attribute.state_if is None or attribute.name in said:
                continue
            if record.values.get(attribute.name) == (attribute.state_if,):
                problems.append(f"leaves out that {kind} {key} has {attribute.name} = {attribute.state_if}")
    return problems


def claim_problems(domain: Domain, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Every claim problem of a dialogue, with the index of the message that makes it."""
    if not domain.claim_attributes:
        return []
    calls: dict[str, ToolCall] = {}
    latest: dict[tuple[str, str], ClaimRecord] = {}
    out: list[dict[str, Any]] = []
    # only the agent's calls ground its claims: the user's own tool results it never saw
    for i, message in enumerate(agent_view(messages)):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.id] = call
            if message.content:
                out += [{"message": i, "why": why} for why in message_problems(domain, message.content, latest)]
        elif isinstance(message, ToolMessage) and message.tool_call_id in calls:
            observation = Observation.of(calls[message.tool_call_id], message)
            for record in domain.claim_records(observation):
                latest[(record.kind, record.key)] = record
    return out
