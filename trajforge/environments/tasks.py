"""What a domain tells generators and scripted policies about its tasks.

A domain samples ``DraftTask``s (who the user is, their intents, the ground-truth calls) and
describes each intent kind with an ``IntentSpec``: the slots the agent must learn from the user
and the phrase banks both scripted sides draw their varied wording from. The generic machinery
(personas, disclosure plans, validation, scripted dialogue) lives in generators/ and simulation/.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from trajforge.errors import TaskRejected  # noqa: F401 - its old home; imported from here too
from trajforge.schemas.blueprint import Outcome


@dataclass
class DraftCall:
    name: str
    arguments: dict[str, Any]
    kind: Literal["read", "write", "user"]  # "user": a user tool the user performs when asked
    needs: tuple[str, ...] = ()  # slots the user must have given before this call makes sense


@dataclass
class DraftOutput:
    key: str
    value: str
    after: int  # index into the intent's calls


@dataclass
class DraftIntent:
    kind: str
    slots: dict[str, str]  # final user-facing values
    calls: list[DraftCall]
    outputs: list[DraftOutput] = field(default_factory=list)
    evidence_burden: int = 0
    revision: tuple[str, str] | None = None  # (slot, value the user says first)
    # (slot, what the user says first): a description that fits more than one entity the agent
    # reads, so a careful agent asks which one; the user then gives the slot's value
    clarify: tuple[str, str] | None = None
    initial_kind: str | None = None  # asked first, then redirected to ``kind``
    initial_slots: dict[str, str] = field(default_factory=dict)
    # a refused intent: the write(s) the user asks for, which the policy forbids after ``calls``
    refused: list[DraftCall] = field(default_factory=list)


@dataclass
class DraftTask:
    identity: dict[str, str]  # the facts of one of the domain's IdentitySpec.factors, by name
    auth_calls: list[DraftCall]
    intents: list[DraftIntent]


@dataclass(frozen=True)
class SlotSpec:
    """A fact the agent asks for. ``keywords`` (lower case) mark an agent message as asking it."""

    key: str
    questions: tuple[str, ...]
    keywords: tuple[str, ...]
    answers: tuple[str, ...]  # the user's ways to give it; ``{value}``
    # how the agent asks which one is meant when the user's words fit several it read:
    # ``{candidates}`` (the entities it read, named by the ids it read them by)
    clarify: tuple[str, ...] = ()


@dataclass(frozen=True)
class InstructionSpec:
    """How the scripted sides handle one user tool (dual control: the user acts on their own
    device). ``asks``: the agent's ways to ask the user to use it, over the call's arguments;
    ``keywords`` (lower case): mark an agent message as asking for it (what the user
    recognises, declared apart from the agent's wording); ``replies``: the user's ways to say
    what they see afterwards, over the fields of the tool's result (a JSON object).
    ``describe``: instead of ``replies``, the domain's own realiser of what the user sees, from the
    result's fields (as strings) and the user's random stream, for results whose values need words
    of their own (a setting's state said as a person says it, not as the tool spells it).

    What the user says is all a model-backed agent learns of a user tool's result (the exports
    leave the user's calls and results out), so it must name every fact the agent's next step
    acts on."""

    asks: tuple[str, ...]
    keywords: tuple[str, ...]
    replies: tuple[str, ...] = ()
    describe: Callable[[dict[str, str], random.Random], str] | None = None

    def __post_init__(self) -> None:
        if not self.replies and self.describe is None:
            raise ValueError("an InstructionSpec needs replies or describe")


@dataclass(frozen=True)
class IdentitySpec:
    """How a user proves who they are, for the scripted agent and user.

    ``factors``: the sets of user facts (keys of the blueprint's user facts) any one of which
    identifies the user, e.g. ``(("card",), ("name", "birth_date"))``; a set of several is a
    second factor. A user gives the first set whose facts it all has (the last set otherwise);
    the agent asks until every identity fact the user has has been said. ``asks``: the agent's
    ways to ask for them; ``keywords`` (lower case): mark an agent message as asking;
    ``answers``: per set of ``factors`` (same order), the user's ways to give it, over
    ``{fact}`` placeholders."""

    factors: tuple[tuple[str, ...], ...]
    asks: tuple[str, ...]
    keywords: tuple[str, ...]
    answers: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        if len(self.answers) != len(self.factors):
            raise ValueError("IdentitySpec: one tuple of answers per set of factors")

    @property
    def facts(self) -> tuple[str, ...]:
        """Every identity fact, each once, in declaration order."""
        return tuple(dict.fromkeys(f for group in self.factors for f in group))

    def given(self, has: Callable[[str], object]) -> int:
        """Which set of ``factors`` a user gives: the first it ``has`` every fact of, else the last."""
        return next((i for i, group in enumerate(self.factors) if all(has(f) for f in group)),
                    len(self.factors) - 1)


# a domain that declares no identity: the user gives an account id when asked for it
DEFAULT_IDENTITY = IdentitySpec(
    factors=(("user_id",),),
    asks=("Before I look at your account, could you give me your user id?",),
    keywords=("user id", "identify", "verify"),
    answers=(("My user id is {user_id}.",),))


@dataclass(frozen=True)
class ProseSpec:
    """How a domain's tasks are put in prose. ``role``: who the user plays, as a blueprint's
    goal opens (``You are {role} ({who}). You want: ...``); ``roles``: paraphrases of that
    opening, over ``{who}``; ``synonyms``: (phrase, replacements) a paraphrase may swap in a
    goal's requests, tried in this order."""

    role: str
    roles: tuple[str, ...]
    synonyms: tuple[tuple[str, tuple[str, ...]], ...]


# ways of asking, in any domain: a domain's synonyms may start with these
ASKING_SYNONYMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("I want to", ("I'd like to", "I need to", "I wish to")),
    ("I'd like to", ("I want to", "I would like to", "I need to")),
    ("I need to", ("I have to", "I must", "I want to")),
    ("Can you", ("Could you", "Would you", "Please")),
    ("Can I", ("Could I", "Am I able to", "Is it possible to")),
    ("Could I", ("Can I", "May I")),
)

# a domain that declares no prose: a neutral role and synonyms of no domain
DEFAULT_PROSE = ProseSpec(
    role="a user",
    roles=("You are a user ({who}).", "Play a user ({who}).", "Act as a user of the service ({who}).",
           "Role: user ({who})."),
    synonyms=ASKING_SYNONYMS + (
        ("change", ("update", "alter", "switch")),
        ("different", ("another", "other")),
        ("tell me", ("let me know", "check")),
        ("status", ("state", "progress")),
    ))


@dataclass(frozen=True)
class Situation:
    """Why a user wants one intent, in the user's own words (first person: I, my, me; never
    "you", "we" or "our"), over the intent's core slots (``{items}``; never at a sentence's
    start). ``when``: the slot values it needs (``(("reason", "ordered by mistake"),)``); empty
    when it fits every task of the kind. It states only what every such task implies, or the
    values of ``when`` (drawn only when the user volunteers those facts, never when the agent must
    ask for them): never another fact the task data decides (an amount, a date, a status)."""

    text: str
    when: tuple[tuple[str, str], ...] = ()

    def fits(self, slots: dict[str, str]) -> bool:
        return all(slots.get(slot) == value for slot, value in self.when)


@dataclass(frozen=True)
class ScenarioSpec:
    """What a domain's users bring with them, so a blueprint's goal reads as a situation with
    reasons rather than a list of requests (``generators.scenario`` composes it). Every entry is
    in the user's own words (as :class:`Situation` says), so the scripted user can say it and the
    goal puts it in the second person.

    ``backgrounds``: who the user is and what is going on in their life (one or two sentences,
    no placeholders); ``situations``: per intent kind, why they want it; ``constraints``:
    preferences and limits that leave the ground truth as it is ("I'd rather not be on this chat
    for long"); ``fallbacks``: per intent kind, what they would accept if it cannot be done."""

    backgrounds: tuple[str, ...]
    situations: dict[str, tuple[Situation, ...]] = field(default_factory=dict)
    constraints: tuple[str, ...] = ()
    fallbacks: dict[str, tuple[str, ...]] = field(default_factory=dict)


# a domain that declares no scenarios: users of no particular service
DEFAULT_SCENARIO = ScenarioSpec(
    backgrounds=("I use this service now and then.", "I've used it for a few years.",
                 "I'm new to this service.", "I don't contact support often."),
    constraints=("I'd like to get this done quickly.", "I'd rather not repeat myself."))


@dataclass(frozen=True)
class IntentSpec:
    kind: str
    writes: bool
    core_slots: tuple[str, ...]  # always in the user's request
    slots: tuple[str, ...]  # everything the agent needs, in asking order
    requests: tuple[str, ...]  # user's ways to state it, over core slots
    actions: tuple[str, ...]  # agent's confirmation descriptions, over slots and the target's id
    reports: tuple[str, ...]  # agent's completion reports, over outputs
    # what a correct agent ends with: the request done, refused under the policy (a read-only
    # intent whose reports state the blocking facts and the rule), or handed to a human (its
    # last call is the transfer tool); "refused" and "transferred" make a task policy-bound
    outcome: Outcome = "done"
    # what the agent found, said before it asks to confirm a write, over the values
    # ``Domain.report_facts`` gives before the write (the target's status, a balance, a price);
    # a template whose placeholders are not all known is not used; none: nothing is said
    found: tuple[str, ...] = ()
    # what the agent says when it takes the request up, and with the intent's first read (the
    # account read too, when the intent's work starts there): what it is working on, in
    # its own words, before it knows the outcome, so a kind the user's words cannot tell apart
    # from another (a cancellation that will be refused) shares that kind's banks. A model that
    # learns from the dialogue then finds the request restated near every decision, not only in
    # the user's opening. None: nothing is said.
    takes: tuple[str, ...] = ()
    progress: tuple[str, ...] = ()


def pick(rng: random.Random, options: tuple[str, ...], **values: str) -> str:
    return rng.choice(options).format(**values)


@dataclass(frozen=True)
class IntentPlan:
    """The shape one intent of a task must have: its kind and how it is put to the agent
    (asked first as another kind and redirected, a fact revised, the target named by
    description rather than by id, or by one that fits several so that the agent asks which).
    Used to sample variants of an existing task."""

    kind: str
    redirect: bool = False
    revision: bool = False
    indirect: bool = False
    clarify: bool = False  # the target first described in words that fit several: asked which one


@dataclass(frozen=True)
class TaskPlan:
    """The shape of a whole task: how the user authenticates and its intents, in order."""

    auth_tool: str | None
    intents: tuple[IntentPlan, ...]
    n_entities: int | None = None  # how many candidates a description picks among, when it matters
