"""On an accelerator: a ~100M-parameter Llama built from a config trains in bf16 through
``train_sft`` for a bounded number of steps, and reports its tokens per second
(``benchmarks/sft_gpu_throughput.py`` records the figure in benchmarks/results/)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU")]

SIZE_100M = {"vocab_size": 8000, "hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 14,
             "num_attention_heads": 12, "num_key_value_heads": 4, "max_position_embeddings": 4096,
             "tokenizer_rows": 400}


def test_a_100m_model_trains_in_bf16_and_reports_tokens_per_second(tmp_path):
    from trajforge.config import load_config
    from trajforge.store.builds import run_build
    from trajforge.sft.train import TrainConfig, train_sft
    from trajforge.store.export_writer import write_export

    data = tmp_path / "data"
    run_build(load_config(None, {"store.out": str(data), "generation.n_blueprints": 300}))
    write_export(data, tmp_path / "export", ["sft"])
    config = TrainConfig(model="tiny", data=str(tmp_path / "export"), output_dir=str(tmp_path / "model"),
                         tiny=SIZE_100M, max_eval_rows=16,
                         sft={"max_steps": 30, "per_device_train_batch_size": 8, "learning_rate": 5e-4,
                              "logging_steps": 5, "eval_steps": 30, "save_steps": 30, "bf16": True})
    summary = train_sft(config)
    assert 80e6 <= summary["parameters"] <= 130e6
    assert summary["global_step"] == 30
    assert summary["tokens_per_second"] and summary["tokens_per_second"] > 0
    import csv

    rows = list(csv.DictReader((tmp_path / "model" / "loss_curve.csv").open()))
    losses = [float(r["loss"]) for r in rows if r["loss"]]
    assert losses[-1] < losses[0]
