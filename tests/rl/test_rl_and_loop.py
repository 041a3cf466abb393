"""RL and the loop on a real (tiny, untrained-ish) model: token-level rollouts that are exactly
what the model sampled, verifier rewards, GRPO through TRL's GRPOTrainer, and ``trajforge
loop`` end to end with its rows in the catalog."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.store import query

from sft.tiny_sizes import TINY_SIZES  # tests/ is on sys.path (rootdir of the test packages)

pytest.importorskip("trl")
pytestmark = pytest.mark.slow
runner = CliRunner()

TINY = [*TINY_SIZES, "--set", "max_train_rows=4", "--set", "sft.eval_strategy=no",
        "--set", "sft.per_device_train_batch_size=2", "--set", "sft.max_steps=1"]
SMALL_GRPO = {"num_generations": 2, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 1,
              "max_steps": 1, "learning_rate": 0.05}
SMALL_ROLLOUT = {"max_turns": 2, "max_steps_per_turn": 2, "max_new_tokens": 16, "batch_size": 8}


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    root = tmp_path_factory.mktemp("rl")
    data, export, model = root / "data", root / "export", root / "model"
    # the build's own body, without the Prefect flow around it (the flow has its tests; an
    # accelerator machine that runs the gpu tests below may have no Prefect)
    from trajforge.config import load_config
    from trajforge.store.builds import run_build

    run_build(load_config(None, {"store.out": str(data), "generation.n_blueprints": 40}))
    for args in (["export", "--out", str(data), "--to", str(export), "--format", "sft"],
                 ["train", "sft", "--config", "configs/sft-tiny.yaml", "--model", "tiny", "--data", str(export),
                  "--output-dir", str(model), *TINY]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return data, model


def test_rollouts_train_on_exactly_what_the_model_sampled(policy):
    from trajforge.rl.rollout import RolloutPlayer, RolloutConfig, rollout_seed
    from trajforge.schemas.messages import AssistantMessage
    from trajforge.evaluation.blueprints import heldout_blueprints
    from trajforge.simulation.local_model import load_hf

    data, model_dir = policy
    model, tokenizer = load_hf(str(model_dir))
    bps = heldout_blueprints(data, "train", limit=2)
    player = RolloutPlayer(model, tokenizer, RolloutConfig(max_turns=2, max_steps_per_turn=2, max_new_tokens=16),
                           seed=3)
    jobs = [(bp, rollout_seed(bp.id, "t", k)) for bp in bps for k in range(2)]
    rollouts = player.play(jobs)
    assert [r.blueprint.id for r in rollouts] == [bp.id for bp, _ in jobs]
    end = tokenizer.eos_token_id
    for r in rollouts:
        assert len(r.env_mask) == len(r.completion_ids) and r.policy_tokens > 0
        # the prompt is the rendered start of the dialogue, ending with the assistant header
        assert tokenizer.decode(r.prompt_ids).endswith("<|assistant|>")
        # the policy's tokens, segment by segment, are the agent's messages as the model wrote them
        segments, current = [], []
        for token, mine in zip(r.completion_ids, r.env_mask):
            if mine:
                current.append(token)
            elif current:
                segments.append(current)
                current = []
        if current:
            segments.append(current)
        said = [m for m in r.trajectory.messages if isinstance(m, AssistantMessage)]
        assert len(segments) == len(said)
        # user and tool messages are context (mask 0), and the reward is the verifiers'
        assert "<|user|>" in tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask) if not m]) \
            or len(said) == 1
        assert r.reward.reward == pytest.approx(
            1.0 if r.reward.passed else 0.5 * (r.reward.writes + r.reward.checks) / 2)
        assert r.verdicts and r.verdicts[0].trajectory_id == r.trajectory.id
        assert all(seg[-1] == end or len(seg) == 16 for seg in segments)
    # a fixed seed replays the same episodes
    again = RolloutPlayer(model, tokenizer, player.settings, seed=3).play(jobs)
    assert [r.completion_ids for r in again] == [r.completion_ids for r in rollouts]
    # the prefix cache (on by default) saves work and changes nothing: greedy rollouts with and
    # without it are the same tokens, and each turn after the first reuses the episode's ids
    greedy = {cached: RolloutPlayer(model, tokenizer, RolloutConfig(max_turns=2, max_steps_per_turn=2,
                                                                    max_new_tokens=16, temperature=0.0,
                                                                    prefix_cache=cached), seed=3)
              for cached in (False, True)}
    played = {cached: p.play(jobs) for cached, p in greedy.items()}
    assert [r.completion_ids for r in played[True]] == [r.completion_ids for r in played[False]]
    assert greedy[True]._cache is not None and greedy[True]._cache.reused_tokens > 0


def test_rollouts_sample_under_bf16_as_the_policy_trains_unless_set(policy):
    import torch

    from trajforge.evaluation.blueprints import heldout_blueprints
    from trajforge.rl.rollout import RolloutConfig, RolloutPlayer, rollout_seed
    from trajforge.simulation.local_model import load_hf

    data, model_dir = policy
    model, tokenizer = load_hf(str(model_dir))
    seen: list[bool] = []
    model.register_forward_pre_hook(lambda module, args: seen.append(torch.is_autocast_enabled(model.device.type)))
    jobs = [(bp, rollout_seed(bp.id, "t", 0)) for bp in heldout_blueprints(data, "train", limit=1)]
    small = {"max_turns": 1, "max_steps_per_turn": 1, "max_new_tokens": 8}
    for bf16, trains_bf16, expected in ((None, True, True), (None, False, False), (False, True, False),
                                        (True, False, True)):
        seen.clear()
        player = RolloutPlayer(model, tokenizer, RolloutConfig(**small, bf16=bf16), seed=0, trains_bf16=trains_bf16)
        [rollout] = player.play(jobs)
        assert player.bf16 is expected and rollout.policy_tokens > 0
        assert seen and set(seen) == {expected}, (bf16, trains_bf16)


def test_reward_is_one_for_a_passing_episode_and_partial_for_a_fault():
    import asyncio

    from trajforge.environments.registry import load_domain
    from trajforge.generators import generate_blueprints
    from trajforge.rl.reward import episode_reward
    from trajforge.schemas.blueprint import TaskBlueprint
    from trajforge.schemas.config import GenerationConfig
    from trajforge.schemas.trajectory import EpisodeSpec, Fault, FaultKind
    from trajforge.simulation import EpisodeLimits, ScriptedAgent, ScriptedUser, run_episode
    from trajforge.verifiers import verify

    domain = load_domain("retail", 300, 0)
    bp = next(b for b in generate_blueprints(domain, GenerationConfig(n_blueprints=20, seed=5), "r", 0, 20)
              if isinstance(b, TaskBlueprint)
              and any(c.intent == 0 and c.kind == "write" for c in b.ground_truth.calls))  # a fault target

    def play(fault):
        agent = ScriptedAgent(bp, domain, random.Random(1), fault=fault)
        spec = EpisodeSpec(agent="oracle", user="scripted", seed=1, max_turns=40, fault=fault)
        t = asyncio.run(run_episode(bp.id, domain.environment(), agent, ScriptedUser(bp, domain, random.Random(2)),
                                    EpisodeLimits(), run_id="r", episode=spec))
        return episode_reward(t, bp, verify(t, bp, domain))

    good = play(None)
    assert good.passed and good.reward == 1.0 and good.writes == 1.0
    bad = play(Fault(kind=FaultKind.wrong_argument, target=0))
    assert not bad.passed and 0.0 < bad.reward < 0.5


def test_grpo_step_trains_the_policy_tokens(policy, tmp_path):
    from trajforge.rl.train import RLConfig, grpo_train
    from trajforge.evaluation.blueprints import heldout_blueprints
    from trajforge.simulation.local_model import load_hf

    data, model_dir = policy
    model, tokenizer = load_hf(str(model_dir))
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tasks = heldout_blueprints(data, "train", limit=2)
    config = RLConfig(model=str(model_dir), output_dir=str(tmp_path / "rl"), rollout=SMALL_ROLLOUT,
                      grpo={**SMALL_GRPO, "bf16": "auto"})
    result = grpo_train(model, tokenizer, tasks, config)
    assert result.steps == 1
    # grpo.bf16: auto timed both modes on this model and trained in the faster
    assert result.precision is not None and result.bf16 is result.precision.bf16
    import torch

    assert set(result.precision.tokens_per_second) == ({"bf16", "fp32"} if not torch.cuda.is_available() else set())
    assert result.rollout_bf16 is result.bf16, "rollout.bf16 unset: the rollouts are sampled as the policy trains"
    played = [r for _, r in result.log.rollouts]
    # TRL drew 2 tasks and the rollout function played each one num_generations=2 times
    assert sorted(r.blueprint.id for r in played) == sorted([t.id for t in tasks] * 2)
    [logged] = [e for e in result.history if "reward" in e]
    assert logged["reward"] == pytest.approx(sum(r.reward.reward for r in played) / 4, abs=1e-5)
    # the completion length TRL counts is the policy's tokens only (env_mask)
    assert logged["completions/mean_length"] == pytest.approx(sum(r.policy_tokens for r in played) / 4)
    after = model.state_dict()
    rewards = {r.blueprint.id: [] for r in played}
    for r in played:
        rewards[r.blueprint.id].append(r.reward.reward)
    if any(len(set(v)) > 1 for v in rewards.values()):  # a group with nonzero advantage moves the weights
        assert any((after[k] != v).any() for k, v in before.items())


def test_loop_cli_runs_iterations_and_stores_them(policy, tmp_path, monkeypatch):
    import trajforge.sft.precision as precision

    timed = []  # grpo.bf16: auto is timed once for the whole loop (the real measurement, counted)
    real_choose = precision.choose_bf16
    monkeypatch.setattr(precision, "choose_bf16", lambda model: timed.append(real_choose(model)) or timed[-1])
    data, model_dir = policy
    overrides = ["--set", "seed_tasks=4", "--set", "pool.capacity=4", "--set", "heldout.limit=2",
                 "--set", "heldout.max_turns=2", "--set", "heldout.max_new_tokens=16", "--set", "grpo.bf16=auto"]
    overrides += [x for k, v in SMALL_ROLLOUT.items() for x in ("--set", f"rollout.{k}={v}")]
    overrides += [x for k, v in SMALL_GRPO.items() for x in ("--set", f"grpo.{k}={v}")]
    out_dir = tmp_path / "loop"
    result = runner.invoke(app, ["loop", "--config", "configs/loop-tiny.yaml", "--model", str(model_dir),
                                 "--tasks", str(data), "--output-dir", str(out_dir), "--iterations", "2",
                                 "--quiet", *overrides])
    assert result.exit_code == 0, result.output
    summary = json.loads((out_dir / "loop_summary.json").read_text())
    run_id = summary["run_id"]
    _, rows = query(data, "SELECT iteration, trajectories, trajectories_total, heldout_pass_at_1, train_bf16, "
                          f"rollout_bf16 FROM loop_iterations WHERE run_id = '{run_id}' ORDER BY iteration")
    assert [r[0] for r in rows][:1] == [1] and all(r[1] == 4 for r in rows)
    assert [r[2] for r in rows] == [4 * (i + 1) for i in range(len(rows))]
    assert all(r[3] is not None for r in rows)
    # the precision each iteration trained and sampled in: what the one timing chose (rollout.bf16 unset
    # follows it), also in the summary
    assert len(timed) == 1 and all(r[4] is timed[0].bf16 and r[5] is timed[0].bf16 for r in rows)
    assert summary["precision"]["bf16"] is timed[0].bf16
    # the rollouts are ordinary trajectories with verdicts in the catalog, under the loop's run id
    _, [[n, verdicts]] = query(data, "SELECT count(DISTINCT t.id), count(v.id) FROM trajectories t "
                                     f"JOIN verdicts v ON v.trajectory_id = t.id WHERE t.run_id = '{run_id}'")
    assert n == 4 * len(rows) and verdicts > n
    _, tasks = query(data, f"SELECT count(*) FROM loop_tasks WHERE run_id = '{run_id}'")
    assert tasks[0][0] >= 4
    assert (out_dir / "loop.png").is_file()


def test_loop_reuses_a_starting_pass_rate_measured_by_the_caller(policy, tmp_path):
    from trajforge.loop.run import LoopConfig, run_loop

    data, model_dir = policy
    config = LoopConfig(model=str(model_dir), tasks=str(data), output_dir=str(tmp_path / "loop"), iterations=1,
                        seed_tasks=2, pool={"capacity": 2}, rollout=SMALL_ROLLOUT, grpo=SMALL_GRPO,
                        heldout={"limit": 1, "max_turns": 2, "max_new_tokens": 8})
    lines: list[str] = []
    result = run_loop(config, progress=lines.append, initial_pass_at_1=0.25)
    assert result.initial_pass_at_1 == 0.25 and "0.250 (measured by the caller)" in lines[0]
    assert json.loads((tmp_path / "loop" / "loop_summary.json").read_text())["initial_heldout_pass_at_1"] == 0.25
    assert len(result.iterations) == 1


def test_loop_config_errors_are_one_line(tmp_path):
    result = runner.invoke(app, ["loop", "--model", "m", "--tasks", str(tmp_path), "--set", "pool.capasity=3"])
    assert result.exit_code == 2 and "pool.capasity" in result.output
    result = runner.invoke(app, ["train", "rl", "--model", "m", "--set", "grpo.num_generashuns=2"])
    assert result.exit_code == 2 and "grpo" in result.output


def test_loop_and_rl_as_prefect_flows(policy, tmp_path, prefect_api):
    from trajforge.flows.stages import resynthesis_loop, train_rl

    data, model_dir = policy
    common = {"model": str(model_dir), "tasks": str(data), "rollout": SMALL_ROLLOUT, "grpo": SMALL_GRPO}
    summary = train_rl(config={**common, "output_dir": str(tmp_path / "rl"), "max_tasks": 2, "trainable_layers": 1})
    assert summary["global_step"] == 1 and summary["episodes"] == 4
    assert (tmp_path / "rl" / "rollouts.jsonl").read_text().count("\n") == 4
    # trainable_layers: the embeddings stay as they were (only the block and the final norm train)
    from safetensors.torch import load_file

    before, after = (load_file(folder / "model.safetensors") for folder in (model_dir, tmp_path / "rl"))
    embeddings = [k for k in before if "embed" in k]
    assert embeddings and all((before[k] == after[k]).all() for k in embeddings)
    result = resynthesis_loop(config={**common, "output_dir": str(tmp_path / "loop"), "iterations": 1,
                                      "seed_tasks": 2, "pool": {"capacity": 2},
                                      "heldout": {"limit": 1, "max_turns": 2, "max_new_tokens": 8}})
    [row] = result["iterations"]
    assert row["iteration"] == 1 and row["trajectories"] == 4
    _, rows = query(data, f"SELECT count(*) FROM loop_iterations WHERE run_id = '{result['run_id']}'")
    assert rows == [(1,)]
    with pytest.raises(Exception, match="pool.capasity"):
        resynthesis_loop(config={**common, "pool": {"capasity": 2}})


@pytest.mark.gpu
def test_grpo_with_vllm_rollouts(policy, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("vllm")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    from trajforge.rl.train import RLConfig, grpo_train
    from trajforge.evaluation.blueprints import heldout_blueprints
    from trajforge.simulation.local_model import load_hf

    data, model_dir = policy
    model, tokenizer = load_hf(str(model_dir))
    config = RLConfig(model=str(model_dir), output_dir=str(tmp_path / "rl"), rollout=SMALL_ROLLOUT,
                      grpo={**SMALL_GRPO, "use_vllm": True, "vllm_mode": "colocate",
                            "vllm_gpu_memory_utilization": 0.2})
    result = grpo_train(model, tokenizer, heldout_blueprints(data, "train", limit=2), config)
    assert result.steps == 1 and len(result.log.rollouts) == 4
    assert all(r.policy_tokens > 0 for _, r in result.log.rollouts)


@pytest.mark.gpu
def test_grpo_on_a_gpu_with_transformers_rollouts(policy, tmp_path):
    """Any causal LM on an accelerator, without vLLM: rollouts through ``model.generate`` on the
    device, GRPO in bf16, the updated weights stay on the device."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    from trajforge.rl.train import RLConfig, grpo_train
    from trajforge.evaluation.blueprints import heldout_blueprints
    from trajforge.simulation.local_model import load_hf

    data, model_dir = policy
    model, tokenizer = load_hf(str(model_dir))
    assert model.device.type == "cuda"
    config = RLConfig(model=str(model_dir), output_dir=str(tmp_path / "rl"), rollout=SMALL_ROLLOUT,
                      grpo={**SMALL_GRPO, "bf16": True})
    result = grpo_train(model, tokenizer, heldout_blueprints(data, "train", limit=2), config)
    assert result.steps == 1 and len(result.log.rollouts) == 4
    assert all(r.policy_tokens > 0 for _, r in result.log.rollouts)
    assert all(p.device.type == "cuda" for p in model.parameters())
    # (the weights move only where a group's rewards differ: GRPO's advantages are group-relative)
    assert any("loss" in row for row in result.history)
