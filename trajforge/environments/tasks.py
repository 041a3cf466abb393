"""What a domain tells generators and scripted policies about its tasks.

A domain samples ``DraftTask``s (who the user is, their intents, the ground-truth calls) and
describes each intent kind with an ``IntentSpec``: the slots the agent must learn from the user
and the phrase banks both scripted sides draw their varied wording from. The generic machinery
(personas, disclosure plans, validation, scripted dialogue) lives in generators/ and simulation/.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

from trajforge.errors import TaskRejected  # noqa: F401 - its old home; imported from here too


@dataclass
class DraftCall:
    name: str
    arguments: dict[str, Any]
    kind: Literal["read", "write"]
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
    initial_kind: str | None = None  # asked first, then redirected to ``kind``
    initial_slots: dict[str, str] = field(default_factory=dict)


@dataclass
class DraftTask:
    identity: dict[str, str]  # e.g. {"email": ...} or {"name": ..., "zip": ...}
    auth_calls: list[DraftCall]
    intents: list[DraftIntent]


@dataclass(frozen=True)
class SlotSpec:
    """A fact the agent asks for. ``keywords`` (lower case) mark an agent message as asking it."""

    key: str
    questions: tuple[str, ...]
    keywords: tuple[str, ...]
    answers: tuple[str, ...]  # the user's ways to give it; ``{value}``


@dataclass(frozen=True)
class IntentSpec:
    kind: str
    writes: bool
    core_slots: tuple[str, ...]  # always in the user's request
    slots: tuple[str, ...]  # everything the agent needs, in asking order
    requests: tuple[str, ...]  # user's ways to state it, over core slots
    actions: tuple[str, ...]  # agent's confirmation descriptions, over slots and ``{order_id}``
    reports: tuple[str, ...]  # agent's completion reports, over outputs


def pick(rng: random.Random, options: tuple[str, ...], **values: str) -> str:
    return rng.choice(options).format(**values)


@dataclass(frozen=True)
class IntentPlan:
    """The shape one intent of a task must have: its kind and how it is put to the agent
    (asked first as another kind and redirected, a fact revised, the target named by
    description rather than by id). Used to sample variants of an existing task."""

    kind: str
    redirect: bool = False
    revision: bool = False
    indirect: bool = False


@dataclass(frozen=True)
class TaskPlan:
    """The shape of a whole task: how the user authenticates and its intents, in order."""

    auth_tool: str | None
    intents: tuple[IntentPlan, ...]
    n_entities: int | None = None  # how many candidates a description picks among, when it matters
