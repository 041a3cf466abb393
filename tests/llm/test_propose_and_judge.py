"""The LLM proposer and the checklist judge, through litellm against serve-policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from trajforge.config import load_config
from trajforge.environments.registry import load_domain
from trajforge.errors import TaskRejected
from trajforge.generators.propose import ProposedTask, parse_proposal
from trajforge.flows.build import build
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation.llm import quiet_provider_logs
from trajforge.store import query
from trajforge.verifiers.judge import Criterion, parse_judgement


def config_file(folder: Path, url: str, *, committee: int = 0, judge: bool = False) -> Path:
    model = {"api_base": url}
    tree = {"domain": {"size": 80}, "generation": {"n_blueprints": 24, "seed": 5}}
    tree["generation"]["proposer"] = {"model": {"model": "openai/proposer", **model},
                                      "rounds": 3, "committee": committee,
                                      "reviewer_model": {"model": "openai/reviewer", **model}}
    tree["simulation"] = {"agents": ["oracle", "faulty"]}
    if judge:
        tree["verification"] = {"judge": {"model": "openai/judge", **model}}
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def test_parse_proposal_names_the_exact_problem() -> None:
    domain = load_domain("retail", 60, 0)
    draft = domain.task_sampler().sample(__import__("random").Random(3), 1, p_indirect=0.5,
                                         p_revision=0, p_redirect=0, p_read_only=0)
    good = ProposedTask.from_draft(draft)
    assert parse_proposal("Here you go:\n" + good.model_dump_json(), domain) == good
    bad = good.model_dump(mode="json")
    bad["intents"][0]["kind"] = "teleport_package"
    with pytest.raises(TaskRejected, match="unknown_intent"):
        parse_proposal(json.dumps(bad), domain)
    with pytest.raises(TaskRejected, match="no_json"):
        parse_proposal("I cannot do that.", domain)
    del bad["auth_calls"]
    with pytest.raises(TaskRejected, match="bad_schema"):
        parse_proposal(json.dumps(bad), domain)


def test_proposer_build_validates_feeds_back_and_records_rounds(tmp_path: Path, policy_endpoint, prefect_api: str) -> None:
    endpoint = policy_endpoint(config_file(tmp_path, "http://127.0.0.1:9/v1"))
    config = config_file(tmp_path, endpoint.url, committee=3)
    quiet_provider_logs()
    build(load_config(config, {"store.out": str(tmp_path / "out")}), quiet=True)
    out = tmp_path / "out"
    by_round = query(out, "SELECT round, reason, count(*) FROM proposals GROUP BY 1, 2 ORDER BY 1, 2")[1]
    reasons = {(r, why) for r, why, _ in by_round}
    assert (1, "call_failed") in reasons or (1, "ground_truth_call_failed") in reasons  # fed back...
    assert any(r == 2 and why == "accepted" for r, why in reasons)  # ...and fixed in round 2
    committee = query(out, "SELECT count(*) FROM proposals WHERE reason = 'committee_rejected'")[1][0][0]
    assert committee > 0  # the reviewers turned down the four-request tasks
    accepted = query(out, "SELECT count(*) FROM proposals WHERE accepted")[1][0][0]
    blueprints = query(out, "SELECT count(*), min(generator), max(generator) FROM blueprints")[1][0]
    assert blueprints == (accepted, "llm_proposer", "llm_proposer")
    rejected = query(out, "SELECT count(*) FROM rejections")[1][0][0]
    assert accepted + rejected == 24
    # proposed blueprints are simulated and verified like any other
    passed = query(out, "SELECT avg(o.passed::INT) FROM outcomes o JOIN trajectories t "
                        "ON t.id = o.trajectory_id WHERE t.agent = 'scripted:oracle'")[1][0][0]
    assert passed == 1.0


def test_parse_judgement_requires_real_evidence() -> None:
    criteria = [Criterion("a", "?"), Criterion("b", "?"), Criterion("c", "?"), Criterion("d", "?")]
    dialogue = "[1] customer: I want a refund\n[2] agent: Your refund of 12.50 is on its way."
    text = json.dumps({"criteria": [
        {"key": "a", "passed": True, "evidence": "Your refund of  12.50 is on its way."},
        {"key": "b", "passed": True, "evidence": "I refunded you 99 dollars"},
        {"key": "c", "passed": False, "evidence": "I want a refund"}]})
    judged = parse_judgement(text, criteria, dialogue)
    assert judged["a"][0] is True
    assert judged["b"] == (False, "the judge's evidence is not in the dialogue", "I refunded you 99 dollars")
    assert judged["c"][:2] == (False, "the judge says no")
    assert judged["d"][:2] == (False, "the judge gave no answer")


def test_judge_verdicts_are_stored_beside_the_checks(tmp_path: Path, policy_endpoint, prefect_api: str) -> None:
    tree = {"domain": {"size": 80}, "generation": {"n_blueprints": 12},
            "simulation": {"agents": ["oracle", "faulty"]},
            "verification": {"judge": {"model": "openai/judge", "api_base": "http://127.0.0.1:9/v1"}}}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(tree))
    endpoint = policy_endpoint(path)
    tree["verification"]["judge"]["api_base"] = endpoint.url
    path.write_text(yaml.safe_dump(tree))
    quiet_provider_logs()
    build(load_config(path, {"store.out": str(tmp_path / "out")}), quiet=True)
    out = tmp_path / "out"
    rows = query(out, """
        SELECT t.agent, v."check", v.passed, v.evidence FROM verdicts v
        JOIN trajectories t ON t.id = v.trajectory_id WHERE v."check" LIKE 'judge:%'""")[1]
    assert rows
    checks = {r[1] for r in rows}
    assert {"judge:policy", "judge:tone", "judge:intent_1"} <= checks
    assert all(json.loads(r[3])["quote"] for r in rows if r[2])
    oracle_told = [r[2] for r in rows if r[0] == "scripted:oracle" and r[1].startswith("judge:told_")]
    assert oracle_told and all(oracle_told)
    # the judge never changes which trajectories pass
    outcomes = query(out, "SELECT count(*), count(DISTINCT trajectory_id) FROM outcomes")[1][0]
    assert outcomes[0] == outcomes[1]


def test_the_llm_example_config_runs_every_role_against_the_endpoint(tmp_path: Path, policy_endpoint, prefect_api: str) -> None:
    """configs/llm.yaml as documented: proposer + committee, LLM agent and user, judge."""
    example = Path(__file__).resolve().parents[2] / "configs" / "llm.yaml"
    endpoint = policy_endpoint(example, "--n", "10")
    overrides = {key: endpoint.url for key in (
        "generation.proposer.model.api_base", "generation.proposer.reviewer_model.api_base",
        "simulation.agent_model.api_base", "simulation.user_model.api_base",
        "verification.judge.api_base")}
    quiet_provider_logs()
    build(load_config(example, {**overrides, "generation.n_blueprints": 10,
                                    "store.out": str(tmp_path / "out")}), quiet=True)
    out = tmp_path / "out"
    passed, episodes = query(out, "SELECT count(*) FILTER (WHERE passed), count(*) FROM outcomes")[1][0]
    assert episodes >= 5 and passed == episodes
    assert query(out, "SELECT count(*) FROM proposals")[1][0][0] >= 10
    assert query(out, "SELECT count(*) FROM verdicts WHERE \"check\" LIKE 'judge:%'")[1][0][0] > 0
