"""Executable domains: state, typed toolkit, policy, and the runtime ``Environment``.

A domain is a pydantic **state** whose fields are tables (``dict[key, record]`` of frozen
records), a **toolkit** of typed methods marked read or write, and a **policy** text. Tool
schemas come from signatures and Google-style docstrings. Writes are copy-on-write: a tool
replaces a record rather than mutating it, so a fresh state is a shallow copy of a parsed
template (microseconds), and the state hash only re-hashes records that changed.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import random
import re
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from trajforge.environments.tasks import (
    DEFAULT_IDENTITY,
    DEFAULT_PROSE,
    DEFAULT_SCENARIO,
    IdentitySpec,
    InstructionSpec,
    ProseSpec,
    ScenarioSpec,
)
from trajforge.errors import PolicyViolation, ToolCrash, ToolError
from trajforge.schemas.blueprint import StateChange
from trajforge.schemas.ids import canonical_json, normalize
from trajforge.schemas.messages import ToolCall, ToolMessage
from trajforge.schemas.tools import FunctionSpec, ToolSpec


class ToolKind(StrEnum):
    read = "read"
    write = "write"
    # a tool the USER performs on their own device (toggle a setting, restart, read a status):
    # not offered to the agent, which can only ask the user to use it (dual control)
    user = "user"


_TOOL_ATTR = "__trajforge_tool__"
Actor = Literal["agent", "user"]  # who makes a tool call


def actor_of(kind: str) -> Actor:
    """Who makes a planned call of ``kind`` (a ground-truth or draft call's): the user for a
    user tool, the agent otherwise."""
    return "user" if kind == "user" else "agent"
F = TypeVar("F", bound=Callable[..., Any])


def tool(kind: ToolKind) -> Callable[[F], F]:
    """Mark a toolkit method as a tool of the given kind."""

    def mark(fn: F) -> F:
        setattr(fn, _TOOL_ATTR, kind)
        return fn

    return mark


class TrackedTable(dict[Any, Any]):
    """A table of a state copied from the template: a dict that remembers which keys were
    written or removed since the copy, so hashing and diffing touch only those (an episode
    writes a handful of records out of thousands)."""

    __slots__ = ("dirty", "origin")

    def __init__(self, origin: dict[Any, Any]) -> None:
        super().__init__(origin)
        self.origin = origin  # the table this one was copied from
        self.dirty: set[Any] = set()

    def __setitem__(self, key: Any, value: Any) -> None:
        self.dirty.add(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self.dirty.add(key)
        super().__delitem__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        self.dirty.add(key)
        return super().pop(key, *default)

    def popitem(self) -> Any:
        key, value = super().popitem()
        self.dirty.add(key)
        return key, value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self.dirty.add(key)
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        changes = dict(*args, **kwargs)
        self.dirty.update(changes)
        super().update(changes)

    def clear(self) -> None:
        self.dirty.update(self.keys())
        super().clear()

    # dict's C-level |= would bypass ``dirty``. The ignore: |= takes any mapping or pairs while the
    # inherited | takes only a dict (dict's own asymmetry), which mypy reports as incompatible
    def __ior__(self, other: Any) -> Self:  # type: ignore[misc]
        self.update(other)
        return self

    def __reduce__(self) -> Any:  # pickles as a plain dict (the origin is not carried)
        return (dict, (dict(self),))


def _changed_keys(base: dict[str, Any], current: dict[str, Any]) -> Iterable[str]:
    """Keys whose record may differ between ``base`` and ``current`` (a table of a state
    derived from it, directly or through copies of copies: a rehearsed state's trial)."""
    keys: set[str] = set()
    table: dict[str, Any] = current
    while isinstance(table, TrackedTable):
        keys |= table.dirty
        if table.origin is base:
            return keys
        table = table.origin
    return base.keys() | current.keys()


class State(BaseModel):
    """A domain's database. Every field is a table: ``dict[str, <frozen record>]``."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def tables(cls) -> tuple[str, ...]:
        return tuple(cls.model_fields)

    def fresh_copy(self) -> State:
        """A new state sharing the (immutable) records: writes replace entries, not records."""
        return type(self).model_construct(None, **{t: TrackedTable(getattr(self, t)) for t in self.tables()})


class Toolkit:
    """Tools over one state. Subclasses add ``@tool(ToolKind.X)`` methods that raise ``ToolError``
    when called wrongly, and the domain's rules about single writes as ``write_breaches``: the
    environment refuses a write that breaks one before the tool runs."""

    def __init__(self, state: State) -> None:
        self.state = state

    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        """``(rule id, what is wrong)`` for each policy rule the write ``name(args)`` would break
        in this state (a call on an unknown id breaks none: the tool reports it). Default: none."""
        return []


@dataclass(frozen=True)
class ToolDef:
    name: str
    kind: ToolKind
    spec: ToolSpec
    args_model: type[BaseModel]
    account_params: tuple[str, ...]


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Google style: summary and body before ``Args:``; ``name: text`` lines under it."""
    lines = inspect.cleandoc(doc or "").splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section = "body"
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Returns:", "Raises:"):
            section = "args" if stripped.startswith("Arg") else "other"
            continue
        if section == "body":
            description.append(stripped)
        elif section == "args" and stripped:
            name, sep, text = stripped.partition(":")
            if sep and not line.startswith("        ") and name.isidentifier():
                current = name
                params[name] = text.strip()
            elif current:
                params[current] += " " + stripped
    return " ".join(s for s in description if s).strip(), params


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


# a domain that declares no account parameters: a ``user_id`` argument scopes a call to an account
DEFAULT_ACCOUNT_PARAMS = frozenset({"user_id"})


@cache
def toolkit_tools(cls: type[Toolkit],
                  account_params: frozenset[str] = DEFAULT_ACCOUNT_PARAMS) -> dict[str, ToolDef]:
    """The tools of a toolkit class with their schemas and argument validators (built once per
    class and declaration). ``account_params``: the parameter names that scope a call to an
    account (``Domain.account_params``); each tool's ``ToolDef.account_params`` are those it has."""
    tools: dict[str, ToolDef] = {}
    for name, fn in inspect.getmembers(cls, inspect.isfunction):
        kind = getattr(fn, _TOOL_ATTR, None)
        if kind is None:
            continue
        description, param_docs = _parse_docstring(fn.__doc__ or "")
        if not description:
            raise TypeError(f"tool {cls.__name__}.{name} has no docstring")
        hints = typing.get_type_hints(fn)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(fn).parameters.items():
            if pname == "self":
                continue
            if pname not in hints:
                raise TypeError(f"tool {cls.__name__}.{name}: parameter {pname} has no type")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hints[pname], Field(default, description=param_docs.get(pname)))
        args_model = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
        parameters = _strip_titles(args_model.model_json_schema())
        parameters.setdefault("properties", {})
        spec = ToolSpec(function=FunctionSpec(name=name, description=description,
                                              parameters=parameters))
        account = tuple(p for p in fields if p in account_params)
        tools[name] = ToolDef(name=name, kind=kind, spec=spec, args_model=args_model,
                              account_params=account)
    if not tools:
        raise TypeError(f"toolkit {cls.__name__} declares no tools")
    return tools


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], BaseModel):
        return "[" + ",".join(v.model_dump_json() for v in value) + "]"
    return json.dumps(normalize(value))


# --- hashing and diffs ------------------------------------------------------------------------

_MOD = 1 << 256


def _record_digest(table: str, key: str, record: BaseModel) -> int:
    text = f"{table}\x00{key}\x00{canonical_json(record.model_dump(mode='json'))}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")


@functools.lru_cache(maxsize=4096)  # recent texts: an episode asks of the same ones
def _canonical_ids(id_forms: tuple[tuple[str, str], ...], text: str) -> str:
    """``Domain.canonical_ids``, remembered: the checks and the fault search ask it of the same
    ids and tool outputs many times an episode."""
    for pattern, replacement in id_forms:
        text = re.sub(pattern, replacement, text)
    return text


class StateHasher:
    """Canonical state hash: the sum (mod 2**256) of sha256 over every (table, key, record).

    Equal states hash equal whatever order writes happened in. Digests of the template's
    records are computed once; a state derived from the template re-hashes only the records
    that are not the template's own objects.
    """

    def __init__(self, template: State) -> None:
        self.template = template
        self._digests: dict[str, dict[str, int]] = {}
        total = 0
        for table in template.tables():
            digests = {k: _record_digest(table, k, r) for k, r in getattr(template, table).items()}
            self._digests[table] = digests
            total += sum(digests.values())
        self._total = total % _MOD

    def hash(self, state: State) -> str:
        total = self._total
        for table in self.template.tables():
            current: dict[str, Any] = getattr(state, table)
            base: dict[str, Any] = getattr(self.template, table)
            if current is base:
                continue
            digests = self._digests[table]
            for key in _changed_keys(base, current):
                before, now = base.get(key), current.get(key)
                if now is before:
                    continue
                if before is not None:
                    total -= digests[key]
                if now is not None:
                    total += _record_digest(table, key, now)
        return format(total % _MOD, "064x")


def _diff_values(table: str, key: str, path: str, before: Any, after: Any,
                 out: list[StateChange]) -> None:
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for k in sorted(before.keys() | after.keys()):
            _diff_values(table, key, f"{path}.{k}" if path else k, before.get(k), after.get(k), out)
        return
    out.append(StateChange(table=table, key=key, path=path, before=before, after=after))


def state_diff(base: State, state: State) -> tuple[StateChange, ...]:
    """Field-level differences from ``base`` to ``state``, sorted by table, key and path."""
    out: list[StateChange] = []
    for table in base.tables():
        old: dict[str, Any] = getattr(base, table)
        new: dict[str, Any] = getattr(state, table)
        if old is new:
            continue
        for key in sorted(_changed_keys(old, new)):
            a, b = old.get(key), new.get(key)
            if a is b:
                continue
            _diff_values(table, key, "",
                         a.model_dump(mode="json") if a is not None else None,
                         b.model_dump(mode="json") if b is not None else None, out)
    return tuple(out)


# --- domains and environments -----------------------------------------------------------------

@dataclass(frozen=True)
class ReportFacts:
    """What a careful agent can tell the user about an intent, from its tools. ``values``: the
    report placeholders' values (the entity, a status, an amount...); ``entity``: the keys of
    ``values`` that name the entity the report is about; ``must_say``: keys a report must always
    state (an unavailable variant's availability)."""

    values: dict[str, str] = field(default_factory=dict)
    entity: tuple[str, ...] = ()
    must_say: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """One tool call of an episode as the agent saw it: the call, and its result parsed from
    the tool message's JSON (the text itself when it is not JSON), or the error text."""

    tool: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None

    @classmethod
    def of(cls, call: ToolCall, message: ToolMessage | None) -> Observation:
        arguments = call.parsed_arguments() or {}
        if message is None:
            return cls(call.name, arguments, error="no result")
        if message.is_error:
            return cls(call.name, arguments, error=message.content)
        try:
            result = json.loads(message.content)
        except ValueError:
            result = message.content
        return cls(call.name, arguments, result)


class Domain(ABC):
    """A domain: how to build its state, its toolkit, its policy and its verifier hooks.

    Construct once per process (it parses/builds the template state), then call
    ``environment()`` per episode.
    """

    name: ClassVar[str]
    toolkit_type: ClassVar[type[Toolkit]]
    policy: ClassVar[str]
    policy_rules: ClassVar[dict[str, str]]
    auth_tools: ClassVar[frozenset[str]] = frozenset()
    transfer_tool: ClassVar[str | None] = None
    tool_rules: ClassVar[dict[str, tuple[str, ...]]] = {}
    intents: ClassVar[dict[str, Any]] = {}  # kind -> environments.tasks.IntentSpec
    slots: ClassVar[dict[str, Any]] = {}  # key -> environments.tasks.SlotSpec
    # how the user proves who they are: the factor sets, and the scripted sides' phrases for them
    identity: ClassVar[IdentitySpec] = DEFAULT_IDENTITY
    # how its tasks are put in prose: the user's role in a goal, and a paraphrase's word swaps
    prose: ClassVar[ProseSpec] = DEFAULT_PROSE
    # what its users bring with them: backgrounds, reasons per intent kind, constraints
    scenario: ClassVar[ScenarioSpec] = DEFAULT_SCENARIO
    bare_reports: ClassVar[tuple[str, ...]] = ("Done.",)
    # a regex matching the domain's entity ids and contact details, so a user simulator that
    # invents one (not in its profile, not said by the agent) can be caught; None: unchecked
    entity_pattern: ClassVar[str | None] = None
    # how ids are written in prose and arguments, as (regex, replacement) pairs that rewrite any
    # form to the canonical one (a missing prefix put back); checks compare ids after them
    id_forms: ClassVar[tuple[tuple[str, str], ...]] = ()
    # the attributes an agent may state about entities (environments.claims), for grounded_claims
    claim_attributes: ClassVar[tuple[Any, ...]] = ()
    # the parameters that scope a call to an account (its owner must be the authenticated user):
    # the authentication check and the account-targeting faults read them
    account_params: ClassVar[frozenset[str]] = DEFAULT_ACCOUNT_PARAMS
    # the parameters whose values reference entities (an id, an ISBN, a card number: a value the
    # agent must have been given or shown before it uses one), for grounded_ids and the id faults;
    # None: every parameter named ``*_id`` or ``*_ids``
    entity_params: ClassVar[frozenset[str] | None] = None
    # dual control: the state's tables that are the user's own device (its settings, its status),
    # changed only by the user's tools (``ToolKind.user``); the rest is the account side
    user_tables: ClassVar[frozenset[str]] = frozenset()
    # per user tool, how the agent asks the user to use it and how the user recognises and
    # answers the ask (environments.tasks.InstructionSpec)
    instructions: ClassVar[dict[str, InstructionSpec]] = {}

    def __init__(self, size: int = 300, seed: int = 0) -> None:
        self.size = size
        self.seed = seed
        self.template = self.build_state(random.Random(seed), size)
        self.hasher = StateHasher(self.template)
        # mypy does not see a type[X] value as Hashable (a class object is), hence the ignore
        self.tools = toolkit_tools(self.toolkit_type, self.account_params)  # type: ignore[arg-type]
        # dual control: the agent's tools (read and write) and the user's own (their device's)
        self.agent_tools = {n: t for n, t in self.tools.items() if t.kind is not ToolKind.user}
        self.user_tools = {n: t for n, t in self.tools.items() if t.kind is ToolKind.user}

    @classmethod
    @abstractmethod
    def build_state(cls, rng: random.Random, size: int) -> State:
        """Build the domain's data, deterministically for the generator's seed."""

    def task_sampler(self) -> Any:
        """An object with ``sample(rng, n_intents, **axes) -> DraftTask`` (environments.tasks)."""
        raise NotImplementedError(f"domain {self.name} has no task sampler")

    def sample_entities(self, rng: random.Random, k: int = 2) -> dict[str, list[dict[str, Any]]]:
        """Real records of the template state for an LLM proposer to build a task around.
        Default: ``k`` random records per table; domains override it to return a coherent
        group (e.g. an account and the records it owns)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for table in self.template.tables():
            records: dict[str, Any] = getattr(self.template, table)
            keys = sorted(records)
            out[table] = [records[key].model_dump(mode="json")
                          for key in rng.sample(keys, min(k, len(keys)))]
        return out

    def fresh_state(self) -> State:
        return self.template.fresh_copy()

    def environment(self, state: State | None = None) -> Environment:
        return Environment(self, state if state is not None else self.fresh_state())

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The agent's tools (read and write)."""
        return tuple(t.spec for t in self.agent_tools.values())

    def user_tool_specs(self) -> tuple[ToolSpec, ...]:
        """The user's tools, on their own device (``ToolKind.user``)."""
        return tuple(t.spec for t in self.user_tools.values())

    def account_owner(self, state: State, args: dict[str, Any]) -> str | None:
        """Whose account a call touches (``None`` when it touches no account)."""
        return None

    def policy_breaches(self, state: State, tool_name: str, args: dict[str, Any],
                        authenticated: str | None) -> list[str]:
        """Policy rules a call would break in ``state``, as rule ids: the toolkit's
        ``write_breaches``, and ``own_account`` when it touches another account than the
        authenticated user's (``account_owner``)."""
        rules = [rule for rule, _ in self.toolkit_type(state).write_breaches(tool_name, args)]
        owner = self.account_owner(state, args)
        if authenticated is not None and owner is not None and owner != authenticated:
            rules.append("own_account")
        return rules

    def references_entity(self, param: str) -> bool:
        """Whether a tool parameter's values reference entities (``entity_params``)."""
        if self.entity_params is None:
            return param.endswith(("_id", "_ids"))
        return param in self.entity_params

    def canonical_ids(self, text: str) -> str:
        """``text`` with every id in the domain's canonical form (``id_forms``)."""
        return _canonical_ids(self.id_forms, text)

    def claim_records(self, observation: Observation) -> list[Any]:
        """The entities a tool output shows, as ``environments.claims.ClaimRecord``s (their
        names in prose and attribute values). Default: none, so no claim can be checked."""
        return []

    def names_target(self, state: State, tool_name: str, args: dict[str, Any], text: str) -> bool:
        """Whether ``text`` (a confirmation request) names what the write ``tool_name(args)``
        acts on, so a yes to it is a yes to this write. Default: every single entity-valued
        argument (``references_entity``) appears in it, compared after ``canonical_ids``."""
        said = self.canonical_ids(text)
        return all(self.canonical_ids(str(v)) in said for k, v in args.items()
                   if self.references_entity(k) and not isinstance(v, list))

    def candidates(self, slot: str, words: str, observed: tuple[Observation, ...]) -> tuple[str, ...]:
        """The entities this episode's tool results ``observed`` showed that the user's ``words``
        for ``slot`` fit, by id (more than one: the agent asks which one is meant, naming them).
        Default: none known, so the agent asks without naming any."""
        return ()

    def report_facts(self, kind: str, slots: dict[str, str],
                     observed: tuple[Observation, ...]) -> ReportFacts:
        """What a careful agent can tell the user about an intent of ``kind`` (its user-facing
        ``slots``), read from this episode's tool results ``observed`` (oldest first): the
        values of the intent's report placeholders (the entity it is about, a status, an
        amount...). The scripted oracle fills its reports from this, never from the blueprint.
        Default: nothing, so reports with placeholders cannot be filled."""
        return ReportFacts()


class Environment:
    """One episode's world: a state, the toolkit bound to it, and tool execution."""

    def __init__(self, domain: Domain, state: State) -> None:
        self.domain = domain
        self.state = state
        self.toolkit = domain.toolkit_type(state)

    def call(self, name: str, arguments: dict[str, Any], actor: Actor = "agent") -> Any:
        """Validate and run a tool, returning its raw result. Raises ``ToolError`` / ``ToolCrash``.
        ``actor``: who calls, the agent (its read and write tools) or the user (only the user
        tools); a tool of the other side is as unknown as a tool that does not exist."""
        tools = self.domain.user_tools if actor == "user" else self.domain.agent_tools
        tool_def = tools.get(name)
        if tool_def is None:
            raise ToolError(f"unknown tool '{name}'")
        try:
            args = tool_def.args_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                                 for e in exc.errors())
            raise ToolError(f"invalid arguments for {name}: {problems}") from None
        if tool_def.kind is ToolKind.write:
            breaches = self.toolkit.write_breaches(name, dict(args))
            if breaches:
                raise PolicyViolation(*breaches[0])
        try:
            return getattr(self.toolkit, name)(**dict(args))
        except ToolError:
            raise
        except Exception as exc:  # a bug in the tool, not the agent's mistake
            raise ToolCrash(f"{name} crashed: {type(exc).__name__}: {exc}") from exc

    def execute(self, call: ToolCall, actor: Actor = "agent") -> ToolMessage:
        """Run one tool call as the agent (or the user) made it; mistakes become error tool
        messages."""
        arguments = call.parsed_arguments()
        if arguments is None:
            return ToolMessage(content="Error: arguments are not a JSON object",
                               tool_call_id=call.id, name=call.name, is_error=True)
        try:
            result = self.call(call.name, arguments, actor)
        except ToolError as exc:
            return ToolMessage(content=f"Error: {exc}", tool_call_id=call.id, name=call.name,
                               is_error=True)
        return ToolMessage(content=_result_text(result), tool_call_id=call.id, name=call.name)

    def state_hash(self) -> str:
        return self.domain.hasher.hash(self.state)

    def diff(self) -> tuple[StateChange, ...]:
        return state_diff(self.domain.template, self.state)
