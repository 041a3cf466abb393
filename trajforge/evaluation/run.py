"""``trajforge eval``: a policy plays the agent on held-out blueprints, every episode is verified,
and the results are pass@1, pass^k, tool-call format validity and failures by check.

Held-out blueprints are the ``test`` split of a catalog (the same family split the exports use,
so a model trained on an export's ``train`` split never saw them) or a freshly generated set
(``fresh_blueprints``, with a seed of its own). Each blueprint is played ``trials`` times against
the scripted user (or an LLM user); trial ``t`` of a blueprint has a fixed seed, so two policies
face the same user wording. The episodes come from the episode layer (``simulation/episodes``),
as the build's do, and the domains from the process's one domain cache.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trajforge.evaluation.blueprints import fresh_blueprints, heldout_blueprints
from trajforge.evaluation.config import EvalConfig, PlayConfig
from trajforge.evaluation.policies import PolicySpec, agent_factory
from trajforge.evaluation.scores import DomainScore, call_validity, score, task_of
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.ids import content_id, hash_seed
from trajforge.schemas.trajectory import Trajectory
from trajforge.simulation.episodes import (
    AgentFactory,
    EpisodeJob,
    EpisodePlayer,
    PlayedEpisode,
    UserFactory,
    llm_users,
    scripted_users,
)
from trajforge.simulation.runner import EpisodeLimits
from trajforge.simulation.worker_state import blueprint_domain
from trajforge.verifiers import verify


def trial_seed(blueprint_id: str, trial: int) -> int:
    return hash_seed(blueprint_id, trial, "eval")


async def _episodes(blueprints: Sequence[TaskBlueprint], make_agent: AgentFactory, policy: str,
                    play: PlayConfig, eval_id: str, agent_uses_model: bool,
                    progress: Callable[[], None] | None) -> list[tuple[TaskBlueprint, int, Trajectory]]:
    gateway = None
    make_user: UserFactory = scripted_users
    if play.user_model is not None:
        from trajforge.simulation.llm import Budget, Gateway

        gateway = Gateway(play.gateway, Budget(play.gateway.max_cost_usd), random.Random(0),
                          concurrency=play.concurrency)
        make_user = llm_users(gateway, play.user_model, play.user_simulator)
    model_backed = agent_uses_model or play.user_model is not None
    player = EpisodePlayer(blueprint_domain, make_agent, make_user,
                           EpisodeLimits(play.max_turns, play.max_steps_per_turn), run_id=eval_id,
                           concurrency=play.concurrency, agent_name=policy,
                           episode_timeout_s=play.gateway.episode_timeout_s if model_backed else None)
    jobs = [EpisodeJob(bp, trial_seed(bp.id, trial), tag=trial) for bp in blueprints for trial in range(play.trials)]

    def done(p: PlayedEpisode[int]) -> tuple[TaskBlueprint, int, Trajectory]:
        if progress is not None:
            progress()
        assert p.job.tag is not None
        return p.job.blueprint, p.job.tag, p.trajectory

    try:
        played = await player.play_all(jobs, done)
    finally:
        if gateway is not None:
            await gateway.aclose()
    return [p for p in played if p is not None]  # every job starts: there is no budget stop


@dataclass
class EvalResult:
    eval_id: str
    policy: str
    rows: list[dict[str, Any]]
    scores: list[DomainScore]
    path: Path | None = None


def evaluate(blueprints: Sequence[TaskBlueprint], make_agent: AgentFactory, policy: str,
             play: PlayConfig, source: str, progress: Callable[[], None] | None = None,
             agent_uses_model: bool = False) -> EvalResult:
    """Play and verify every (blueprint, trial); the rows and per-domain scores.
    ``agent_uses_model``: the agent's calls go through the gateway (each episode gets a ledger)."""
    created = datetime.now(UTC).isoformat(timespec="seconds")
    eval_id = content_id({"policy": policy, "source": source, "blueprints": [b.id for b in blueprints],
                          "settings": play.model_dump(mode="json", exclude={"gateway"}), "created": created},
                         prefix="ev_")
    played = asyncio.run(_episodes(blueprints, make_agent, policy, play, eval_id, agent_uses_model, progress))
    rows = []
    for bp, trial, trajectory in played:
        verdicts = verify(trajectory, bp, blueprint_domain(bp), play.checks)
        turns, calls, valid = call_validity(trajectory)
        rows.append({
            "eval_id": eval_id, "created_at": created, "policy": policy, "source": source,
            "blueprint_id": bp.id, "domain": bp.environment.domain, "trial": trial,
            "trials": play.trials, "seed": trajectory.episode.seed, "trajectory_id": trajectory.id,
            "passed": bool(verdicts and verdicts[0].trajectory_passed),
            "reward": float(verdicts[0].reward) if verdicts else 0.0,
            "failed_checks": [v.check for v in verdicts if not v.passed],
            "termination": str(trajectory.termination), "agent_turns": turns, "tool_calls": calls,
            "valid_tool_calls": valid, "trajectory": trajectory.model_dump_json(),
        })
    tasks = {bp.id: task_of(i.kind for i in bp.user.intents) for bp in blueprints}
    return EvalResult(eval_id, policy, rows, score(rows, play.trials, tasks))


def save_evaluation(out: Path, result: EvalResult) -> Path:
    """Write the rows to ``out/evaluations/`` and refresh the catalog's ``evaluations`` view."""
    from trajforge.store.catalog import refresh_catalog
    from trajforge.store.evaluations import write_evaluation

    path = write_evaluation(out, result.eval_id, result.rows)
    refresh_catalog(out)
    result.path = path
    return path


def summary_json(result: EvalResult) -> dict[str, Any]:
    return {"eval_id": result.eval_id, "policy": result.policy, "domains": [
        {"domain": s.domain, "blueprints": s.blueprints, "episodes": s.episodes,
         "pass@1": round(s.pass_at_1, 4), **{f"pass^{k}": round(v, 4) for k, v in s.pass_hat.items()},
         "format_validity": None if s.format_validity is None else round(s.format_validity, 4),
         "tool_calls": s.tool_calls, "failures": dict(s.failures.most_common()),
         "terminations": dict(s.terminations.most_common()),
         "by_task": {task: {"episodes": n, "passed": c} for task, (n, c) in s.by_task.items()}}
        for s in result.scores]}


@dataclass
class PreparedEvaluation:
    """The blueprints, the agents (the model loaded once) and the settings of one request."""

    blueprints: list[TaskBlueprint]
    source: str
    policy: str
    make_agent: AgentFactory
    play: PlayConfig
    agent_uses_model: bool = False

    def run(self, progress: Callable[[], None] | None = None) -> EvalResult:
        return evaluate(self.blueprints, self.make_agent, self.policy, self.play, self.source,
                        progress=progress, agent_uses_model=self.agent_uses_model)


def prepare_evaluation(request: EvalConfig) -> PreparedEvaluation:
    spec = PolicySpec.parse(request.policy)
    if spec.kind == "hf":
        from trajforge.simulation.local_model import prepare_torch

        prepare_torch(request.threads)
    if request.fresh is not None:
        blueprints = fresh_blueprints(request.fresh, request.fresh_seed)
        source = f"fresh:{request.fresh_seed}"
    else:
        blueprints = heldout_blueprints(request.out, request.split, request.salt, limit=request.limit)
        source = f"{request.split}:{request.out}"
    if spec.kind == "litellm" or request.user_model is not None:
        from trajforge.simulation.llm import quiet_provider_logs

        quiet_provider_logs()
    make_agent = agent_factory(spec, max_new_tokens=request.max_new_tokens, temperature=request.temperature,
                               seed=request.seed, api_base=request.api_base, batch_size=request.batch_size,
                               bf16=request.bf16, prefix_cache=request.prefix_cache)
    return PreparedEvaluation(list(blueprints), source, f"{spec.kind}:{spec.target}", make_agent,
                              request.play(), agent_uses_model=spec.kind == "litellm")


def render_table(result: EvalResult) -> Any:
    from rich.table import Table

    trials = max((max(s.pass_hat) for s in result.scores), default=1)
    table = Table("domain", "blueprints", "episodes", "pass@1",
                  *(f"pass^{k}" for k in range(2, trials + 1)), "format valid", "failures by check",
                  title=f"eval {result.eval_id}: {result.policy}")
    for s in result.scores:
        validity = "n/a (no calls)" if s.format_validity is None else f"{s.format_validity:.1%}"
        table.add_row(s.domain, str(s.blueprints), str(s.episodes), f"{s.pass_at_1:.3f}",
                      *(f"{s.pass_hat[k]:.3f}" for k in range(2, trials + 1)), validity,
                      ", ".join(f"{c} {n}" for c, n in s.failures.most_common()) or "-")
    return table


__all__ = ["DomainScore", "EvalConfig", "EvalResult", "PlayConfig", "PolicySpec", "PreparedEvaluation",
           "evaluate", "fresh_blueprints", "heldout_blueprints", "prepare_evaluation", "render_table",
           "save_evaluation", "summary_json", "trial_seed"]
