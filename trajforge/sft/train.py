"""``trajforge train sft``: supervised fine-tuning on the ``sft`` export with TRL's ``SFTTrainer``.

The config is one YAML file (``configs/sft-tiny.yaml`` shows every section)::

    model: tiny                 # "tiny", "minilm", "smollm2", a local model folder, or a Hub id
    data: exports/retail-1k     # an export folder, a dataset folder (catalog), or a Hub dataset id
    output_dir: runs/sft-tiny
    sft: {...}                  # trl.SFTConfig fields, passed through as they are
    lora: null                  # peft.LoraConfig fields: LoRA on; add quantization: 4bit for QLoRA
    tiny: {...}                 # sizes of the tiny model (trajforge.sft.tiny.TinyModelConfig)
    minilm: {...}               # the pretrained MiniLM policy (trajforge.sft.minilm.MiniLMConfig)
    smollm2: {...}              # SmolLM2-135M-Instruct from a package (trajforge.sft.smollm.SmolLMConfig)

``--set sft.learning_rate=3e-4`` and the like override any field; the ``sft`` section is
validated by ``SFTConfig`` itself, so every TRL option is available and none is duplicated here.
Defaults trajforge sets unless the config says otherwise: ``assistant_only_loss`` (only the
agent's words and tool calls are trained), evaluation on the ``validation`` split when it has
rows (none without one, whatever ``sft.eval_strategy`` says), ``bf16`` on a GPU, no external
loggers. The run writes checkpoints (``--resume`` continues from the last one), the final
model and tokenizer in ``output_dir`` (loadable with ``from_pretrained``, so ``trajforge eval
--policy hf:OUTPUT_DIR`` works), ``loss_curve.csv`` and ``loss_curve.png``, and
``train_summary.json``.

``sft.bf16: auto`` (trajforge's value of a TRL field) trains under bf16 autocast where that is
faster: on a GPU, and on a CPU only if one timed training pass of each says so
(``trajforge.sft.precision``: on a CPU without AMX, fp32 was 1.5 times as fast).

``trainable_layers: 10`` (default none: all) trains the last ten transformer blocks only
(``trajforge.sft.freeze``): about twice the tokens per second for SmolLM2 on a CPU.

``max_minutes`` ends training after that long, and a decaying learning-rate schedule (cosine,
linear) then ends with it: the schedule runs to whichever comes first, its steps or the time
(``trajforge.trainer_args.time_limit``).

``after_tool_weight: 4`` (default 1: off) weighs the loss of the agent's messages right after a
tool result four times the rest (``trajforge.sft.weighting``).

``curriculum: [2, 4]`` (default ``[]``: off) trains on short prefixes first, as in TCOD: a stage
of every training conversation cut right after its 2nd assistant message, then one cut after
its 4th, then always a final stage of the whole conversations (``trajforge.sft.curriculum``).
A conversation with ``h`` or fewer assistant messages is not repeated in stage ``h``; it is
trained whole in the final stage only. Each stage is shuffled with ``sft.seed`` and the trainer
reads the stages in order (a sequential sampler, so ``packing`` and other
``train_sampling_strategy`` values do not combine with it); it is one run, so the learning-rate
schedule, ``max_minutes``, checkpoints and ``--resume`` span all stages, and each further epoch
goes through the stages again. ``stage_rows: 600`` (default none: all) keeps a random 600
conversations in each prefix stage, so a stage of short rows fits a time budget; the final
stage keeps every conversation. ``max_train_rows`` counts conversations, before they are staged;
validation rows stay whole; ``train_summary.json`` lists the stages (``horizon``, ``None`` for
whole, and ``rows``).

Multi-GPU: ``accelerate launch --config_file configs/accelerate/fsdp.yaml -m trajforge.cli train
sft ...`` (or ``deepspeed-zero2.yaml``); the trainer picks up the launcher's distributed setup.
"""

from __future__ import annotations

import csv
import json
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trajforge.errors import ConfigError
from trajforge.sft.curriculum import check_horizons, curriculum_stages
from trajforge.sft.minilm import MiniLMConfig
from trajforge.sft.precision import PrecisionChoice, measured_if_auto, settle_bf16
from trajforge.sft.smollm import SmolLMConfig
from trajforge.sft.tiny import TinyModelConfig
from trajforge.sft.weighting import role_markers
from trajforge.trainer_args import SCIENTIFIC, renamed_fields, time_limit

if TYPE_CHECKING:
    from transformers import PreTrainedModel

EXPORT_INFO_FILE = "trajforge_export.json"
BUILT_MODELS = ("tiny", "minilm", "smollm2")  # built here from packaged or no weights, no download
DEFAULT_SFT: dict[str, Any] = {
    "assistant_only_loss": True,
    "report_to": "none",
    "logging_steps": 10,
    "save_strategy": "steps",
    "save_steps": 200,
    "save_total_limit": 2,
    "max_length": 4096,
    "dataloader_num_workers": 0,
    "activation_checkpointing": False,  # TRL turns it on by default; a tiny model does not need it
    "seed": 0,
}


class TrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field("tiny", min_length=1)
    data: str = Field("data", min_length=1)
    output_dir: str = Field("runs/sft", min_length=1)
    sft: dict[str, Any] = Field(default_factory=dict)
    lora: dict[str, Any] | None = None
    quantization: Literal["4bit", "8bit"] | None = None
    tiny: TinyModelConfig = TinyModelConfig()
    minilm: MiniLMConfig = MiniLMConfig()
    smollm2: SmolLMConfig = SmolLMConfig()
    max_train_rows: int | None = Field(None, ge=1)
    max_eval_rows: int | None = Field(None, ge=1, description="evaluate on the first N validation rows")
    max_minutes: float | None = Field(None, gt=0, description="stop training (and save) after this long")
    copy_probe_rows: int = Field(32, ge=0, description=(
        "validation rows the copy and read probes read after training (trajforge.sft.copy_probe; 0: no probe)"))
    threads: int | None = Field(None, ge=1, description=(
        "CPU threads for torch (None: torch's default). On a shared CPU, 1 thread can be several times "
        "faster than 2: torch's OpenMP workers spin-wait on each other when another process holds a core"))
    after_tool_weight: float = Field(1.0, gt=0, description=(
        "loss weight of the agent's messages that directly follow a tool result, the others 1 "
        "(trajforge.sft.weighting; 1: off). Needs role markers: the built-in templates' or ChatML's"))
    trainable_layers: int | None = Field(None, ge=1, description=(
        "train only the last N transformer blocks and what follows them; the embeddings and the "
        "blocks below stay frozen (trajforge.sft.freeze; None: all). Not with lora"))
    curriculum: tuple[int, ...] = Field((), description=(
        "horizons of the prefix stages, strictly increasing: stage h trains on every conversation cut "
        "after its h-th assistant message, before a final stage of whole conversations (empty: off)"))

    stage_rows: int | None = Field(None, ge=1, description=(
        "most rows of each prefix stage of the curriculum, a random share of the conversations; the "
        "final stage of whole conversations keeps all (None: every row)"))

    @field_validator("curriculum")
    @classmethod
    def _increasing_horizons(cls, horizons: tuple[int, ...]) -> tuple[int, ...]:
        return check_horizons(horizons)

    @model_validator(mode="after")
    def _freeze_or_lora(self) -> TrainConfig:
        if self.trainable_layers is not None and self.lora is not None:
            raise ValueError("trainable_layers freezes blocks of the model itself; use it or lora, not both")
        if self.stage_rows is not None and not self.curriculum:
            raise ValueError("stage_rows caps the curriculum's prefix stages; set curriculum too, e.g. [1]")
        return self


def load_train_config(path: Path | None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """A ``TrainConfig`` from YAML plus dotted overrides; errors name the field."""
    from trajforge.config import load_yaml_config

    return load_yaml_config(TrainConfig, path, overrides)


def sft_config(config: TrainConfig, has_validation: bool, precision: PrecisionChoice | None = None) -> Any:
    """``trl.SFTConfig`` from the ``sft`` section over trajforge's defaults. ``sft.bf16: auto``
    takes ``precision`` (``trajforge.sft.precision.choose_bf16``, which ``train`` measures); without
    one it is the unmeasured default: bf16 on a GPU, fp32 on a CPU."""
    import torch
    from trl import SFTConfig

    values = settle_bf16({**DEFAULT_SFT, **config.sft, "output_dir": config.output_dir}, precision)
    for key, value in values.items():
        if key.endswith("_strategy") and value is False:  # YAML 1.1 reads a bare `no` as false
            values[key] = "no"
        elif isinstance(value, str) and SCIENTIFIC.fullmatch(value):  # ... and `3e-3` as a string
            values[key] = float(value)
    if torch.cuda.is_available():
        values.setdefault("bf16", True)
    else:  # TRL defaults to bf16, which on a CPU is slow autocast
        values.setdefault("use_cpu", True)
        values.setdefault("bf16", False)
    if has_validation:
        values.setdefault("eval_strategy", "steps")
        values.setdefault("eval_steps", values.get("save_steps", 200))
    else:  # nothing to evaluate on, whatever the config file asks (TRL would stop with a ValueError)
        values["eval_strategy"] = "no"
    try:
        return SFTConfig(**renamed_fields(SFTConfig, values))
    except TypeError as exc:  # an unknown field
        bad = str(exc).split("'")[1] if "'" in str(exc) else "?"
        raise ConfigError(f"sft.{bad}", "is not a trl.SFTConfig field") from None
    except ValueError as exc:
        raise ConfigError("sft", " ".join(str(exc).split())) from None


# --- data -------------------------------------------------------------------------------------

def _export_files(folder: Path) -> dict[str, list[str]]:
    files = {}
    for split in ("train", "validation", "test"):
        found = sorted(str(p) for p in (folder / "sft").glob(f"{split}-*.parquet"))
        if found:
            files[split] = found
    return files


def load_sft_data(data: str, output_dir: Path) -> Any:
    """The ``sft`` export as a ``DatasetDict`` (``train``, maybe ``validation``/``test``): from an
    export folder, from a dataset folder (exported here first) or from a Hub dataset id."""
    import datasets

    folder = Path(data)
    if folder.is_dir() and not (folder / "sft").is_dir() and (folder / "catalog.duckdb").is_file():
        from trajforge.store.export_writer import write_export

        exported = output_dir / "sft-export"
        write_export(folder, exported, ["sft"])
        folder = exported
    if folder.is_dir():
        files = _export_files(folder)
        if "train" not in files:
            raise ConfigError("--data", f"{data} holds no sft/train-*.parquet (run `trajforge export` first)")
        return datasets.load_dataset("parquet", data_files=files)
    if folder.exists() or data.startswith((".", "/")) or data.count("/") != 1:
        raise ConfigError("--data", f"{data} is not an export folder, a dataset folder or a Hub dataset id")
    try:
        return datasets.load_dataset(data, "sft")
    except Exception as exc:  # noqa: BLE001 - any failure to fetch is the user's to fix
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError("--data", f"cannot load Hub dataset '{data}' (config 'sft'): {first}") from None


# --- model ------------------------------------------------------------------------------------

def build_model(config: TrainConfig, train_rows: Any) -> tuple[Any, Any]:
    """(model, tokenizer) of a built-in model (``BUILT_MODELS``) for these training rows."""
    if config.model == "minilm":
        from trajforge.sft.minilm import build_minilm

        return build_minilm(train_rows, config.minilm)
    if config.model == "smollm2":
        from trajforge.sft.smollm import build_smollm

        return build_smollm(config.smollm2)
    from trajforge.sft.tiny import build_tiny

    return build_tiny(train_rows, config.tiny, int(config.sft.get("seed", DEFAULT_SFT["seed"])))


def load_model(config: TrainConfig, train_rows: Any, resume_from: Path | None) -> tuple[Any, Any]:
    """(model, tokenizer): a built-in model (built, or reloaded from the checkpoint being
    resumed), or a local folder / Hub id."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if config.model in BUILT_MODELS and resume_from is None:
        return build_model(config, train_rows)
    source = str(resume_from) if config.model in BUILT_MODELS else config.model
    kwargs: dict[str, Any] = {}
    if config.quantization is not None:
        try:
            import bitsandbytes  # noqa: F401  # type: ignore[import-not-found]
            from transformers import BitsAndBytesConfig
        except ImportError:
            raise ConfigError("quantization", "QLoRA needs bitsandbytes and a GPU: pip install bitsandbytes") from None
        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=config.quantization == "4bit",
                                                           load_in_8bit=config.quantization == "8bit")
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError("--model", f"cannot load '{source}' as a local model folder or a Hub id: {first}") from None
    if tokenizer.chat_template is None:
        raise ConfigError("--model", f"'{source}' has no chat template; use an instruct model, "
                                     "--model tiny or --model minilm")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


# --- loss curves ------------------------------------------------------------------------------

CURVE_FIELDS = ("step", "epoch", "loss", "eval_loss", "learning_rate")


def write_loss_curve(log_history: list[dict[str, Any]], folder: Path,
                     tokens: str = "assistant tokens") -> tuple[Path, Path | None]:
    """``loss_curve.csv`` (one row per logged step) and ``loss_curve.png``."""
    rows: dict[int, dict[str, Any]] = {}
    for entry in log_history:
        if "loss" not in entry and "eval_loss" not in entry:
            continue
        row = rows.setdefault(int(entry["step"]), {"step": int(entry["step"])})
        for key in CURVE_FIELDS[1:]:
            if key in entry:
                row[key] = entry[key]
    csv_path = folder / "loss_curve.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CURVE_FIELDS)
        writer.writeheader()
        for step in sorted(rows):
            writer.writerow(rows[step])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return csv_path, None
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("loss", "train"), ("eval_loss", "validation")):
        points = [(s, r[key]) for s, r in sorted(rows.items()) if key in r]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o" if key == "eval_loss" else None, markersize=3, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel(f"loss ({tokens})")
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    fig.tight_layout()
    png_path = folder / "loss_curve.png"
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return csv_path, png_path


def trained_tokens(log_history: list[dict[str, Any]]) -> tuple[int, int]:
    """(tokens trained in all sessions, tokens of the last session) from TRL's logged ``num_tokens``.
    TRL counts from 0 in each trainer session while ``--resume`` keeps the checkpoint's log, so a
    count that drops starts a new session; ``seconds`` times the last session only."""
    sessions = [0]
    for entry in log_history:
        count = int(entry.get("num_tokens", -1))
        if count < 0:
            continue
        if count < sessions[-1]:
            sessions.append(count)
        else:
            sessions[-1] = count
    return sum(sessions), sessions[-1]


# --- curriculum -------------------------------------------------------------------------------

def curriculum_dataset(train: Any, config: TrainConfig, seed: int) -> tuple[Any, list[dict[str, Any]]]:
    """(the rows the trainer reads, in order; the stages for the summary). Without a curriculum
    ``train`` itself, untouched."""
    if not config.curriculum:
        return train, [{"horizon": None, "rows": train.num_rows}]
    import datasets

    stages = curriculum_stages(list(train), config.curriculum, random.Random(seed), config.stage_rows)
    rows = [row for stage in stages for row in stage.rows]
    return (datasets.Dataset.from_list(rows, features=train.features),
            [{"horizon": stage.horizon, "rows": len(stage.rows)} for stage in stages])


def check_curriculum_args(config: TrainConfig, args: Any) -> None:
    """A curriculum needs the rows read in order: TRL's packing and the other samplers reorder them."""
    if not config.curriculum:
        return
    if getattr(args, "packing", False):
        raise ConfigError("sft.packing", "packing reorders rows across the curriculum's stages; "
                                         "turn it off or remove curriculum")
    strategy = str(getattr(args, "train_sampling_strategy", "random"))
    if strategy not in ("random", "sequential"):
        raise ConfigError("sft.train_sampling_strategy", f"'{strategy}' reorders rows across the curriculum's "
                                                         "stages; leave it out or remove curriculum")


def sft_trainer_class() -> Any:
    """TRL's ``SFTTrainer`` with two switches set on the instance after it is made:
    ``sequential`` reads the training rows in their order (a curriculum's stages) instead of
    shuffling them; ``turn_weights`` (``trajforge.sft.weighting``) weights the training loss per
    token. Off, both leave TRL's behaviour as it is."""
    import torch
    from torch.utils.data import Sampler, SequentialSampler
    from trl import SFTTrainer

    from trajforge.sft.weighting import after_tool_weights

    class TrajforgeSFTTrainer(SFTTrainer):
        sequential = False
        turn_weights: tuple[Any, float] | None = None  # (RoleMarkers, weight)

        def _get_train_sampler(self, train_dataset: Any = None) -> Sampler[int] | None:
            if not self.sequential:
                return super()._get_train_sampler(train_dataset)
            dataset: Any = self.train_dataset if train_dataset is None else train_dataset
            return SequentialSampler(dataset)

        def compute_loss(self, model: Any, inputs: Any, return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            if self.turn_weights is None or not model.training or return_outputs:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            markers, weight = self.turn_weights
            inputs["use_cache"] = False
            outputs = model(**inputs, fused_lm_head=True)
            # the fused head scores position t+1 from t: weights of the shifted labels
            weights = after_tool_weights(inputs["input_ids"], inputs["labels"], markers, weight)[:, 1:]
            loss = -(outputs.log_probs * weights).sum() / weights.sum().clamp(min=1.0)
            # a mean over this micro-batch: the Trainer divides it by the accumulation steps
            self.loss_is_scaled_for_ga = False  # type: ignore[assignment]  # TRL's base annotates only None
            trained = outputs.label_mask.sum()
            metrics = self._metrics["train"]
            if outputs.entropy is not None:
                metrics["entropy"].append((outputs.entropy.detach().sum() / trained.clamp(min=1)).item())
            if outputs.is_top1 is not None:
                metrics["mean_token_accuracy"].append((outputs.is_top1.sum() / trained.clamp(min=1)).item())
            self._total_train_tokens += int(inputs["attention_mask"].sum().item()) if "attention_mask" in inputs \
                else int(inputs["input_ids"].numel())
            metrics["num_tokens"] = [self._total_train_tokens]
            return loss.to(torch.float32)

    return TrajforgeSFTTrainer


# --- the run ----------------------------------------------------------------------------------

def _trained_model(model: object, adapter_dir: Path | None) -> PreTrainedModel:
    """The trainer's model, ready to save: with LoRA (``adapter_dir`` given) the adapter is saved
    there and merged into the base model."""
    from transformers import PreTrainedModel

    if adapter_dir is not None:
        from peft import PeftModel

        if not isinstance(model, PeftModel):
            raise TypeError(f"SFTTrainer with a peft_config holds a PeftModel, not {type(model).__name__}")
        model.save_pretrained(str(adapter_dir))
        model = model.merge_and_unload()
    if not isinstance(model, PreTrainedModel):
        raise TypeError(f"the trained model is a {type(model).__name__}, not a transformers PreTrainedModel")
    return model


def train_sft(config: TrainConfig, resume: bool = False) -> dict[str, Any]:
    """Fine-tune; returns the summary also written to ``train_summary.json``."""
    from transformers.trainer_utils import get_last_checkpoint

    from trajforge.simulation.local_model import prepare_torch

    prepare_torch(config.threads)
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    last = get_last_checkpoint(str(output_dir)) if resume else None
    checkpoint = Path(last) if last else None
    if resume and checkpoint is None:
        raise ConfigError("--resume", f"no checkpoint-* folder in {output_dir} to resume from")
    data = load_sft_data(config.data, output_dir)
    keep = ["messages", "tools"]
    train = data["train"].select_columns(keep)
    if config.max_train_rows is not None:
        train = train.select(range(min(config.max_train_rows, train.num_rows)))
    has_validation = "validation" in data and data["validation"].num_rows
    validation = data["validation"].select_columns(keep) if has_validation else None
    if validation is not None and config.max_eval_rows is not None:
        validation = validation.select(range(min(config.max_eval_rows, validation.num_rows)))
    check_curriculum_args(config, sft_config(config, validation is not None))  # before the model loads
    model, tokenizer = load_model(config, train, checkpoint)  # the whole conversations build the tokenizer
    peft_config = None
    if config.lora is not None:
        from peft import LoraConfig

        try:
            peft_config = LoraConfig(**{"task_type": "CAUSAL_LM", **config.lora})
        except (TypeError, ValueError) as exc:
            raise ConfigError("lora", " ".join(str(exc).split())) from None
    if config.trainable_layers is not None:
        from trajforge.sft.freeze import freeze_lower_layers

        freeze_lower_layers(model, config.trainable_layers)
    # sft.bf16: auto is measured on the model as it will train (frozen blocks frozen)
    precision = measured_if_auto(config.sft, model)
    args = sft_config(config, validation is not None, precision)
    staged, stages = curriculum_dataset(train, config, args.seed)
    started = time.perf_counter()
    callbacks = None
    if config.max_minutes:  # the precision measurement is part of the budget
        spent = precision.seconds if precision is not None else 0.0
        callbacks = [time_limit(max(config.max_minutes * 60.0 - spent, 1.0))]
    trainer = sft_trainer_class()(
        model=model, args=args, train_dataset=staged, eval_dataset=validation,
        processing_class=tokenizer, peft_config=peft_config, callbacks=callbacks)
    trainer.sequential = bool(config.curriculum)
    if config.after_tool_weight != 1.0:
        trainer.turn_weights = (role_markers(tokenizer, config.model), config.after_tool_weight)
    result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    seconds = time.perf_counter() - started
    final = _trained_model(trainer.model, output_dir / "adapter" if peft_config is not None else None)
    final.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    history = trainer.state.log_history
    eval_losses = [e["eval_loss"] for e in history if "eval_loss" in e]
    tokens, session = trained_tokens(history)
    csv_path, png_path = write_loss_curve(
        history, output_dir, "assistant tokens" if args.assistant_only_loss else "all tokens")
    probe = read = None
    if has_validation and config.copy_probe_rows:  # its own rows, not max_eval_rows
        from trajforge.sft.copy_probe import copy_probe, read_probe

        probe = copy_probe(final, tokenizer, data["validation"], config.copy_probe_rows, args.max_length).as_dict()
        read = read_probe(final, tokenizer, data["validation"], config.copy_probe_rows, args.max_length).as_dict()
    summary = {
        "model": config.model, "data": config.data, "output_dir": str(output_dir),
        "parameters": sum(p.numel() for p in final.parameters()),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "train_rows": train.num_rows, "curriculum": stages, "after_tool_weight": config.after_tool_weight,
        "validation_rows": validation.num_rows if validation is not None else 0,
        "global_step": result.global_step, "train_loss": result.training_loss,
        "final_eval_loss": eval_losses[-1] if eval_losses else None,
        "seconds": round(seconds, 1), "num_tokens": tokens, "session_tokens": session,
        "tokens_per_second": round(session / seconds, 1) if session and seconds else None,
        "resumed_from": str(checkpoint) if checkpoint else None, "copy_probe": probe,
        "read_probe": read, "bf16": bool(args.bf16),
        "precision": precision.as_dict() if precision is not None else None,
        "loss_curve_csv": str(csv_path), "loss_curve_png": str(png_path) if png_path else None,
    }
    (output_dir / "train_summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return summary
