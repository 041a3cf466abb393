"""Resynthesis: new tasks shaped like a given one (boundary-sample variants, after RODS).

A task the current policy solves only sometimes carries the most training signal; the loop
asks for more tasks *like it*. ``resynthesize`` reads the parent's shape from its domain's task
sampler (``plan_of``: intent kinds in order, which intent is redirected or has a revised fact,
which target is named by description, how the user authenticates), samples fresh drafts of that
shape for other users (``sample_planned``), composes them with a new persona and reworded
goal text, and keeps a variant only when

- its structural descriptors equal the parent's (tool topology, dependency depth, write and read
  counts, evidence burden per write, number of intents, revisions and redirects): the plan fixes
  the kinds, but a draw can still differ (a user with another number of entities changes the
  evidence burden of a described target), so the check is the contract, the plan only makes it
  likely;
- it authenticates another user than the parent (new entities, not a reworded copy);
- it is new (id differs from the parent's and from the other variants);
- its ground truth executes and passes ``validate_blueprint`` like any blueprint.

Variants run on the parent's environment (same domain size and seed): the loop rolls every
task of its pool out in one environment, and the template already holds hundreds of users,
so fresh entities need no other seed. Everything depends only on (parent id, seed): the same
call returns the same variants, so a loop passes a new seed each iteration (e.g. the iteration
number) to get new ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from trajforge.environments.base import Domain
from trajforge.errors import ConfigError, TaskRejected
from trajforge.generators.compose import compose_blueprint, validate_blueprint
from trajforge.generators.paraphrase import paraphrase_goal
from trajforge.schemas.blueprint import EnvironmentRef, Provenance, TaskBlueprint
from trajforge.schemas.ids import hash_seed

GENERATOR = "resynthesis"
VERSION = "2"  # 2: a variant keeps its parent's user behaviours (generators.behaviours)


@dataclass(frozen=True)
class ResynthesisResult:
    """What one resynthesis call made: accepted variants, and (reason code, detail) per rejected
    proposal. ``proposed`` counts every draft drawn, accepted or not."""

    parent_id: str
    accepted: list[TaskBlueprint] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    proposed: int = 0

    @property
    def acceptance_rate(self) -> float:
        return len(self.accepted) / self.proposed if self.proposed else 0.0


def variant_seed(parent_id: str, seed: int, attempt: int) -> int:
    """The seed of proposal ``attempt`` for ``parent_id``: independent of every other draw."""
    return hash_seed("resynthesis", parent_id, seed, attempt)


def _structure_diff(parent: TaskBlueprint, bp: TaskBlueprint) -> str:
    a, b = parent.structure.model_dump(), bp.structure.model_dump()
    return "; ".join(f"{k}: {b[k]} != {a[k]}" for k in a if a[k] != b[k])


def _auth_arguments(bp: TaskBlueprint, domain: Domain) -> dict[str, object] | None:
    return next((c.arguments for c in bp.ground_truth.calls if c.name in domain.auth_tools), None)


def resynthesize(parent: TaskBlueprint, domain: Domain, *, n: int, seed: int,
                 max_attempts: int = 50) -> ResynthesisResult:
    """Up to ``n`` validated variants of ``parent`` from at most ``max_attempts`` proposals.

    Raises ``ConfigError`` when ``domain`` is not the parent's environment or its task sampler
    cannot sample a planned shape (a domain opts in with ``plan_of`` and ``sample_planned``)."""
    if n < 0 or max_attempts < 0:
        raise ValueError(f"n and max_attempts must be >= 0 (got {n}, {max_attempts})")
    here = EnvironmentRef(domain=domain.name, size=domain.size, seed=domain.seed)
    if parent.environment != here:
        raise ConfigError("domain", f"blueprint {parent.id} runs on {parent.environment.model_dump()}, "
                                    f"not on the given domain {here.model_dump()}")
    sampler = domain.task_sampler()
    if not (hasattr(sampler, "plan_of") and hasattr(sampler, "sample_planned")):
        raise ConfigError("domain", f"the {domain.name} task sampler has no plan_of/sample_planned, "
                                    "so it cannot resynthesize variants")
    plan = sampler.plan_of(parent)
    parent_auth = _auth_arguments(parent, domain)
    accepted: list[TaskBlueprint] = []
    rejected: list[tuple[str, str]] = []
    seen = {parent.id}
    proposed = 0
    for attempt in range(max_attempts):
        if len(accepted) >= n:
            break
        proposed += 1
        vseed = variant_seed(parent.id, seed, attempt)
        rng = random.Random(vseed)
        try:
            draft = sampler.sample_planned(rng, plan)
            composed = compose_blueprint(domain, draft, rng, seed=vseed, index=attempt,
                                         generator=GENERATOR, version=VERSION,
                                         behaviours=parent.user.behaviours)
        except TaskRejected as exc:
            rejected.append((exc.reason, exc.detail))
            continue
        user = composed.user.model_copy(update={"goal": paraphrase_goal(composed.user.goal, rng,
                                                                          domain.prose)})
        bp = composed.model_copy(update={
            "id": TaskBlueprint.make_id(composed.environment, user, composed.ground_truth,
                                        composed.policy_rules),
            "user": user,
            "provenance": Provenance(generator=GENERATOR, version=VERSION, seed=vseed,
                                     index=attempt, parent_id=parent.id)})
        if bp.structure != parent.structure:
            rejected.append(("structure_mismatch", _structure_diff(parent, bp)))
            continue
        if parent_auth is not None and _auth_arguments(bp, domain) == parent_auth:
            rejected.append(("same_entities", "authenticates the parent's user"))
            continue
        if bp.id in seen:
            rejected.append(("duplicate", bp.id))
            continue
        check = validate_blueprint(bp, domain)
        if not check.ok:
            rejected.append((check.reason, check.detail))
            continue
        seen.add(bp.id)
        accepted.append(bp)
    return ResynthesisResult(parent_id=parent.id, accepted=accepted, rejected=rejected,
                             proposed=proposed)
