"""The build's generation stage for one batch: blueprints ``[start, stop)`` generated (or proposed
by the LLM proposer) and validated by executing their ground truth."""

from __future__ import annotations

from dataclasses import dataclass, field

from trajforge.environments.base import Domain
from trajforge.generators.compose import generate_blueprints
from trajforge.schemas.blueprint import BlueprintRejection, ProposalRecord, TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.simulation.worker_state import SimulationContext, index_domain


@dataclass
class GeneratedBatch:
    """Indices [start, stop) generated (or proposed) and validated."""

    start: int
    stop: int
    blueprints: list[TaskBlueprint]
    rejections: list[BlueprintRejection]
    proposals: list[ProposalRecord] = field(default_factory=list)  # the proposer's rounds
    cost_usd: float | None = 0.0  # the proposer's; None: a model could not be priced


def domain_runs(config: RunConfig, start: int, stop: int) -> list[tuple[Domain, int, int]]:
    """``[start, stop)`` as maximal runs of consecutive indices of one domain (one run for a
    single-domain build), each ``(domain, start, stop)``."""
    runs: list[tuple[Domain, int, int]] = []
    for index in range(start, stop):
        domain = index_domain(config, index)
        if runs and runs[-1][0] is domain:
            runs[-1] = (domain, runs[-1][1], index + 1)
        else:
            runs.append((domain, index, index + 1))
    return runs


def generate_batch(config: RunConfig, start: int, stop: int,
                   ctx: SimulationContext | None = None) -> GeneratedBatch:
    """Generate (or, with ``generation.proposer``, propose through ``ctx``'s gateway) and
    validate blueprints [start, stop), each in its index's domain (``domain.names``: a mixed
    build): the valid ones, the rejections, the proposer's rounds."""
    run_id = config.run_id()
    proposals: list[ProposalRecord] = []
    cost: float | None = 0.0
    items: list[TaskBlueprint | BlueprintRejection] = []
    for domain, first, end in domain_runs(config, start, stop):
        if config.generation.proposer is not None:
            from trajforge.generators.propose import propose_blueprints

            if ctx is None or ctx.gateway is None:
                raise ValueError("the LLM proposer needs a simulation context with a gateway")
            proposed, rounds, spent = ctx.run(propose_blueprints(
                ctx.gateway, config.generation, domain, run_id, first, end,
                config.simulation.gateway.episode_timeout_s, ctx.concurrency))
            items += proposed
            proposals += rounds
            cost = None if cost is None or spent is None else cost + spent
        else:
            items += generate_blueprints(domain, config.generation, run_id, first, end)
    return GeneratedBatch(start, stop, [i for i in items if isinstance(i, TaskBlueprint)],
                          [i for i in items if isinstance(i, BlueprintRejection)], proposals, cost)
