"""The build's generation stage for one batch: blueprints ``[start, stop)`` generated (or proposed
by the LLM proposer) and validated by executing their ground truth."""

from __future__ import annotations

from dataclasses import dataclass, field

from trajforge.environments.base import Domain
from trajforge.generators.compose import generate_blueprints
from trajforge.schemas.blueprint import BlueprintRejection, ProposalRecord, TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.simulation.worker_state import SimulationContext


@dataclass
class GeneratedBatch:
    """Indices [start, stop) generated (or proposed) and validated."""

    start: int
    stop: int
    blueprints: list[TaskBlueprint]
    rejections: list[BlueprintRejection]
    proposals: list[ProposalRecord] = field(default_factory=list)  # the proposer's rounds
    cost_usd: float | None = 0.0  # the proposer's; None: a model could not be priced


def generate_batch(config: RunConfig, start: int, stop: int, domain: Domain,
                   ctx: SimulationContext | None = None) -> GeneratedBatch:
    """Generate (or, with ``generation.proposer``, propose through ``ctx``'s gateway) and
    validate blueprints [start, stop): the valid ones, the rejections, the proposer's rounds."""
    run_id = config.run_id()
    proposals: list[ProposalRecord] = []
    cost: float | None = 0.0
    if config.generation.proposer is not None:
        from trajforge.generators.propose import propose_blueprints

        if ctx is None or ctx.gateway is None:
            raise ValueError("the LLM proposer needs a simulation context with a gateway")
        items, proposals, cost = ctx.loop.run_until_complete(propose_blueprints(
            ctx.gateway, config.generation, domain, run_id, start, stop,
            config.simulation.gateway.episode_timeout_s, ctx.concurrency))
    else:
        items = list(generate_blueprints(domain, config.generation, run_id, start, stop))
    return GeneratedBatch(start, stop, [i for i in items if isinstance(i, TaskBlueprint)],
                          [i for i in items if isinstance(i, BlueprintRejection)], proposals, cost)
