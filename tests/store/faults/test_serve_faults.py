"""Issue 19, item 5: ``serve-policy``'s behaviour faults, through real litellm over loopback.

Empty completions are retried and every retry is counted; a user simulator speaking as the agent
is caught and blamed on the simulator; a fixed-length stall delays an answer without failing it;
instructions planted in tool output reach the model as data and the scripted agent does not act
on them (the same tool calls as without them).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("litellm")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from trajforge.config import load_config
from trajforge.serving import INJECTION, BehaviourFaults, MisbehavingPolicyServer, build_server, inject
from trajforge.simulation.llm import quiet_provider_logs
from trajforge.simulation.serve import PolicyServer, ServerFaults, serve
from trajforge.store.builds import run_build
from trajforge.store.catalog import query

N = 6
BASE = {"domain.size": 80, "generation.n_blueprints": N, "simulation.concurrency": 16,
        "simulation.gateway.call_timeout_s": 10, "simulation.gateway.backoff_initial_s": 0.01,
        "simulation.gateway.backoff_max_s": 0.05}


@contextmanager
def endpoint(behaviour: BehaviourFaults) -> Iterator[tuple[str, MisbehavingPolicyServer]]:
    """The policy server with ``behaviour``, serving on a loopback port from a thread."""
    server = build_server(load_config(None, BASE), ServerFaults(), 0, None, behaviour)
    assert isinstance(server, MisbehavingPolicyServer)
    with serving(server) as url:
        yield url, server


@contextmanager
def serving(server: PolicyServer) -> Iterator[str]:
    """``server`` on a loopback port, from a thread; yields its ``/v1`` URL."""
    loop = asyncio.new_event_loop()
    bound: list[int] = []
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        task = loop.create_task(serve(server, "127.0.0.1", 0, lambda port: (bound.append(port), ready.set())))
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        yield f"http://127.0.0.1:{bound[0]}/v1"
    finally:
        for task in asyncio.all_tasks(loop):
            loop.call_soon_threadsafe(task.cancel)
        thread.join(10)


def _build(out: Path, agent_url: str | None = None, user_url: str | None = None, **values: Any):
    """A direct build: the agent (and the user) served by ``*_url`` when given, else scripted."""
    quiet_provider_logs()
    settings: dict[str, Any] = {**BASE, "store.out": str(out), "simulation.agents": ["oracle"], **values}
    if agent_url is not None:
        settings.update({"simulation.agent_model.model": "openai/oracle",
                         "simulation.agent_model.api_base": agent_url, "simulation.agents": ["llm"]})
    if user_url is not None:
        settings.update({"simulation.user_model.model": "openai/user", "simulation.user_model.api_base": user_url})
    return run_build(load_config(None, settings))


def _tool_calls(out: Path) -> dict[str, list[tuple[str, str]]]:
    """Per blueprint, the agent's tool calls (name, arguments) in order."""
    return {blueprint_id: [(c["name"], c["arguments"]) for m in messages for c in (m.get("tool_calls") or [])]
            for blueprint_id, messages in query(out, "SELECT blueprint_id, messages FROM trajectories")[1]}


def test_planted_instructions_in_tool_output_are_data_not_orders(tmp_path: Path) -> None:
    planted = inject([{"role": "tool", "content": '{"status": "pending"}'}, {"role": "tool", "content": "ok"}])
    assert INJECTION in planted[0]["content"] and planted[1]["content"].endswith(INJECTION)
    with endpoint(BehaviourFaults(rate_injection=1.0)) as (url, server):
        attacked = _build(tmp_path / "attacked", url)
        assert server.behaviour_counts["injected"] > 0
    scripted = _build(tmp_path / "scripted")
    assert _tool_calls(attacked.out) == _tool_calls(scripted.out)  # nothing extra was cancelled
    passed = query(attacked.out, "SELECT count(*) FILTER (WHERE passed), count(*) FROM outcomes")[1]
    assert passed == [(N, N)]


def test_empty_completions_are_retried_and_every_retry_is_counted(tmp_path: Path) -> None:
    with endpoint(BehaviourFaults(rate_empty=0.3)) as (url, server):
        result = _build(tmp_path / "out", url)
        empties = server.behaviour_counts["empty"]
    assert empties > 0
    retries, passed = query(result.out, "SELECT sum(retries), count(*) FILTER (WHERE o.passed) FROM "
                                        "trajectories t JOIN outcomes o ON o.trajectory_id = t.id")[1][0]
    assert (retries, passed) == (empties, N)


def test_a_user_simulator_speaking_as_the_agent_is_caught(tmp_path: Path) -> None:
    with endpoint(BehaviourFaults(rate_user_as_agent=1.0)) as (url, server):
        result = _build(tmp_path / "out", user_url=url)
        assert server.behaviour_counts["user_as_agent"] > 0
    endings = query(result.out, "SELECT termination, count(*) FROM trajectories GROUP BY 1")[1]
    assert endings == [("user_error", N)]  # kept, and blamed on the simulator
    errors = [e for (e,) in query(result.out, "SELECT error FROM trajectories")[1]]
    assert all("agent" in (e or "") for e in errors), errors[:2]


def test_a_fixed_stall_delays_the_answer_and_does_not_fail_it() -> None:
    server = build_server(load_config(None, BASE), ServerFaults(), 0, None,
                          BehaviourFaults(rate_stall=1.0, stall_s=0.3))
    began = time.perf_counter()
    status, body, _ = asyncio.run(server.chat({"model": "echo", "messages": []}, {}))
    assert time.perf_counter() - began >= 0.3
    assert status == 200 and body["choices"][0]["message"]["content"] == "ok"


def test_answers_take_a_jittered_latency_and_the_timeline_names_each_request_episode() -> None:
    """``--latency-jitter-ms``: each answer's latency is drawn from latency +- jitter (so a wave of
    conversations does not come back at one instant), and the ``/stats`` timeline says which
    episode each request belonged to (benchmarks tell conversations apart by it)."""
    import json
    import urllib.request

    server = build_server(load_config(None, BASE), ServerFaults(latency_s=0.2, latency_jitter_s=0.15), 0)
    with serving(server) as url:
        for i in range(8):
            request = urllib.request.Request(
                f"{url}/chat/completions", data=json.dumps({"model": "echo", "messages": []}).encode(),
                headers={"Content-Type": "application/json", "X-Trajforge-Episode": f"bp-{i % 2};0"})
            with urllib.request.urlopen(request, timeout=10) as answer:
                assert json.loads(answer.read())["choices"][0]["message"]["content"] == "ok"
    timeline = server.stats.timeline
    assert [(d, e) for _, d, e in timeline] == [(d, f"bp-{i % 2};0") for i in range(8) for d in (+1, -1)]
    waits = [timeline[k + 1][0] - timeline[k][0] for k in range(0, len(timeline), 2)]
    assert all(0.05 <= w < 0.4 for w in waits)
    assert max(waits) - min(waits) > 0.02  # drawn, not fixed
