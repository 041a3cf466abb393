"""Scores of an evaluation: pass@1, pass^k and tool-call format validity, per domain.

pass^k is tau-bench's estimator: with ``c`` of ``n`` trials passed, the chance that ``k`` trials
drawn without replacement all pass is C(c, k) / C(n, k), averaged over blueprints; pass@1 is
pass^1. Tool-call format validity is the share of the agent's tool calls that name a known tool
with JSON-object arguments, written in the policy's tool-call format. ``by_task`` splits the
episodes by what the user asks for: the blueprint's intent kinds in order, joined with ``+``
("cancel_order", "return_items+order_status"), as the domain names them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from math import comb
from typing import Any

from trajforge.schemas.messages import AssistantMessage
from trajforge.schemas.trajectory import Trajectory


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k for one task: C(c, k) / C(n, k)."""
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be in 1..{n}")
    return comb(c, k) / comb(n, k)


def call_validity(trajectory: Trajectory) -> tuple[int, int, int]:
    """(agent turns, tool calls, well-formed tool calls) of an episode."""
    names = {t.function.name for t in trajectory.tools}
    turns = calls = valid = 0
    for m in trajectory.messages:
        if not isinstance(m, AssistantMessage):
            continue
        turns += 1
        for call in m.tool_calls:
            calls += 1
            # calls an LLM wrote into its text instead of the tool interface are not well formed
            if call.name in names and call.parsed_arguments() is not None and not call.id.startswith("text_call_"):
                valid += 1
    return turns, calls, valid


@dataclass
class DomainScore:
    domain: str
    blueprints: int
    episodes: int
    pass_at_1: float
    pass_hat: dict[int, float]
    tool_calls: int
    valid_tool_calls: int
    failures: Counter[str] = field(default_factory=Counter)
    terminations: Counter[str] = field(default_factory=Counter)
    by_task: dict[str, tuple[int, int]] = field(default_factory=dict)  # task -> (episodes, passed)

    @property
    def format_validity(self) -> float | None:
        return self.valid_tool_calls / self.tool_calls if self.tool_calls else None


def task_of(intent_kinds: Iterable[str]) -> str:
    """The task an episode's blueprint asks for: its intent kinds in order, joined with ``+``."""
    return "+".join(intent_kinds)


def score(rows: Iterable[dict[str, Any]], trials: int, tasks: Mapping[str, str] | None = None) -> list[DomainScore]:
    """Per-domain scores of evaluation rows (one per episode); ``tasks`` (blueprint id -> its
    ``task_of``), when given, fills ``by_task``."""
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_domain[row["domain"]].append(row)
    scores = []
    for domain, items in sorted(by_domain.items()):
        per_bp: dict[str, list[bool]] = defaultdict(list)
        for row in items:
            per_bp[row["blueprint_id"]].append(bool(row["passed"]))
        pass_hat = {}
        for k in range(1, trials + 1):
            values = [pass_hat_k(len(v), sum(v), k) for v in per_bp.values() if len(v) >= k]
            pass_hat[k] = sum(values) / len(values) if values else 0.0
        failures: Counter[str] = Counter(c for row in items for c in row["failed_checks"])
        per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for row in items:
            if tasks is not None and row["blueprint_id"] in tasks:
                counts = per_task[tasks[row["blueprint_id"]]]
                counts[0] += 1
                counts[1] += bool(row["passed"])
        scores.append(DomainScore(
            domain=domain, blueprints=len(per_bp), episodes=len(items), pass_at_1=pass_hat[1],
            pass_hat=pass_hat, tool_calls=sum(r["tool_calls"] for r in items),
            valid_tool_calls=sum(r["valid_tool_calls"] for r in items), failures=failures,
            terminations=Counter(r["termination"] for r in items),
            by_task={task: (n, c) for task, (n, c) in sorted(per_task.items(), key=lambda kv: (-kv[1][0], kv[0]))}))
    return scores
