"""Per-trajectory constraint checks. One ``Verdict`` per (trajectory, check)."""

from trajforge.verifiers.checks import CHECKS, CheckResult, verify
from trajforge.verifiers.version import verifier_version

__all__ = ["CHECKS", "CheckResult", "verify", "verifier_version"]
