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

import hashlib
from collections.abc import Sequence
from functools import cache

from trajforge.schemas.trajectory import Verdict
from trajforge.sources import domain_sources, module_closure, source_digest

_ENTRY = "trajforge.verifiers.checks"
_COVERED = ("trajforge.verifiers", "trajforge.environments")


@cache
def _code_digest(domain: str | type) -> str:
    return source_digest(module_closure(_ENTRY, _COVERED) + domain_sources(domain))


def verifier_version(domain: str | type, checks: Sequence[str]) -> str:
    """``vf_`` and 16 hex digits: the checks' code, the domain's package (``domain``: its name or
    its class, as ``sources.domain_sources`` takes it) and the check names."""
    digest = hashlib.sha256(_code_digest(domain).encode())
    digest.update(("\0".join(checks)).encode())
    return "vf_" + digest.hexdigest()[:16]


def stamped(verdicts: list[Verdict], version: str) -> list[Verdict]:
    """The checks' verdicts with the version that made them (``checks.verify`` leaves it to its
    caller, which computes the version once for many trajectories)."""
    return [v.model_copy(update={"verifier_version": version}) for v in verdicts]
