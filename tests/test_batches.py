"""The stage functions themselves: a scripted batch needs no LLM module and keeps no budget, and
``process_batch`` (the direct path) gives the rows the build flow commits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trajforge.config import load_config
from trajforge.simulation.worker_state import SimulationContext, config_domain, process_context
from trajforge.store import query
from trajforge.store.builds import process_batch

SCRIPT = """
import sys
from trajforge.config import load_config
from trajforge.simulation.worker_state import process_context
from trajforge.store.builds import process_batch
config = load_config(None, {"generation.n_blueprints": 6, "domain.size": 60})
with process_context(config) as ctx:
    rows, summary = process_batch(config, 0, 6, ctx)
assert summary.episodes > 0 and rows["trajectories"], summary
llm = sorted(m for m in sys.modules if m == "litellm" or m.startswith("litellm.")
             or m in ("trajforge.simulation.llm", "trajforge.simulation.llm_agent",
                      "trajforge.simulation.llm_user", "trajforge.generators.propose",
                      "trajforge.verifiers.judge"))
print(llm)
"""


def test_a_scripted_batch_imports_no_llm_module() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_scripted_context_has_no_budget_and_no_gateway(tmp_path: Path) -> None:
    config = load_config(None, {"store.out": str(tmp_path), "generation.n_blueprints": 4})
    with process_context(config, "some-invocation") as ctx, process_context(config, "another") as other:
        assert ctx.budget is None and ctx.gateway is None and not ctx.exhausted()
        assert other is ctx  # no per-invocation state
    model = load_config(None, {"store.out": str(tmp_path), "simulation.agents": ["llm"],
                               "simulation.agent_model.model": "openai/x",
                               "simulation.gateway.max_cost_usd": 1.0})
    own = SimulationContext(model, config_domain(model))
    try:
        assert own.budget is not None and own.budget.cap_usd == 1.0 and own.gateway is not None
    finally:
        own.close()


def test_process_batch_gives_the_rows_the_flow_commits(tmp_path: Path, prefect_api: str) -> None:
    from trajforge.flows.build import build

    config = load_config(None, {"store.out": str(tmp_path / "flow"), "generation.n_blueprints": 12,
                                "store.shard_size": 12, "domain.size": 80})
    build(config, quiet=True)
    with process_context(config) as ctx:
        rows, summary = process_batch(config, 0, 12, ctx)
    assert summary.stop == 12 and not summary.budget_stopped
    flow_ids = [r[0] for r in query(tmp_path / "flow", "SELECT id FROM trajectories ORDER BY id")[1]]
    assert sorted(t["id"] for t in rows["trajectories"]) == flow_ids
    flow_verdicts = query(tmp_path / "flow", 'SELECT id, passed FROM verdicts ORDER BY id')[1]
    assert sorted((v["id"], v["passed"]) for v in rows["verdicts"]) == flow_verdicts


def test_batches_on_two_threads_share_the_process_gate(tmp_path: Path) -> None:
    """Two batches submitted from two threads play on the context's one loop through its one
    gate: never more than the concurrency in flight, the first batch's episodes go first, and the
    second's take the slots the first one's tail frees (no drop to zero between them)."""
    import asyncio
    import threading
    import time

    from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer

    config = load_config(None, {"store.out": str(tmp_path), "simulation.concurrency": 3})
    events: list[tuple[str, int, int]] = []  # (batch, in flight, of them the first batch's)
    in_flight = {"a": 0, "b": 0}

    class Timed(EpisodePlayer):  # type: ignore[type-arg]
        async def play(self, job):  # type: ignore[no-untyped-def,override]
            in_flight[job.agent] += 1
            events.append((job.agent, sum(in_flight.values()), in_flight["a"]))
            await asyncio.sleep(0.05)
            in_flight[job.agent] -= 1
            return job

    with process_context(config) as ctx:
        player = Timed(lambda bp: ctx.domain, concurrency=99)
        from types import SimpleNamespace

        def blueprint(index: int) -> object:  # all the gate reads of a blueprint: its index
            return SimpleNamespace(provenance=SimpleNamespace(index=index))

        batches = {name: [EpisodeJob(blueprint(7 * k + i), i, None, agent=name)  # type: ignore[arg-type]
                          for i in range(7)] for k, name in enumerate(("a", "b"))}
        results: dict[str, list[object]] = {}

        def batch(name: str) -> None:
            results[name] = ctx.run(player.play_all(batches[name], lambda job: job.seed, gate=ctx.gate))

        first = threading.Thread(target=batch, args=("a",))
        first.start()
        time.sleep(0.02)  # the second batch comes while the first one plays
        second = threading.Thread(target=batch, args=("b",))
        second.start()
        first.join()
        second.join()
    assert results == {"a": list(range(7)), "b": list(range(7))}
    assert max(n for _, n, _ in events) == 3
    starts = [name for name, _, _ in events]
    assert starts == ["a"] * 7 + ["b"] * 7  # first come, first played
    # the first "b" episodes start in the slots the last "a" one leaves free, while it plays
    assert events[7][2] == 1 and events[8][1] == 3


def test_each_episode_is_checked_as_it_ends_with_the_verdicts_of_a_whole_batch_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: a batch's checks run as its episodes end (on the episode loop), not all at once
    after the last one, and give exactly what checking the whole batch afterwards gives."""
    import time

    from trajforge.generators.batch import generate_batch
    from trajforge.simulation import batch as simulation_batch
    from trajforge.simulation.episodes import EpisodePlayer
    from trajforge.verifiers.batch import verify_episode

    config = load_config(None, {"store.out": str(tmp_path), "generation.n_blueprints": 12,
                                "simulation.concurrency": 4})
    checked_at: list[float] = []
    ended_at: list[float] = []
    real_check, real_play = simulation_batch.verify_episode, EpisodePlayer.play

    def check(*args: Any) -> Any:
        checked_at.append(time.perf_counter())
        return real_check(*args)

    async def play(self: EpisodePlayer, job: Any) -> Any:
        played = await real_play(self, job)
        ended_at.append(time.perf_counter())
        return played

    monkeypatch.setattr(simulation_batch, "verify_episode", check)
    monkeypatch.setattr(EpisodePlayer, "play", play)
    generated = generate_batch(config, 0, 12, None)
    with process_context(config) as ctx:
        simulated = simulation_batch.simulate_batch(config, generated.blueprints, generated.stop, ctx)
    assert len(checked_at) == len(ended_at) == len(simulated.trajectories) >= 20
    assert min(checked_at) < max(ended_at)  # the first episode was checked before the last ended
    by_id = {bp.id: bp for bp in generated.blueprints}
    whole = [v for t in simulated.trajectories for v in verify_episode(config, t, by_id[t.blueprint_id])]
    assert [v.model_dump() for v in simulated.verdicts] == [v.model_dump() for v in whole]
