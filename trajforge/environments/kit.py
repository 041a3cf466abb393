"""The domain authoring kit: what every domain would otherwise write again.

- ``standard_rules``: the rules every domain has (authenticate, confirm, own_account), worded for
  its users and their identity factors. Their checks are the framework's (``verifiers.checks``):
  a domain declares what they need (``auth_tools``, ``account_params``, ``account_owner``).
- ``policy_text``: the policy the agent reads, the rules numbered with their ids.
- ``KindMix`` and ``draw_intents``: a task's intents drawn by weight, each kind tried until one
  can be built for this user, a failed attempt undone.
- ``run_ground_truth``: an intent's calls executed on the sampler's working environment, so the
  next intent sees their effects and outputs are real results.
- ``TaskBuilder``: the base of a domain's per-task builder: the working environment, the reads
  made so far (a read is not repeated until a write makes it stale), the entities already used,
  and the checkpoint, rollback and execute that ``draw_intents`` drives.
- ``find``: a record of a table by key, or the ``ToolError`` "<what> <key> not found" a tool
  raises for an unknown id.
- ``parse_python``: ``ast.parse`` safe in threads (a tool that evaluates an expression; the code
  digest of ``trajforge.sources``).

Write-rule enforcement is ``Toolkit.write_breaches`` (``environments.base``): the environment
asks it before every write and refuses the call with the first rule it breaks, so a tool does
not check rules itself; the policy check replays the same method. Frozen records are enforced
when a domain loads (``environments.validate``).
"""

from __future__ import annotations

import ast
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from trajforge.environments.base import Environment, State, actor_of
from trajforge.environments.tasks import DraftCall, DraftIntent
from trajforge.errors import TaskRejected, ToolError

R = TypeVar("R")

# the ids of the rules ``standard_rules`` words; the framework's checks are named after them
AUTHENTICATE, CONFIRM, OWN_ACCOUNT = "authenticate", "confirm", "own_account"


def standard_rules(*, user: str = "user", identify: str = "their account details",
                   owns: str = "account and records") -> dict[str, str]:
    """The three rules of every domain, in its words: ``user``, who the agent serves ("client",
    "passenger"); ``identify``, how they prove who they are ("email, or name and date of birth");
    ``owns``, what is theirs ("profile and orders")."""
    return {
        AUTHENTICATE: f"Authenticate the {user} by {identify}, before looking at or changing any "
                      "of their data.",
        CONFIRM: "Before every write, describe the action and its details and get an explicit yes "
                 f"from the {user}. One yes covers one write.",
        OWN_ACCOUNT: f"Only look at or act on the authenticated {user}'s own {owns}.",
    }


def policy_text(title: str, preamble: str, rules: Mapping[str, str], closing: str = "") -> str:
    """The policy the agent reads: a title, a preamble, the rules numbered with their ids in
    brackets (``3. [cancel_pending] Only pending orders can be cancelled.``), a closing line."""
    lines = [f"# {title}", "", preamble, ""]
    lines += [f"{i}. [{rule}] {text}" for i, (rule, text) in enumerate(rules.items(), start=1)]
    if closing:
        lines += ["", closing]
    return "\n".join(lines)


@dataclass(frozen=True)
class KindMix:
    """Which intent kinds a task draws from: read-only and write kinds (a draw picks the
    read-only pool with the sampler's ``p_read_only``), each kind's weight (default 1), the
    kinds a task holds at most once, and the kinds that end a task (a hand-over to a human: no
    intent is drawn after one)."""

    read_only: tuple[str, ...]
    writes: tuple[str, ...]
    weights: Mapping[str, int] = field(default_factory=dict)
    once: frozenset[str] = frozenset()
    final: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(self.read_only) - set(self.writes)
        if unknown:
            raise ValueError(f"KindMix weights name kinds it does not draw: {sorted(unknown)}")


class IntentBuilder(Protocol):
    """What ``draw_intents`` drives: one task's builder over the sampler's working environment."""

    def build(self, kind: str) -> DraftIntent:
        """An intent of ``kind`` for this task's user, or ``TaskRejected`` when it has none."""
        ...

    def checkpoint(self) -> object:
        """What ``rollback`` needs to undo a failed ``build`` (the reads and entities it used)."""
        ...

    def rollback(self, point: object) -> None: ...

    def execute(self, intent: DraftIntent) -> None:
        """Run the intent's calls (``run_ground_truth``) and note their effects."""
        ...


def draw_intents(rng: random.Random, n_intents: int, p_read_only: float, mix: KindMix,
                 builder: IntentBuilder) -> list[DraftIntent]:
    """Up to ``n_intents`` intents, each executed before the next is drawn. Each draw picks a
    pool, then tries its kinds by weight without replacement until one builds; a task with at
    least one intent ends early when no kind fits, one with none raises
    ``TaskRejected("no_feasible_intent")`` naming why each kind failed."""
    intents: list[DraftIntent] = []
    for _ in range(n_intents):
        pool = mix.read_only if rng.random() < p_read_only else mix.writes
        had = {i.kind for i in intents}
        kinds = [k for k in pool if k not in mix.once or k not in had]
        weights = [mix.weights.get(k, 1) for k in kinds]
        intent = None
        failures: list[str] = []
        while kinds and intent is None:
            kind = rng.choices(kinds, weights)[0]
            idx = kinds.index(kind)
            kinds.pop(idx)
            weights.pop(idx)
            point = builder.checkpoint()
            try:
                intent = builder.build(kind)
            except TaskRejected as exc:
                failures.append(exc.reason)
                builder.rollback(point)
        if intent is None:
            if intents:  # fewer intents than asked: the user has nothing more to do
                break
            raise TaskRejected("no_feasible_intent", ",".join(sorted(set(failures))))
        builder.execute(intent)
        intents.append(intent)
        if intent.kind in mix.final:
            break
    return intents


def run_ground_truth(env: Environment, intent: DraftIntent) -> bool:
    """Run an intent's calls on the sampler's working environment; whether one was a write
    (what was read before it may be stale). A failing call rejects the task."""
    wrote = False
    for call in intent.calls:
        try:
            env.call(call.name, call.arguments, actor_of(call.kind))
        except ToolError as exc:
            raise TaskRejected("ground_truth_call_failed", f"{call.name}: {exc}") from None
        wrote = wrote or call.kind == "write"
    return wrote


# the share of references whose words can fit several entities the intent could act on that do
# (a clarify step: the user says the words, and gives the exact one when asked)
P_AMBIGUOUS = 0.7


class TaskBuilder:
    """Builds one task of a domain over the sampler's working environment (``env``, drawing from
    ``rng``): a domain subclasses it with its intent builders (``build``) and its references.
    ``read_call`` gives a read only the first time (what was read stays known until a write);
    ``used`` holds the entities intents have taken, so two intents of a task act on different
    ones; ``refresh`` is called after a write, to re-read what the builder holds (the user's
    record). The checkpoint, rollback and execute are what ``draw_intents`` needs.

    Clarify steps: while an intent is built, ``kind`` is its kind and a reference whose words fit
    several entities sets ``clarify`` to (slot, the words); ``build`` attaches it to the intent.
    ``clarify_plan``: a planned draw (``sample_planned``), whether it must have one (None: drawn,
    with ``P_AMBIGUOUS`` of the references that can be ambiguous)."""

    def __init__(self, env: Environment, rng: random.Random) -> None:
        self.env, self.rng = env, rng
        self.read: set[str] = set()
        self.used: set[str] = set()
        self.kind = ""
        self.clarify: tuple[str, str] | None = None
        self.clarify_plan: bool | None = None

    @property
    def state(self) -> State:
        return self.env.state

    def build(self, kind: str) -> DraftIntent:
        """The intent of ``kind``: by default the builder's method ``_<kind>()``."""
        method = getattr(self, f"_{kind}", None)
        if method is None:
            raise TaskRejected("unknown_intent_kind", kind)
        self.kind, self.clarify = kind, None
        intent = cast(DraftIntent, method())
        intent.clarify = self.clarify
        return intent

    def read_call(self, name: str, args: dict[str, Any], needs: tuple[str, ...] = ()) -> list[DraftCall]:
        """``[the read]``, or ``[]`` when this task already made it since its last write."""
        key = f"{name}:{sorted(args.items())}"
        if key in self.read:
            return []
        self.read.add(key)
        return [DraftCall(name, args, "read", needs)]

    def checkpoint(self) -> object:
        return set(self.read), set(self.used)

    def rollback(self, point: object) -> None:
        read, used = cast(tuple[set[str], set[str]], point)
        self.read, self.used = set(read), set(used)

    def execute(self, intent: DraftIntent) -> None:
        if run_ground_truth(self.env, intent):
            self.read.clear()  # what was read before a write may be stale now
            self.refresh()

    def refresh(self) -> None:
        """Re-read what the builder holds of the state after a write. Default: nothing."""


def find(table: Mapping[str, R], key: str, what: str) -> R:
    """``table[key]``, or ``ToolError("<what> <key> not found")`` (what a tool says of an id
    that names nothing)."""
    record = table.get(key)
    if record is None:
        raise ToolError(f"{what} {key} not found")
    return record


_PARSING = threading.Lock()


def parse_python(source: str | bytes, mode: str = "exec") -> ast.AST:
    """``ast.parse``, one at a time and tried again on a spurious ``SystemError``: CPython 3.11's
    AST constructor keeps one recursion counter per interpreter, and a parse in another thread
    (a flow's, a library's, a tool's) can leave it off ("AST constructor recursion depth mismatch",
    python/cpython#106905; seen here once in a build flow test). Every parse trajforge makes in a
    process that runs threads goes through here (the code digest, airline's ``calculate``)."""
    for _ in range(2):
        try:
            with _PARSING:
                return ast.parse(source, mode=mode)
        except SystemError:
            time.sleep(0.05)
    with _PARSING:
        return ast.parse(source, mode=mode)
