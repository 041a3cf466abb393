"""What a piece of trajforge is made of: the source files behind a module, and their digest.

A cache key (the build's ``code_version``) and a verdict's ``verifier_version`` both name the
code that produced a row. That code is found from import statements, so moving a function to a
new module keeps it covered: ``module_closure(entry, within)`` follows the imports of ``entry``
(at the top or inside functions) through the packages ``within``; ``domain_sources`` is the
source of the package that holds a domain (a plug-in's, or a built-in's); ``source_digest``
hashes files by their name inside their package, so it does not depend on the install path.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from trajforge.environments.kit import parse_python
from trajforge.environments.registry import load_domain_class


def _inside(name: str, within: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in within)


def _imports(path: Path, package: str, within: tuple[str, ...]) -> set[str]:
    """The modules of ``within`` a source file imports."""
    found: set[str] = set()
    for node in ast.walk(parse_python(path.read_bytes())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # "from package import module"
    return {m for m in found if _inside(m, within)}


@cache
def module_closure(entry: str, within: tuple[str, ...] = ("trajforge",)) -> tuple[Path, ...]:
    """The source files of ``entry`` and of every module of ``within`` it imports, transitively."""
    seen: dict[str, Path] = {}
    todo = [entry]
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
        todo.extend(_imports(path, package, within) - set(seen))
    return tuple(sorted(set(seen.values())))


def domain_sources(domain: str | type) -> tuple[Path, ...]:
    """The source files of the package that holds the domain (a plug-in's, or a built-in's):
    ``domain`` is its registered name or its class (also one no entry point names, such as a
    plug-in under ``trajforge domains check``)."""
    module = sys.modules[(load_domain_class(domain) if isinstance(domain, str) else domain).__module__]
    origin = Path(module.__file__ or "")
    return tuple(sorted(origin.parent.rglob("*.py"))) if module.__package__ else (origin,)


def source_digest(paths: Iterable[Path]) -> str:
    """sha256 over the files, each by its name inside its package (from ``trajforge/`` on, or
    its file name) and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(set(paths)):
        parts = path.parts
        name = "/".join(parts[parts.index("trajforge"):]) if "trajforge" in parts else path.name
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
