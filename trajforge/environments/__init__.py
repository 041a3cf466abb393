"""Executable domains: base classes, the entry-point registry, and the built-in domains."""

from trajforge.environments.base import Domain, Environment, State, ToolKind, Toolkit, tool
from trajforge.environments.registry import domain_names, load_domain, load_domain_class

__all__ = ["Domain", "Environment", "State", "ToolKind", "Toolkit", "domain_names", "load_domain",
           "load_domain_class", "tool"]
