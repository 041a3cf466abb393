"""While a model-backed simulation context is open, the process keeps from stopping its episode
loop: the heap it started with stays out of the collector's full passes and other threads give
the interpreter lock up sooner; both are undone when the last such context closes (issue 21: a
full pass over the imports stopped the loop for 130-250 ms, and the model server saw in flight
fall by a third)."""

from __future__ import annotations

import gc
import sys

from trajforge.config import load_config
from trajforge.simulation import worker_state
from trajforge.simulation.worker_state import SWITCH_INTERVAL_S, SimulationContext, config_domain

MODELS = {"simulation.agents": ["llm"], "simulation.agent_model.model": "openai/oracle",
          "simulation.agent_model.api_base": "http://127.0.0.1:9/v1"}


def test_a_model_backed_context_steadies_its_loop_until_the_last_one_closes() -> None:
    open_before, interval_before = worker_state._STEADY.loops, sys.getswitchinterval()
    config = load_config(None, MODELS)
    first = SimulationContext(config, config_domain(config))
    second = SimulationContext(config, config_domain(config))
    try:
        assert gc.get_freeze_count() > 0
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S
        first.close()
        assert gc.get_freeze_count() > 0  # the other one still runs
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S
    finally:
        first.close()
        second.close()
    assert worker_state._STEADY.loops == open_before
    if open_before == 0:
        assert gc.get_freeze_count() == 0  # nothing stays out of collection
        assert sys.getswitchinterval() == interval_before


def test_a_scripted_context_leaves_the_process_alone() -> None:
    frozen, interval = gc.get_freeze_count(), sys.getswitchinterval()
    config = load_config(None, {})
    ctx = SimulationContext(config, config_domain(config))
    try:
        assert (gc.get_freeze_count(), sys.getswitchinterval()) == (frozen, interval)
    finally:
        ctx.close()
