"""``sft.bf16: auto``: a measured choice between bf16 autocast and fp32 (trajforge.sft.precision)."""

from __future__ import annotations

import json

import pytest
import torch

from trajforge.sft.precision import PrecisionChoice, choose_bf16
from trajforge.sft.train import load_train_config, sft_config

pytest.importorskip("trl")


def _llama():
    import transformers

    config = transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config)


def test_the_choice_is_the_faster_measured_mode_and_leaves_the_model_as_it_was():
    model = _llama()
    model.eval()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    choice = choose_bf16(model, tokens=1000, passes=1)  # longer than the model's 128 positions: cut to them
    assert set(choice.tokens_per_second) == {"bf16", "fp32"}
    assert all(speed > 0 for speed in choice.tokens_per_second.values())
    faster = max(choice.tokens_per_second, key=choice.tokens_per_second.__getitem__)
    assert choice.bf16 == (faster == "bf16") and choice.seconds > 0
    assert not model.training, "the model's mode is restored"
    assert all(p.grad is None for p in model.parameters()), "the timing passes' gradients are dropped"
    assert all(torch.equal(before[n], p) for n, p in model.named_parameters())


def test_auto_takes_the_measured_choice_and_without_one_is_the_unmeasured_default(tmp_path):
    cfg = load_train_config(None, {"sft.bf16": "auto", "output_dir": str(tmp_path)})
    assert sft_config(cfg, False, PrecisionChoice(True, {"bf16": 2.0, "fp32": 1.0}, 1.0)).bf16 is True
    assert sft_config(cfg, False, PrecisionChoice(False, {"bf16": 1.0, "fp32": 2.0}, 1.0)).bf16 is False
    assert sft_config(cfg, False).bf16 is torch.cuda.is_available()
    # an explicit value is taken as written, a measurement or not
    fixed = load_train_config(None, {"sft.bf16": False, "output_dir": str(tmp_path)})
    assert sft_config(fixed, False, PrecisionChoice(True, {}, 0.0)).bf16 is False


@pytest.mark.slow
def test_a_run_with_auto_records_what_it_chose(tmp_path):
    from typer.testing import CliRunner

    from trajforge.cli import app

    from .test_weighting import ROW
    from .tiny_sizes import TINY_SIZES

    datasets = pytest.importorskip("datasets")
    export = tmp_path / "export" / "sft"
    export.mkdir(parents=True)
    datasets.Dataset.from_list([ROW] * 4).to_parquet(str(export / "train-00000.parquet"))
    out = tmp_path / "model"
    result = CliRunner().invoke(app, ["train", "sft", "--config", "configs/sft-tiny.yaml", "--data",
                                      str(tmp_path / "export"), "--output-dir", str(out), "--set", "sft.max_steps=1",
                                      "--set", "sft.bf16=auto", "--set", "copy_probe_rows=0",
                                      *TINY_SIZES, "--set", "tiny.tokenizer_rows=4"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "train_summary.json").read_text())
    chosen = summary["precision"]
    assert set(chosen["tokens_per_second"]) == ({"bf16", "fp32"} if not torch.cuda.is_available() else set())
    assert summary["bf16"] is chosen["bf16"]
    assert "precision" in result.output and ("bf16" if chosen["bf16"] else "fp32") in result.output


@pytest.mark.gpu
def test_on_a_gpu_auto_follows_the_cards_bf16_support_without_measuring():
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    choice = choose_bf16(_llama().cuda())
    assert choice.bf16 is torch.cuda.is_bf16_supported()
    assert choice.tokens_per_second == {} and choice.seconds == 0.0
