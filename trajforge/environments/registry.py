"""Domains are found through the ``trajforge.domains`` entry-point group.

The built-in ``retail`` domain registers the same way (see pyproject.toml), so a user's package
adds a domain with one entry point and no change here. Nothing is imported until asked for, a
name two packages both claim is an error, and a domain that fails to load or to validate
(environments.validate: its declarations, tools and state tables) is a ``BrokenDomain``, one
line naming it, its source and the fix, which breaks that domain alone.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from trajforge.environments.base import Domain
from trajforge.environments.validate import BrokenDomain, domain_problem, state_problem
from trajforge.errors import ConfigError

GROUP = "trajforge.domains"


def _entry_points() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        other = found.get(ep.name)
        if other is not None and other.value != ep.value:
            raise ConfigError("domain.name", f"domain '{ep.name}' is registered twice "
                                             f"({other.value} and {ep.value})")
        found[ep.name] = ep
    return found


def domain_names() -> list[str]:
    return sorted(_entry_points())


def load_domain_class(name: str) -> type[Domain]:
    """The domain class registered as ``name``, imported and validated. Raises ``ConfigError``
    for an unknown name, ``BrokenDomain`` (a ``ConfigError``) for one that cannot be used."""
    eps = _entry_points()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none installed"
        raise ConfigError("domain.name", f"unknown domain '{name}' (known: {known})")
    source = eps[name].value
    try:
        cls = eps[name].load()
    except Exception as exc:
        raise BrokenDomain(name, source, f"failed to load: {type(exc).__name__}: {exc}; fix the "
                                         "module or the entry point") from exc
    problem = domain_problem(cls)
    if problem is not None:
        raise BrokenDomain(name, source, problem)
    checked: type[Domain] = cls
    return checked


def load_domain(name: str, size: int, seed: int) -> Domain:
    """A domain instance; the state it builds is checked too (when its class declares another
    State type than the one it builds)."""
    domain = load_domain_class(name)(size=size, seed=seed)
    problem = state_problem(type(domain.template))
    if problem is not None:
        raise BrokenDomain(name, type(domain).__module__, problem)
    return domain
