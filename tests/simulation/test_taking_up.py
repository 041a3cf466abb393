"""The oracle says what it is working on (``IntentSpec.takes`` / ``progress``): it takes each
request up in words when it first speaks to it, and says what the read is for with the intent's
first read (the account read included); and what it says it found is what the tools showed.
These are unit tests of the generator over its own banks; no check reads these phrases."""

from __future__ import annotations

import asyncio
import json

import pytest

from trajforge.environments.retail import RetailDomain
from trajforge.environments.retail.phrasing import INTENTS
from trajforge.generators.compose import generate_blueprints
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.messages import AssistantMessage, ToolMessage
from trajforge.schemas.trajectory import Trajectory
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer

RUN = "run_taking_up"


@pytest.fixture(scope="module")
def played() -> list[tuple[TaskBlueprint, Trajectory]]:
    domain = RetailDomain(200, 3)
    bps = [bp for bp in generate_blueprints(domain, GenerationConfig(), RUN, 0, 160) if isinstance(bp, TaskBlueprint)]
    player = EpisodePlayer(domain_of=lambda bp: domain)
    jobs = [EpisodeJob(bp, bp.provenance.index) for bp in bps]
    out = asyncio.run(player.play_all(jobs, lambda p: (p.job.blueprint, p.trajectory)))
    return [o for o in out if o is not None]


def _agent(t: Trajectory) -> list[AssistantMessage]:
    return [m for m in t.messages if isinstance(m, AssistantMessage)]


def test_the_first_words_take_up_the_request_as_the_user_put_it(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    for bp, t in played:
        first = bp.user.intents[0]
        asked = INTENTS[first.initial_kind or first.kind]
        opening = next(m.content for m in _agent(t) if m.content).lower()
        assert any(p.lower() in opening for p in asked.takes), (asked.kind, opening)


def test_every_later_request_is_taken_up_too(played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    later = 0
    for bp, t in played:
        said = " ".join(m.content or "" for m in _agent(t)).lower()
        for intent in bp.user.intents[1:]:
            later += 1
            assert any(p.lower() in said for p in INTENTS[intent.initial_kind or intent.kind].takes), said
    assert later >= 20


def test_the_first_read_of_each_request_says_what_it_is_for(
        played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """The account read too: the act that follows it (which order, or the address change) then has
    the request restated right before it, not only in the user's opening."""
    auth = RetailDomain.auth_tools
    announced = on_account = 0
    for bp, t in played:
        carried: set[int] = set()  # messages that carry an earlier intent's words or read
        for k, intent in enumerate(bp.user.intents):
            kind = INTENTS[intent.initial_kind or intent.kind]
            target = next((c for c in bp.ground_truth.calls
                           if c.intent == k and c.kind == "read" and c.name not in auth), None)
            if target is None:
                continue
            at = next(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage) and any(
                c.name == target.name and c.parsed_arguments() == target.arguments for c in m.tool_calls))
            took = next(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage) and i not in carried
                        and any(p.lower() in (m.content or "").lower() for p in kind.takes))
            if at in carried or at < took:
                continue  # read once, for an earlier request that is about the same entity
            carried |= {at, took}
            content = t.messages[at].content or ""
            if not content and bp.user.behaviours:
                continue  # an answer to the user's behaviour (asking for a person, ...) comes first
            assert kind.progress and any(p.lower() in content.lower() for p in kind.progress), content
            announced += 1
            on_account += not set(target.needs) - {"identity"}
    assert announced >= 100 and on_account >= 50, (announced, on_account)


def test_a_refused_cancellation_is_taken_up_like_any_cancellation() -> None:
    """The outcome is not the agent's to know before it reads the order."""
    assert INTENTS["cancel_refused"].takes == INTENTS["cancel_order"].takes
    assert INTENTS["cancel_refused"].progress == INTENTS["cancel_order"].progress


def test_what_it_found_is_what_the_tools_showed(played: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """The profile address said before the change is the one the customer record showed, not the
    new one the user asked for."""
    checked = 0
    for _, t in played:
        for i, m in enumerate(t.messages):
            if not (isinstance(m, AssistantMessage) and m.content and "your profile" in m.content
                    and ("currently" in m.content or "has" in m.content)):
                continue
            records = [json.loads(r.content) for r in t.messages[:i] if isinstance(r, ToolMessage)
                       and r.content.startswith("{") and '"payment_methods"' in r.content]
            shown = records[-1]["address"]["address1"]
            assert shown in m.content, (shown, m.content)
            checked += 1
    assert checked >= 3



@pytest.mark.parametrize("name", ["retail", "airline", "banking", "telecom"])
def test_every_built_in_kind_is_taken_up_and_kinds_asked_alike_share_their_words(name: str) -> None:
    """Two kinds a user can ask for in the same words (one of them refused or handed over once the
    agent has looked) are taken up in the same words: the outcome is not the agent's to say yet."""
    import importlib

    intents = importlib.import_module(f"trajforge.environments.{name}.phrasing").INTENTS
    assert all(spec.takes for spec in intents.values())
    for a in intents.values():
        for b in intents.values():
            if a.kind < b.kind and set(a.requests) & set(b.requests):
                assert (a.takes, a.progress) == (b.takes, b.progress), (a.kind, b.kind)
