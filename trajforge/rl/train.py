"""``trajforge train rl``: GRPO on environment rewards, with TRL's ``GRPOTrainer``.

What TRL does here: group-relative advantages (``num_generations`` rollouts per task, rewards
normalised within the group), the clipped policy-gradient loss over the completion tokens, the
optimizer, schedule, logging and checkpoints (every ``grpo:`` key is a ``trl.GRPOConfig`` field).

What trajforge adds, and why: TRL's own generation is single-turn (or tool-only multi-turn,
where every message after the prompt is the model's or a tool's); a task here is a dialogue
with a simulated user who reveals the goal bit by bit, so a rollout is a whole episode played by
``trajforge.rl.rollout`` (scripted user, real tools, the verifiers' reward). It plugs into TRL
through ``rollout_func``, returning the episode's token sequence with ``env_mask`` so the loss
covers the policy's own tokens only (user and tool tokens are context, not actions). The
reward reaches TRL's reward function as an extra rollout field.

Rollouts use transformers ``generate`` on the policy being trained; with ``grpo.use_vllm: true``
(and ``vllm_mode: colocate``; a GPU machine with vLLM installed) they use TRL's vLLM engine,
whose weights TRL syncs to the policy before every rollout, for the same token-level episodes.

A config is YAML (``configs/rl-tiny.yaml``)::

    model: runs/sft-tiny          # a local model folder (the SFT output) or a Hub id
    tasks: data                   # a dataset folder: its blueprints of split `split` are the tasks
    split: train
    output_dir: runs/rl-tiny
    rollout: {max_turns: 8, max_new_tokens: 96, temperature: 1.0, ...}
    reward: {progress_weight: 0.5}
    grpo: {num_generations: 4, per_device_train_batch_size: 8, max_steps: 20, ...}
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import ConfigError
from trajforge.rl.reward import RewardConfig
from trajforge.rl.rollout import Rollout, RolloutConfig, RolloutPlayer, rollout_seed
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.sft.precision import PrecisionChoice, measured_if_auto, settle_bf16
from trajforge.trainer_args import SCIENTIFIC, renamed_fields

DEFAULT_GRPO: dict[str, Any] = {
    "num_generations": 4,
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 2,
    "learning_rate": 5e-4,
    "lr_scheduler_type": "constant",
    "max_steps": 10,
    "beta": 0.0,
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
    "seed": 0,
    "disable_dropout": True,
    "disable_tqdm": True,
    "gradient_checkpointing": False,  # TRL's GRPO default; a small model does not need it
}


class RLConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(..., min_length=1, description="a local model folder (e.g. the SFT output) or a Hub id")
    tasks: str = Field("data", min_length=1, description="a dataset folder whose blueprints are the tasks")
    split: str = "train"
    max_tasks: int | None = Field(None, ge=1)
    output_dir: str = Field("runs/rl", min_length=1)
    rollout: RolloutConfig = RolloutConfig()
    reward: RewardConfig = RewardConfig()
    grpo: dict[str, Any] = Field(default_factory=dict)
    threads: int | None = Field(None, ge=1, description="CPU threads for torch (see TrainConfig.threads)")
    max_minutes: float | None = Field(None, gt=0)
    trainable_layers: int | None = Field(None, ge=1, description=(
        "GRPO trains only the last N transformer blocks (trajforge.sft.freeze; None: all)"))


def load_rl_config(path: Path | None, overrides: dict[str, Any] | None = None) -> RLConfig:
    from trajforge.config import load_yaml_config

    return load_yaml_config(RLConfig, path, overrides)


def grpo_config(values: dict[str, Any], output_dir: str, max_new_tokens: int | None = None,
                precision: PrecisionChoice | None = None) -> Any:
    """``trl.GRPOConfig`` from the ``grpo`` section over trajforge's defaults. ``grpo.bf16: auto``
    takes ``precision`` (measured by ``grpo_train`` on the loaded model, trajforge.sft.precision)."""
    import torch
    from trl import GRPOConfig

    merged = settle_bf16({**DEFAULT_GRPO, **values, "output_dir": output_dir}, precision)
    if merged.get("use_vllm") and max_new_tokens is not None:  # vLLM's turns are as long as ours
        merged.setdefault("max_completion_length", max_new_tokens)
    for key, value in merged.items():
        if isinstance(value, str) and SCIENTIFIC.fullmatch(value):
            merged[key] = float(value)
    if not torch.cuda.is_available():
        merged.setdefault("use_cpu", True)
        merged.setdefault("bf16", False)
    try:
        return GRPOConfig(**renamed_fields(GRPOConfig, merged))
    except TypeError as exc:
        bad = str(exc).split("'")[1] if "'" in str(exc) else "?"
        raise ConfigError(f"grpo.{bad}", "is not a trl.GRPOConfig field") from None
    except ValueError as exc:
        raise ConfigError("grpo", " ".join(str(exc).split())) from None


@dataclass
class RolloutLog:
    """Every rollout the trainer consumed, by optimizer step (what boundary detection reads)."""

    rollouts: list[tuple[int, Rollout]] = field(default_factory=list)


def make_rollout_func(player: RolloutPlayer, tasks: dict[str, TaskBlueprint], log: RolloutLog,
                      salt: str, run_id: str) -> Callable[[list[Any], Any], dict[str, Any]]:
    """TRL's ``rollout_func``: each prompt is a blueprint id (repeated ``num_generations`` times
    by TRL's sampler); each copy is played with its own seed."""

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        step = int(trainer.state.global_step)
        seen: dict[str, int] = {}
        jobs = []
        for prompt in prompts:
            bp = tasks[str(prompt)]
            k = seen.get(bp.id, 0)
            seen[bp.id] = k + 1
            jobs.append((bp, rollout_seed(bp.id, f"{salt}:{step}", k)))
        generate = None
        if getattr(trainer, "use_vllm", False):  # TRL's vLLM engine, its weights synced to the policy's
            def generate(prompts: list[list[int]]) -> list[list[int]]:
                return list(trainer.vllm_generation.generate(prompts, None, 1)[1])
        played = player.play(jobs, run_id=run_id, generate=generate)
        log.rollouts.extend((step, r) for r in played)
        return {"prompt_ids": [r.prompt_ids for r in played],
                "completion_ids": [r.completion_ids for r in played],
                "logprobs": None,
                "env_mask": [r.env_mask for r in played],
                "env_reward": [r.reward.reward for r in played]}

    return rollout_func


def env_reward(prompts: list[Any], completions: list[Any], env_reward: list[float],
               **_: Any) -> list[float | None]:
    """The verifiers' reward, computed during the rollout and passed through by TRL (whose reward
    functions may return None for "no reward"; this one always has one)."""
    return list(env_reward)


@dataclass
class RLResult:
    steps: int
    seconds: float
    log: RolloutLog
    history: list[dict[str, Any]]
    bf16: bool = False  # what it trained in
    precision: PrecisionChoice | None = None  # what grpo.bf16: auto measured
    rollout_bf16: bool = False  # what the rollouts were sampled in (rollout.bf16, None: as bf16)


def grpo_train(model: Any, tokenizer: Any, tasks: Sequence[TaskBlueprint], config: RLConfig, *,
               salt: str = "rl", run_id: str = "rl", callbacks: list[Any] | None = None) -> RLResult:
    """Run GRPO on ``tasks`` with an already loaded model (trained in place)."""
    import datasets
    from trl import GRPOTrainer

    if not tasks:
        raise ConfigError("tasks", "no tasks to train on")
    precision = measured_if_auto(config.grpo, model)
    args = grpo_config(config.grpo, config.output_dir, config.rollout.max_new_tokens, precision)
    player = RolloutPlayer(model, tokenizer, config.rollout, config.reward,
                           seed=int(args.seed), trains_bf16=bool(args.bf16))
    by_id = {bp.id: bp for bp in tasks}
    log = RolloutLog()
    dataset = datasets.Dataset.from_dict({"prompt": list(by_id)})
    tokenizer.padding_side = "left"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*experimental.*")
        trainer = GRPOTrainer(model=model, reward_funcs=[env_reward], args=args, train_dataset=dataset,
                              processing_class=tokenizer, callbacks=callbacks,
                              rollout_func=make_rollout_func(player, by_id, log, salt, run_id))
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # the log history is kept and written; no dict dumps on stdout
    started = time.perf_counter()
    result = trainer.train()
    return RLResult(steps=int(result.global_step), seconds=time.perf_counter() - started, log=log,
                    history=list(trainer.state.log_history), bf16=bool(args.bf16), precision=precision,
                    rollout_bf16=player.bf16)


def load_tasks(config: RLConfig) -> list[TaskBlueprint]:
    from trajforge.evaluation.blueprints import heldout_blueprints

    return heldout_blueprints(Path(config.tasks), config.split, limit=config.max_tasks)


def train_rl(config: RLConfig) -> dict[str, Any]:
    """``trajforge train rl``: returns the summary also written to ``rl_summary.json``."""
    from trajforge.simulation.local_model import load_hf, prepare_torch
    from trajforge.trainer_args import time_limit

    prepare_torch(config.threads)
    grpo_config(config.grpo, config.output_dir)  # a bad grpo field fails before anything loads
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    tasks = load_tasks(config)
    model, tokenizer = load_hf(config.model)
    if config.trainable_layers is not None:
        from trajforge.sft.freeze import freeze_lower_layers

        freeze_lower_layers(model, config.trainable_layers)
    model.train()
    callbacks = [time_limit(config.max_minutes * 60.0)] if config.max_minutes else None
    result = grpo_train(model, tokenizer, tasks, config, callbacks=callbacks)
    model.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    rewards = [r.reward.reward for _, r in result.log.rollouts]
    passed = [r.reward.passed for _, r in result.log.rollouts]
    rows = [{"step": s, "blueprint_id": r.blueprint.id, "seed": r.seed, "reward": r.reward.reward,
             "passed": r.reward.passed, "writes": r.reward.writes, "checks": r.reward.checks,
             "policy_tokens": r.policy_tokens, "termination": str(r.trajectory.termination)}
            for s, r in result.log.rollouts]
    (output_dir / "rollouts.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    summary = {
        "model": config.model, "output_dir": str(output_dir), "tasks": len(tasks),
        "global_step": result.steps, "seconds": round(result.seconds, 1), "episodes": len(rows),
        "mean_reward": round(sum(rewards) / len(rewards), 4) if rewards else None,
        "pass_rate": round(sum(passed) / len(passed), 4) if passed else None,
        "rollout": config.rollout.model_dump(), "reward": config.reward.model_dump(),
        "grpo": {**DEFAULT_GRPO, **config.grpo}, "bf16": result.bf16, "rollout_bf16": result.rollout_bf16,
        "precision": result.precision.as_dict() if result.precision is not None else None,
    }
    (output_dir / "rl_summary.json").write_text(json.dumps(summary, indent=1, default=str))
    write_reward_curve(result.history, output_dir)
    return summary


def write_reward_curve(history: list[dict[str, Any]], folder: Path) -> Path:
    """``reward_curve.csv``: TRL's logged mean reward and loss per step."""
    import csv

    path = folder / "reward_curve.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", "reward", "reward_std", "loss"])
        for entry in history:
            if "reward" in entry:
                writer.writerow([entry.get("step"), entry.get("reward"), entry.get("reward_std"), entry.get("loss")])
    return path
