"""The build's verification stages for one batch: the checks on every trajectory, then the
optional checklist judge (which adds verdicts and never changes the checks'). The checks'
verdicts carry their verifier version; the judge's carry none (a model decides them, not code
a digest could name)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.schemas.trajectory import Trajectory, Verdict
from trajforge.simulation.worker_state import SimulationContext, blueprint_domain
from trajforge.verifiers.checks import CHECKS, verify
from trajforge.verifiers.version import stamped, verifier_version


@dataclass
class JudgedBatch:
    """The checklist judge's verdicts and what they cost (``None``: unpriced)."""

    verdicts: list[Verdict] = field(default_factory=list)
    cost_usd: float | None = 0.0


def verify_episode(config: RunConfig, trajectory: Trajectory, blueprint: TaskBlueprint) -> list[Verdict]:
    """The configured checks on one trajectory in its blueprint's domain, each verdict with the
    verifier version of the code and checks that made it. The build runs it as each episode
    ends (``simulation.batch.simulate_batch``), so a batch's checks are spread over its episodes
    rather than run all at once when the last one finishes."""
    checks = list(CHECKS if config.verification.checks is None else config.verification.checks)
    domain = blueprint_domain(blueprint)
    return stamped(verify(trajectory, blueprint, domain, checks), verifier_version(type(domain), checks))


def judge_batch(config: RunConfig, trajectories: list[Trajectory], verdicts: list[Verdict],
                blueprints: list[TaskBlueprint], ctx: SimulationContext | None) -> JudgedBatch:
    """The checklist judge's verdicts on every trajectory (none without
    ``verification.judge``); ``verdicts`` are the checks' verdicts, which it never changes."""
    if config.verification.judge is None or not trajectories:
        return JudgedBatch()
    if ctx is None or ctx.gateway is None:
        raise ValueError("the judge needs a simulation context with a gateway")
    by_trajectory: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_trajectory.setdefault(verdict.trajectory_id, []).append(verdict)
    by_id = {bp.id: bp for bp in blueprints}
    judged, cost = ctx.run(_judge_all(
        [(t, by_trajectory.get(t.id, [])) for t in trajectories], by_id, ctx, config))
    return JudgedBatch(judged, cost)


async def _judge_all(judged: list[tuple[Trajectory, list[Verdict]]], blueprints: dict[str, TaskBlueprint],
                     ctx: SimulationContext, config: RunConfig) -> tuple[list[Verdict], float | None]:
    from trajforge.simulation.llm import EpisodeLedger, ledgers_cost
    from trajforge.verifiers.judge import judge_trajectory

    gateway, judge = ctx.gateway, config.verification.judge
    assert gateway is not None and judge is not None
    gate = ctx.gate  # shared with the episodes of every batch on the context
    ledgers: list[EpisodeLedger] = []

    async def one(trajectory: Trajectory, base: list[Verdict]) -> list[Verdict]:
        async with gate.place():
            ledger = EpisodeLedger.starting_now(config.simulation.gateway.episode_timeout_s)
            ledgers.append(ledger)
            blueprint = blueprints[trajectory.blueprint_id]
            return await judge_trajectory(gateway, judge, trajectory, blueprint,
                                          blueprint_domain(blueprint), base, ledger)

    results = await asyncio.gather(*(one(t, v) for t, v in judged))
    return [v for r in results for v in r], ledgers_cost(ledgers)
