"""Every export loads with ``datasets.load_dataset("parquet", ...)`` under its declared Features,
row for row equal to what the export functions produced; the sft split renders with a
tool-aware chat template."""

from __future__ import annotations

import json
import math
import re

import pyarrow.parquet as pq
import pytest

from trajforge.store.features import EXPORT_FORMATS, FEATURES, arrow_schema, features, to_table

from .chat_tools import assistant_text, build_tokenizer

datasets = pytest.importorskip("datasets")  # the `export` extra; part of `test`


def _files(folder, summary, fmt):
    return {s: [str(folder / n) for n in names] for s, names in summary.files[fmt].items()}


def _decoded(fmt, row):
    out = {}
    for name, feature in FEATURES[fmt].items():
        value = row[name]
        if feature.get("_type") == "Json" and value is not None:
            value = json.loads(value)
        elif feature.get("_type") == "List" and feature["feature"].get("_type") == "Json":
            value = [json.loads(v) for v in value]
        out[name] = value
    return out


def _same(a, b) -> bool:
    """Equal, except that floats may differ in the last bit: ``datasets`` decodes ``Json`` with
    ujson, which parses 4.81 as 4.8100000000000005 (the Parquet holds the exact text)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_core_schema_equals_the_datasets_features() -> None:
    for fmt in EXPORT_FORMATS:
        declared = features(fmt)
        assert arrow_schema(fmt).remove_metadata().equals(declared.arrow_schema.remove_metadata())
        meta = json.loads(arrow_schema(fmt).metadata[b"huggingface"])
        assert datasets.Features.from_dict(meta["info"]["features"]) == declared


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_each_export_round_trips_with_its_features(default_export, fmt) -> None:
    folder, summary = default_export
    assert set(summary.files[fmt]) == {"train", "validation", "test"}
    loaded = datasets.load_dataset("parquet", data_files=_files(folder, summary, fmt),
                                   features=features(fmt))
    inferred = datasets.load_dataset("parquet", data_files=_files(folder, summary, fmt))
    for split, ds in loaded.items():
        assert ds.features == features(fmt)
        assert inferred[split].features == features(fmt)  # restored from the file's metadata
        assert ds.num_rows == summary.rows[fmt][split] > 0
        # the decoded rows equal what the writer stored (the JSON text, parsed)
        raw = pq.read_table(_files(folder, summary, fmt)[split][0]).to_pylist()
        assert _same(ds.select(range(len(raw))).to_list(), [_decoded(fmt, r) for r in raw])
        assert to_table(fmt, ds.select(range(len(raw))).to_list()).num_rows == len(raw)


def test_sft_rows_keep_only_present_keys_and_object_arguments(default_export) -> None:
    folder, summary = default_export
    ds = datasets.load_dataset("parquet", data_files=_files(folder, summary, "sft"), split="train")
    seen_call = False
    for row in ds:
        for m in row["messages"]:
            assert None not in m.values()
            if m["role"] == "user":
                assert set(m) == {"role", "content"}
            for call in m.get("tool_calls", []):
                seen_call = True
                assert isinstance(call["function"]["arguments"], dict)
        assert all(t["type"] == "function" for t in row["tools"])
    assert seen_call


def test_openai_jsonl_is_the_parquet_rows(default_export) -> None:
    folder, summary = default_export
    for split, names in summary.files["openai"].items():
        lines = (folder / "openai" / f"{split}.jsonl").read_text().splitlines()
        parquet = datasets.load_dataset("parquet", data_files=[str(folder / n) for n in names], split="train")
        assert [json.loads(x) for x in lines] == parquet.to_list()
        for row in parquet:
            for m in row["messages"]:
                for call in m.get("tool_calls", []):
                    assert isinstance(call["function"]["arguments"], str)
                    json.loads(call["function"]["arguments"])


def test_sft_renders_with_a_tool_aware_chat_template(default_export) -> None:
    folder, summary = default_export
    ds = datasets.load_dataset("parquet", data_files=_files(folder, summary, "sft"), split="train")
    tokenizer = build_tokenizer(json.dumps(r["messages"]) for r in ds.select(range(50)))
    for row in ds.select(range(20)):
        text = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
        for tool in row["tools"]:
            assert json.dumps(tool, ensure_ascii=False) in text
        for m in row["messages"]:
            if m["role"] == "assistant":
                assert assistant_text(m) in text
            elif m["role"] in ("user", "tool"):
                assert m["content"] in text
        assert text.startswith("<|system|>" + row["messages"][0]["content"])
        # byte-level BPE is lossless: the tokens decode back to the rendered text
        ids = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True,
                                            return_dict=True)["input_ids"]
        assert tokenizer.decode(ids) == text


@pytest.mark.parametrize("template", ["qwen2_5.jinja", "llama3_1.jinja", "qwen3_training.jinja"])
def test_sft_renders_with_real_model_chat_templates(default_export, template) -> None:
    """The chat templates of real model families, as TRL ships them (no download), render the
    sft rows with their tools and object arguments."""
    trl = pytest.importorskip("trl")
    from pathlib import Path

    folder, summary = default_export
    source = (Path(trl.__file__).parent / "chat_templates" / template).read_text()
    ds = datasets.load_dataset("parquet", data_files=_files(folder, summary, "sft"), split="train")
    tokenizer = build_tokenizer(json.dumps(r["messages"]) for r in ds.select(range(20)))
    marked = re.search(r"{%-?\s*generation\s*-?%}", source) is not None
    # some templates (Llama 3.1's) render only the call of a message that makes one, not its words
    probe = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": "PROBE words", "tool_calls": [
                 {"type": "function", "function": {"name": "f", "arguments": {}}}]}]
    keeps_call_words = "PROBE words" in tokenizer.apply_chat_template(probe, chat_template=source, tokenize=False)
    for row in ds.select(range(10)):
        out = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], chat_template=source,
                                            tokenize=True, return_dict=True,
                                            return_assistant_tokens_mask=marked)
        text = tokenizer.decode(out["input_ids"])
        for tool in row["tools"]:
            assert tool["function"]["name"] in text and tool["function"]["description"] in text
        for m in row["messages"]:
            for call in m.get("tool_calls", []):
                assert json.dumps(call["function"]["arguments"], ensure_ascii=False) in text
            if m["role"] in ("user", "tool") or (m["role"] == "assistant" and m.get("content")
                                                 and (keeps_call_words or not m.get("tool_calls"))):
                # Llama 3.1 writes tool results through `tojson`, i.e. as a quoted JSON string
                assert m["content"] in text or json.dumps(m["content"], ensure_ascii=False) in text
        if marked:
            assert sum(out["assistant_masks"]) > 0
