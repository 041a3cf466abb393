"""Fresh worlds (``domain.fresh_every``): each group of blueprints plays in a world of its own, so
no account or id recurs across groups (issue 18: data a small model cannot memorise)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from trajforge.config import load_config
from trajforge.errors import ConfigError
from trajforge.schemas.config import DomainConfig, RunConfig
from trajforge.serving import build_server
from trajforge.simulation import worker_state
from trajforge.simulation.serve import ServerFaults
from trajforge.simulation.worker_state import blueprint_domain, process_context, shared_domain
from trajforge.store.builds import process_batch


def test_seed_at_is_the_seed_without_fresh_worlds_and_one_per_group_with() -> None:
    one = DomainConfig(seed=3)
    assert {one.seed_at(i) for i in range(50)} == {3}
    fresh = DomainConfig(seed=3, fresh_every=2)
    seeds = [fresh.seed_at(i) for i in range(40)]
    assert seeds[0::2] == seeds[1::2]  # one world per pair
    assert len(set(seeds)) == 20 and all(0 <= s < 2**31 for s in seeds)
    assert seeds == [DomainConfig(seed=3, fresh_every=2).seed_at(i) for i in range(40)]  # stable
    assert fresh.seed_at(0) != DomainConfig(seed=4, fresh_every=2).seed_at(0)


def test_run_ids_from_before_the_field_are_kept() -> None:
    # the ids of the commit before fresh_every existed (dedfed4)
    assert RunConfig().run_id() == "run_a3d5cad5061a3aed"
    assert RunConfig.model_validate({"domain": {"name": "banking", "size": 20}}).run_id() == "run_381a251b2d96760b"
    assert RunConfig.model_validate({"domain": {"fresh_every": 1}}).run_id() != RunConfig().run_id()


def test_near_copies_need_one_world() -> None:
    with pytest.raises(ValidationError, match="near_copy_share needs one world"):
        RunConfig.model_validate({"domain": {"fresh_every": 1}, "generation": {"near_copy_share": 0.2}})


def test_a_fresh_world_build_plays_and_verifies_every_blueprint_in_its_own_world(tmp_path: Path) -> None:
    import json

    config = load_config(None, {"store.out": str(tmp_path), "generation.n_blueprints": 12,
                                "domain.fresh_every": 1, "domain.size": 20, "generation.max_intents": 1})
    with process_context(config) as ctx:
        rows, summary = process_batch(config, 0, 12, ctx)
    blueprints = rows["blueprints"]
    seeds = [b["env_seed"] for b in blueprints]
    assert summary.stop == 12 and len(blueprints) >= 10 and len(set(seeds)) == len(seeds)
    assert seeds == [config.domain.seed_at(b["gen_index"]) for b in blueprints]
    # the oracle passes in its blueprint's world, and the faulty agent fails there
    agent = {t["id"]: t["agent"] for t in rows["trajectories"]}
    passed = {v["trajectory_id"]: v["trajectory_passed"] for v in rows["verdicts"]}
    oracle = [passed[t] for t, a in agent.items() if a == "scripted:oracle"]
    faulty = [passed[t] for t, a in agent.items() if a != "scripted:oracle"]
    assert len(oracle) == len(blueprints) and all(oracle)
    assert faulty and not any(faulty)
    # every blueprint acts on an account of its own world, and no account recurs
    owners = []
    for b in blueprints:
        domain = shared_domain(b["domain"], b["env_size"], b["env_seed"])
        found = {domain.account_owner(domain.template, json.loads(c["arguments"])) for c in b["calls"]} - {None}
        assert len(found) == 1
        owners += found
    assert len(set(owners)) == len(owners)


def test_built_worlds_are_bounded_and_rebuilt_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_state, "MAX_BUILT_DOMAINS", 3)
    first = shared_domain("retail", 12, 101)
    for seed in range(102, 106):
        shared_domain("retail", 12, seed)
    assert len(worker_state._DOMAINS) <= 3
    again = shared_domain("retail", 12, 101)
    assert again is not first and again.hasher.hash(again.template) == first.hasher.hash(first.template)


def test_an_adopted_domain_is_never_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    from trajforge.environments.retail import RetailDomain

    monkeypatch.setattr(worker_state, "MAX_BUILT_DOMAINS", 2)
    mine = worker_state.adopt_domain(RetailDomain(11, 7))
    for seed in range(200, 205):
        shared_domain("retail", 11, seed)
    assert shared_domain("retail", 11, 7) is mine


def test_serve_policy_refuses_fresh_worlds() -> None:
    config = RunConfig.model_validate({"domain": {"fresh_every": 1}})
    with pytest.raises(ConfigError, match="fresh_every"):
        build_server(config, ServerFaults())


def test_blueprint_domain_is_the_blueprints_world(tmp_path: Path) -> None:
    config = load_config(None, {"store.out": str(tmp_path), "generation.n_blueprints": 3,
                                "domain.fresh_every": 1, "domain.size": 20})
    from trajforge.generators.batch import generate_batch

    for bp in generate_batch(config, 0, 3).blueprints:
        assert blueprint_domain(bp).seed == bp.environment.seed == config.domain.seed_at(bp.provenance.index)
