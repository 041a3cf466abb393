"""``after_tool_weight``: which tokens it weights (exactly the assistant messages that follow a
tool message, read back from the rendered text), the loss the trainer then minimises (the
weighted mean of the real model's per-token losses), and a clear error for a model whose
template has no role markers."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.errors import ConfigError
from trajforge.sft.tiny import TinyModelConfig, build_tiny
from trajforge.sft.weighting import after_tool_weights, role_markers

from .tiny_sizes import TINY_SIZES

pytest.importorskip("trl")
pytestmark = pytest.mark.slow

ORDER_ID = {"type": "object", "properties": {"order_id": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_order", "description": "reads", "parameters": ORDER_ID}}]


def call(i: int, order: str) -> dict:
    return {"id": f"c{i}", "type": "function",
            "function": {"name": "get_order", "arguments": json.dumps({"order_id": order})}}


# two reads; the agent's words after each result, and its words after user turns
ROW = {"tools": TOOLS, "messages": [
    {"role": "system", "content": "Be careful."},
    {"role": "user", "content": "Where is order 4411?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [call(1, "4411")]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"status": "pending"}'},
    {"role": "assistant", "content": "Order 4411 is pending. Anything else?"},
    {"role": "user", "content": "And 5522?"},
    {"role": "assistant", "content": None, "tool_calls": [call(2, "5522")]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"status": "delivered"}'},
    {"role": "assistant", "content": "Order 5522 was delivered."},
    {"role": "user", "content": "Thanks, bye."},
    {"role": "assistant", "content": "Goodbye!"},
]}


@pytest.fixture(scope="module")
def tiny():
    return build_tiny([ROW] * 4, TinyModelConfig(vocab_size=400, hidden_size=16, intermediate_size=32,
                                                 num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))


def rendered(tokenizer):
    import torch

    out = tokenizer.apply_chat_template(ROW["messages"], tools=ROW["tools"], tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    ids = torch.tensor([out["input_ids"]])
    labels = torch.where(torch.tensor([out["assistant_masks"]]) == 1, ids, torch.full_like(ids, -100))
    return ids, labels


def test_the_weighted_tokens_are_the_messages_after_a_tool_result(tiny):
    _, tokenizer = tiny
    ids, labels = rendered(tokenizer)
    weights = after_tool_weights(ids, labels, role_markers(tokenizer, "tiny"), 5.0)[0]
    heavy = tokenizer.decode([t for t, w in zip(ids[0].tolist(), weights.tolist(), strict=True) if w == 5.0])
    light = tokenizer.decode([t for t, w in zip(ids[0].tolist(), weights.tolist(), strict=True) if w == 1.0])
    assert heavy == "Order 4411 is pending. Anything else?<|end|>Order 5522 was delivered.<|end|>"
    assert light.startswith("Let me look.<tool_call>") and light.endswith("Goodbye!<|end|>")
    assert "pending" not in light and "delivered" not in light
    assert set(weights[labels[0] == -100].tolist()) == {0.0}
    assert set(weights.tolist()) == {0.0, 1.0, 5.0}


def test_the_trainer_minimises_the_weighted_mean_of_the_models_token_losses(tiny, tmp_path):
    import datasets
    import torch
    import torch.nn.functional as F
    from trl import SFTConfig

    from trajforge.sft.train import sft_trainer_class

    model, tokenizer = tiny
    args = SFTConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, report_to="none", max_steps=1,
                     per_device_train_batch_size=1, assistant_only_loss=True, max_length=1024,
                     activation_checkpointing=False, learning_rate=1e-3)
    trainer = sft_trainer_class()(model=model, args=args, processing_class=tokenizer,
                                  train_dataset=datasets.Dataset.from_list([ROW]))
    markers = role_markers(tokenizer, "tiny")
    trainer.turn_weights = (markers, 5.0)
    batch = next(iter(trainer.get_train_dataloader()))
    model.train()
    loss = trainer.compute_loss(model, dict(batch))

    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch.get("attention_mask")).logits
    token_loss = F.cross_entropy(logits[0, :-1].float(), batch["labels"][0, 1:], ignore_index=-100, reduction="none")
    weights = after_tool_weights(batch["input_ids"], batch["labels"], markers, 5.0)[0, 1:]
    expected = float((token_loss * weights).sum() / weights.sum())
    plain = float(token_loss[weights > 0].mean())
    assert math.isclose(loss.item(), expected, rel_tol=1e-4)
    assert not math.isclose(expected, plain, rel_tol=1e-3)  # the weights change the loss
    trainer.turn_weights = None  # off: TRL's own loss, the plain mean
    assert math.isclose(trainer.compute_loss(model, dict(batch)).item(), plain, rel_tol=1e-4)

    trainer = sft_trainer_class()(model=model, args=args, processing_class=tokenizer,
                                  train_dataset=datasets.Dataset.from_list([ROW]))
    trainer.turn_weights = (markers, 5.0)
    result = trainer.train()
    assert result.global_step == 1 and math.isfinite(result.training_loss)
    assert trainer.state.log_history[0]["num_tokens"] == batch["attention_mask"].sum().item()


def test_a_template_without_role_markers_is_a_config_error():
    class Plain:
        unk_token_id = 0

        def convert_tokens_to_ids(self, token: str) -> int:
            return 0

        def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
            return [0, 0]

    with pytest.raises(ConfigError, match="role markers") as caught:
        role_markers(Plain(), "some/hub-model")
    assert caught.value.field == "after_tool_weight" and "some/hub-model" in str(caught.value)


def test_the_cli_trains_with_the_weight_and_records_it(tmp_path):
    export = tmp_path / "export" / "sft"
    export.mkdir(parents=True)
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list([ROW] * 4).to_parquet(str(export / "train-00000.parquet"))
    out = tmp_path / "model"
    result = CliRunner().invoke(app, ["train", "sft", "--config", "configs/sft-tiny.yaml", "--data",
                                      str(tmp_path / "export"), "--output-dir", str(out), "--set", "sft.max_steps=1",
                                      "--set", "after_tool_weight=3", "--set", "copy_probe_rows=0",
                                      "--set", "tiny.tokenizer_rows=4", *TINY_SIZES[:-2]])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["after_tool_weight"] == 3.0 and summary["global_step"] == 1
    result = CliRunner().invoke(app, ["train", "sft", "--data", str(tmp_path / "export"), "--output-dir",
                                      str(tmp_path / "bad"), "--set", "after_tool_weight=0"])
    assert result.exit_code == 2 and "after_tool_weight" in result.output
