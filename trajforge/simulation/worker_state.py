"""Process-wide worker state: everything a process keeps between the batches and episodes it runs.

- **Domains**, one per (name, size, seed), built on first use and shared by every thread, stage
  and caller of the process (build, evaluation, RL rollouts, the loop): the template is the
  costly part, and environments copy it.
- **Budgets**, one per build invocation: it starts from what the run spent before (its spend
  file) and takes in what other processes committed since.
- **Simulation contexts**, one per (invocation, thread, config): a long-lived event loop (litellm's
  async clients are bound to the loop that made them) and, when a role is model-backed, the
  gateway and the invocation's budget.

A forked worker starts with no contexts or budgets (its parent's event loops and their file
descriptors are not the child's to use); it keeps the domains, which are read-only templates.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from typing import TYPE_CHECKING

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import RunConfig

if TYPE_CHECKING:
    from trajforge.simulation.llm import Budget, Gateway

_LOCK = threading.Lock()
_DOMAINS: dict[tuple[str, int, int], Domain] = {}
_BUDGETS: dict[str, Budget] = {}  # invocation -> its budget in this process
_CONTEXTS: dict[tuple[str, int, str], SimulationContext] = {}  # (invocation, thread, config)


def shared_domain(name: str, size: int, seed: int) -> Domain:
    """This process's domain ``name`` of ``size`` and ``seed``, built on first use."""
    key = (name, size, seed)
    domain = _DOMAINS.get(key)
    if domain is None:
        with _LOCK:
            domain = _DOMAINS.get(key)
            if domain is None:
                domain = _DOMAINS[key] = load_domain(name, size, seed)
    return domain


def adopt_domain(domain: Domain) -> Domain:
    """Make ``domain`` this process's shared instance of its (name, size, seed), so stages that
    look a blueprint's domain up (``blueprint_domain``) play the instance a caller holds, also
    one no entry point registers (``trajforge domains check`` on a plug-in under test). An
    instance already shared for that key wins, and is returned."""
    key = (domain.name, domain.size, domain.seed)
    with _LOCK:
        return _DOMAINS.setdefault(key, domain)


def config_domain(config: RunConfig) -> Domain:
    """The domain a run config builds in; of a mixed build (``domain.names``), its first. The
    build's stages take each blueprint's own (``index_domain``, ``blueprint_domain``)."""
    return shared_domain(config.domain.all_names[0], config.domain.size, config.domain.seed)


def index_domain(config: RunConfig, index: int) -> Domain:
    """The domain of a run's blueprint ``index`` (``DomainConfig.domain_at``)."""
    return shared_domain(config.domain.domain_at(index), config.domain.size, config.domain.seed)


def blueprint_domain(blueprint: TaskBlueprint) -> Domain:
    """The domain a blueprint was generated in (and must be played in)."""
    env = blueprint.environment
    return shared_domain(env.domain, env.size, env.seed)


class SimulationContext:
    """What one thread needs to run the model-facing stages: the domain, one long-lived event
    loop, and (when a role is model-backed) the gateway and the invocation's budget."""

    def __init__(self, config: RunConfig, domain: Domain, budget: Budget | None = None,
                 share: int = 1) -> None:
        self.domain = domain
        self.loop = asyncio.new_event_loop()
        sim = config.simulation
        # a build's concurrency is split across the threads or processes that simulate
        self.concurrency = max(1, -(-sim.concurrency // share))
        self.budget: Budget | None = None
        self.gateway: Gateway | None = None
        self.closed = False
        if config.uses_models():
            from trajforge.simulation import llm

            self.budget = budget or llm.Budget(sim.gateway.max_cost_usd)
            self.gateway = llm.Gateway(sim.gateway, self.budget, random.Random(config.domain.seed),
                                       concurrency=self.concurrency)

    def exhausted(self) -> bool:
        return self.budget is not None and self.budget.exhausted()

    def close(self) -> None:
        """Shut the loop down as ``asyncio.run`` would: close the clients, cancel what is left."""
        if self.closed:
            return
        self.closed = True
        loop = self.loop
        try:
            if self.gateway is not None:
                loop.run_until_complete(self.gateway.aclose())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


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


def thread_context(config: RunConfig, invocation: str = "", budget: Budget | None = None) -> SimulationContext:
    """This thread's simulation context for the invocation, built on first use. Contexts of
    scripted runs hold only a loop and are kept for the thread's life; a model-backed one
    belongs to its invocation, and is closed by ``release_invocation`` (or, on a long-lived
    worker, when the same thread next works for another invocation). ``budget``: the
    invocation's (``invocation_budget``), for a model-backed run."""
    models = config.uses_models()
    thread = threading.get_ident()
    owner = invocation if models else ""
    # what the context depends on: the domain, the concurrency share and (with models) the rest
    what = (config.model_dump_json(exclude={"store", "orchestration", "diversity"}) if models
            else config.domain.model_dump_json())
    key = (owner, thread, f"{what}:{config.simulation.concurrency}:{config.store.workers}")
    domain = config_domain(config)
    with _LOCK:
        ctx = _CONTEXTS.get(key)
        # this thread is here, so its contexts of other invocations are idle: close them
        stale = [k for k in _CONTEXTS if k[1] == thread and k[0] and k[0] != owner]
        stale_contexts = [_CONTEXTS.pop(k) for k in stale]
        if ctx is None:
            ctx = _CONTEXTS[key] = SimulationContext(config, domain, budget, config.store.workers)
    for old in stale_contexts:
        old.close()
    return ctx


def release_invocation(invocation: str) -> None:
    """Close this process's contexts of a finished invocation and forget its budget (call it
    once none of its batches runs any more)."""
    with _LOCK:
        contexts = [_CONTEXTS.pop(k) for k in [k for k in _CONTEXTS if k[0] == invocation]]
        _BUDGETS.pop(invocation, None)
    for ctx in contexts:
        ctx.close()


def _forget_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _CONTEXTS.clear()
    _BUDGETS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
