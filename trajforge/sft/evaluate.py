"""``trajforge eval``: a policy plays the agent on held-out blueprints, every episode is verified,
and the results are pass@1, pass^k, tool-call format validity and failures by check.

Held-out blueprints are the ``test`` split of a catalog (the same family split the exports use,
so a model trained on an export's ``train`` split never saw them) or a freshly generated set
(``fresh_blueprints``, with a seed of its own). Each blueprint is played ``trials`` times against
the scripted user; trial ``t`` of a blueprint has a fixed seed, so two policies face the same
user wording.

pass^k is tau-bench's estimator: with ``c`` of ``n`` trials passed, the chance that ``k`` trials
drawn without replacement all pass is C(c, k) / C(n, k), averaged over blueprints; pass@1 is
pass^1. Tool-call format validity is the share of the agent's tool calls that name a known tool
with JSON-object arguments, written in the policy's tool-call format.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from math import comb
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.errors import ConfigError, StoreError
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import GatewayConfig, ModelConfig, UserSimulatorConfig
from trajforge.schemas.ids import content_id, hash_seed
from trajforge.schemas.messages import AssistantMessage
from trajforge.schemas.trajectory import EpisodeSpec, Trajectory
from trajforge.simulation import EpisodeLimits, ScriptedUser, run_episode
from trajforge.simulation.runner import AgentPolicy, UserPolicy
from trajforge.verifiers import verify

AgentFactory = Callable[[TaskBlueprint, Domain, int], AgentPolicy]


# --- blueprints -------------------------------------------------------------------------------

def heldout_blueprints(out: Path, split: str = "test", salt: str = "",
                       run_ids: Sequence[str] | None = None, limit: int | None = None) -> list[TaskBlueprint]:
    """The blueprints of ``split`` in a catalog, by the exports' family split, in id order."""
    from trajforge.schemas.arrow import blueprint_from_row
    from trajforge.store.catalog import connect
    from trajforge.store.splits import SplitConfig, assign_splits

    con = connect(out)
    try:
        cursor = con.execute("SELECT * FROM blueprints ORDER BY id")
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, r)) for r in cursor.fetchall()]
    finally:
        con.close()
    if run_ids:
        rows = [r for r in rows if r["run_id"] in set(run_ids)]
    unique = {r["id"]: r for r in rows}
    splits = assign_splits({bp: r["parent_id"] for bp, r in unique.items()}, SplitConfig(salt=salt))
    chosen = [blueprint_from_row(r) for bp, r in unique.items() if splits[bp] == split]
    if not chosen:
        raise StoreError(f"{out}: no blueprints in the '{split}' split")
    return chosen[:limit] if limit is not None else chosen


def fresh_blueprints(n: int, seed: int, domain_name: str = "retail", size: int = 300,
                     domain_seed: int = 0) -> list[TaskBlueprint]:
    """``n`` newly generated valid blueprints (rejected drafts are skipped, not counted)."""
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.config import GenerationConfig

    domain = load_domain(domain_name, size, domain_seed)
    config = GenerationConfig(n_blueprints=n, seed=seed)
    found: list[TaskBlueprint] = []
    start = 0
    while len(found) < n:
        for item in generate_blueprints(domain, config, f"eval-{seed}", start, start + n):
            if isinstance(item, TaskBlueprint):
                found.append(item)
        start += n
        if start > 20 * n:
            raise ConfigError("--fresh", f"the generator yielded only {len(found)} valid blueprints")
    return found[:n]


# --- scores -----------------------------------------------------------------------------------

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

    @property
    def format_validity(self) -> float | None:
        return self.valid_tool_calls / self.tool_calls if self.tool_calls else None


def score(rows: Iterable[dict[str, Any]], trials: int) -> list[DomainScore]:
    """Per-domain scores of evaluation rows (one per episode)."""
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
        scores.append(DomainScore(
            domain=domain, blueprints=len(per_bp), episodes=len(items), pass_at_1=pass_hat[1],
            pass_hat=pass_hat, tool_calls=sum(r["tool_calls"] for r in items),
            valid_tool_calls=sum(r["valid_tool_calls"] for r in items), failures=failures,
            terminations=Counter(r["termination"] for r in items)))
    return scores


# --- episodes ---------------------------------------------------------------------------------

def trial_seed(blueprint_id: str, trial: int) -> int:
    return hash_seed(blueprint_id, trial, "eval")


@dataclass(frozen=True)
class EvalSettings:
    trials: int = 1
    max_turns: int = 20
    max_steps_per_turn: int = 12  # as simulation.max_steps_per_turn
    concurrency: int = 8
    checks: tuple[str, ...] | None = None
    user_model: ModelConfig | None = None  # an LLM user through the gateway; None: the scripted user
    gateway: GatewayConfig = GatewayConfig()


class Domains:
    """Domains by (name, size, seed), built once each."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, int], Domain] = {}

    def get(self, bp: TaskBlueprint) -> Domain:
        key = (bp.environment.domain, bp.environment.size, bp.environment.seed)
        if key not in self._cache:
            self._cache[key] = load_domain(*key)
        return self._cache[key]


async def _episodes(blueprints: Sequence[TaskBlueprint], make_agent: AgentFactory, policy: str,
                    settings: EvalSettings, eval_id: str,
                    progress: Callable[[], None] | None) -> list[tuple[TaskBlueprint, int, int, Trajectory]]:
    domains = Domains()
    gate = asyncio.Semaphore(settings.concurrency)
    limits = EpisodeLimits(settings.max_turns, settings.max_steps_per_turn)
    gateway = None
    if settings.user_model is not None:
        from trajforge.simulation.llm import Budget, EpisodeLedger, Gateway
        from trajforge.simulation.llm_agent import episode_tag
        from trajforge.simulation.llm_user import LLMUser

        gateway = Gateway(settings.gateway, Budget(settings.gateway.max_cost_usd), random.Random(0),
                          concurrency=settings.concurrency)

    async def one(bp: TaskBlueprint, trial: int) -> tuple[TaskBlueprint, int, int, Trajectory]:
        async with gate:
            domain = domains.get(bp)
            seed = trial_seed(bp.id, trial)
            env = domain.environment()
            user: UserPolicy
            if gateway is not None and settings.user_model is not None:
                expected = bp.ground_truth.final_state_hash
                user = LLMUser(gateway, settings.user_model, bp, domain,
                               EpisodeLedger.starting_now(settings.gateway.episode_timeout_s),
                               UserSimulatorConfig(), goal_met=lambda: env.state_hash() == expected,
                               headers=episode_tag(bp.id, seed))
            else:
                user = ScriptedUser(bp, domain, random.Random(seed + 1))
            agent = make_agent(bp, domain, seed)
            spec = EpisodeSpec(agent=policy, user=getattr(user, "name", "scripted"), seed=seed,
                               max_turns=settings.max_turns)
            trajectory = await run_episode(bp.id, env, agent, user, limits, run_id=eval_id, episode=spec)
            if progress is not None:
                progress()
            return bp, trial, seed, trajectory

    try:
        return await asyncio.gather(*(one(bp, t) for bp in blueprints for t in range(settings.trials)))
    finally:
        if gateway is not None:
            await gateway.aclose()


@dataclass
class EvalResult:
    eval_id: str
    policy: str
    rows: list[dict[str, Any]]
    scores: list[DomainScore]
    path: Path | None = None


def evaluate(blueprints: Sequence[TaskBlueprint], make_agent: AgentFactory, policy: str,
             settings: EvalSettings, source: str,
             progress: Callable[[], None] | None = None) -> EvalResult:
    """Play and verify every (blueprint, trial); the rows and per-domain scores."""
    if settings.trials < 1:
        raise ConfigError("--trials", "must be at least 1")
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    eval_id = content_id({"policy": policy, "source": source, "blueprints": [b.id for b in blueprints],
                          "settings": {**settings.__dict__, "gateway": None,
                                       "user_model": settings.user_model.model_dump(mode="json")
                                       if settings.user_model else None}, "created": created}, prefix="ev_")
    played = asyncio.run(_episodes(blueprints, make_agent, policy, settings, eval_id, progress))
    domains = Domains()
    rows = []
    for bp, trial, seed, trajectory in played:
        verdicts = verify(trajectory, bp, domains.get(bp), settings.checks)
        turns, calls, valid = call_validity(trajectory)
        rows.append({
            "eval_id": eval_id, "created_at": created, "policy": policy, "source": source,
            "blueprint_id": bp.id, "domain": bp.environment.domain, "trial": trial,
            "trials": settings.trials, "seed": seed, "trajectory_id": trajectory.id,
            "passed": bool(verdicts and verdicts[0].trajectory_passed),
            "reward": float(verdicts[0].reward) if verdicts else 0.0,
            "failed_checks": [v.check for v in verdicts if not v.passed],
            "termination": str(trajectory.termination), "agent_turns": turns, "tool_calls": calls,
            "valid_tool_calls": valid, "trajectory": trajectory.model_dump_json(),
        })
    return EvalResult(eval_id, policy, rows, score(rows, settings.trials))


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
         "terminations": dict(s.terminations.most_common())}
        for s in result.scores]}


# --- policies ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class PolicySpec:
    kind: str  # hf, vllm, litellm
    target: str

    @classmethod
    def parse(cls, text: str) -> "PolicySpec":
        kind, sep, target = text.partition(":")
        if not sep or kind not in ("hf", "vllm", "litellm") or not target:
            raise ConfigError("--policy", f"'{text}' is not hf:PATH, vllm:PATH or litellm:MODEL")
        return cls(kind, target)


def template_agents(name: str, tokenizer: Any, generator: Any, max_prompt_tokens: int) -> AgentFactory:
    """Agents for a local model: each episode gets a ``TemplateAgent`` sharing ``generator``."""
    from trajforge.sft.policies import TemplateAgent

    def local(bp: TaskBlueprint, domain: Domain, episode_seed: int) -> AgentPolicy:
        tools = [t.model_dump(mode="json") for t in domain.tool_specs()]
        return TemplateAgent(name, tokenizer, generator, tools, max_prompt_tokens)

    return local


def model_agents(model: Any, tokenizer: Any, name: str, *, max_new_tokens: int = 256, temperature: float = 0.0,
                 seed: int = 0, batch_size: int = 8) -> AgentFactory:
    """Agents for a model already in memory (e.g. the policy being trained in ``trajforge loop``)."""
    from trajforge.sft.policies import BatchedGenerator, GenerationSettings, context_length, hf_generate_batch

    gen = GenerationSettings(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
    return template_agents(name, tokenizer, BatchedGenerator(hf_generate_batch(model, tokenizer, gen), batch_size),
                           context_length(model) - max_new_tokens)


def agent_factory(spec: PolicySpec, *, max_new_tokens: int = 256, temperature: float = 0.0,
                  seed: int = 0, api_base: str | None = None, batch_size: int = 8,
                  gateway: GatewayConfig | None = None) -> AgentFactory:
    """How each episode gets its agent for a policy spec. Model loading happens here, once."""
    if spec.kind in ("hf", "vllm"):
        from trajforge.sft.policies import (
            BatchedGenerator,
            GenerationSettings,
            context_length,
            hf_generate_batch,
            load_hf,
            vllm_generate_batch,
        )

        gen = GenerationSettings(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
        if spec.kind == "hf":
            model, tokenizer = load_hf(spec.target)
            generate, context = hf_generate_batch(model, tokenizer, gen), context_length(model)
        else:
            generate, tokenizer, context = vllm_generate_batch(spec.target, gen)
        return template_agents(f"{spec.kind}:{spec.target}", tokenizer, BatchedGenerator(generate, batch_size),
                               context - max_new_tokens)

    from trajforge.simulation.llm import Budget, EpisodeLedger, Gateway
    from trajforge.simulation.llm_agent import LLMAgent, episode_tag

    config = gateway or GatewayConfig()
    model_config = ModelConfig(model=spec.target, api_base=api_base, temperature=temperature,
                               max_tokens=max_new_tokens)
    holder: dict[str, Gateway] = {}

    def remote(bp: TaskBlueprint, domain: Domain, episode_seed: int) -> AgentPolicy:
        # the gateway binds to the running loop, so it is made on the first episode
        if "gateway" not in holder:
            holder["gateway"] = Gateway(config, Budget(config.max_cost_usd), random.Random(seed),
                                        concurrency=batch_size)
        ledger = EpisodeLedger.starting_now(config.episode_timeout_s)
        return LLMAgent(holder["gateway"], model_config, domain, ledger, episode_tag(bp.id, episode_seed))

    return remote


class EvalRequest(BaseModel):
    """One ``trajforge eval`` (the CLI command and the ``evaluate-policy`` flow take the same
    fields): which policy, which blueprints, which user, how long each episode may run."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(description="hf:PATH, vllm:PATH or litellm:MODEL")
    out: Path = Field(description="dataset folder: held-out blueprints, and where the rows go")
    split: str = "test"
    salt: str = ""
    fresh: int | None = Field(None, ge=1, description="play N freshly generated blueprints instead")
    fresh_seed: int = 1_000_003
    limit: int | None = Field(None, ge=1)
    trials: int = Field(1, ge=1)
    max_turns: int = Field(20, ge=2)
    max_steps_per_turn: int = Field(12, ge=1)
    max_new_tokens: int = Field(256, ge=1)
    temperature: float = Field(0.0, ge=0)
    batch_size: int = Field(8, ge=1)
    api_base: str | None = None
    seed: int = 0
    user_model: str | None = Field(None, description="an LLM plays the user (litellm name); None: scripted")
    user_api_base: str | None = None
    threads: int | None = Field(None, ge=1, description="torch CPU threads for an hf: policy")


@dataclass
class PreparedEvaluation:
    """The blueprints, the agents (the model loaded once) and the settings of one request."""

    blueprints: list[TaskBlueprint]
    source: str
    policy: str
    make_agent: AgentFactory
    settings: EvalSettings

    def run(self, progress: Callable[[], None] | None = None) -> EvalResult:
        return evaluate(self.blueprints, self.make_agent, self.policy, self.settings, self.source,
                        progress=progress)


def prepare_evaluation(request: EvalRequest) -> PreparedEvaluation:
    spec = PolicySpec.parse(request.policy)
    if spec.kind == "hf":
        from trajforge.sft.policies import set_torch_threads

        set_torch_threads(request.threads)
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
                               seed=request.seed, api_base=request.api_base, batch_size=request.batch_size)
    user = (ModelConfig(model=request.user_model, api_base=request.user_api_base)
            if request.user_model is not None else None)
    settings = EvalSettings(trials=request.trials, max_turns=request.max_turns,
                            max_steps_per_turn=request.max_steps_per_turn, concurrency=request.batch_size,
                            user_model=user)
    return PreparedEvaluation(list(blueprints), source, f"{spec.kind}:{spec.target}", make_agent, settings)


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


__all__ = ["DomainScore", "EvalResult", "EvalSettings", "PolicySpec", "agent_factory", "call_validity",
           "evaluate", "fresh_blueprints", "heldout_blueprints", "pass_hat_k", "render_table",
           "save_evaluation", "score", "summary_json", "trial_seed"]
