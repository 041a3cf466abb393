"""The error taxonomy (DESIGN.md section 7): every error trajforge raises on purpose, and whose
fault it is (``blame``), so that a report or a retry policy can tell them apart by kind.

===================  ===========  ================================================================
class                blame        what it means
===================  ===========  ================================================================
``ConfigError``      user         a bad config or CLI value, found at load time; has the field
``StoreError``       user         the output folder is unusable or contradicts its manifest
``DamagedData``      user         committed files no longer match their manifest checksums
``FolderBusy``       user         another live build holds the output folder's lock
``ToolError``        model        a tool called wrongly inside an episode; shown to the model
``PolicyViolation``  model        a write the domain policy forbids (a ``ToolError``)
``PolicyFailure``    model        a policy could not produce a turn; ends the episode as data
``ToolCrash``        environment  an unexpected exception inside a tool; ends it as ``tool_crash``
``TaskRejected``     environment  the task sampler (or a proposal) gave no valid task
``LLMCallError``     provider     one failed model call attempt; ``transient`` ones are retried
``LLMFailure``       provider     a model call that failed for good (retries spent, deadline)
``TrajforgeError``   bug          the base; anything not classified more precisely is ours to fix
===================  ===========  ================================================================

Episode failures are data, not crashes: ``PolicyFailure``, ``ToolCrash`` and ``LLMFailure`` are
caught inside the episode and kept as the trajectory's termination reason. This module imports
nothing heavy, so any layer may raise from it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from trajforge.schemas.trajectory import TerminationReason


class Blame(StrEnum):
    """Whose fault an error is: who has to act for it to go away."""

    user = "user"  # the run's configuration or inputs
    model = "model"  # the agent or user-simulator model's behaviour in an episode
    provider = "provider"  # the LLM provider or server (rate limits, outages, refusals)
    environment = "environment"  # a domain: its tools, data or task sampler
    bug = "bug"  # trajforge itself


FailureKind = Literal[
    "rate_limit", "server_error", "timeout", "connection", "malformed", "empty", "length",
    "content_filter", "context_window", "bad_request", "auth", "deadline", "budget",
]
TRANSIENT: frozenset[str] = frozenset(
    {"rate_limit", "server_error", "timeout", "connection", "malformed", "empty", "length"})


class TrajforgeError(Exception):
    """Base class of every error trajforge raises on purpose."""

    blame: ClassVar[Blame] = Blame.bug


class ConfigError(TrajforgeError):
    """A bad run configuration or CLI value. ``field`` is the dotted path of the culprit."""

    blame = Blame.user

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


class ToolError(TrajforgeError):
    """A tool was called wrongly (bad id, wrong status, ...). The episode goes on."""

    blame = Blame.model


class PolicyViolation(ToolError):
    """A write the domain policy forbids. ``rule`` names the policy rule."""

    def __init__(self, rule: str, message: str) -> None:
        self.rule = rule
        super().__init__(f"policy {rule}: {message}")


class ToolCrash(TrajforgeError):
    """An unexpected exception inside a tool: a bug in the environment, not the agent."""

    blame = Blame.environment


class StoreError(TrajforgeError):
    """The output folder cannot be used as asked."""

    blame = Blame.user


class DamagedData(StoreError):
    """A read met committed files that are missing or fail their checksums. ``paths`` are
    the damaged files, relative to the output folder."""

    def __init__(self, message: str, paths: tuple[str, ...] = ()) -> None:
        self.paths = paths
        super().__init__(message)


class FolderBusy(StoreError):
    """Another live process holds the build lock of the output folder."""


class PolicyFailure(TrajforgeError):
    """A policy could not produce a turn (its model failed for good, or the user simulator kept
    breaking its rules). The episode ends with ``termination``; the trajectory is kept."""

    blame = Blame.model

    def __init__(self, termination: TerminationReason, detail: str) -> None:
        self.termination = termination
        self.detail = detail
        super().__init__(detail)


class TaskRejected(TrajforgeError):
    """The sampler could not build a valid task from this seed; ``reason`` is a short code.
    A rejected proposal raises it too: either way the blueprint is recorded as a rejection."""

    blame = Blame.environment

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


class LLMCallError(TrajforgeError):
    """One failed attempt."""

    blame = Blame.provider

    def __init__(self, kind: FailureKind, message: str, retry_after: float | None = None) -> None:
        self.kind = kind
        self.retry_after = retry_after
        super().__init__(f"{kind}: {message}")

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


class LLMFailure(TrajforgeError):
    """A call that failed for good (a permanent error, retries spent, or a deadline)."""

    blame = Blame.provider

    def __init__(self, role: str, kind: FailureKind, message: str, attempts: int) -> None:
        self.role = role
        self.kind = kind
        self.attempts = attempts
        super().__init__(f"{role} model: {kind} after {attempts} attempt(s): {message}")
