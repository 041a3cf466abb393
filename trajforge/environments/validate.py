"""What loading a domain checks, once, before anything runs or is written.

A plug-in's mistakes would otherwise surface late and far from their cause: a tool without a
docstring as a ``TypeError`` inside the first batch of a build, a record type that is not frozen
as nothing at all (a tool that changes a record in place changes the shared template: the hash
and the diff do not see it, and every later environment starts changed). So a domain class is
checked when the registry loads it: its required declarations, its toolkit's tools, and its
state's tables. The first problem found is one line naming the thing and the fix; the registry
raises it as a ``BrokenDomain`` (a ``ConfigError``) that names the domain too.
"""

from __future__ import annotations

import inspect
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel

from trajforge.environments.base import (
    _TOOL_ATTR,
    Domain,
    State,
    ToolKind,
    Toolkit,
    _parse_docstring,
    toolkit_tools,
)
from trajforge.errors import ConfigError

FROZEN_FIX = "make the record frozen (model_config frozen=True, or subclass trajforge.schemas.base.Record)"

# the class attributes every domain sets (``Domain`` annotates them without a default), with the
# type each must have and an example for the fix
REQUIRED: tuple[tuple[str, type, str], ...] = (
    ("name", str, "name = 'mydomain'"),
    ("toolkit_type", type, "toolkit_type = MyToolkit (a Toolkit subclass)"),
    ("policy", str, "policy = '<the policy text the agent reads>'"),
    ("policy_rules", dict, "policy_rules = {'rule_id': 'what the rule says'}"),
)


class BrokenDomain(ConfigError):
    """A registered domain that cannot be used: ``problem`` says what is wrong and the fix,
    ``source`` is its entry point's ``module:attribute``."""

    def __init__(self, domain: str, source: str, problem: str) -> None:
        self.domain = domain
        self.source = source
        self.problem = problem
        super().__init__("domain.name", f"domain '{domain}' ({source}): {problem}")


@cache
def domain_problem(cls: Any) -> str | None:
    """The first thing wrong with a domain class, as one line with its fix; ``None``: none."""
    if not (isinstance(cls, type) and issubclass(cls, Domain)):
        return (f"the entry point gives {cls!r}, not a Domain subclass; point it at a subclass of "
                "trajforge.environments.Domain")
    missing = [attr for attr, _, _ in REQUIRED if not hasattr(cls, attr)]
    if missing:
        examples = "; ".join(example for attr, _, example in REQUIRED if attr in missing)
        return f"{cls.__name__} declares no {', '.join(missing)}; set the class attribute(s): {examples}"
    for attr, kind, example in REQUIRED:
        value = getattr(cls, attr)
        if not isinstance(value, kind) or (isinstance(value, str) and not value.strip()):
            return f"{cls.__name__}.{attr} is {value!r}; set it as {example}"
    if not issubclass(cls.toolkit_type, Toolkit):
        return (f"{cls.__name__}.toolkit_type is {cls.toolkit_type.__name__}, not a Toolkit subclass; "
                "set toolkit_type = MyToolkit (a subclass of trajforge.environments.Toolkit)")
    abstract = sorted(getattr(cls, "__abstractmethods__", ()))
    if abstract:
        return (f"{cls.__name__} does not implement {', '.join(abstract)}; define it (build_state: a "
                "classmethod (cls, rng, size) -> MyState)")
    problem = toolkit_problem(cls.toolkit_type)
    if problem:
        return problem
    states = declared_states(cls)
    if not states:
        return (f"{cls.__name__} declares no State type; annotate its toolkit's state "
                "(state: MyState) or build_state's return (-> MyState)")
    for state in states:
        problem = state_problem(state)
        if problem:
            return problem
    return dual_control_problem(cls, states)


def dual_control_problem(cls: type[Domain], states: tuple[type[State], ...]) -> str | None:
    """``instructions`` for a tool that is not a user tool, or ``user_tables`` naming no table."""
    tools = toolkit_tools(cls.toolkit_type)  # type: ignore[arg-type]  # mypy: a class is Hashable
    user = {name for name, t in tools.items() if t.kind is ToolKind.user}
    stray = sorted(set(cls.instructions) - user)
    if stray:
        return (f"{cls.__name__}.instructions names {', '.join(stray)}, not a user tool; mark the tool "
                "@tool(ToolKind.user) or drop its instructions")
    tables = {t for state in states for t in state.tables()}
    stray = sorted(set(cls.user_tables) - tables)
    if stray:
        return (f"{cls.__name__}.user_tables names {', '.join(stray)}, not a table of its state; "
                f"name tables of {', '.join(s.__name__ for s in states)}")
    return None


def toolkit_problem(toolkit: type[Toolkit]) -> str | None:
    """A tool without a docstring or a typed parameter, or a toolkit without tools."""
    for name, fn in inspect.getmembers(toolkit, inspect.isfunction):
        if getattr(fn, _TOOL_ATTR, None) is None:
            continue
        where = f"tool {toolkit.__name__}.{name}"
        if not _parse_docstring(fn.__doc__ or "")[0]:
            return (f"{where} has no docstring; give it one (a summary line, then 'Args:' with a "
                    "'name: text' line per parameter), the model reads it as the tool's description")
        try:
            hints = typing.get_type_hints(fn)
        except Exception as exc:  # noqa: BLE001 - a hint naming what does not resolve: reported
            return f"{where}: its type hints do not resolve ({_short(exc)}); import the types they name"
        for pname, param in inspect.signature(fn).parameters.items():
            if pname == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            if pname not in hints:
                return (f"{where}: parameter '{pname}' has no type hint; annotate it "
                        f"(e.g. {pname}: str), its JSON schema comes from the hint")
    try:  # what the checks above do not cover: no tools, a type pydantic cannot describe
        toolkit_tools(toolkit)  # type: ignore[arg-type]  # mypy: a class is Hashable
    except Exception as exc:  # noqa: BLE001 - a plug-in's own failure, reported as its problem
        return f"toolkit {toolkit.__name__}: {_short(exc)}"
    return None


def declared_states(cls: type[Domain]) -> tuple[type[State], ...]:
    """The State subclasses a domain declares: its toolkit's ``state`` annotation and
    ``build_state``'s return annotation."""
    found: list[type[State]] = []
    for owner, key in ((cls.toolkit_type, "state"), (cls.build_state, "return")):
        try:
            hint = typing.get_type_hints(owner).get(key)
        except Exception:  # noqa: BLE001 - an unresolvable annotation declares nothing
            continue
        if isinstance(hint, type) and issubclass(hint, State) and hint is not State and hint not in found:
            found.append(hint)
    return tuple(found)


@cache
def state_problem(state: type[State]) -> str | None:
    """A state field that is not a ``dict[str, R]`` table of a frozen record type ``R`` (nor the
    models its records hold frozen)."""
    for table, info in state.model_fields.items():
        where = f"state table {state.__name__}.{table}"
        hint = info.annotation
        args = typing.get_args(hint)
        if typing.get_origin(hint) is not dict or len(args) != 2 or args[0] is not str:
            return (f"{where} is {_name(hint)}, not a table; declare it as dict[str, <record>] "
                    "with a frozen record type")
        record = args[1]
        if not (isinstance(record, type) and issubclass(record, BaseModel)):
            return (f"{where} holds {_name(record)}, not a pydantic record; declare a record type "
                    "(subclass trajforge.schemas.base.Record)")
        mutable = _mutable_model(record, "", set())
        if mutable is not None:
            path, model = mutable
            inner = f", whose field {path} is a {model.__name__}," if path else ","
            return (f"{where} holds {record.__name__}{inner} which is not frozen, so a tool could "
                    f"change the shared template in place; {FROZEN_FIX}")
    return None


def _mutable_model(model: type[BaseModel], path: str, seen: set[type]) -> tuple[str, type] | None:
    """The first model reachable from ``model`` (itself included) that is not frozen, with the
    dotted field path to it (empty: ``model`` itself)."""
    seen.add(model)
    if not model.model_config.get("frozen"):
        return path, model
    for fname, info in model.model_fields.items():
        for inner in _models_in(info.annotation):
            if inner not in seen:
                found = _mutable_model(inner, f"{path}.{fname}" if path else fname, seen)
                if found is not None:
                    return found
    return None


def _models_in(hint: Any) -> list[type[BaseModel]]:
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return [hint]
    return [m for arg in typing.get_args(hint) for m in _models_in(arg)]


def _name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


def _short(exc: Exception) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
