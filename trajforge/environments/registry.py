"""Domains are found through the ``trajforge.domains`` entry-point group.

The built-in ``retail`` domain registers the same way (see pyproject.toml), so a user's package
adds a domain with one entry point and no change here. Nothing is imported until asked for, a
name two packages both claim is an error, and a domain that fails to load says which one.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from trajforge.environments.base import Domain
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
    eps = _entry_points()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none installed"
        raise ConfigError("domain.name", f"unknown domain '{name}' (known: {known})")
    try:
        cls = eps[name].load()
    except Exception as exc:
        raise ConfigError("domain.name",
                          f"domain '{name}' failed to load from {eps[name].value}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Domain)):
        raise ConfigError("domain.name", f"entry point '{name}' is not a Domain subclass")
    return cls


def load_domain(name: str, size: int, seed: int) -> Domain:
    return load_domain_class(name)(size=size, seed=seed)
