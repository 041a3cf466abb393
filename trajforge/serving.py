"""Builds the scripted-policy endpoint of ``trajforge serve-policy`` for a run config: the
config's blueprints (regenerated exactly as a build generates them), the domain, and the roles
that live outside ``simulation/`` (the proposer and the judge)."""

from __future__ import annotations

from typing import Any

from trajforge.environments.base import Domain
from trajforge.environments.registry import load_domain
from trajforge.errors import ConfigError
from trajforge.generators import generate_blueprints
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import RunConfig
from trajforge.simulation.serve import PolicyServer, ServerFaults
from trajforge.simulation.wording import Wording


def build_server(config: RunConfig, faults: ServerFaults, seed: int = 0,
                 wording: Wording | None = None) -> PolicyServer:
    if len(config.domain.all_names) > 1:
        raise ConfigError("domain.names", "serve-policy serves one domain; set domain.name, not names")
    domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    blueprints = {item.id: item for item in generate_blueprints(
        domain, config.generation, config.run_id(), 0, config.generation.n_blueprints)
        if isinstance(item, TaskBlueprint)}
    if config.generation.proposer is not None:  # and the tasks the scripted proposer makes
        from trajforge.generators.propose import scripted_blueprints

        blueprints.update((bp.id, bp) for bp in scripted_blueprints(
            domain, config.generation, 0, config.generation.n_blueprints))
    return PolicyServer(domain, blueprints, faults, seed, config.simulation.fault_kinds,
                        extra_roles=_extra_roles(config, domain), wording=wording)


def _extra_roles(config: RunConfig, domain: Domain) -> dict[str, Any]:
    from trajforge.generators.propose import scripted_proposer_role, scripted_reviewer_role
    from trajforge.verifiers.judge import scripted_judge_role

    return {"proposer": scripted_proposer_role(domain, config.generation),
            "reviewer": scripted_reviewer_role(), "judge": scripted_judge_role()}
