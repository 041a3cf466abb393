"""The verifier version a verdict carries: which code and which checks decided it.

``verifier_version(domain, checks)`` is a digest of the source of ``trajforge.verifiers.checks``
and of every ``trajforge.verifiers`` / ``trajforge.environments`` module it imports, transitively
(found from the import statements, so a check moved to a new module stays covered), of the
source of the domain's own package (a plug-in's too), and of the names of the checks run, in
order. The check set is part of it because a verdict's ``trajectory_passed`` and ``reward`` depend
on every check run with it. Equal versions mean the same code judged with the same checks, so
re-verifying with an unchanged verifier reproduces the stored verdicts, and a changed check
gives a new version (and a new verdict set) rather than overwriting the old one.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from trajforge.environments.registry import load_domain_class
from trajforge.schemas.trajectory import Verdict

_ENTRY = "trajforge.verifiers.checks"
_COVERED = ("trajforge.verifiers", "trajforge.environments")


def _covered(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in _COVERED)


def _imported(path: Path, package: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # "from package import module"
    return {m for m in found if _covered(m)}


@cache
def check_sources() -> tuple[Path, ...]:
    """The source files the checks are made of (see the module docstring)."""
    seen: dict[str, Path] = {}
    todo = [_ENTRY]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # "from module import function": not a module
            spec = None
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        path = Path(spec.origin)
        seen[name] = path
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        todo.extend(_imported(path, package) - set(seen))
    return tuple(sorted(set(seen.values())))


def _domain_sources(domain: str) -> tuple[Path, ...]:
    module = sys.modules[load_domain_class(domain).__module__]
    origin = Path(module.__file__ or "")
    return tuple(sorted(origin.parent.rglob("*.py"))) if module.__package__ else (origin,)


@cache
def _code_digest(domain: str) -> str:
    digest = hashlib.sha256()
    for path in sorted(set(check_sources()) | set(_domain_sources(domain))):
        # the file's name inside its package, so the digest does not depend on the install path
        parts = path.parts
        name = "/".join(parts[parts.index("trajforge"):]) if "trajforge" in parts else path.name
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def verifier_version(domain: str, checks: Sequence[str]) -> str:
    """``vf_`` and 16 hex digits: the checks' code, the domain's package and the check names."""
    digest = hashlib.sha256(_code_digest(domain).encode())
    digest.update(("\0".join(checks)).encode())
    return "vf_" + digest.hexdigest()[:16]


def stamped(verdicts: list[Verdict], version: str) -> list[Verdict]:
    """The checks' verdicts with the version that made them (``checks.verify`` leaves it to its
    caller, which computes the version once for many trajectories)."""
    return [v.model_copy(update={"verifier_version": version}) for v in verdicts]
