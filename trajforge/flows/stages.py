"""Flows for the stages after the build: export, publish, train (SFT, RL), evaluate, the
resynthesis loop, and their composition.

Orchestration only: each flow validates its parameters and calls the stage's own functions
(``store.export_writer`` / ``store.card``, ``store.publish``, ``sft.train``, ``evaluation.run``), the
same ones the CLI commands call. Parameters are plain JSON values, so each flow can be a
deployment's entry point. ``build_train_eval`` chains them as subflows: the scheduled build
(``scheduled_build``, on the task runner its config names), the ``sft`` export of the dataset,
SFT on it, and the evaluation of the trained model on the dataset's held-out ``test`` blueprints,
whose episodes land in the catalog's ``evaluations`` view. ``trajforge deploy --train-config``
registers it on a schedule (flows/deploy.py).

Training and evaluation need the ``train`` extra (torch, transformers, TRL); it is imported only
when those flows run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from trajforge.config import validate_config
from trajforge.errors import ConfigError
from trajforge.evaluation.config import EvalConfig, default_of
from trajforge.store.features import export_formats
from trajforge.store.splits import split_config

# the evaluation options a deployment shows, with EvalConfig's defaults
DEFAULT_EVAL: dict[str, Any] = {
    name: default_of(EvalConfig, name)
    for name in ("split", "limit", "trials", "max_turns", "max_steps_per_turn", "max_new_tokens", "temperature",
                 "batch_size", "seed")}


@flow(name="export-dataset", persist_result=False)
def export_dataset(out: str, to: str | None = None, formats: list[str] | None = None,
                   splits: list[float] | None = None, salt: str = "",
                   runs: list[str] | None = None, license_id: str = "apache-2.0",
                   shard_rows: int = 2000) -> dict[str, Any]:
    """``trajforge export``: training-ready exports of the catalog at ``out`` and a dataset
    card, in ``to`` (default ``<out>/export``). Returns the export's rows per format and split."""
    from trajforge.store.card import write_card
    from trajforge.store.export_writer import write_export

    target = Path(to) if to else Path(out) / "export"
    summary = write_export(Path(out), target, export_formats(formats, "formats"),
                           split_config(splits, salt, "splits"), runs, shard_rows=shard_rows)
    write_card(Path(out), target, summary, license_id=license_id)
    get_run_logger().info("exported %s to %s", summary.rows, target)
    return {"to": str(target), "rows": summary.rows, "run_ids": list(summary.run_ids),
            "contamination": len(summary.contamination)}


@flow(name="publish-dataset", persist_result=False)
def publish_dataset(out: str, repo_id: str, to: str | None = None, private: bool = False,
                    revision: str | None = None, dry_run: bool = False,
                    formats: list[str] | None = None, splits: list[float] | None = None,
                    salt: str = "", runs: list[str] | None = None,
                    license_id: str = "apache-2.0") -> dict[str, Any]:
    """``trajforge publish``: stage the exports and card (checked for leaks), then upload them
    to the Hub unless ``dry_run`` (the token comes from HF_TOKEN or ``hf auth login``, never
    from a parameter)."""
    from trajforge.store.publish import check_repo_id, default_staging, folder_files, publish, stage

    check_repo_id(repo_id)
    folder = Path(to) if to else default_staging(Path(out), repo_id)
    stage(Path(out), folder, repo_id=repo_id, formats=export_formats(formats, "formats"),
          split_config=split_config(splits, salt, "splits"), run_ids=runs, license_id=license_id)
    files = folder_files(folder)
    urls = [] if dry_run else publish(folder, repo_id, private=private, revision=revision)
    return {"folder": str(folder), "files": len(files), "commits": urls}


@flow(name="train-sft", persist_result=False)
def train_sft(config: dict[str, Any], resume: bool = False) -> dict[str, Any]:
    """``trajforge train sft``: ``config`` holds the fields of a train config (configs/sft-tiny.yaml:
    model, data, output_dir, sft.* as trl.SFTConfig fields, ...). Returns the training summary."""
    from trajforge.sft.train import TrainConfig
    from trajforge.sft.train import train_sft as run_training

    summary = run_training(validate_config(TrainConfig, config), resume=resume)
    get_run_logger().info("trained %s steps into %s", summary["global_step"], summary["output_dir"])
    return summary


@flow(name="evaluate-policy", persist_result=False)
def evaluate_policy(policy: str, out: str, split: str = default_of(EvalConfig, "split"),
                    salt: str = default_of(EvalConfig, "salt"), fresh: int | None = None,
                    fresh_seed: int = default_of(EvalConfig, "fresh_seed"), limit: int | None = None,
                    trials: int = default_of(EvalConfig, "trials"),
                    max_turns: int = default_of(EvalConfig, "max_turns"),
                    max_steps_per_turn: int = default_of(EvalConfig, "max_steps_per_turn"),
                    max_new_tokens: int = default_of(EvalConfig, "max_new_tokens"),
                    temperature: float = default_of(EvalConfig, "temperature"),
                    batch_size: int = default_of(EvalConfig, "batch_size"), api_base: str | None = None,
                    seed: int = default_of(EvalConfig, "seed"), user_model: str | None = None,
                    user_api_base: str | None = None, threads: int | None = None,
                    bf16: bool = default_of(EvalConfig, "bf16"),
                    prefix_cache: bool = default_of(EvalConfig, "prefix_cache")) -> dict[str, Any]:
    """``trajforge eval``: play ``policy`` (hf:PATH, vllm:PATH or litellm:MODEL) on the held-out
    blueprints of ``out`` (or ``fresh`` generated ones), verify every episode, save the rows to
    the catalog's ``evaluations`` view. Returns the per-domain scores (pass@1, pass^k, ...).
    The parameters are ``trajforge.evaluation.config.EvalConfig``'s, with its defaults."""
    values = dict(locals())  # the parameters, before anything else is bound
    from trajforge.evaluation.run import prepare_evaluation, save_evaluation, summary_json

    result = prepare_evaluation(validate_config(EvalConfig, values)).run()
    path = save_evaluation(Path(out), result)
    get_run_logger().info("evaluated %s: %d episodes in %s", result.policy, len(result.rows), path)
    return {**summary_json(result), "episodes": len(result.rows), "path": str(path)}


@flow(name="train-rl", persist_result=False)
def train_rl(config: dict[str, Any]) -> dict[str, Any]:
    """``trajforge train rl``: ``config`` holds the fields of an RL config (configs/rl-tiny.yaml:
    model, tasks, output_dir, rollout, reward, grpo.* as trl.GRPOConfig fields). Returns the summary."""
    from trajforge.rl.train import RLConfig
    from trajforge.rl.train import train_rl as run_rl

    summary = run_rl(validate_config(RLConfig, config))
    get_run_logger().info("GRPO: %s steps, %s episodes, mean reward %s", summary["global_step"],
                          summary["episodes"], summary["mean_reward"])
    return summary


@flow(name="resynthesis-loop", persist_result=False)
def resynthesis_loop(config: dict[str, Any]) -> dict[str, Any]:
    """``trajforge loop``: ``config`` holds the fields of a loop config (configs/loop-tiny.yaml).
    Each iteration's row lands in the catalog's ``loop_iterations`` view; returns them."""
    from trajforge.loop.run import LoopConfig, run_loop

    logger = get_run_logger()
    result = run_loop(validate_config(LoopConfig, config), progress=logger.info)
    return {"run_id": result.run_id, "initial_heldout_pass_at_1": result.initial_pass_at_1,
            "iterations": [r.model_dump(mode="json") for r in result.iterations],
            "plot": str(result.plot) if result.plot else None}


@flow(name="trajforge-build-train-eval", persist_result=False)
def build_train_eval(config: dict[str, Any], train: dict[str, Any],
                     evaluation: dict[str, Any] | None = None, grow: int = 0,
                     export_to: str | None = None) -> dict[str, Any]:
    """Build (or extend) the dataset, export its ``sft`` format, fine-tune on it, and evaluate
    the trained model on the dataset's held-out blueprints.

    ``config`` is the run config (as for ``scheduled_build``), ``train`` a train config whose
    ``data`` defaults to this export, ``evaluation`` options of ``evaluate_policy`` (split,
    limit, trials, max_turns, ...; the policy is the trained model, ``hf:<output_dir>``)."""
    from trajforge.config import run_config
    from trajforge.flows.build import scheduled_build

    out = Path(run_config(config).store.out)
    options = {**DEFAULT_EVAL, **(evaluation or {})}
    unknown = sorted(set(options) - set(DEFAULT_EVAL) - {"salt"})
    if unknown:  # before anything runs
        raise ConfigError("evaluation", f"unknown option(s) {', '.join(unknown)}")
    built = scheduled_build(config=config, grow=grow)
    export = export_dataset(out=str(out), to=export_to or str(out / "export"), formats=["sft"])
    trained = train_sft(config={**train, "data": train.get("data") or export["to"]})
    scores = evaluate_policy(policy=f"hf:{trained['output_dir']}", out=str(out), **options)
    return {"build": built, "export": export, "train": trained, "evaluation": scores}
