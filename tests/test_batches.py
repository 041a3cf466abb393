"""The stage functions themselves: a scripted batch needs no LLM module and keeps no budget, and
``process_batch`` (the direct path) gives the rows the build flow commits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from trajforge.config import load_config
from trajforge.simulation.worker_state import SimulationContext, config_domain, thread_context
from trajforge.store import query
from trajforge.store.builds import process_batch

SCRIPT = """
import sys
from trajforge.config import load_config
from trajforge.simulation.worker_state import thread_context
from trajforge.store.builds import process_batch
config = load_config(None, {"generation.n_blueprints": 6, "domain.size": 60})
rows, summary = process_batch(config, 0, 6, thread_context(config))
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
    ctx = thread_context(config, "some-invocation")
    assert ctx.budget is None and ctx.gateway is None and not ctx.exhausted()
    assert thread_context(config, "another") is ctx  # no per-invocation state
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
    rows, summary = process_batch(config, 0, 12, thread_context(config))
    assert summary.stop == 12 and not summary.budget_stopped
    flow_ids = [r[0] for r in query(tmp_path / "flow", "SELECT id FROM trajectories ORDER BY id")[1]]
    assert sorted(t["id"] for t in rows["trajectories"]) == flow_ids
    flow_verdicts = query(tmp_path / "flow", 'SELECT id, passed FROM verdicts ORDER BY id')[1]
    assert sorted((v["id"], v["passed"]) for v in rows["verdicts"]) == flow_verdicts
