"""``trainable_layers`` (freeze tuning) and the learning-rate schedule that ``max_minutes`` ends.

Freezing: which parameters train in a Llama-style model with a tied head and in a BERT-style
causal LM with its own head, that training through the CLI changes exactly those, and the
errors for too many layers and for LoRA at the same time. The schedule: ``paced`` on a fake
clock, then the real ``transformers.Trainer`` with ``time_limit`` on a clock that ticks per
call, whose logged learning rates fall to the end of the cosine by the step the time runs out.
"""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.errors import ConfigError
from trajforge.sft.freeze import freeze_lower_layers, transformer_blocks
from trajforge.trainer_args import paced, time_limit

from .test_weighting import ROW
from .tiny_sizes import TINY_SIZES

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def llama(layers: int = 4, tied: bool = True):
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=layers,
                                      num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=tied)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config)


def trainable_names(model) -> set[str]:
    return {name for name, p in model.named_parameters() if p.requires_grad}


def test_a_llama_trains_its_last_blocks_and_final_norm_not_its_tied_embeddings():
    model = llama()
    counts = freeze_lower_layers(model, 1)
    names = trainable_names(model)
    assert names == {n for n, _ in model.named_parameters() if n.startswith("model.layers.3.")} | {"model.norm.weight"}
    assert counts["trainable"] == sum(p.numel() for n, p in model.named_parameters() if n in names)
    assert counts["trainable"] + counts["frozen"] == sum(p.numel() for p in model.parameters())
    assert not model.lm_head.weight.requires_grad  # tied to the frozen input embeddings


def test_an_untied_head_trains_and_all_layers_means_everything_but_the_embeddings():
    model = llama(tied=False)
    freeze_lower_layers(model, 4)
    assert trainable_names(model) == {n for n, _ in model.named_parameters() if n != "model.embed_tokens.weight"}


def test_a_bert_style_causal_lm_keeps_its_embeddings_and_trains_its_head():
    config = transformers.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                                     intermediate_size=32, is_decoder=True, tie_word_embeddings=False)
    model = transformers.BertLMHeadModel(config)
    assert transformer_blocks(model)[0] == "bert.encoder.layer"
    freeze_lower_layers(model, 1)
    names = trainable_names(model)
    assert any(n.startswith("bert.encoder.layer.2.") for n in names)
    assert not any(n.startswith(("bert.embeddings.", "bert.encoder.layer.0.", "bert.encoder.layer.1.")) for n in names)
    assert any(n.startswith("cls.predictions.") for n in names)


def test_more_layers_than_the_model_has_is_a_config_error():
    with pytest.raises(ConfigError) as caught:
        freeze_lower_layers(llama(), 5)
    assert caught.value.field == "trainable_layers" and "4 blocks" in str(caught.value)


@pytest.mark.slow
def test_the_cli_trains_only_the_last_block(tmp_path):
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    export = tmp_path / "export" / "sft"
    export.mkdir(parents=True)
    datasets.Dataset.from_list([ROW] * 4).to_parquet(str(export / "train-00000.parquet"))
    sizes = [*TINY_SIZES[:-2], "--set", "tiny.num_hidden_layers=2", "--set", "tiny.tokenizer_rows=4"]
    out = tmp_path / "model"
    result = CliRunner().invoke(app, ["train", "sft", "--config", "configs/sft-tiny.yaml", "--data",
                                      str(tmp_path / "export"), "--output-dir", str(out), "--set", "sft.max_steps=2",
                                      "--set", "sft.learning_rate=1e-2", "--set", "trainable_layers=1",
                                      "--set", "copy_probe_rows=0", *sizes])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "train_summary.json").read_text())
    assert 0 < summary["trainable_parameters"] < summary["parameters"]
    # the same built model, untrained (the build is seeded): only the last block and the norm moved
    from trajforge.sft.train import build_model, load_sft_data, load_train_config

    config = load_train_config(None, {"model": "tiny", "tiny.hidden_size": 32, "tiny.intermediate_size": 64,
                                      "tiny.num_hidden_layers": 2, "tiny.num_attention_heads": 2,
                                      "tiny.num_key_value_heads": 1, "tiny.vocab_size": 1500,
                                      "tiny.tokenizer_rows": 4})
    rows = load_sft_data(str(tmp_path / "export"), tmp_path / "scratch")["train"].select_columns(["messages", "tools"])
    before = dict(build_model(config, rows)[0].named_parameters())
    after = dict(transformers.AutoModelForCausalLM.from_pretrained(str(out)).named_parameters())
    moved = {name for name, p in after.items() if not torch.equal(p, before[name])}
    assert moved and all(n.startswith("model.layers.1.") or n == "model.norm.weight" for n in moved)


def test_trainable_layers_with_lora_is_refused(tmp_path):
    result = CliRunner().invoke(app, ["train", "sft", "--data", str(tmp_path), "--output-dir", str(tmp_path / "m"),
                                      "--set", "trainable_layers=1", "--set", "lora.r=4"])
    assert result.exit_code == 2 and "use it or lora, not both" in result.output, result.output


def test_paced_ends_a_schedule_when_the_time_ends_whichever_comes_first():
    now = [0.0]
    linear = paced(lambda step: 1 - step / 100, warmup=10, total=100, seconds=10.0, elapsed=lambda: now[0])
    assert linear(5) == pytest.approx(0.95)  # the warmup reads its own steps
    now[0] = 5.0
    assert linear(20) == pytest.approx(1 - 55 / 100)  # half the time: half of the decay after the warmup
    assert linear(90) == pytest.approx(0.10)  # the steps ahead of the time: the steps
    now[0] = 12.0
    assert linear(20) == 0.0  # the time is up: the end of the schedule


def test_the_trainer_stops_and_ends_its_cosine_when_the_time_does(tmp_path):
    ticks = [0.0]

    def clock() -> float:  # one second per reading: the schedule and the stop check read it each step
        ticks[0] += 1.0
        return ticks[0]

    model = llama(layers=1)
    rows = [{"input_ids": [1, 2, 3, 4, 5, 6], "labels": [1, 2, 3, 4, 5, 6]}] * 400
    args = transformers.TrainingArguments(output_dir=str(tmp_path), max_steps=200, learning_rate=1e-3,
                                          lr_scheduler_type="cosine", warmup_steps=2, logging_steps=1,
                                          per_device_train_batch_size=1, save_strategy="no", report_to="none",
                                          use_cpu=True, disable_tqdm=True)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=rows, callbacks=[time_limit(40.0, clock)])
    trainer.train()
    rates = [e["learning_rate"] for e in trainer.state.log_history if "learning_rate" in e]
    assert trainer.state.global_step < 40  # stopped by the time, far before 200 steps
    assert max(rates) == pytest.approx(1e-3, rel=0.3) and rates[-1] < 0.05 * max(rates)
    assert all(b <= a + 1e-12 for a, b in zip(rates[2:], rates[3:], strict=False))  # decays after the warmup
    assert not math.isnan(trainer.state.log_history[-1].get("train_loss", 0.0))
