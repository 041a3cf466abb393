"""The build's simulation stage for one batch: every blueprint played by every configured agent.

The k-th oracle and the k-th faulty episode of a blueprint are twins: they are played from the
same episode seed, so they hear the same user and phrase alike up to the injected fault, and
their first divergent message is the fault itself (what a preference pair needs, see
``store/exports``). The fault of a faulty episode is drawn from a seed of its own slot.

When the budget stops new episodes, only the blueprints below the first one with an unstarted
episode are kept (``SimulatedBatch.stop``), so the manifest's ranges stay exact and a resumed
run finishes the rest.

Each episode is checked as soon as it ends (``verifiers.batch.verify_episode``, on the episode
loop), not the whole batch after its last episode: in a model-backed build the next batch's
episodes share the process, and a 250-episode batch's checks were about 0.8 s of CPU in one burst
beside them at every batch boundary (issue 21).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.schemas.ids import hash_seed
from trajforge.schemas.trajectory import Trajectory, Verdict
from trajforge.simulation.episodes import (
    AgentFactory,
    EpisodeContext,
    EpisodeJob,
    EpisodePlayer,
    PlayedEpisode,
    UserFactory,
    llm_agents,
    llm_users,
    rewritten_agents,
    scripted_agents,
    scripted_users,
)
from trajforge.simulation.faults import choose_fault
from trajforge.simulation.runner import AgentPolicy, EpisodeLimits
from trajforge.simulation.worker_state import SimulationContext, blueprint_domain
from trajforge.verifiers.batch import verify_episode


@dataclass
class SimulatedBatch:
    """The episodes of a batch's blueprints (``skipped``: faulty episodes of blueprints that admit
    no fault). ``stop`` < the batch's stop when the budget ran out: only blueprints below it are
    complete, and the episodes of the rest are dropped (their cost is ``discarded_usd``)."""

    trajectories: list[Trajectory]
    skipped: int
    stop: int
    discarded_usd: float = 0.0
    budget_stopped: bool = False
    verdicts: list[Verdict] = field(default_factory=list)  # the kept trajectories', in their order


def episode_seed(blueprint_id: str, slot: int, agent: str) -> int:
    return hash_seed(blueprint_id, slot, agent)


def build_player(config: RunConfig, ctx: SimulationContext) -> EpisodePlayer:
    """The player of a build's episodes: the configured agents (a job's ``agent`` says which)
    and user, scripted or model-backed, on the thread's context."""
    sim = config.simulation
    make_user: UserFactory = scripted_users
    llm_agent: AgentFactory | None = None
    if "llm" in sim.agents:
        assert ctx.gateway is not None and sim.agent_model is not None
        llm_agent = llm_agents(ctx.gateway, sim.agent_model)
    if sim.user_model is not None:
        assert ctx.gateway is not None
        make_user = llm_users(ctx.gateway, sim.user_model, sim.user_simulator)

    rewritten: AgentFactory | None = None
    if sim.rewrite is not None:
        assert ctx.gateway is not None
        rewritten = rewritten_agents(ctx.gateway, sim.rewrite)

    def make_agent(episode: EpisodeContext) -> AgentPolicy:
        if episode.agent == "llm" and llm_agent is not None:
            return llm_agent(episode)
        if rewritten is not None:
            return rewritten(episode)
        return scripted_agents(episode, sim.agent_phrasing)

    return EpisodePlayer(blueprint_domain, make_agent, make_user,
                         EpisodeLimits(sim.max_turns, sim.max_steps_per_turn), run_id=config.run_id(),
                         concurrency=ctx.concurrency,
                         episode_timeout_s=sim.gateway.episode_timeout_s if ctx.gateway else None)


def simulate_batch(config: RunConfig, blueprints: list[TaskBlueprint], stop: int,
                   ctx: SimulationContext) -> SimulatedBatch:
    """One episode per blueprint per configured agent, in blueprint then agent order, for a batch
    of blueprint indices that ends at ``stop``, each with its checks' verdicts."""
    sim = config.simulation
    jobs: list[EpisodeJob[None]] = []
    skipped_at: list[int] = []  # blueprint index of each skipped faulty episode
    for bp in blueprints:
        for slot, kind in enumerate(sim.agents):
            fault = None
            if kind == "faulty":
                fault = choose_fault(bp, blueprint_domain(bp), random.Random(episode_seed(bp.id, slot, kind)),
                                     sim.fault_kinds)
                if fault is None:
                    skipped_at.append(bp.provenance.index)
                    continue
            twin = sim.agents[:slot].count(kind)
            jobs.append(EpisodeJob(bp, episode_seed(bp.id, twin, "episode"), fault, agent=kind))

    def checked(episode: PlayedEpisode[None]) -> tuple[Trajectory, list[Verdict]]:
        return episode.trajectory, verify_episode(config, episode.trajectory, episode.job.blueprint)

    played = ctx.run(build_player(config, ctx).play_all(
        jobs, checked, may_start=lambda: not ctx.exhausted(), gate=ctx.gate))
    unstarted = {job.blueprint.provenance.index for job, p in zip(jobs, played, strict=True) if p is None}
    stop = min(unstarted) if unstarted else stop
    kept: list[Trajectory] = []
    verdicts: list[Verdict] = []
    discarded = 0.0
    for job, result in zip(jobs, played, strict=True):
        if result is None:
            continue
        if job.blueprint.provenance.index >= stop:
            discarded += result[0].cost_usd or 0.0
        else:
            kept.append(result[0])
            verdicts += result[1]
    skipped = sum(index < stop for index in skipped_at)
    return SimulatedBatch(kept, skipped, stop, discarded, budget_stopped=bool(unstarted), verdicts=verdicts)
