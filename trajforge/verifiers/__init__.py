"""Per-trajectory constraint checks. One ``Verdict`` per (trajectory, check)."""

from trajforge.verifiers.checks import CHECKS, CheckResult, verify

__all__ = ["CHECKS", "CheckResult", "verify"]
