"""``trajforge loop``: the online boundary-sample resynthesis loop.

Each iteration:

1. **rollout + train**: GRPO (``trajforge.rl.train.grpo_train``) on the pool's active tasks for
   ``grpo.max_steps`` optimizer steps; every task it draws is played ``num_generations`` times by
   the current policy (scripted user, real tools, verifier reward);
2. **detect**: those same rollouts update the pool (``TaskPool.observe``): per task its success
   rate and reward variance; boundary tasks (succeeding sometimes) are found at no extra
   inference cost, saturated and hopeless ones are retired;
3. **resynthesize**: for up to ``max_resynthesized`` boundary tasks (highest variance first),
   ``variants_per_task`` structure-matched variants are generated and validated by executing
   their ground truth (``generators.resynthesize``), and admitted to the bounded pool;
4. **measure**: the policy plays the held-out blueprints greedily (pass@1);
5. **record**: a ``LoopIteration`` row and the pool's ``LoopTaskStat`` rows (catalog views
   ``loop_iterations`` and ``loop_tasks``), the iteration's new variants, rollouts and verdicts
   in the ordinary tables (shard ``[i, i+1)`` of the loop's run), and ``loop.png``.

``fixed: true`` turns the loop into the baseline it is compared against: the same GRPO on the
same seed tasks with the same trajectory budget, but no retirement and no resynthesis.

The optimizer is created afresh each iteration (a new ``GRPOTrainer`` over the new pool), the
weights carry over; iteration ``i``'s rollouts use seeds salted with the run and ``i``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import ConfigError
from trajforge.evaluation.config import EvalConfig, default_of
from trajforge.loop.pool import PoolConfig, RolloutOutcome, TaskPool, iteration_record
from trajforge.rl.reward import RewardConfig
from trajforge.rl.rollout import RolloutConfig
from trajforge.rl.train import RLConfig
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.ids import content_id
from trajforge.schemas.loop import LoopIteration


class HeldoutConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: str = "test"
    limit: int = Field(16, ge=1)
    max_turns: int = Field(8, ge=1)
    max_steps_per_turn: int = Field(6, ge=1, description="as RolloutConfig.max_steps_per_turn")
    max_new_tokens: int = Field(96, ge=1)
    batch_size: int = Field(16, ge=1)
    bf16: bool = Field(default_of(EvalConfig, "bf16"), description="as EvalConfig.bf16")
    prefix_cache: bool = Field(default_of(EvalConfig, "prefix_cache"), description="as EvalConfig.prefix_cache")


class LoopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(..., min_length=1, description="the starting policy: a local model folder (the SFT output)")
    tasks: str = Field("data", min_length=1, description="dataset folder: its blueprints seed the pool, "
                                                        "and the loop's records go to its catalog")
    split: str = "train"
    seed_tasks: int = Field(16, ge=1, description="seed tasks drawn (seeded) from the split")
    seed_max_intents: int | None = Field(None, ge=1, description="only seed tasks with at most this many intents")
    seed_max_writes: int | None = Field(None, ge=0, description="only seed tasks with at most this many writes "
                                                               "(a curriculum: start within the policy's reach)")
    output_dir: str = Field("runs/loop", min_length=1, description="the final policy and loop.png")
    iterations: int = Field(3, ge=1)
    fixed: bool = Field(False, description="baseline: no retirement, no resynthesis")
    variants_per_task: int = Field(2, ge=0)
    max_resynthesized: int = Field(4, ge=0, description="boundary tasks resynthesized per iteration")
    resynthesis_attempts: int = Field(50, ge=1)
    pool: PoolConfig = PoolConfig()
    rollout: RolloutConfig = RolloutConfig()
    reward: RewardConfig = RewardConfig()
    grpo: dict[str, Any] = Field(default_factory=dict, description="trl.GRPOConfig fields; max_steps per iteration")
    heldout: HeldoutConfig = HeldoutConfig()
    threads: int | None = Field(None, ge=1)
    seed: int = 0
    trainable_layers: int | None = Field(None, ge=1, description=(
        "GRPO trains only the last N transformer blocks (trajforge.sft.freeze; None: all)"))

    def run_id(self) -> str:
        # how the work is done (threads, the prefix cache, where it is written) is not what is done;
        # bf16 changes the numbers, so it is part of the id when on (off: ids from before the field);
        # rollout.bf16 when set (None, following grpo.bf16, which is in the id: ids from before the field)
        exclude: dict[str, Any] = {"threads": True, "output_dir": True,
                                   "rollout": {"prefix_cache"} | ({"bf16"} if self.rollout.bf16 is None else set()),
                                   "heldout": {"prefix_cache"} | (set() if self.heldout.bf16 else {"bf16"})}
        if self.trainable_layers is None:  # ids from before the field
            exclude["trainable_layers"] = True
        return content_id({"loop": self.model_dump(mode="json", exclude=exclude)}, prefix="loop_")


def load_loop_config(path: Path | None, overrides: dict[str, Any] | None = None) -> LoopConfig:
    from trajforge.config import load_yaml_config

    return load_yaml_config(LoopConfig, path, overrides)


@dataclass
class LoopResult:
    run_id: str
    initial_pass_at_1: float
    iterations: list[LoopIteration]
    output_dir: Path
    plot: Path | None


def _heldout_pass(model: Any, tokenizer: Any, blueprints: list[TaskBlueprint], config: HeldoutConfig,
                  name: str) -> float:
    from trajforge.evaluation.config import PlayConfig
    from trajforge.evaluation.policies import model_agents
    from trajforge.evaluation.run import evaluate

    was_training = model.training
    model.eval()
    # held-out pass@1 is measured greedily (temperature 0), so it does not depend on a seed
    make_agent = model_agents(model, tokenizer, name, max_new_tokens=config.max_new_tokens,
                              batch_size=config.batch_size, temperature=0.0, seed=0, bf16=config.bf16,
                              prefix_cache=config.prefix_cache)
    play = PlayConfig(trials=1, max_turns=config.max_turns, max_steps_per_turn=config.max_steps_per_turn,
                      concurrency=config.batch_size)
    result = evaluate(blueprints, make_agent, name, play, source="loop-heldout")
    if was_training:
        model.train()
    return sum(r["passed"] for r in result.rows) / len(result.rows) if result.rows else 0.0


def seed_pool(config: LoopConfig) -> list[TaskBlueprint]:
    from trajforge.evaluation.blueprints import heldout_blueprints

    found = [bp for bp in heldout_blueprints(Path(config.tasks), config.split)
             if (config.seed_max_intents is None or bp.structure.n_intents <= config.seed_max_intents)
             and (config.seed_max_writes is None or bp.structure.write_count <= config.seed_max_writes)]
    if len(found) < config.seed_tasks:
        raise ConfigError("seed_tasks", f"the '{config.split}' split of {config.tasks} has only {len(found)} "
                                        "blueprints that fit the seed filters")
    return random.Random(config.seed).sample(found, config.seed_tasks)


def run_loop(config: LoopConfig, progress: Callable[[str], None] | None = None,
             initial_pass_at_1: float | None = None) -> LoopResult:
    """Run ``config.iterations`` iterations; returns the rows also stored in the catalog.

    ``initial_pass_at_1``: the starting policy's held-out pass@1 when the caller has measured it
    already under the same ``heldout`` config and model (it is greedy, so every run from one policy
    shares it; ``benchmarks/loop_vs_fixed.py`` measures it once for all its runs); None measures it.
    """
    from trajforge.evaluation.blueprints import heldout_blueprints
    from trajforge.generators.resynthesize import resynthesize
    from trajforge.loop.plot import plot_loop
    from trajforge.rl.train import grpo_config, grpo_train
    from trajforge.schemas.arrow import trajectory_to_row, verdict_to_row
    from trajforge.sft.precision import measured_if_auto, settle_bf16
    from trajforge.simulation.local_model import load_hf, prepare_torch
    from trajforge.simulation.worker_state import blueprint_domain
    from trajforge.store.catalog import refresh_catalog
    from trajforge.store.loop import write_loop_iteration, write_loop_shard, write_loop_tasks

    say = progress or (lambda _: None)
    grpo_config(config.grpo, str(Path(config.output_dir) / "trainer"))  # a bad grpo field fails first
    # malloc as glibc sets it: with freed memory kept (what training alone gains from), the loop's
    # process reached 21 GB resident in its first iteration (SmolLM2, beside a CI run, 2026-12-07) and
    # the kernel killed it; without, one run peaked at 15 GB and fell back to 8 GB. That the setting
    # caused the growth is likely, not shown: no run with it was repeated alone
    prepare_torch(config.threads, keep_memory=False)
    out = Path(config.tasks)
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    run_id = config.run_id()
    seeds = seed_pool(config)
    heldout = heldout_blueprints(out, config.heldout.split, limit=config.heldout.limit)
    pool_config = config.pool
    if config.fixed:
        pool_config = PoolConfig(capacity=len(seeds), hopeless_after=10**9, saturated_after=10**9,
                                 min_rollouts=config.pool.min_rollouts)
    pool = TaskPool(seeds, pool_config)
    model, tokenizer = load_hf(config.model)
    if config.trainable_layers is not None:
        from trajforge.sft.freeze import freeze_lower_layers

        freeze_lower_layers(model, config.trainable_layers)
    model.train()
    # grpo.bf16: auto is timed once, here, and holds for every iteration: timed again per iteration (as
    # grpo_train alone does) it chose bf16, fp32, bf16 in one run's three iterations (2026-12-07, AMX host)
    precision = measured_if_auto(config.grpo, model)
    grpo = settle_bf16(config.grpo, precision)
    if initial_pass_at_1 is None:
        initial = _heldout_pass(model, tokenizer, heldout, config.heldout, f"loop:{run_id}:0")
        say(f"held-out pass@1 before training: {initial:.3f}")
    else:
        initial = initial_pass_at_1
        say(f"held-out pass@1 before training: {initial:.3f} (measured by the caller)")
    rows: list[LoopIteration] = []
    consumed = 0
    for i in range(1, config.iterations + 1):
        started = time.perf_counter()
        tasks = pool.active()
        if not tasks:
            say(f"iteration {i}: no active tasks left (all retired); the loop stops")
            break
        rl = RLConfig(model=config.model, output_dir=str(output_dir / "trainer"), rollout=config.rollout,
                      reward=config.reward, grpo={**grpo, "seed": config.seed + i})
        trained = grpo_train(model, tokenizer, tasks, rl, salt=f"{run_id}:{i}", run_id=run_id)
        rollouts = [r for _, r in trained.log.rollouts]
        consumed += len(rollouts)
        update = pool.observe(i, [RolloutOutcome(r.blueprint.id, r.reward.reward, r.reward.passed)
                                  for r in rollouts])
        proposed, accepted = 0, []
        if not config.fixed:
            for parent in update.boundary[:config.max_resynthesized]:
                made = resynthesize(parent, blueprint_domain(parent), n=config.variants_per_task,
                                    seed=config.seed * 1_000_003 + i, max_attempts=config.resynthesis_attempts)
                proposed += made.proposed
                accepted += made.accepted
        admitted = pool.admit(accepted, i)
        passed = _heldout_pass(model, tokenizer, heldout, config.heldout, f"loop:{run_id}:{i}")
        losses = [e["loss"] for e in trained.history if "loss" in e]
        record = iteration_record(run_id, pool, update, variants_proposed=proposed,
                                  variants_accepted=len(accepted), variants_admitted=len(admitted),
                                  trajectories_total=consumed, wall_seconds=round(time.perf_counter() - started, 2),
                                  heldout_pass_at_1=passed,
                                  train_loss=sum(losses) / len(losses) if losses else None,
                                  train_bf16=trained.bf16, rollout_bf16=trained.rollout_bf16)
        rows.append(record)
        write_loop_iteration(out, record)
        write_loop_tasks(out, run_id, i, [s.record(run_id, i) for s in pool.stats()])
        write_loop_shard(out, run_id, i, blueprints=admitted, rows={
            "trajectories": [trajectory_to_row(r.trajectory) for r in rollouts],
            "verdicts": [verdict_to_row(v) for r in rollouts for v in r.verdicts]})
        refresh_catalog(out)
        say(f"iteration {i}: pool {record.pool_size}, boundary {record.boundary_count}, "
            f"variants {record.variants_accepted}/{record.variants_proposed}, trajectories {consumed}, "
            f"held-out pass@1 {passed:.3f}")
    model.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    plot = plot_loop(rows, output_dir / "loop.png")
    summary = {"run_id": run_id, "initial_heldout_pass_at_1": initial,
               "precision": precision.as_dict() if precision is not None else None,
               "iterations": [r.model_dump(mode="json") for r in rows], "config": config.model_dump(mode="json")}
    (output_dir / "loop_summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return LoopResult(run_id, initial, rows, output_dir, plot)
