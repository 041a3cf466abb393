"""The horizon curriculum (``curriculum`` in the train config): the stages as a pure function over
the rows, the validation of the horizons, and ``train_sft`` runs of the tiny model that read the
stages in order and resume in place."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from trajforge.errors import ConfigError
from trajforge.sft.curriculum import check_horizons, curriculum_rows, curriculum_stages, cut_after_assistant
from trajforge.sft.train import check_curriculum_args, load_train_config, sft_config


def conversation(n_assistant: int, tag: str) -> dict:
    """A row like the sft export's with ``n_assistant`` assistant messages: after the system
    message, a user message answered by a call, its tool result answered in words, and so on;
    the user has the last word."""
    messages: list = [{"role": "system", "content": "policy"}]
    for turn in range(n_assistant):
        if turn % 2 == 0:
            messages.append({"role": "user", "content": f"{tag} ask {turn}"})
            messages.append({"role": "assistant", "content": None,
                             "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]})
        else:
            messages.append({"role": "tool", "content": f"{tag} result {turn}"})
            messages.append({"role": "assistant", "content": f"{tag} answer {turn}"})
    messages.append({"role": "user", "content": "###STOP###"})
    return {"messages": messages, "tools": [{"type": "function", "function": {"name": "f"}}], "id": tag}


def assistants(row: dict) -> int:
    return sum(m["role"] == "assistant" for m in row["messages"])


ROWS = [conversation(n, f"c{n}") for n in (1, 2, 3, 5, 6, 4)]


def test_stages_are_cut_after_the_hth_assistant_message_in_order_of_horizon():
    stages = curriculum_stages(ROWS, (2, 4), random.Random(0))
    assert [s.horizon for s in stages] == [2, 4, None]
    # conversations with h or fewer assistant messages sit out stage h: they are trained whole at the end
    assert sorted(r["id"] for r in stages[0].rows) == ["c3", "c4", "c5", "c6"]
    assert sorted(r["id"] for r in stages[1].rows) == ["c5", "c6"]
    assert sorted(r["id"] for r in stages[2].rows) == sorted(r["id"] for r in ROWS)
    whole = {r["id"]: r for r in ROWS}
    for stage in stages[:2]:
        for row in stage.rows:
            assert row["messages"][-1]["role"] == "assistant" and assistants(row) == stage.horizon
            # a prefix: everything before the cut kept (system, user and tool messages too), nothing after
            original = whole[row["id"]]["messages"]
            assert row["messages"] == original[: len(row["messages"])] and row["messages"][0]["role"] == "system"
            assert row["tools"] == whole[row["id"]]["tools"]
    assert all(r == whole[r["id"]] for r in stages[2].rows)
    assert curriculum_rows(ROWS, (2, 4), random.Random(0)) == [r for s in stages for r in s.rows]
    assert ROWS == [conversation(n, f"c{n}") for n in (1, 2, 3, 5, 6, 4)]  # the input is not modified


def test_stages_are_shuffled_deterministically_by_the_seed():
    rows = [conversation(3 + i % 4, f"r{i}") for i in range(40)]
    first = curriculum_rows(rows, (1, 2), random.Random(7))
    assert first == curriculum_rows(rows, (1, 2), random.Random(7))
    assert [r["id"] for r in first] != [r["id"] for r in curriculum_rows(rows, (1, 2), random.Random(8))]
    assert [r["id"] for r in first[:40]] != [r["id"] for r in rows]  # shuffled within the stage
    assert [assistants(r) for r in first[:80]] == [1] * 40 + [2] * 40


def test_stage_rows_caps_each_prefix_stage_at_a_random_share_and_keeps_every_whole_conversation():
    rows = [conversation(3 + i % 4, f"r{i}") for i in range(40)]
    full = curriculum_stages(rows, (1, 2), random.Random(3))
    capped = curriculum_stages(rows, (1, 2), random.Random(3), stage_rows=7)
    assert [len(s.rows) for s in capped] == [7, 7, 40]
    assert capped[0].rows == full[0].rows[:7]  # the first rows after the same shuffle: a random share
    assert sorted(r["id"] for r in capped[2].rows) == sorted(r["id"] for r in rows)
    assert [len(s.rows) for s in curriculum_stages(rows, (1,), random.Random(3), stage_rows=99)] == [40, 40]
    with pytest.raises(ValueError, match="stage_rows"):
        curriculum_stages(rows, (1,), random.Random(3), stage_rows=0)
    assert load_train_config(None, {"curriculum": [1], "stage_rows": 600}).stage_rows == 600
    for bad in ({"stage_rows": 600}, {"curriculum": [1], "stage_rows": 0}):
        with pytest.raises(ConfigError, match="stage_rows"):
            load_train_config(None, bad)


def test_no_horizons_return_the_rows_unchanged():
    assert curriculum_rows(ROWS, (), random.Random(0)) == ROWS
    [stage] = curriculum_stages(ROWS, [], random.Random(0))
    assert stage.horizon is None and stage.rows == ROWS


def test_messages_as_json_text_are_cut_too():
    row = conversation(3, "t")
    text = [json.dumps(m) for m in row["messages"]]
    cut = cut_after_assistant(text, 2)
    assert cut is not None and [json.loads(m) for m in cut] == cut_after_assistant(row["messages"], 2)
    assert cut_after_assistant(text, 3) is None and cut_after_assistant(text, 9) is None


@pytest.mark.parametrize("bad", [[0], [2, 1], [2, 2], [1, 3, 3], [-1, 2]])
def test_horizons_must_be_increasing_and_positive(bad):
    with pytest.raises(ValueError, match="strictly increasing"):
        check_horizons(bad)
    with pytest.raises(ValueError, match="strictly increasing"):
        curriculum_stages(ROWS, bad, random.Random(0))
    with pytest.raises(ConfigError, match="curriculum") as caught:
        load_train_config(None, {"curriculum": bad})
    assert caught.value.field == "curriculum"


def test_the_shipped_configs_have_no_curriculum_and_one_loads_from_overrides():
    assert load_train_config(Path("configs/sft-tiny.yaml")).curriculum == ()
    assert load_train_config(Path("configs/sft-minilm.yaml")).curriculum == ()
    assert load_train_config(None, {"curriculum": [1, 3]}).curriculum == (1, 3)


def test_a_curriculum_does_not_combine_with_packing_or_another_sampler():
    pytest.importorskip("trl")
    config = load_train_config(None, {"curriculum": [2], "sft.packing": True})
    with pytest.raises(ConfigError, match="sft.packing"):
        check_curriculum_args(config, sft_config(config, has_validation=False))
    check_curriculum_args(config.model_copy(update={"curriculum": ()}), sft_config(config, has_validation=False))


# --- one run -----------------------------------------------------------------------------------

TINY = {"tiny.hidden_size": 32, "tiny.intermediate_size": 64, "tiny.num_hidden_layers": 1,
        "tiny.num_attention_heads": 2, "tiny.num_key_value_heads": 1, "tiny.vocab_size": 1500,
        "tiny.tokenizer_rows": 40, "max_train_rows": 6, "copy_probe_rows": 0, "threads": 1,
        "sft.per_device_train_batch_size": 1, "sft.logging_steps": 1, "sft.save_steps": 100,
        "sft.eval_strategy": "no", "sft.learning_rate": 0.01, "sft.warmup_steps": 0,
        "sft.lr_scheduler_type": "constant", "sft.num_train_epochs": 1}


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    pytest.importorskip("trl")
    from typer.testing import CliRunner

    from trajforge.cli import app

    runner = CliRunner()
    root = tmp_path_factory.mktemp("curriculum")
    result = runner.invoke(app, ["build", "--n", "12", "--out", str(root / "data"), "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", "--out", str(root / "data"), "--to", str(root / "export"),
                                 "--format", "sft"])
    assert result.exit_code == 0, result.output
    return root / "export"


@pytest.mark.slow
def test_train_sft_reads_the_stages_in_order_and_resumes_in_place(export, tmp_path, monkeypatch):
    import datasets
    from trl import SFTTrainer

    from trajforge.sft.train import train_sft

    # every batch the trainer trains on: the number of assistant spans (label runs) in its one row
    spans: list[int] = []
    compute_loss = SFTTrainer.compute_loss

    def recording(self, model, inputs, *args, **kwargs):
        [labels] = inputs["labels"].tolist()
        trained = [label != -100 for label in labels]
        spans.append(sum(1 for i, bit in enumerate(trained) if bit and (i == 0 or not trained[i - 1])))
        return compute_loss(self, model, inputs, *args, **kwargs)

    monkeypatch.setattr(SFTTrainer, "compute_loss", recording)
    config = load_train_config(Path("configs/sft-tiny.yaml"),
                               {**TINY, "data": str(export), "output_dir": str(tmp_path), "curriculum": [1, 2]})
    summary = train_sft(config)

    train = datasets.load_dataset("parquet", data_files=sorted(str(p) for p in (export / "sft").glob("train-*")),
                                  split="train").select(range(6))
    counts = [sum(m["role"] == "assistant" for m in messages) for messages in train["messages"]]
    expected = [{"horizon": 1, "rows": sum(c > 1 for c in counts)}, {"horizon": 2, "rows": sum(c > 2 for c in counts)},
                {"horizon": None, "rows": 6}]
    assert summary["curriculum"] == expected
    assert json.loads((tmp_path / "train_summary.json").read_text())["curriculum"] == expected
    assert summary["train_rows"] == 6 and summary["global_step"] == sum(s["rows"] for s in expected)
    short = expected[0]["rows"] + expected[1]["rows"]
    assert spans[:short] == [1] * expected[0]["rows"] + [2] * expected[1]["rows"]
    # then every conversation whole (max_length cuts the longest ones short, but not to 2 spans)
    assert sorted(min(n, 3) for n in spans[short:]) == sorted(min(c, 3) for c in counts)
    whole_run = list(spans)

    # --resume goes on where the curriculum stopped: stop one row before the whole conversations
    # start, resume for three more, and those are the rows the uninterrupted run read there
    resumed = tmp_path / "resumed"
    first = {**TINY, "data": str(export), "output_dir": str(resumed), "curriculum": [1, 2],
             "sft.max_steps": short - 1, "sft.save_steps": short - 1}
    train_sft(load_train_config(Path("configs/sft-tiny.yaml"), first))
    del spans[:]
    again = train_sft(load_train_config(Path("configs/sft-tiny.yaml"), {**first, "sft.max_steps": short + 2}),
                      resume=True)
    assert again["resumed_from"].endswith(f"checkpoint-{short - 1}") and again["global_step"] == short + 2
    assert spans == whole_run[short - 1: short + 2]
