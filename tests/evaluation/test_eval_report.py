"""``benchmarks/eval_report.py`` on real stored evaluations: a built dataset, three scripted
policies played on its held-out blueprints and saved with ``save_evaluation``, then the script run
as a user runs it. Its page must state what the evaluations stored, blueprint by blueprint."""

from __future__ import annotations

import json
import subprocess
import sys
from math import comb
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.evaluation.blueprints import heldout_blueprints
from trajforge.evaluation.config import PlayConfig
from trajforge.evaluation.run import evaluate, save_evaluation
from trajforge.schemas.trajectory import Fault, FaultKind
from trajforge.simulation.episodes import EpisodeContext, scripted_agent, scripted_agents

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "eval_report.py"
PLAY = PlayConfig(trials=1, max_turns=40, max_steps_per_turn=12)
SPLIT = "validation"


def faulty_on(ids: set[str]):
    """The oracle, except on the blueprints in ``ids``, where it calls a tool that does not exist."""
    def agents(episode: EpisodeContext):
        fault = Fault(kind=FaultKind.unknown_tool, target=0) if episode.blueprint.id in ids else None
        return scripted_agent(episode.blueprint, episode.domain, episode.seed, fault)
    return agents


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    data = tmp_path_factory.mktemp("eval-report") / "data"
    result = CliRunner().invoke(app, ["build", "--n", "24", "--out", str(data), "--quiet"])
    assert result.exit_code == 0, result.output
    blueprints = heldout_blueprints(data, SPLIT)
    ids = [bp.id for bp in blueprints]
    assert len(ids) >= 3
    save_evaluation(data, evaluate(blueprints, scripted_agents, "scripted:oracle", PLAY, "test"))
    save_evaluation(data, evaluate(blueprints, faulty_on(set(ids)), "scripted:broken", PLAY, "test"))
    save_evaluation(data, evaluate(blueprints, faulty_on(set(ids[1::2])), "scripted:odd", PLAY, "test"))
    return data, ids


def report(data: Path, results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--out", str(data), "--split", SPLIT,
                           "--results", str(results), "--stem", "r", *args],
                          capture_output=True, text=True, timeout=300)


def test_the_page_states_the_stored_outcomes_against_the_baseline(evaluated, tmp_path):
    data, ids = evaluated
    done = report(data, tmp_path, "--baseline", "scripted:broken", "--first", "2", "--eval-command", "by hand")
    assert done.returncode == 0, done.stderr
    page = json.loads((tmp_path / "r.json").read_text())
    assert page["blueprints"] == ids and page["first"] == 2 and page["eval_command"] == "by hand"
    rows = {r["policy"]: r for r in page["policies"]}
    # baseline first, then the others (ordered by when evaluated; evaluations within one second tie)
    assert list(rows)[0] == "scripted:broken" and set(rows) == {"scripted:broken", "scripted:oracle", "scripted:odd"}
    n = len(ids)
    broken, oracle, odd = rows["scripted:broken"], rows["scripted:oracle"], rows["scripted:odd"]
    assert (broken["pass_at_1"], broken["gained"], broken["lost"], broken["passed"]) == (0.0, 0, 0, "." * n)
    assert (oracle["pass_at_1"], oracle["pass_at_1_first"], oracle["gained"], oracle["lost"]) == (1.0, 1.0, n, 0)
    assert oracle["passed"] == "1" * n
    # the exact two-sided sign test: n wins, no loss
    assert oracle["sign_test_p"] == pytest.approx(2 / 2 ** n)
    evens = len(ids[0::2])
    assert odd["passed"] == "".join("1" if i % 2 == 0 else "." for i in range(n))
    assert (odd["gained"], odd["lost"], odd["pass_at_1_first"]) == (evens, 0, 0.5)
    assert odd["pass_at_1"] == pytest.approx(evens / n)
    md = (tmp_path / "r.md").read_text()
    assert f"| `scripted:oracle` | {oracle['eval_id']} | 1.000 | 1.000 | {n} | 0 |" in md
    assert "Evaluations: `by hand`" in md


def test_against_a_better_baseline_losses_are_counted_and_tested(evaluated, tmp_path):
    data, ids = evaluated
    done = report(data, tmp_path, "--baseline", "scripted:oracle", "--policies", "scripted:odd")
    assert done.returncode == 0, done.stderr
    page = json.loads((tmp_path / "r.json").read_text())
    [_, odd] = page["policies"]
    lost = len(ids[1::2])
    assert (odd["gained"], odd["lost"]) == (0, lost)
    assert odd["sign_test_p"] == pytest.approx(min(1.0, 2 * comb(lost, 0) / 2 ** lost))
    assert page["pairs"] == [] and "pooled" not in page
    assert "Evaluations:" not in (tmp_path / "r.md").read_text()


def test_pairs_set_two_policies_against_each_other_and_pool(evaluated, tmp_path):
    data, ids = evaluated
    done = report(data, tmp_path, "--baseline", "scripted:broken", "--policies",
                  "--pair", "scripted:odd", "scripted:oracle", "--pair", "scripted:odd", "scripted:broken")
    assert done.returncode == 0, done.stderr
    page = json.loads((tmp_path / "r.json").read_text())
    # the paired policies are reported even when --policies names none
    assert [r["policy"] for r in page["policies"]] == ["scripted:broken", "scripted:odd", "scripted:oracle"]
    odd_fails, odd_passes = len(ids[1::2]), len(ids[0::2])
    assert [(r["a_only"], r["b_only"]) for r in page["pairs"]] == [(0, odd_fails), (odd_passes, 0)]
    assert page["pooled"] == {"a_only": odd_passes, "b_only": odd_fails,
                              "sign_test_p": pytest.approx(min(1.0, 2 * sum(
                                  comb(len(ids), k) for k in range(min(odd_passes, odd_fails) + 1)) / 2 ** len(ids)))}
    assert f"| pooled | | {odd_passes} | {odd_fails} |" in (tmp_path / "r.md").read_text()


def test_a_policy_never_evaluated_is_one_clear_error(evaluated, tmp_path):
    data, _ = evaluated
    done = report(data, tmp_path, "--baseline", "scripted:oracle", "--policies", "hf:/no/such/model")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == f"error: no evaluation of 'hf:/no/such/model' in {data}"
    assert not (tmp_path / "r.json").exists()
