"""Policy-bound tasks (issue 17): blueprints whose correct outcome is a refusal under the policy
or a hand-over to a human (``IntentSpec.outcome``). In every built-in domain at least 15% of a
default build is policy-bound; ``GenerationConfig.p_policy_bound`` moves the share and leaves
the other blueprints as they were; a refused intent's ground truth holds the write the user
asks for, which the policy forbids; the oracle passes every check on these tasks, and an agent
that makes the forbidden write fails ``policy``."""

from __future__ import annotations

import asyncio
import json

import pytest

from trajforge.environments.base import actor_of
from trajforge.environments.registry import load_domain
from trajforge.errors import PolicyViolation, ToolError
from trajforge.generators import generate_blueprints
from trajforge.schemas import AssistantMessage, TaskBlueprint, ToolMessage, Trajectory
from trajforge.schemas.arrow import blueprint_from_row, blueprint_to_row
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.messages import ToolCall
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer
from trajforge.verifiers import verify
from trajforge.verifiers.checks import CHECKS

BUILT_IN = ("retail", "airline", "banking", "telecom")


def _blueprints(name: str, n: int, **config: float) -> list[TaskBlueprint]:
    domain = load_domain(name, 200, 0)
    return [b for b in generate_blueprints(domain, GenerationConfig(**config), "pb", 0, n)
            if isinstance(b, TaskBlueprint)]


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_default_build_is_at_least_15_percent_policy_bound(name: str) -> None:
    domain = load_domain(name, 200, 0)
    blueprints = _blueprints(name, 200)
    bound = [b for b in blueprints if b.policy_bound]
    assert len(bound) >= 0.15 * len(blueprints), (len(bound), len(blueprints))
    for bp in bound:
        for k, intent in enumerate(bp.user.intents):
            assert intent.outcome == domain.intents[intent.kind].outcome
            own = [c for c in bp.ground_truth.calls if c.intent == k]
            if intent.outcome == "refused":
                assert not any(c.kind == "write" for c in own)
                assert [r for r in bp.ground_truth.refused if r.intent == k], "the write asked for"
            if intent.outcome == "transferred":
                assert own[-1].name == domain.transfer_tool
    assert any(i.outcome == "refused" for b in bound for i in b.user.intents)


def test_the_share_is_configurable_and_leaves_the_other_blueprints_as_they_were() -> None:
    none = _blueprints("retail", 150, p_policy_bound=0.0)
    half = _blueprints("retail", 150, p_policy_bound=0.5)
    share_none = sum(b.policy_bound for b in none) / len(none)
    share_half = sum(b.policy_bound for b in half) / len(half)
    assert share_half > share_none + 0.2, (share_none, share_half)
    # a blueprint that was policy-bound already, or not drawn to be, is the same blueprint
    by_index = {b.provenance.index: b for b in half}
    same = [b for b in none if b.policy_bound or by_index.get(b.provenance.index) == b]
    assert len(same) > 0.5 * len(none)
    for b in none:
        if b.policy_bound:
            assert by_index[b.provenance.index] == b


def test_outcome_and_refused_calls_survive_storage() -> None:
    bp = next(b for b in _blueprints("retail", 80, p_policy_bound=1.0) if b.ground_truth.refused)
    row = json.loads(json.dumps(blueprint_to_row(bp, "pb"), default=str))
    back = blueprint_from_row(blueprint_to_row(bp, "pb"))
    assert back == bp and back.id == bp.id
    assert row["refused"] and any(i["outcome"] == "refused" for i in json.loads(row["intents"]))
    old = {**blueprint_to_row(bp, "pb"), "refused": None}
    assert blueprint_from_row(old).ground_truth.refused == ()


def _with_forbidden_write(t: Trajectory, bp: TaskBlueprint, name: str) -> Trajectory:
    """``t`` with the first refused write made before the last agent message (no write comes
    after its intent), answered as the environment answers it after the ground truth's calls."""
    domain = load_domain(name, 200, 0)
    env = domain.environment()
    for call in bp.ground_truth.calls:
        env.call(call.name, call.arguments, actor_of(call.kind))
    refused = bp.ground_truth.refused[0]
    try:
        answer, is_error = json.dumps(env.call(refused.name, refused.arguments, actor_of("write"))), False
    except (PolicyViolation, ToolError) as exc:
        answer, is_error = str(exc), True
    last = max(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage) and m.content)
    call = ToolCall(id="call_forbidden", name=refused.name, arguments=json.dumps(refused.arguments))
    added = [AssistantMessage(tool_calls=(call,)),
             ToolMessage(content=answer, tool_call_id=call.id, name=refused.name, is_error=is_error)]
    return t.model_copy(update={"messages": (*t.messages[:last], *added, *t.messages[last:])})


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_oracle_passes_and_the_forbidden_write_fails_policy(name: str) -> None:
    domain = load_domain(name, 200, 0)
    # the forbidden write goes in at the end, so no write may come after the refused intent
    # (a later bill payment makes roaming allowed again)
    refusals = [b for b in _blueprints(name, 80, p_policy_bound=1.0) if b.ground_truth.refused
                and not any(c.kind == "write" and c.intent > b.ground_truth.refused[0].intent
                            for c in b.ground_truth.calls)][:8]
    assert len(refusals) >= 4
    jobs = [EpisodeJob(bp, 9_000 + i, None) for i, bp in enumerate(refusals)]
    played = asyncio.run(EpisodePlayer(domain_of=lambda bp: domain).play_all(jobs, lambda p: p.trajectory))
    for bp, t in zip(refusals, played, strict=True):
        assert t is not None
        verdicts = {v.check: v for v in verify(t, bp, domain, list(CHECKS))}
        assert all(v.passed for v in verdicts.values()), {c: v.reason for c, v in verdicts.items() if not v.passed}
        forbidden = {v.check: v for v in verify(_with_forbidden_write(t, bp, name), bp, domain, list(CHECKS))}
        assert not forbidden["policy"].passed, forbidden["policy"].reason
