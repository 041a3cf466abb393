"""The offline train-then-evaluate path through the real CLI: ``trajforge train sft --model tiny``
(TRL SFTTrainer, a few steps on CPU), reload with ``from_pretrained``, ``--resume``, then
``trajforge eval --policy hf:...`` on held-out blueprints, results in the catalog."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.store import query

from .tiny_sizes import TINY_SIZES

pytest.importorskip("trl")
pytestmark = pytest.mark.slow
runner = CliRunner()

# small enough for a 2-core CI machine: 1 layer, 32 wide, 6 rows, 2 steps
TINY = [*TINY_SIZES, "--set", "max_train_rows=6", "--set", "max_eval_rows=2",
        "--set", "sft.per_device_train_batch_size=2", "--set", "sft.per_device_eval_batch_size=2",
        "--set", "sft.logging_steps=1", "--set", "sft.save_steps=1", "--set", "sft.eval_steps=2",
        "--set", "sft.learning_rate=0.01", "--set", "sft.warmup_steps=0",
        "--set", "sft.lr_scheduler_type=constant"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("train-eval")
    data, export = root / "data", root / "export"
    result = runner.invoke(app, ["build", "--n", "40", "--out", str(data), "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", "--out", str(data), "--to", str(export), "--format", "sft"])
    assert result.exit_code == 0, result.output
    return data, export


def test_train_tiny_reload_resume_and_evaluate(dataset, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    data, export = dataset
    model_dir = tmp_path / "model"
    result = runner.invoke(app, ["train", "sft", "--config", "configs/sft-tiny.yaml", "--model", "tiny",
                                 "--data", str(export), "--output-dir", str(model_dir),
                                 "--set", "sft.max_steps=2", *TINY])
    assert result.exit_code == 0, result.output
    summary = json.loads((model_dir / "train_summary.json").read_text())
    assert summary["global_step"] == 2 and summary["train_rows"] == 6 and summary["validation_rows"] == 2
    assert summary["final_eval_loss"] is not None and 0 < summary["train_loss"] < 20
    curve = list(csv.DictReader((model_dir / "loss_curve.csv").open()))
    assert [int(r["step"]) for r in curve if r["loss"]] == [1, 2]
    assert any(r["eval_loss"] for r in curve)
    assert (model_dir / "loss_curve.png").stat().st_size > 1000

    # saved like any Hugging Face model; the template keeps its generation markers
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    assert "{%- generation %}" in tokenizer.chat_template
    assert model.config.model_type == "llama" and model.num_parameters() == summary["parameters"]
    trained = {k: v.clone() for k, v in model.state_dict().items()}

    # --resume continues from the last checkpoint: one more step, the first two not redone
    result = runner.invoke(app, ["train", "sft", "--config", "configs/sft-tiny.yaml", "--data", str(export),
                                 "--output-dir", str(model_dir), "--resume", "--set", "sft.max_steps=3", *TINY])
    assert result.exit_code == 0, result.output
    resumed = json.loads((model_dir / "train_summary.json").read_text())
    assert resumed["global_step"] == 3 and resumed["resumed_from"].endswith("checkpoint-2")
    # tokens count both sessions; the rate only this one's (TRL's counter restarts at 0 on resume)
    assert 0 < resumed["session_tokens"] < resumed["num_tokens"]
    assert resumed["num_tokens"] == summary["num_tokens"] + resumed["session_tokens"]
    after = AutoModelForCausalLM.from_pretrained(model_dir).state_dict()
    assert any((after[k] != v).any() for k, v in trained.items())

    result = runner.invoke(app, ["eval", "--policy", f"hf:{model_dir}", "--out", str(data), "--limit", "2",
                                 "--trials", "2", "--max-turns", "2", "--max-new-tokens", "12", "--quiet",
                                 "--json", str(tmp_path / "eval.json")])
    assert result.exit_code == 0, result.output
    assert "pass@1" in result.output and "pass^2" in result.output
    report = json.loads((tmp_path / "eval.json").read_text())
    [domain] = report["domains"]
    assert domain["blueprints"] == 2 and domain["episodes"] == 4
    columns, rows = query(data, "SELECT blueprint_id, trial, policy, passed, termination, agent_turns "
                                f"FROM evaluations WHERE eval_id = '{report['eval_id']}' ORDER BY 1, 2")
    assert len(rows) == 4 and {r[1] for r in rows} == {0, 1}
    assert all(r[2] == f"hf:{model_dir}" and r[5] >= 1 for r in rows)
    # the blueprints played are held out: none of them is in the export's train split
    train_ids = {r[0] for r in query(data, "SELECT id FROM blueprints")[1]}
    assert {r[0] for r in rows} <= train_ids
    import datasets

    train_bps = set(datasets.load_dataset("parquet", data_files=sorted(str(p) for p in (export / "sft").glob("train-*")),
                                          split="train")["blueprint_id"])
    assert not {r[0] for r in rows} & train_bps


def test_a_model_that_cannot_be_loaded_is_one_line_and_exit_2(dataset, tmp_path):
    _, export = dataset
    result = runner.invoke(app, ["train", "sft", "--model", str(tmp_path / "no-such-model"), "--data", str(export),
                                 "--output-dir", str(tmp_path / "out"), "--set", "sft.max_steps=1"])
    assert result.exit_code == 2
    assert "cannot load" in result.output and "no-such-model" in result.output
    result = runner.invoke(app, ["eval", "--policy", f"hf:{tmp_path / 'no-such-model'}", "--out", str(dataset[0])])
    assert result.exit_code == 2 and "cannot load" in result.output


def test_sft_options_are_trl_fields(dataset, tmp_path):
    _, export = dataset
    result = runner.invoke(app, ["train", "sft", "--data", str(export), "--output-dir", str(tmp_path / "o"),
                                 "--set", "sft.learning_rat=1e-3"])
    assert result.exit_code == 2 and "sft.learning_rat" in result.output
    result = runner.invoke(app, ["train", "sft", "--data", str(tmp_path / "nothing-here"),
                                 "--output-dir", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--data" in result.output


def test_lora_trains_adapters_and_saves_a_merged_model(dataset, tmp_path):
    from transformers import AutoModelForCausalLM

    data, export = dataset
    out = tmp_path / "lora"
    # a dataset folder works as --data too: its sft export is written first
    result = runner.invoke(app, ["train", "sft", "--config", "configs/sft-tiny.yaml", "--data", str(data),
                                 "--output-dir", str(out), "--set", "sft.max_steps=1", "--set", "sft.eval_strategy=no",
                                 "--set", "lora={r: 4, lora_alpha: 8, target_modules: [q_proj, v_proj]}", *TINY])
    assert result.exit_code == 0, result.output
    assert (out / "sft-export" / "sft").is_dir()
    assert (out / "adapter" / "adapter_config.json").is_file()
    model = AutoModelForCausalLM.from_pretrained(out)
    assert not any("lora" in name for name, _ in model.named_parameters())
    assert json.loads((out / "train_summary.json").read_text())["global_step"] == 1
