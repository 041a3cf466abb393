"""``trajforge eval --policy litellm:...`` through real litellm over HTTP, against the scripted
oracle served by ``trajforge serve-policy``: the oracle must pass every trial of every
blueprint, with well-formed native tool calls; and ``vllm:`` runs only where vLLM and a GPU are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.store import query

runner = CliRunner()


def test_eval_of_a_litellm_policy_against_the_oracle_endpoint(tmp_path: Path, policy_endpoint) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump({"generation": {"n_blueprints": 8, "seed": 77}}))
    endpoint = policy_endpoint(config)
    out = tmp_path / "results"
    result = runner.invoke(app, ["eval", "--policy", "litellm:openai/oracle", "--api-base", endpoint.url,
                                 "--fresh", "3", "--fresh-seed", "77", "--trials", "2", "--max-turns", "40",
                                 "--out", str(out), "--quiet", "--json", str(tmp_path / "eval.json")])
    assert result.exit_code == 0, result.output
    [domain] = json.loads((tmp_path / "eval.json").read_text())["domains"]
    assert (domain["blueprints"], domain["episodes"]) == (3, 6)
    assert domain["pass@1"] == 1.0 and domain["pass^2"] == 1.0
    assert domain["format_validity"] == 1.0 and domain["tool_calls"] >= 6
    rows = query(out, "SELECT policy, passed, termination FROM evaluations")[1]
    assert rows and all(r == ("litellm:openai/oracle", True, "user_stop") for r in rows)


def test_eval_against_an_llm_user(tmp_path: Path, policy_endpoint) -> None:
    """--user-model: the user is a model behind the gateway (here the endpoint's user role, which
    plays the blueprint's scripted user over HTTP); the oracle agent still passes every episode."""
    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump({"generation": {"n_blueprints": 8, "seed": 78}}))
    endpoint = policy_endpoint(config)
    out = tmp_path / "results"
    result = runner.invoke(app, ["eval", "--policy", "litellm:openai/oracle", "--api-base", endpoint.url,
                                 "--user-model", "openai/user", "--user-api-base", endpoint.url,
                                 "--fresh", "2", "--fresh-seed", "78", "--max-turns", "40",
                                 "--out", str(out), "--quiet", "--json", str(tmp_path / "eval.json")])
    assert result.exit_code == 0, result.output
    [domain] = json.loads((tmp_path / "eval.json").read_text())["domains"]
    assert domain["episodes"] == 2 and domain["pass@1"] == 1.0
    rows = query(out, "SELECT json_extract_string(trajectory, '$.episode.user') FROM evaluations")[1]
    assert rows and all(r[0] != "scripted" and "openai/user" in r[0] for r in rows)


def test_the_cli_and_the_evaluate_policy_flow_play_the_same_episodes(tmp_path: Path, policy_endpoint,
                                                                     prefect_api: str) -> None:
    """One request, given only its required fields, through ``trajforge eval`` and through the
    ``evaluate-policy`` flow on the real Prefect engine: both read their defaults from
    ``EvalConfig``, so they play the same episodes (same trajectory ids, same verdicts)."""
    from trajforge.evaluation.config import EvalConfig, default_of
    from trajforge.flows.stages import evaluate_policy

    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump({"generation": {"n_blueprints": 8, "seed": 79}}))
    endpoint = policy_endpoint(config)
    policy, fresh = "litellm:openai/oracle", ["--fresh", "3", "--fresh-seed", "79"]
    cli_out, flow_out = tmp_path / "cli", tmp_path / "flow"
    result = runner.invoke(app, ["eval", "--policy", policy, "--api-base", endpoint.url, *fresh,
                                 "--out", str(cli_out), "--quiet"])
    assert result.exit_code == 0, result.output
    summary = evaluate_policy(policy=policy, out=str(flow_out), api_base=endpoint.url, fresh=3, fresh_seed=79)
    assert summary["episodes"] == 3
    sql = ("SELECT trajectory_id, passed, json_extract(trajectory, '$.episode.max_turns')::INT "
           "FROM evaluations ORDER BY 1")
    played_by_cli, played_by_flow = query(cli_out, sql)[1], query(flow_out, sql)[1]
    assert played_by_cli == played_by_flow and len(played_by_cli) == 3
    assert {r[2] for r in played_by_cli} == {default_of(EvalConfig, "max_turns")}


@pytest.mark.gpu
def test_eval_of_an_in_process_vllm_policy(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("vllm")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    from trajforge.sft.tiny import TinyModelConfig, build_tiny

    rows = [{"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
             "tools": []}]
    model, tokenizer = build_tiny(rows, TinyModelConfig(vocab_size=400, hidden_size=64, intermediate_size=128,
                                                        num_hidden_layers=2))
    model.save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    result = runner.invoke(app, ["eval", "--policy", f"vllm:{tmp_path / 'm'}", "--fresh", "2", "--max-turns", "2",
                                 "--max-new-tokens", "8", "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert len(query(tmp_path / "out", "SELECT * FROM evaluations")[1]) == 2
