"""Process-wide worker state: everything a process keeps between the batches and episodes it runs.

- **Domains**, one per (name, size, seed), built on first use and shared by every thread, stage
  and caller of the process (build, evaluation, RL rollouts, the loop): the template is the
  costly part, and environments copy it. A build with fresh worlds (``domain.fresh_every``)
  meets thousands of seeds, so the built ones are kept in a bounded least-recently-used table
  (a dropped world is rebuilt, identically, on its next use); adopted instances are never dropped.
- **Budgets**, one per build invocation: it starts from what the run spent before (its spend
  file) and takes in what other processes committed since.
- **Simulation contexts**, one per (invocation, config): a long-lived event loop on a thread of its
  own (the gateway's HTTP clients are bound to the loop that made them), one gate of the process's
  share of the concurrency, and, when a role is model-backed, the gateway and the invocation's
  budget. Every batch the process runs at once, on whichever of its threads, plays its episodes on
  that one loop through that one gate (``simulation.gate``, which admits them by blueprint index:
  an earlier batch first): when one batch's last episodes finish, the next batch's are already
  waiting for their slots, so a model server never idles at a batch boundary.

A forked worker starts with no contexts or budgets (its parent's event loops and their file
descriptors are not the child's to use); it keeps the domains, which are read-only templates.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import sys
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.simulation.gate import OrderedGate

if TYPE_CHECKING:
    from trajforge.simulation.llm import Budget, Gateway

_LOCK = threading.Lock()
MAX_BUILT_DOMAINS = 64  # built worlds kept per process (the rest are rebuilt when met again)
_DOMAINS: OrderedDict[tuple[str, int, int], Domain] = OrderedDict()  # built, least recent first
_ADOPTED: dict[tuple[str, int, int], Domain] = {}  # a caller's instances, cannot be rebuilt
_BUDGETS: dict[str, Budget] = {}  # invocation -> its budget in this process
_CONTEXTS: dict[tuple[str, str], SimulationContext] = {}  # (invocation, config)


@dataclass
class _Steady:
    loops: int = 0  # model-backed contexts open in this process
    interval_s: float = 0.0  # the switch interval before the first of them


_STEADY = _Steady()
_STEADY_LOCK = threading.Lock()  # not ``_LOCK``: contexts are made while it is held
SWITCH_INTERVAL_S = 0.001  # how long another thread may hold the interpreter lock while the loop waits


def _steady_loop_start() -> None:
    """While a model-backed episode loop runs in this process, keep the rest of the process from
    stopping it (issue 21: each stop leaves answers unread, and the model server sees in flight
    fall by as many):

    - what the process holds when the first such loop starts (imports, domains, config: hundreds
      of thousands of objects) is kept out of the collector's full passes (``gc.freeze``; again at
      each batch's start, ``process_context``, for what earlier batches left alive); a full pass
      over them stopped every thread for 130-250 ms, and in flight fell from 64 to 33-49;
    - the batch threads beside the loop (blueprint generation, rows for the store) give the
      interpreter lock up after ``SWITCH_INTERVAL_S``, not Python's default 5 ms: the loop needs
      it back after every socket read and write, and waited up to 5 ms each time (stops of 40-90
      ms while a batch was generated or written).

    Both are undone when the last such context closes (``gc.unfreeze``, so nothing stays
    uncollectable). Measured at 300 conversations, a gate of 64 and 75-blueprint batches, with
    the recogniser read before the loop starts (``SimulationContext``): lowest 100 ms mean in
    flight 44.6 -> 62.3, the longest stretch below 90% of the gate 3 ms."""
    with _STEADY_LOCK:
        if _STEADY.loops == 0:
            _STEADY.interval_s = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        _STEADY.loops += 1
        gc.freeze()


def _steady_loop_end() -> None:
    """Undo ``_steady_loop_start`` once the last model-backed context of the process closes."""
    with _STEADY_LOCK:
        _STEADY.loops -= 1
        if _STEADY.loops == 0:
            gc.unfreeze()
            sys.setswitchinterval(_STEADY.interval_s)


T = TypeVar("T")


def shared_domain(name: str, size: int, seed: int) -> Domain:
    """This process's domain ``name`` of ``size`` and ``seed``, built on first use."""
    key = (name, size, seed)
    found = _ADOPTED.get(key) or _DOMAINS.get(key)
    if found is not None and len(_DOMAINS) < MAX_BUILT_DOMAINS:
        return found  # the hot path, lock-free: below the bound nothing is dropped, recency is moot
    with _LOCK:
        domain = _ADOPTED.get(key) or _DOMAINS.get(key)
        if domain is None:
            domain = _DOMAINS[key] = load_domain(name, size, seed)
            while len(_DOMAINS) > MAX_BUILT_DOMAINS:
                _DOMAINS.popitem(last=False)
        elif key in _DOMAINS:
            _DOMAINS.move_to_end(key)
    return domain


def adopt_domain(domain: Domain) -> Domain:
    """Make ``domain`` this process's shared instance of its (name, size, seed), so stages that
    look a blueprint's domain up (``blueprint_domain``) play the instance a caller holds, also
    one no entry point registers (``trajforge domains check`` on a plug-in under test). An
    instance already shared for that key wins, and is returned."""
    key = (domain.name, domain.size, domain.seed)
    with _LOCK:
        shared = _ADOPTED.get(key) or _DOMAINS.pop(key, None) or domain
        _ADOPTED[key] = shared
        return shared


def config_domain(config: RunConfig) -> Domain:
    """The domain a run config builds in; of a mixed build (``domain.names``), its first. The
    build's stages take each blueprint's own (``index_domain``, ``blueprint_domain``)."""
    return shared_domain(config.domain.all_names[0], config.domain.size, config.domain.seed_at(0))


def index_domain(config: RunConfig, index: int) -> Domain:
    """The domain of a run's blueprint ``index`` (``DomainConfig.domain_at``)."""
    return shared_domain(config.domain.domain_at(index), config.domain.size, config.domain.seed_at(index))


def blueprint_domain(blueprint: TaskBlueprint) -> Domain:
    """The domain a blueprint was generated in (and must be played in)."""
    env = blueprint.environment
    return shared_domain(env.domain, env.size, env.seed)


class SimulationContext:
    """What the model-facing stages of a process need: the domain, one long-lived event loop
    running on a thread of its own, the gate that bounds the episodes (and judge calls) in flight
    over every batch that uses the context, and (when a role is model-backed) the gateway and the
    invocation's budget. ``share``: how many processes split the configured concurrency."""

    def __init__(self, config: RunConfig, domain: Domain, budget: Budget | None = None,
                 share: int = 1) -> None:
        self.domain = domain
        self.loop = asyncio.new_event_loop()
        sim = config.simulation
        self.concurrency = max(1, -(-sim.concurrency // share))
        self.gate = OrderedGate(self.concurrency)  # binds to the loop on first use
        self.budget: Budget | None = None
        self.gateway: Gateway | None = None
        self.closed = False
        self.users = 0  # batches running on it now (``process_context``)
        self._thread = threading.Thread(target=self.loop.run_forever, name="trajforge-episodes",
                                        daemon=True)
        self._thread.start()
        self.steadies_loop = config.uses_models()
        if self.steadies_loop:
            from trajforge.environments.dialogue.model import load_models
            from trajforge.simulation import llm

            # read before the first episode ends: on the loop, the first check's read of the
            # recogniser's weights stopped every conversation for 165-300 ms (issue 21)
            load_models()
            self.budget = budget or llm.Budget(sim.gateway.max_cost_usd)
            self.gateway = llm.Gateway(sim.gateway, self.budget, random.Random(config.domain.seed),
                                       concurrency=self.concurrency)
            _steady_loop_start()  # last: a context that failed to be made never ends it

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the context's loop and wait for its result (from any thread but
        the loop's own)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def exhausted(self) -> bool:
        return self.budget is not None and self.budget.exhausted()

    def close(self) -> None:
        """Shut the loop down as ``asyncio.run`` would (close the clients, cancel what is left),
        then stop its thread."""
        if self.closed:
            return
        self.closed = True
        try:
            self.run(self._shutdown())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()
            if self.steadies_loop:
                _steady_loop_end()

    async def _shutdown(self) -> None:
        if self.gateway is not None:
            await self.gateway.aclose()
        current = asyncio.current_task()
        pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await self.loop.shutdown_asyncgens()


def invocation_budget(config: RunConfig, invocation: str, spent_usd: float) -> Budget | None:
    """The budget of build invocation ``invocation`` in this process (``None`` for a run
    without models). ``spent_usd`` is what the run has spent so far by its spend file, over every
    earlier invocation and every process: the budget starts from it and, on every later call,
    takes it in."""
    if not config.uses_models():
        return None
    from trajforge.simulation import llm

    with _LOCK:
        budget = _BUDGETS.get(invocation)
        if budget is None:
            budget = _BUDGETS[invocation] = llm.Budget(config.simulation.gateway.max_cost_usd, spent_usd)
        else:
            budget.at_least(spent_usd)
    return budget


def concurrency_share(runner: str, workers: int) -> int:
    """How many processes split a build's ``simulation.concurrency``: one for the ``threads``
    runner (its batches share the process's context), ``workers`` for the others."""
    return 1 if runner == "threads" else max(1, workers)


@contextmanager
def process_context(config: RunConfig, invocation: str = "", budget: Budget | None = None,
                    share: int = 1) -> Iterator[SimulationContext]:
    """This process's simulation context for the invocation, built on first use and held for the
    ``with`` block. Contexts of scripted runs hold no model state and are kept for the process's
    life; a model-backed one belongs to its invocation, and is closed by ``release_invocation``
    (or, on a long-lived worker, once no batch uses it and a batch of another invocation starts).
    ``budget``: the invocation's (``invocation_budget``), for a model-backed run; ``share``:
    ``concurrency_share``."""
    models = config.uses_models()
    owner = invocation if models else ""
    # what the context depends on: the domain, the concurrency share and (with models) the rest
    what = (config.model_dump_json(exclude={"store", "orchestration", "diversity"}) if models
            else config.domain.model_dump_json())
    key = (owner, f"{what}:{config.simulation.concurrency}:{share}")
    domain = config_domain(config)
    with _LOCK:
        ctx = _CONTEXTS.get(key)
        # contexts of other invocations that no batch uses are done with: close them
        stale = [k for k, c in _CONTEXTS.items() if k[0] and k[0] != owner and not c.users]
        stale_contexts = [_CONTEXTS.pop(k) for k in stale]
        if ctx is None:
            ctx = _CONTEXTS[key] = SimulationContext(config, domain, budget, share)
        ctx.users += 1
        if ctx.steadies_loop:  # what earlier batches left alive joins the heap kept out of full passes
            gc.freeze()
    for old in stale_contexts:
        old.close()
    try:
        yield ctx
    finally:
        with _LOCK:
            ctx.users -= 1


def places_granted(invocation: str) -> int:
    """How many episode places the gates of this process's contexts of ``invocation`` have
    granted so far (0 before its first batch, and in a process that runs none of its batches)."""
    with _LOCK:
        return sum(c.gate.granted for k, c in _CONTEXTS.items() if k[0] == invocation)


def release_invocation(invocation: str) -> None:
    """Close this process's contexts of a finished invocation and forget its budget (call it
    once none of its batches runs any more)."""
    with _LOCK:
        contexts = [_CONTEXTS.pop(k) for k in [k for k in _CONTEXTS if k[0] == invocation]]
        _BUDGETS.pop(invocation, None)
    for ctx in contexts:
        ctx.close()


def _forget_after_fork() -> None:
    global _LOCK, _STEADY_LOCK
    _LOCK, _STEADY_LOCK = threading.Lock(), threading.Lock()
    if _STEADY.loops:  # the parent's loops are not the child's
        _STEADY.loops = 0
        gc.unfreeze()
        sys.setswitchinterval(_STEADY.interval_s)
    _CONTEXTS.clear()
    _BUDGETS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
