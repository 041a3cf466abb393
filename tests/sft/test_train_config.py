"""The train config: YAML + dotted overrides, the sft section validated by trl.SFTConfig itself,
and the loss curve files."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from trajforge.errors import ConfigError
from trajforge.sft.train import check_curriculum_args, load_train_config, sft_config, write_loss_curve

pytest.importorskip("trl")


def test_the_shipped_configs_load_and_overrides_reach_sft_config(tmp_path):
    cfg = load_train_config(Path("configs/sft-tiny.yaml"),
                            {"sft.learning_rate": "3e-3", "sft.eval_strategy": False, "tiny.hidden_size": 64,
                             "output_dir": str(tmp_path)})
    assert cfg.tiny.hidden_size == 64 and cfg.model == "tiny"
    args = sft_config(cfg, has_validation=True)
    assert args.learning_rate == 0.003  # YAML 1.1 reads 3e-3 as text
    assert str(args.eval_strategy.value if hasattr(args.eval_strategy, "value") else args.eval_strategy) == "no"
    assert args.assistant_only_loss is True and args.output_dir == str(tmp_path)
    assert load_train_config(Path("configs/sft-lora.yaml")).lora["r"] == 16
    # the CPU recipe of issue 18 is trl-valid as written (bf16 auto, schedule ending with max_minutes)
    cpu = load_train_config(Path("configs/sft-smollm2-cpu.yaml"), {"output_dir": str(tmp_path)})
    assert (cpu.model, cpu.trainable_layers, cpu.after_tool_weight, cpu.max_minutes) == ("smollm2", 8, 2.0, 60)
    assert (cpu.curriculum, cpu.stage_rows) == ((1,), 600)
    cpu_args = sft_config(cpu, has_validation=True)
    assert cpu.sft["bf16"] == "auto"  # measured when training starts (trajforge.sft.precision)
    check_curriculum_args(cpu, cpu_args)  # no packing: the stages are read in order


def test_bad_fields_are_named():
    with pytest.raises(ConfigError, match="sft.not_a_field"):
        sft_config(load_train_config(None, {"sft.not_a_field": 1}), has_validation=False)
    with pytest.raises(ConfigError, match="tiny.hidden_size"):
        load_train_config(None, {"tiny.hidden_size": 0})
    with pytest.raises(ConfigError, match="modle"):
        load_train_config(None, {"modle": "x"})


def test_loss_curve_files(tmp_path):
    history = [{"loss": 5.0, "learning_rate": 1e-3, "epoch": 0.1, "step": 10},
               {"eval_loss": 4.5, "epoch": 0.1, "step": 10},
               {"loss": 4.0, "learning_rate": 5e-4, "epoch": 0.2, "step": 20},
               {"train_runtime": 3.0, "step": 20}]
    csv_path, png_path = write_loss_curve(history, tmp_path)
    rows = list(csv.DictReader(csv_path.open()))
    assert [(r["step"], r["loss"], r["eval_loss"]) for r in rows] == [("10", "5.0", "4.5"), ("20", "4.0", "")]
    assert png_path is not None and png_path.read_bytes()[:4] == b"\x89PNG"


def test_renamed_training_arguments_are_accepted_under_either_name():
    """transformers renamed gradient_checkpointing to activation_checkpointing; a config written
    for one version loads with the other (seen on an accelerator with transformers 5.17)."""
    from dataclasses import dataclass

    from trajforge.trainer_args import renamed_fields

    @dataclass
    class Old:
        gradient_checkpointing: bool = False

    @dataclass
    class New:
        activation_checkpointing: bool = False

    assert renamed_fields(Old, {"activation_checkpointing": True, "lr": 1}) == {"gradient_checkpointing": True, "lr": 1}
    assert renamed_fields(New, {"gradient_checkpointing": True}) == {"activation_checkpointing": True}
    # where both are given, the name the installed version knows wins
    assert renamed_fields(Old, {"activation_checkpointing": False, "gradient_checkpointing": True}) == \
        {"gradient_checkpointing": True}
