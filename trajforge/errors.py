"""The error taxonomy (DESIGN.md section 7).

- ``ConfigError``: the user's mistake, found at load time; carries the offending field path.
- ``ToolError`` (and ``PolicyViolation``): the model's mistake inside an episode; shown to the model.
- ``ToolCrash``: a bug inside a tool; ends the episode as ``tool_crash``.
- ``StoreError``: the output folder is unusable or holds data that contradicts the manifest.
"""

from __future__ import annotations


class TrajforgeError(Exception):
    """Base class of every error trajforge raises on purpose."""


class ConfigError(TrajforgeError):
    """A bad run configuration or CLI value. ``field`` is the dotted path of the culprit."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


class ToolError(TrajforgeError):
    """A tool was called wrongly (bad id, wrong status, ...). The episode goes on."""


class PolicyViolation(ToolError):
    """A write the domain policy forbids. ``rule`` names the policy rule."""

    def __init__(self, rule: str, message: str) -> None:
        self.rule = rule
        super().__init__(f"policy {rule}: {message}")


class ToolCrash(TrajforgeError):
    """An unexpected exception inside a tool: a bug in the environment, not the agent."""


class StoreError(TrajforgeError):
    """The output folder cannot be used as asked."""
