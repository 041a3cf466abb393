"""``trajforge build --dry-run``: what a build would do and roughly what it would cost, without
calling any model.

The estimate simulates a small sample of the config's blueprints with the scripted policies
(offline, in milliseconds) and counts, per role, the calls and the tokens each call would send
and receive (characters / 4, the usual rule of thumb), then scales to the run. Prices come from
the model's ``ModelConfig`` or, for a model reached through litellm, litellm's bundled price map;
a model with no known price is shown as unknown, never as free.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from rich.console import Group
from rich.table import Table
from rich.text import Text

from trajforge.generators import generate_blueprints
from trajforge.generators.batch import domain_runs
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import ModelConfig, RunConfig
from trajforge.schemas.messages import AssistantMessage, UserMessage
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer
from trajforge.simulation.llm_user import user_instructions
from trajforge.simulation.runner import EpisodeLimits
from trajforge.simulation.worker_state import blueprint_domain


@dataclass
class RoleEstimate:
    model: str
    calls: float = 0.0  # per episode
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    price_in: float | None = None
    price_out: float | None = None
    total_calls: float = 0.0
    total_cost_usd: float | None = None


@dataclass
class Plan:
    blueprints: int
    episodes: int
    sample: int
    roles: dict[str, RoleEstimate] = field(default_factory=dict)

    @property
    def cost_usd(self) -> float | None:
        costs = [r.total_cost_usd for r in self.roles.values()]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def _prices(model: ModelConfig) -> tuple[float | None, float | None]:
    if model.input_cost_per_token is not None or model.output_cost_per_token is not None:
        return model.input_cost_per_token or 0.0, model.output_cost_per_token or 0.0
    from trajforge.simulation.openai_http import transport_of

    if transport_of(model) == "openai":  # the build prices a direct call only as configured
        return None, None
    try:
        from trajforge.simulation.llm import _import_litellm

        litellm = _import_litellm()
    except ImportError:
        return None, None
    name = model.model
    entry = litellm.model_cost.get(name) or litellm.model_cost.get(name.split("/", 1)[-1])
    if not entry:
        return None, None
    return entry.get("input_cost_per_token"), entry.get("output_cost_per_token")


def _tokens(obj: object) -> int:
    return max(1, len(obj if isinstance(obj, str) else json.dumps(obj, default=str)) // 4)


def estimate_plan(config: RunConfig, sample: int = 20) -> Plan:
    sim = config.simulation
    n = config.generation.n_blueprints
    picked = [b for domain, start, stop in domain_runs(config, 0, min(sample, n))
              for b in generate_blueprints(domain, config.generation, config.run_id(), start, stop)
              if isinstance(b, TaskBlueprint)]
    episodes = n * len(sim.agents)
    plan = Plan(blueprints=n, episodes=episodes, sample=len(picked))
    models = {"agent": sim.agent_model, "user": sim.user_model}
    for role, model in models.items():
        if model is None:
            continue
        estimate = RoleEstimate(model=model.model)
        estimate.price_in, estimate.price_out = _prices(model)
        plan.roles[role] = estimate
    if not plan.roles or not picked:
        return plan
    # the scripted oracle stands in for every role: its dialogue is what the models would see
    player = EpisodePlayer(blueprint_domain, limits=EpisodeLimits(sim.max_turns, sim.max_steps_per_turn),
                           run_id="plan")
    jobs: list[EpisodeJob[None]] = [EpisodeJob(bp, seed=0) for bp in picked]
    played = asyncio.run(player.play_all(jobs, lambda p: p.trajectory))
    for bp, traj in zip(picked, played, strict=True):
        assert traj is not None
        context = 0
        domain = blueprint_domain(bp)
        tools = _tokens([s.model_dump(mode="json") for s in domain.tool_specs()])
        user_context = _tokens(user_instructions(bp, domain))
        for message in traj.messages:
            size = _tokens(message.model_dump(mode="json"))
            if isinstance(message, AssistantMessage) and "agent" in plan.roles:
                plan.roles["agent"].calls += 1
                plan.roles["agent"].prompt_tokens += context + tools
                plan.roles["agent"].completion_tokens += size
            if isinstance(message, UserMessage) and "user" in plan.roles:
                plan.roles["user"].calls += 1
                plan.roles["user"].prompt_tokens += user_context
                plan.roles["user"].completion_tokens += size
            if isinstance(message, UserMessage | AssistantMessage) and message.content:
                user_context += _tokens(message.content)
            context += size
    for estimate in plan.roles.values():
        for name in ("calls", "prompt_tokens", "completion_tokens"):
            setattr(estimate, name, getattr(estimate, name) / len(picked))
        estimate.total_calls = estimate.calls * episodes
        if estimate.price_in is not None and estimate.price_out is not None:
            estimate.total_cost_usd = episodes * (estimate.prompt_tokens * estimate.price_in
                                                  + estimate.completion_tokens * estimate.price_out)
    return plan


def render_plan(config: RunConfig, plan: Plan) -> Group:
    sim = config.simulation
    head = Text(f"Plan for run {config.run_id()} ({', '.join(config.domain.all_names)}): {plan.blueprints} "
                f"blueprints x {len(sim.agents)} agent(s) {list(sim.agents)} = {plan.episodes} "
                f"episodes, concurrency {sim.concurrency}, {config.store.workers} process(es), "
                f"output {config.store.out}. No model was called.")
    if not plan.roles:
        return Group(head, Text("Scripted policies only: no model calls, no cost."))
    table = Table("role", "model", "calls/episode", "prompt tok/call", "completion tok/call",
                  "calls (run)", "cost (run, USD)", title=f"estimate from {plan.sample} sampled blueprints")
    for role, e in plan.roles.items():
        calls = max(e.calls, 1e-9)
        table.add_row(role, e.model, f"{e.calls:.1f}", f"{e.prompt_tokens / calls:,.0f}",
                      f"{e.completion_tokens / calls:,.0f}", f"{e.total_calls:,.0f}",
                      "unknown (no price)" if e.total_cost_usd is None else f"{e.total_cost_usd:,.4f}")
    cost = plan.cost_usd
    cap = sim.gateway.max_cost_usd
    tail = Text(f"Estimated total: {'unknown' if cost is None else f'${cost:,.4f}'}"
                + (f"; budget cap ${cap:,.2f}" if cap else "; no budget cap (--max-cost-usd)"))
    extra = []
    if config.generation.proposer is not None:
        p = config.generation.proposer
        extra.append(f"proposer: 1 to {p.rounds} call(s) per blueprint"
                     + (f", plus {p.committee} reviewer call(s) per valid proposal" if p.committee else ""))
    if config.verification.judge is not None:
        extra.append("judge: 1 call per episode")
    if extra:
        tail.append("\nNot in the estimate: " + "; ".join(extra) + ".")
    return Group(head, table, tail)
