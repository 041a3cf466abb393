"""The flows after the build, on the real Prefect engine (the session's server): an export flow
run, and the build -> export -> SFT (tiny model, two steps) -> evaluation composition whose
evaluation rows land in the catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajforge.config import load_config
from trajforge.errors import ConfigError
from trajforge.store.builds import run_build
from trajforge.store import query

ROOT = Path(__file__).resolve().parents[2]


def _flow_runs(name: str) -> list[tuple[str, str]]:
    """(flow run id, state name) of the session server's runs of flow ``name``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=[name])))
    return [(str(r.id), r.state.name if r.state else "") for r in runs]


def test_export_flow_writes_the_export_and_card(tmp_path: Path, prefect_api: str) -> None:
    from trajforge.flows.stages import export_dataset

    out, to = tmp_path / "data", tmp_path / "export"
    run_build(load_config(None, {"store.out": str(out), "generation.n_blueprints": 20,
                                 "domain.size": 80}))
    before = len(_flow_runs("export-dataset"))
    result = export_dataset(out=str(out), to=str(to), formats=["sft", "rl_tasks"],
                            splits=[0.6, 0.2, 0.2])
    info = json.loads((to / "trajforge_export.json").read_text())
    assert result["rows"] == info["rows"] and set(info["rows"]) == {"sft", "rl_tasks"}
    passed = query(out, "SELECT count(*) FROM outcomes WHERE passed")[1][0][0]
    assert sum(info["rows"]["sft"].values()) == passed > 0
    assert info["split_config"]["train"] == 0.6
    assert (to / "README.md").is_file() and any((to / "sft").glob("train-*.parquet"))
    runs = _flow_runs("export-dataset")
    assert len(runs) == before + 1 and runs[0][1] == "Completed"

    with pytest.raises(ConfigError, match="formats"):
        export_dataset(out=str(out), to=str(tmp_path / "bad"), formats=["nope"])
    assert not (tmp_path / "bad").exists()


@pytest.mark.slow
def test_build_then_train_then_evaluate_as_one_flow(tmp_path: Path, prefect_api: str) -> None:
    pytest.importorskip("trl")
    from trajforge.flows.stages import build_train_eval
    from trajforge.sft.train import load_train_config

    out = tmp_path / "data"
    config = load_config(None, {"store.out": str(out), "generation.n_blueprints": 40,
                                "store.shard_size": 20}).model_dump(mode="json")
    # the tiny model of tests/sft/test_train_eval.py: 1 layer, 32 wide, 6 rows, 2 steps
    train = load_train_config(ROOT / "configs" / "sft-tiny.yaml", {
        "output_dir": str(tmp_path / "model"), "tiny.hidden_size": 32, "tiny.intermediate_size": 64,
        "tiny.num_hidden_layers": 1, "tiny.num_attention_heads": 2, "tiny.num_key_value_heads": 1,
        "tiny.vocab_size": 1500, "tiny.tokenizer_rows": 40, "max_train_rows": 6,
        "max_eval_rows": 2, "sft.per_device_train_batch_size": 2,
        "sft.per_device_eval_batch_size": 2, "sft.max_steps": 2, "sft.logging_steps": 1,
        "sft.save_strategy": "no", "sft.eval_strategy": "no", "sft.warmup_steps": 0,
        "sft.lr_scheduler_type": "constant"}).model_dump(mode="json")
    train.pop("data")  # the flow trains on the export it makes
    evaluation = {"limit": 2, "trials": 2, "max_turns": 2, "max_new_tokens": 12}

    with pytest.raises(ConfigError, match="evaluation"):  # checked before anything runs
        build_train_eval(config=config, train=train, evaluation={"trails": 2})
    assert not out.exists()

    result = build_train_eval(config=config, train=train, evaluation=evaluation)
    assert result["build"]["computed"] == 2
    assert result["export"]["to"] == str(out / "export")
    assert result["train"]["global_step"] == 2 and result["train"]["data"] == str(out / "export")
    scores = result["evaluation"]
    assert scores["policy"] == f"hf:{tmp_path / 'model'}" and scores["episodes"] == 4
    rows = query(out, "SELECT blueprint_id, trial, policy FROM evaluations "
                      f"WHERE eval_id = '{scores['eval_id']}' ORDER BY 1, 2")[1]
    assert len(rows) == 4 and {r[1] for r in rows} == {0, 1}
    assert {r[2] for r in rows} == {scores["policy"]}
    # held out: the blueprints played are in the test split, none in the export's train split
    import pyarrow.parquet as pq

    train_bps = {bp for f in (out / "export" / "sft").glob("train-*.parquet")
                 for bp in pq.read_table(f, columns=["blueprint_id"])["blueprint_id"].to_pylist()}
    assert not {r[0] for r in rows} & train_bps
    assert query(out, "SELECT flow_name, outcome FROM runs")[1] == [("build-dataset", "completed")]
    for name in ("trajforge-build-train-eval", "trajforge-scheduled-build", "export-dataset",
                 "train-sft", "evaluate-policy"):
        assert any(state == "Completed" for _, state in _flow_runs(name)), name
