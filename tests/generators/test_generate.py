"""The programmatic generator: determinism, validation, tamper detection, structure, knobs."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from trajforge.environments.retail import RetailDomain
from trajforge.generators import blueprint_seed, generate_blueprints, validate_blueprint
from trajforge.schemas import GroundTruthCall, TaskBlueprint, ToolCall
from trajforge.schemas.blueprint import Style
from trajforge.schemas.config import GenerationConfig

RUN = "run_gen"
N = 300


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture(scope="module")
def blueprints(domain: RetailDomain) -> list[TaskBlueprint]:
    items = list(generate_blueprints(domain, GenerationConfig(), RUN, 0, N))
    assert len(items) == N
    out = [b for b in items if isinstance(b, TaskBlueprint)]
    assert len(out) >= 0.9 * N
    return out


def _generate(domain: RetailDomain, config: GenerationConfig, start: int, stop: int) -> list[Any]:
    return list(generate_blueprints(domain, config, RUN, start, stop))


def _with_calls(bp: TaskBlueprint, calls: list[GroundTruthCall]) -> TaskBlueprint:
    return bp.model_copy(update={"ground_truth": bp.ground_truth.model_copy(update={"calls": tuple(calls)})})


# --- determinism ------------------------------------------------------------------------------

def test_same_seed_and_index_give_identical_blueprints(domain: RetailDomain,
                                                       blueprints: list[TaskBlueprint]) -> None:
    first = _generate(domain, GenerationConfig(), 0, 40)
    again = _generate(domain, GenerationConfig(), 0, 40)
    assert first == again
    made_with_the_rest = [b for b in blueprints if b.provenance.index < 40]  # the module's 300
    assert [b for b in first if isinstance(b, TaskBlueprint)] == made_with_the_rest
    # another domain instance built from the same (size, seed) changes nothing
    assert _generate(RetailDomain(300, 0), GenerationConfig(), 0, 40) == first


def test_blueprints_do_not_depend_on_the_range_they_are_generated_in(domain: RetailDomain) -> None:
    whole = _generate(domain, GenerationConfig(), 0, 60)
    pieces = (_generate(domain, GenerationConfig(), 0, 17) + _generate(domain, GenerationConfig(), 17, 18)
              + _generate(domain, GenerationConfig(), 18, 60))
    assert pieces == whole
    backwards = [x for start in range(55, -5, -5) for x in _generate(domain, GenerationConfig(), start, start + 5)]
    assert sorted(backwards, key=lambda b: b.provenance.index) == whole
    assert [b.provenance.index for b in whole] == list(range(60))
    assert [b.provenance.seed for b in whole] == [blueprint_seed(0, i) for i in range(60)]


def test_other_seeds_give_other_blueprints(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    other = [b for b in _generate(domain, GenerationConfig(seed=1), 0, 40) if isinstance(b, TaskBlueprint)]
    assert len({b.id for b in other} & {b.id for b in blueprints}) <= 1
    assert blueprint_seed(0, 1) != blueprint_seed(1, 0) != blueprint_seed(0, 0)


def test_ids_are_unique_and_content_addressed(blueprints: list[TaskBlueprint]) -> None:
    assert len({b.id for b in blueprints}) == len(blueprints)
    for bp in blueprints[:20]:
        assert bp.id == TaskBlueprint.make_id(bp.environment, bp.user, bp.ground_truth, bp.policy_rules)
        moved = bp.model_copy(update={"provenance": bp.provenance.model_copy(update={"index": 10**6})})
        assert TaskBlueprint.make_id(moved.environment, moved.user, moved.ground_truth,
                                     moved.policy_rules) == bp.id


# --- validation -------------------------------------------------------------------------------

def test_every_yielded_blueprint_validates(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    for bp in blueprints:
        check = validate_blueprint(bp, domain)
        assert check.ok, (bp.provenance.index, check)
        assert bp.environment.domain == "retail" and bp.environment.size == 300
        assert bp.ground_truth.initial_state_hash == domain.hasher.hash(domain.template)
        assert bp.ground_truth.final_state_hash != bp.ground_truth.initial_state_hash or \
            bp.structure.write_count == 0


def test_a_changed_final_state_hash_is_rejected(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    bp = blueprints[0]
    tampered = bp.model_copy(update={"ground_truth": bp.ground_truth.model_copy(
        update={"final_state_hash": bp.ground_truth.initial_state_hash})})
    check = validate_blueprint(tampered, domain)
    assert (check.ok, check.reason) == (False, "state_mismatch")


def _first_with(blueprints: list[TaskBlueprint], name: str) -> tuple[TaskBlueprint, int]:
    for bp in blueprints:
        for i, call in enumerate(bp.ground_truth.calls):
            if call.name == name:
                return bp, i
    raise AssertionError(f"no blueprint calls {name}")


def test_a_write_with_a_wrong_but_allowed_argument_is_a_state_mismatch(
        domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    bp, i = _first_with(blueprints, "cancel_pending_order")
    calls = list(bp.ground_truth.calls)
    other = "ordered by mistake" if calls[i].arguments["reason"] == "no longer needed" else "no longer needed"
    calls[i] = calls[i].model_copy(update={"arguments": {**calls[i].arguments, "reason": other}})
    check = validate_blueprint(_with_calls(bp, calls), domain)
    assert (check.ok, check.reason) == (False, "state_mismatch")

    bp, i = _first_with(blueprints, "modify_pending_order_address")
    calls = list(bp.ground_truth.calls)
    calls[i] = calls[i].model_copy(update={"arguments": {**calls[i].arguments, "city": "Elsewhere"}})
    check = validate_blueprint(_with_calls(bp, calls), domain)
    assert (check.ok, check.reason) == (False, "state_mismatch")


def test_a_write_that_breaks_the_policy_is_rejected(domain: RetailDomain,
                                                    blueprints: list[TaskBlueprint]) -> None:
    bp, i = _first_with(blueprints, "cancel_pending_order")
    calls = list(bp.ground_truth.calls)
    calls[i] = calls[i].model_copy(update={"arguments": {**calls[i].arguments, "reason": "bored"}})
    check = validate_blueprint(_with_calls(bp, calls), domain)
    assert (check.ok, check.reason) == (False, "policy_breach")
    assert f"call {i} cancel_pending_order" in check.detail and "cancel_reason" in check.detail


def test_a_write_on_an_unknown_order_is_a_failed_call(domain: RetailDomain,
                                                      blueprints: list[TaskBlueprint]) -> None:
    bp, i = _first_with(blueprints, "return_delivered_order_items")
    calls = list(bp.ground_truth.calls)
    calls[i] = calls[i].model_copy(update={"arguments": {**calls[i].arguments, "order_id": "#W0000000"}})
    check = validate_blueprint(_with_calls(bp, calls), domain)
    assert (check.ok, check.reason) == (False, "call_failed")
    assert "not found" in check.detail


def test_a_changed_output_value_is_rejected(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    bp = next(b for b in blueprints if b.ground_truth.outputs)
    outputs = list(bp.ground_truth.outputs)
    outputs[0] = outputs[0].model_copy(update={"value": "98765.43"})
    tampered = bp.model_copy(update={"ground_truth": bp.ground_truth.model_copy(
        update={"outputs": tuple(outputs)})})
    check = validate_blueprint(tampered, domain)
    assert (check.ok, check.reason) == (False, "output_not_grounded")
    assert "98765.43" in check.detail


def test_validation_uses_the_domain_the_blueprint_names(blueprints: list[TaskBlueprint]) -> None:
    other_world = RetailDomain(300, 1)
    results = [validate_blueprint(bp, other_world) for bp in blueprints[:10]]
    assert not any(r.ok for r in results)


# --- structure --------------------------------------------------------------------------------

def test_intent_counts_and_disclosure_moves_vary(blueprints: list[TaskBlueprint]) -> None:
    counts = Counter(b.structure.n_intents for b in blueprints)
    assert set(counts) == {1, 2, 3, 4}
    assert min(counts.values()) >= 10
    revisions = [b for b in blueprints if b.structure.n_revisions]
    redirects = [b for b in blueprints if b.structure.n_redirects]
    assert len(revisions) >= 5 and len(redirects) >= 5
    kinds = Counter(i.kind for b in blueprints for i in b.user.intents)
    assert len(kinds) >= 8, kinds
    styles = Counter(b.user.persona.style for b in blueprints)
    assert len(styles) == len(Style)
    assert len({b.structure.tool_topology for b in blueprints}) >= 50


def _depth(domain: RetailDomain, calls: tuple[GroundTruthCall, ...]) -> int:
    """Longest chain of calls where an argument value appears in an earlier call's result."""
    env = domain.environment()
    results = [env.execute(_tool_call(c)).content for c in calls]
    depths: list[int] = []
    for j, call in enumerate(calls):
        values = []
        for value in call.arguments.values():
            values += [str(v) for v in (value if isinstance(value, list) else [value]) if str(v)]
        parents = [depths[i] for i in range(j) if any(v in results[i] for v in values)]
        depths.append(1 + max(parents, default=0))
    return max(depths, default=0)


def _tool_call(call: GroundTruthCall) -> ToolCall:
    return ToolCall(id="c", name=call.name, arguments=json.dumps(call.arguments))


SWAPS = {"modify_items", "exchange_items"}


def test_structural_descriptors_match_the_ground_truth(domain: RetailDomain,
                                                       blueprints: list[TaskBlueprint]) -> None:
    for bp in blueprints:
        calls = bp.ground_truth.calls
        s = bp.structure
        writes = [c for c in calls if c.kind == "write"]
        for c in calls:
            assert c.kind == domain.tools[c.name].kind.value, c.name
        assert s.n_intents == len(bp.user.intents)
        assert s.write_count == len(writes)
        assert s.read_count == len(calls) - len(writes)
        assert len(s.evidence_burden) == s.write_count
        assert s.n_revisions == sum(d.action == "revise" for d in bp.user.disclosure)
        assert s.n_redirects == sum(d.action == "redirect" for d in bp.user.disclosure)
        assert s.n_redirects == sum(i.initial_kind is not None for i in bp.user.intents)
        collapsed = [c.name for k, c in enumerate(calls) if k == 0 or calls[k - 1].name != c.name]
        assert s.tool_topology == ">".join(collapsed)
        assert s.dependency_depth == _depth(domain, calls)
        assert 2 <= s.dependency_depth <= len(calls)  # auth -> customer details at least
        # the evidence a write needs: every order the description could mean (one if named by
        # id, unless first described in words that fit several), plus the product's variants for a swap
        customer = domain.template.customers[calls[1].arguments["customer_id"]]
        for call, burden in zip(writes, s.evidence_burden):
            intent = bp.user.intents[call.intent]
            ref = intent.slots.get("order")
            described = any(d.action == "clarify" and d.intent == call.intent for d in bp.user.disclosure)
            expected = 0 if ref is None else 1 if ref.startswith("#W") and not described else len(customer.order_ids)
            expected += intent.kind in SWAPS
            assert burden == expected, (bp.provenance.index, intent.kind, ref)
        for k, intent in enumerate(bp.user.intents):
            own = [c for c in calls if c.intent == k]
            assert sum(c.kind == "write" for c in own) == int(domain.intents[intent.kind].writes)
        rules = set(bp.policy_rules)
        assert {"authenticate", "own_account"} <= rules
        assert ("confirm" in rules) == bool(writes)


def test_structure_is_not_trivial(blueprints: list[TaskBlueprint]) -> None:
    depths = Counter(b.structure.dependency_depth for b in blueprints)
    assert len(depths) >= 3
    burdens = Counter(x for b in blueprints for x in b.structure.evidence_burden)
    assert max(burdens) >= 3 and 0 in burdens and 1 in burdens
    assert any(b.structure.write_count >= 3 for b in blueprints)
    assert any(b.structure.write_count == 0 for b in blueprints)


def test_outputs_point_at_calls_of_their_intent(blueprints: list[TaskBlueprint]) -> None:
    for bp in blueprints:
        for out in bp.ground_truth.outputs:
            assert 0 <= out.after_call < len(bp.ground_truth.calls)
            assert bp.ground_truth.calls[out.after_call].intent == out.intent


def test_hidden_and_known_facts_are_disjoint(blueprints: list[TaskBlueprint]) -> None:
    for bp in blueprints:
        assert not set(bp.user.known_facts) & set(bp.user.hidden_facts)
        identity = {"email"} if bp.user.fact("email") else {"name", "zip"}
        assert identity <= set(bp.user.known_facts) | set(bp.user.hidden_facts)


# --- knobs ------------------------------------------------------------------------------------

def test_p_revision_zero_means_no_revisions(domain: RetailDomain) -> None:
    items = _generate(domain, GenerationConfig(p_revision=0.0), 0, N)
    revised = [(b.provenance.index, i.kind) for b in items if isinstance(b, TaskBlueprint)
               for d in b.user.disclosure if d.action == "revise" for i in [b.user.intents[d.intent]]]
    assert revised == [], f"revisions with p_revision=0: {revised}"


def test_p_revision_and_p_redirect_zero_mean_a_plain_plan(domain: RetailDomain) -> None:
    items = _generate(domain, GenerationConfig(p_revision=0.0, p_redirect=0.0), 0, 150)
    bps = [b for b in items if isinstance(b, TaskBlueprint)]
    assert len(bps) >= 140
    # (a clarify step, asked which order a description means, comes with p_indirect, and a
    # misstated identity detail with the wrong_detail behaviour, not with these)
    assert all(d.action in ("reveal_intent", "clarify", "misstate") for b in bps for d in b.user.disclosure)
    assert all(b.structure.n_revisions == b.structure.n_redirects == 0 for b in bps)


def test_p_redirect_zero_means_no_redirects(domain: RetailDomain) -> None:
    bps = [b for b in _generate(domain, GenerationConfig(p_redirect=0.0), 0, 150)
           if isinstance(b, TaskBlueprint)]
    assert all(b.structure.n_redirects == 0 for b in bps)
    assert any(b.structure.n_revisions for b in bps)


def test_max_intents_one_gives_single_intent_blueprints(domain: RetailDomain) -> None:
    bps = [b for b in _generate(domain, GenerationConfig(max_intents=1), 0, 150)
           if isinstance(b, TaskBlueprint)]
    assert len(bps) >= 140
    assert {b.structure.n_intents for b in bps} == {1}
    assert {len(b.user.intents) for b in bps} == {1}


def test_min_intents_raises_the_intent_counts(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    bps = [b for b in _generate(domain, GenerationConfig(min_intents=3), 0, 150)
           if isinstance(b, TaskBlueprint)]
    counts = Counter(b.structure.n_intents for b in bps)
    # a customer may run out of things to do (the sampler then stops short), but most do not
    assert sum(n for k, n in counts.items() if k >= 3) >= 0.6 * len(bps)
    assert sum(b.structure.n_intents for b in bps) / len(bps) > \
        sum(b.structure.n_intents for b in blueprints) / len(blueprints)


def test_read_only_knob(domain: RetailDomain) -> None:
    never = [b for b in _generate(domain, GenerationConfig(p_read_only_intent=0.0), 0, 100)
             if isinstance(b, TaskBlueprint)]
    assert not any(i.kind in ("order_status", "product_price") for b in never for i in b.user.intents)
    always = [b for b in _generate(domain, GenerationConfig(p_read_only_intent=1.0, max_intents=1), 0, 60)
              if isinstance(b, TaskBlueprint)]
    assert always and all(b.structure.write_count == 0 for b in always)


def test_indirect_reference_knob(domain: RetailDomain) -> None:
    def indirect(config: GenerationConfig) -> int:
        bps = [b for b in _generate(domain, config, 0, 100) if isinstance(b, TaskBlueprint)]
        return sum(not i.slots["order"].startswith("#W") for b in bps for i in b.user.intents
                   if "order" in i.slots)

    assert indirect(GenerationConfig(p_indirect_reference=0.0)) == 0
    assert indirect(GenerationConfig(p_indirect_reference=1.0)) >= 30
