"""The error taxonomy: every error class says whose fault it is, the moved classes are the same
objects from their old modules, and they keep their constructors and what they carry."""

from __future__ import annotations

import importlib
import inspect

import pytest

from trajforge import errors
from trajforge.errors import Blame, TrajforgeError
from trajforge.schemas.trajectory import TerminationReason

ERROR_CLASSES = [obj for _, obj in inspect.getmembers(errors, inspect.isclass)
                 if issubclass(obj, BaseException) and obj.__module__ == errors.__name__]


def test_the_module_defines_the_whole_taxonomy() -> None:
    names = {cls.__name__ for cls in ERROR_CLASSES}
    assert names >= {"TrajforgeError", "ConfigError", "ToolError", "PolicyViolation", "ToolCrash",
                     "StoreError", "PolicyFailure", "TaskRejected", "LLMCallError", "LLMFailure"}


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_has_a_blame(cls: type[BaseException]) -> None:
    assert issubclass(cls, TrajforgeError)
    assert isinstance(cls.blame, Blame)  # type: ignore[attr-defined]
    # the docstring's table lists it with the same blame
    row = next(line for line in (errors.__doc__ or "").splitlines()
               if line.startswith(f"``{cls.__name__}``"))
    assert row.split()[1] == cls.blame.value  # type: ignore[attr-defined]


@pytest.mark.parametrize(("old_module", "name"), [
    ("trajforge.simulation.llm", "LLMCallError"),
    ("trajforge.simulation.llm", "LLMFailure"),
    ("trajforge.simulation.llm", "FailureKind"),
    ("trajforge.simulation.llm", "TRANSIENT"),
    ("trajforge.simulation.runner", "PolicyFailure"),
    ("trajforge.environments.tasks", "TaskRejected"),
])
def test_moved_names_are_importable_from_both_places(old_module: str, name: str) -> None:
    assert getattr(importlib.import_module(old_module), name) is getattr(errors, name)


def test_moved_classes_keep_their_constructors_and_attributes() -> None:
    call = errors.LLMCallError("rate_limit", "slow down", retry_after=2.0)
    assert (str(call), call.kind, call.retry_after, call.transient) == (
        "rate_limit: slow down", "rate_limit", 2.0, True)
    assert not errors.LLMCallError("auth", "bad key").transient
    failure = errors.LLMFailure("agent", "timeout", "no answer", 3)
    assert (failure.role, failure.kind, failure.attempts) == ("agent", "timeout", 3)
    assert str(failure) == "agent model: timeout after 3 attempt(s): no answer"
    policy = errors.PolicyFailure(TerminationReason.llm_error, "the model failed")
    assert (policy.termination, policy.detail, str(policy)) == (
        TerminationReason.llm_error, "the model failed", "the model failed")
    rejected = errors.TaskRejected("no_eligible_order", "pending")
    assert (rejected.reason, rejected.detail, str(rejected)) == (
        "no_eligible_order", "pending", "no_eligible_order: pending")
    assert str(errors.TaskRejected("no_json")) == "no_json"


def test_errors_imports_nothing_heavy() -> None:
    """Any layer may raise from trajforge.errors, so it must not pull in records or stages."""
    import subprocess
    import sys

    code = ("import sys, trajforge.errors; "
            "print(sorted(m for m in sys.modules if m.startswith('trajforge')))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                            text=True).stdout.strip()
    assert loaded == "['trajforge', 'trajforge.errors']"
