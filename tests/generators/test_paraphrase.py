"""Near-copies: a paraphrased blueprint is the same task reworded, points at its source, and a
build with ``near_copy_share`` keeps its originals identical to a build without."""

from __future__ import annotations

import random

import pytest

from trajforge.environments.retail import RetailDomain
from trajforge.generators import generate_blueprints, validate_blueprint
from trajforge.generators.paraphrase import paraphrase_blueprint, paraphrase_goal
from trajforge.schemas import RunConfig, TaskBlueprint
from trajforge.schemas.config import GenerationConfig

RUN = "run_para"


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


def test_paraphrase_rewords_but_keeps_the_task(domain: RetailDomain) -> None:
    originals = [b for b in generate_blueprints(domain, GenerationConfig(), RUN, 0, 40)
                 if isinstance(b, TaskBlueprint)]
    changed = 0
    for i, bp in enumerate(originals):
        copy = paraphrase_blueprint(bp, random.Random(i), seed=i, index=1000 + i, prose=domain.prose)
        assert validate_blueprint(copy, domain).ok
        assert copy.id != bp.id and copy.provenance.parent_id == bp.id
        assert copy.provenance.generator == "paraphrase"
        assert copy.ground_truth == bp.ground_truth and copy.user.intents == bp.user.intents
        assert copy.user.known_facts == bp.user.known_facts
        assert copy.user.persona.style != bp.user.persona.style
        changed += copy.user.goal != bp.user.goal
        for value in bp.user.known_facts.values():  # the facts are still all there
            if value in bp.user.goal:
                assert value in copy.user.goal
    assert changed == len(originals)


def test_goal_paraphrase_reorders_and_swaps() -> None:
    goal = ("You are a customer (email: a@example.com). You want: (1) I want to return the Lamp. "
            "[order: #W1, items: the Lamp, payment: my gift card] (2) Can you cancel one of my orders? "
            "[order: #W2, reason: no longer needed]")
    outs = {paraphrase_goal(goal, random.Random(s), RetailDomain.prose) for s in range(20)}
    assert len(outs) > 10
    assert all("a@example.com" in o and "#W1" in o and "#W2" in o for o in outs)
    assert all(not o.startswith("You are a customer (email: a@example.com). You want:") for o in outs)


def test_near_copy_share_leaves_originals_and_default_run_id_alone(domain: RetailDomain) -> None:
    plain = list(generate_blueprints(domain, GenerationConfig(), RUN, 0, 60))
    mixed = list(generate_blueprints(domain, GenerationConfig(near_copy_share=0.3), RUN, 0, 60))
    copies = [b for b in mixed if isinstance(b, TaskBlueprint) and b.provenance.generator == "paraphrase"]
    assert 8 <= len(copies) <= 30
    by_index = {b.provenance.index: b for b in plain if isinstance(b, TaskBlueprint)}
    for b in mixed:
        if isinstance(b, TaskBlueprint) and b.provenance.generator != "paraphrase":
            assert by_index[b.provenance.index] == b
    ids = {b.id for b in mixed if isinstance(b, TaskBlueprint)}
    assert all(c.provenance.parent_id in ids or c.provenance.parent_id in {p.id for p in by_index.values()}
               for c in copies)
    assert RunConfig().run_id() == RunConfig(generation=GenerationConfig(near_copy_share=0.0)).run_id()
    assert RunConfig().run_id() != RunConfig(generation=GenerationConfig(near_copy_share=0.3)).run_id()
