"""TRL accepts the exports: SFTTrainer with assistant_only_loss on ``sft`` (and the loss mask is
exactly the assistant tokens), DPOTrainer on ``preferences``. A tiny Llama built from a config
and a tokenizer trained here; no hub downloads."""

from __future__ import annotations

import copy
import json

import pytest

from .chat_tools import assistant_text, build_tokenizer, tiny_llama

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")
pytestmark = pytest.mark.slow


def _load(folder, summary, fmt):
    files = [str(folder / n) for n in summary.files[fmt]["train"]]
    return datasets.load_dataset("parquet", data_files=files, split="train")


def _shortest(ds, n, key):
    lengths = sorted(range(ds.num_rows), key=lambda i: (len(json.dumps(ds[i][key])), i))
    return ds.select(lengths[:n])


@pytest.fixture(scope="module")
def tokenizer(default_export):
    folder, summary = default_export
    sft = _load(folder, summary, "sft")
    texts = [json.dumps(r["messages"], ensure_ascii=False) + json.dumps(r["tools"]) for r in sft.select(range(60))]
    return build_tokenizer(texts, vocab_size=2000)


def _runs(ids, mask):
    """Contiguous runs of masked token ids."""
    runs, current = [], []
    for token, bit in zip(ids, mask):
        if bit:
            current.append(token)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _args(cls, tmp_path, **extra):
    return cls(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2, learning_rate=1e-3,
               report_to="none", logging_steps=1, save_strategy="no", use_cpu=True,
               gradient_checkpointing=False, max_length=None, dataloader_num_workers=0, seed=0, **extra)


def test_sft_trainer_assistant_only_loss_masks_exactly_the_assistant_tokens(default_export, tokenizer, tmp_path):
    from trl import SFTConfig, SFTTrainer

    folder, summary = default_export
    rows = _shortest(_load(folder, summary, "sft"), 4, "messages")
    model = tiny_llama(tokenizer)
    trainer = SFTTrainer(model=model, args=_args(SFTConfig, tmp_path, assistant_only_loss=True),
                         train_dataset=rows, processing_class=tokenizer)
    prepared = trainer.train_dataset
    for i, row in enumerate(rows):
        rendered = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True,
                                                 return_dict=True, return_assistant_tokens_mask=True)
        ids, mask = rendered["input_ids"], rendered["assistant_masks"]
        assert prepared[i]["input_ids"] == ids
        trained = [k for k, label in enumerate(prepared[i]["labels"]) if label != -100]
        assert trained == [k for k, bit in enumerate(mask) if bit]
        # each trained span is one assistant message, whole: its text, its calls and its end token
        expected = [assistant_text(m) for m in row["messages"] if m["role"] == "assistant"]
        assert [tokenizer.decode(run) for run in _runs(ids, mask)] == expected
        untrained = tokenizer.decode([t for t, bit in zip(ids, mask) if not bit])
        for m in row["messages"]:
            if m["role"] in ("user", "tool", "system"):
                assert m["content"] in untrained
    before = [p.detach().clone() for p in model.parameters()]
    result = trainer.train()
    assert result.global_step == 2
    losses = [log["loss"] for log in trainer.state.log_history if "loss" in log]
    assert len(losses) == 2 and all(0 < float(x) < 20 for x in losses)
    assert any((p != b).any() for p, b in zip(model.parameters(), before))


def test_dpo_trainer_accepts_the_preferences(default_export, tokenizer, tmp_path):
    from trl import DPOConfig, DPOTrainer

    folder, summary = default_export
    pairs = _shortest(_load(folder, summary, "preferences"), 4, "prompt")
    assert set(pairs.column_names) >= {"prompt", "chosen", "rejected", "tools"}
    model = tiny_llama(tokenizer)
    trainer = DPOTrainer(model=model, ref_model=copy.deepcopy(model), args=_args(DPOConfig, tmp_path),
                         train_dataset=pairs, processing_class=tokenizer)
    prepared = trainer.train_dataset
    for i, pair in enumerate(pairs):
        prompt_text = tokenizer.apply_chat_template(pair["prompt"], tools=pair["tools"], tokenize=False,
                                                    add_generation_prompt=True)
        assert tokenizer.decode(prepared[i]["prompt_ids"]) == prompt_text
        assert tokenizer.decode(prepared[i]["chosen_ids"]).startswith(assistant_text(pair["chosen"][0])[:-len("<|end|>")])
        assert tokenizer.decode(prepared[i]["rejected_ids"]).startswith(assistant_text(pair["rejected"][0])[:-len("<|end|>")])
    result = trainer.train()
    assert result.global_step == 2
    logs = [log for log in trainer.state.log_history if "loss" in log]
    assert len(logs) == 2 and all(abs(float(log["loss"])) < 5 for log in logs)
