"""Episodes: the one place that assembles and plays them.

An episode is a blueprint played in a fresh environment of its domain by an agent and a user,
within limits, from a seed. Build, evaluation, RL rollouts, the loop, ``build --dry-run`` and
the policy endpoint all get their episodes here (DESIGN.md section 1), so the rules that tie an
episode to its seed are written once:

- the scripted agent draws its wording from ``Random(seed)``;
- the scripted user draws its wording from ``Random(user_seed(seed))``. An oracle and a faulty
  episode of one blueprint played from the same seed therefore hear the same user, which is what
  makes them twins whose first divergent message is the injected fault (``store/exports``'s
  preference pairs depend on it).

``EpisodePlayer`` plays many episodes at once: agents and users come from factories that see the
episode being assembled (``EpisodeContext``: blueprint, domain, environment, seed, fault and,
when a role is model-backed, the ledger its calls are billed to), at most ``concurrency`` run at
once, and a callback hears of each finished one. Nothing here knows a domain, a model provider or
a storage format.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from trajforge.environments.base import Domain, Environment
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import AgentPhrasing, ModelConfig, RewriteConfig, UserSimulatorConfig
from trajforge.schemas.trajectory import EpisodeSpec, Fault, Trajectory
from trajforge.simulation.agents import ScriptedAgent
from trajforge.simulation.gate import OrderedGate
from trajforge.simulation.runner import AgentPolicy, EpisodeLimits, UserPolicy, run_episode
from trajforge.simulation.user import ScriptedUser
from trajforge.simulation.wording import Wording

if TYPE_CHECKING:
    from trajforge.simulation.llm import EpisodeLedger, Gateway

Tag = TypeVar("Tag")
Out = TypeVar("Out")


def user_seed(seed: int) -> int:
    """The scripted user's seed in the episode of seed ``seed`` (twins share it)."""
    return seed + 1


def scripted_agent(blueprint: TaskBlueprint, domain: Domain, seed: int,
                   fault: Fault | None = None, wording: Wording | None = None,
                   phrasing: AgentPhrasing = "varied") -> ScriptedAgent:
    """The scripted oracle (or, with ``fault``, the fault-injecting agent) of an episode;
    ``wording``: its dialogue acts' phrasings (``simulation.wording``; default its own);
    ``phrasing``: ``simulation.agent_phrasing``."""
    return ScriptedAgent(blueprint, domain, random.Random(seed), fault, wording, plain=phrasing == "plain")


def scripted_user(blueprint: TaskBlueprint, domain: Domain, seed: int,
                  wording: Wording | None = None) -> ScriptedUser:
    """The scripted user of the episode of seed ``seed`` (``wording`` as for the agent)."""
    return ScriptedUser(blueprint, domain, random.Random(user_seed(seed)), wording)


@dataclass(frozen=True)
class EpisodeJob(Generic[Tag]):
    """One episode to play: its blueprint, seed and fault (``None``: the agent makes none),
    ``agent``, which of the caller's agents plays it (for a factory that serves several), and
    ``tag``, the caller's own label, handed back with the result."""

    blueprint: TaskBlueprint
    seed: int
    fault: Fault | None = None
    agent: str = ""
    tag: Tag | None = None


@dataclass(frozen=True)
class EpisodeContext:
    """What an agent or user factory sees of the episode it serves."""

    blueprint: TaskBlueprint
    domain: Domain
    env: Environment
    seed: int
    fault: Fault | None
    agent: str
    ledger: EpisodeLedger | None  # set when a role is model-backed: its calls are billed here


AgentFactory = Callable[[EpisodeContext], AgentPolicy]
UserFactory = Callable[[EpisodeContext], UserPolicy]


def scripted_agents(episode: EpisodeContext, phrasing: AgentPhrasing = "varied") -> AgentPolicy:
    """Agent factory: the scripted agent, faulty when the job carries a fault (``phrasing``:
    ``simulation.agent_phrasing``; bind it with ``functools.partial``)."""
    return scripted_agent(episode.blueprint, episode.domain, episode.seed, episode.fault, phrasing=phrasing)


def scripted_users(episode: EpisodeContext) -> UserPolicy:
    """User factory: the scripted user."""
    return scripted_user(episode.blueprint, episode.domain, episode.seed)


def llm_agents(gateway: Gateway, model: ModelConfig) -> AgentFactory:
    """Agent factory: a model through the gateway, billed to the episode's ledger."""
    from trajforge.simulation.llm_agent import LLMAgent, episode_tag

    def make(episode: EpisodeContext) -> AgentPolicy:
        assert episode.ledger is not None, "a model-backed agent needs the episode's ledger"
        return LLMAgent(gateway, model, episode.domain, episode.ledger,
                        episode_tag(episode.blueprint.id, episode.seed))

    return make


def rewritten_agents(gateway: Gateway, config: RewriteConfig) -> AgentFactory:
    """Agent factory: the scripted agent, its text turns re-worded by a model under guards."""
    from trajforge.simulation.llm_agent import episode_tag
    from trajforge.simulation.rewrite import RewritingAgent

    def make(episode: EpisodeContext) -> AgentPolicy:
        assert episode.ledger is not None, "a model-backed rewriter needs the episode's ledger"
        return RewritingAgent(scripted_agents(episode), gateway, config, episode.domain, episode.ledger,
                              episode_tag(episode.blueprint.id, episode.seed))

    return make


def llm_users(gateway: Gateway, model: ModelConfig, simulator: UserSimulatorConfig) -> UserFactory:
    """User factory: a model plays the user; the goal counts as met once the environment is in
    the blueprint's expected final state."""
    from trajforge.simulation.llm_agent import episode_tag
    from trajforge.simulation.llm_user import LLMUser

    def make(episode: EpisodeContext) -> UserPolicy:
        assert episode.ledger is not None, "a model-backed user needs the episode's ledger"
        env, expected = episode.env, episode.blueprint.ground_truth.final_state_hash
        return LLMUser(gateway, model, episode.blueprint, episode.domain, episode.ledger, simulator,
                       goal_met=lambda: env.state_hash() == expected,
                       headers=episode_tag(episode.blueprint.id, episode.seed))

    return make


@dataclass(frozen=True)
class PlayedEpisode(Generic[Tag]):
    """A finished episode with what played it (a token-level agent keeps its ids there)."""

    job: EpisodeJob[Tag]
    trajectory: Trajectory
    agent: AgentPolicy
    domain: Domain


@dataclass
class EpisodePlayer:
    """Plays episodes with one pair of factories.

    ``domain_of`` gives each blueprint's domain (shared, built once per process);
    ``agent_name``, when set, is the agent's name in the trajectory (else the agent's own
    ``name``: what an evaluation calls the policy it plays may differ from how it is built);
    ``episode_timeout_s`` set means a role is model-backed: each episode gets a ledger with that
    deadline, which the trajectory's usage and cost are read from."""

    domain_of: Callable[[TaskBlueprint], Domain]
    make_agent: AgentFactory = scripted_agents
    make_user: UserFactory = scripted_users
    limits: EpisodeLimits = EpisodeLimits()
    run_id: str = ""
    concurrency: int = 8
    agent_name: str | None = None
    episode_timeout_s: float | None = None

    async def play(self, job: EpisodeJob[Tag]) -> PlayedEpisode[Tag]:
        bp = job.blueprint
        domain = self.domain_of(bp)
        env = domain.environment()
        ledger = None
        if self.episode_timeout_s is not None:
            from trajforge.simulation.llm import EpisodeLedger

            ledger = EpisodeLedger.starting_now(self.episode_timeout_s)
        episode = EpisodeContext(bp, domain, env, job.seed, job.fault, job.agent, ledger)
        agent = self.make_agent(episode)
        user = self.make_user(episode)
        spec = EpisodeSpec(agent=self.agent_name or getattr(agent, "name", "agent"),
                           user=getattr(user, "name", "scripted"), seed=job.seed,
                           max_turns=self.limits.max_turns, fault=job.fault)
        trajectory = await run_episode(bp.id, env, agent, user, self.limits, run_id=self.run_id,
                                       episode=spec, ledger=ledger)
        return PlayedEpisode(job, trajectory, agent, domain)

    async def play_all(self, jobs: Sequence[EpisodeJob[Tag]], on_done: Callable[[PlayedEpisode[Tag]], Out],
                       may_start: Callable[[], bool] | None = None,
                       gate: OrderedGate | None = None) -> list[Out | None]:
        """Every job, at most ``concurrency`` at once, or as many as ``gate`` lets in when one is
        given (a gate shared with other callers on the same loop: jobs wait for it in the order
        of their blueprints' indices, so an earlier batch's episodes go first, whichever batch
        reached the gate first, and a later one's fill the slots its tail frees; ``simulation.gate``).
        ``on_done`` is called with each finished episode as it finishes,
        and what it returns is that job's result (results in job order; only those are kept, so
        an episode's agent and user are freed as soon as it ends). ``may_start`` is asked before
        each episode starts: a spent budget says no, and that job's result is ``None``."""
        gate = gate or OrderedGate(self.concurrency)

        async def one(job: EpisodeJob[Tag]) -> Out | None:
            async with gate.place(job.blueprint.provenance.index):
                if may_start is not None and not may_start():
                    return None
                played = await self.play(job)
            return on_done(played)

        return list(await asyncio.gather(*(one(job) for job in jobs)))


async def play_scripted(blueprint: TaskBlueprint, domain: Domain, seed: int, fault: Fault | None = None,
                        wording: Wording | None = None, run_id: str = "",
                        limits: EpisodeLimits | None = None) -> Trajectory:
    """One episode of the scripted agent (faulty with ``fault``) and the scripted user, both
    phrasing their dialogue acts from ``wording`` (default: their own): what a benchmark or a test
    plays when it needs a single scripted episode in a given wording. The same assembly as the
    build's (``EpisodePlayer`` with the scripted factories), so the episode is the build's twin."""

    def agent(episode: EpisodeContext) -> AgentPolicy:
        return scripted_agent(episode.blueprint, episode.domain, episode.seed, episode.fault, wording)

    def user(episode: EpisodeContext) -> UserPolicy:
        return scripted_user(episode.blueprint, episode.domain, episode.seed, wording)

    player = EpisodePlayer(lambda _: domain, agent, user, limits or EpisodeLimits(), run_id=run_id)
    return (await player.play(EpisodeJob(blueprint, seed, fault))).trajectory
