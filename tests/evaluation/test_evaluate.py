"""Evaluation machinery with real episodes: the scripted oracle and fault injector play as
policies, the verifiers judge, the scores and the ``evaluations`` view come out of it."""

from __future__ import annotations

import random
from math import comb

import pytest

from trajforge.errors import ConfigError
from trajforge.schemas.trajectory import Fault, FaultKind
from trajforge.evaluation.blueprints import fresh_blueprints
from trajforge.evaluation.config import PlayConfig
from trajforge.evaluation.policies import PolicySpec
from trajforge.evaluation.run import evaluate, save_evaluation, summary_json
from trajforge.evaluation.scores import pass_hat_k, score, task_of
from trajforge.simulation.episodes import EpisodeContext, scripted_agent, scripted_agents
from trajforge.simulation.local_model import MALFORMED_CALL, parse_completion
from trajforge.store import query


@pytest.fixture(scope="module")
def blueprints():
    return fresh_blueprints(6, seed=4242)


def test_pass_hat_k_is_the_tau_bench_estimator():
    assert pass_hat_k(4, 4, 3) == 1.0
    assert pass_hat_k(4, 2, 2) == comb(2, 2) / comb(4, 2) == 1 / 6
    assert pass_hat_k(4, 2, 3) == 0.0
    assert pass_hat_k(5, 3, 1) == 3 / 5
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_score_averages_per_blueprint_and_counts_failures():
    rows = [{"domain": "retail", "blueprint_id": "a", "passed": p, "failed_checks": [] if p else ["outputs"],
             "tool_calls": 2, "valid_tool_calls": 1, "termination": "user_stop"} for p in (True, True, False)]
    rows += [{"domain": "retail", "blueprint_id": "b", "passed": False, "failed_checks": ["policy", "outputs"],
              "tool_calls": 0, "valid_tool_calls": 0, "termination": "max_turns"} for _ in range(3)]
    [s] = score(rows, trials=3)
    assert s.blueprints == 2 and s.episodes == 6
    assert s.pass_at_1 == pytest.approx((2 / 3 + 0) / 2)
    assert s.pass_hat[2] == pytest.approx((1 / 3 + 0) / 2)
    assert s.pass_hat[3] == 0.0
    assert s.format_validity == pytest.approx(3 / 6)
    assert s.failures == {"outputs": 4, "policy": 3}
    assert s.by_task == {}  # no tasks given
    [s] = score(rows, trials=3, tasks={"a": task_of(["cancel_order"]), "b": task_of(["return_items", "order_status"])})
    assert s.by_task == {"cancel_order": (3, 2), "return_items+order_status": (3, 0)}


def test_the_oracle_passes_every_trial_and_a_fault_is_caught_by_its_check(blueprints, tmp_path):
    good = evaluate(blueprints, scripted_agents, "scripted:oracle", PlayConfig(trials=2, max_turns=40,
                                                                               max_steps_per_turn=12), "fresh:4242")
    [s] = good.scores
    assert (s.blueprints, s.episodes) == (6, 12)
    # per task: each blueprint's intent kinds, every episode counted once and passed
    assert sum(n for n, _ in s.by_task.values()) == 12 and all(n == c for n, c in s.by_task.values())
    assert set(s.by_task) == {task_of(i.kind for i in bp.user.intents) for bp in blueprints}
    assert summary_json(good)["domains"][0]["by_task"] == {t: {"episodes": n, "passed": c}
                                                          for t, (n, c) in s.by_task.items()}
    assert s.pass_at_1 == 1.0 and s.pass_hat[2] == 1.0
    assert s.format_validity == 1.0 and s.tool_calls > 12
    # each trial of a blueprint has its own seed (a different user wording)
    assert len({r["seed"] for r in good.rows}) == 12

    def unknown_tool(episode: EpisodeContext):
        return scripted_agent(episode.blueprint, episode.domain, episode.seed,
                              Fault(kind=FaultKind.unknown_tool, target=0))

    bad = evaluate(blueprints, unknown_tool, "scripted:unknown_tool", PlayConfig(trials=1, max_turns=40,
                                                                                 max_steps_per_turn=12), "fresh:4242")
    [b] = bad.scores
    assert b.pass_at_1 == 0.0
    assert b.failures["tool_schema"] == 6
    assert b.format_validity is not None and b.format_validity < 1.0

    out = tmp_path / "dataset"
    save_evaluation(out, good)
    save_evaluation(out, bad)
    columns, rows = query(out, "SELECT policy, count(*), avg(passed::INT), sum(tool_calls) - sum(valid_tool_calls) "
                               "FROM evaluations GROUP BY 1 ORDER BY 1")
    assert rows == [("scripted:oracle", 12, 1.0, 0), ("scripted:unknown_tool", 6, 0.0, 6)]


def test_completions_are_parsed_back_into_calls():
    names = {"get_order_details"}
    turn = parse_completion('Let me look. <tool_call>{"name": "get_order_details", "arguments": '
                            '{"order_id": "#W0000001"}}</tool_call>', names, "c")
    assert turn.content == "Let me look."
    assert [(c.name, c.parsed_arguments()) for c in turn.calls] == [("get_order_details", {"order_id": "#W0000001"})]
    assert turn.rejected == {}
    broken = parse_completion('<tool_call>{"name": "get_order_details", "argu</tool_call>'
                              '<tool_call>{"name": "fly", "arguments": {}}</tool_call>', names, "c")
    assert broken.content is None and len(broken.calls) == 2
    assert broken.rejected["c_0"] == MALFORMED_CALL
    assert "unknown tool 'fly'" in broken.rejected["c_1"]
    assert parse_completion("Hello there", names, "c").calls == ()


def test_policy_specs_are_validated():
    assert PolicySpec.parse("hf:/x/y") == PolicySpec("hf", "/x/y")
    assert PolicySpec.parse("litellm:openai/gpt-4.1-mini").target == "openai/gpt-4.1-mini"
    for bad in ("gpt-4", "torch:/x", "hf:"):
        with pytest.raises(ConfigError):
            PolicySpec.parse(bad)
