"""The library test domain (tests/domains/library): naming unlike retail's on purpose (no ``*_id``
parameter, a two-factor identity), so that every check and scripted side must work from the
domain's declarations alone. ``check_domain`` on it: every oracle episode passes, every fault
kind is drawn and caught by its named check, nothing is left undeclared; and targeted cases:
skipped authentication, a hallucinated ISBN, a PIN the user never gave."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from tests.domains.library import LibraryDomain
from tests.domains.library.data import LibraryState
from tests.domains.library.tasks import LibraryTaskSampler
from trajforge.environments.validate import domain_problem
from trajforge.errors import PolicyViolation, ToolError
from trajforge.evaluation.domain_check import check_domain, undeclared
from trajforge.generators import generate_blueprints
from trajforge.schemas import AssistantMessage, FaultKind, TaskBlueprint, ToolMessage, Trajectory, UserMessage
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer
from trajforge.verifiers import verify


@pytest.fixture(scope="module")
def domain() -> LibraryDomain:
    return LibraryDomain(200, 0)


@pytest.fixture(scope="module")
def blueprints(domain: LibraryDomain) -> list[TaskBlueprint]:
    return [b for b in generate_blueprints(domain, GenerationConfig(), "library", 0, 80)
            if isinstance(b, TaskBlueprint)]


@pytest.fixture(scope="module")
def oracle(domain: LibraryDomain, blueprints: list[TaskBlueprint]) -> list[tuple[TaskBlueprint, Trajectory]]:
    jobs: list[EpisodeJob[None]] = [EpisodeJob(bp, 7_000 + i, None) for i, bp in enumerate(blueprints)]
    played = asyncio.run(EpisodePlayer(domain_of=lambda bp: domain).play_all(jobs, lambda p: p.trajectory))
    return [(bp, t) for bp, t in zip(blueprints, played, strict=True) if t is not None]


def _failed(t: Trajectory, bp: TaskBlueprint, domain: LibraryDomain, check: str) -> tuple[bool, str, str]:
    v = next(v for v in verify(t, bp, domain, [check]))
    return v.passed, v.reason, v.evidence


def _call_at(t: Trajectory, name: str) -> int:
    return next(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage)
                and any(c.name == name for c in m.tool_calls))


def _without(t: Trajectory, start: int, stop: int) -> Trajectory:
    return t.model_copy(update={"messages": t.messages[:start] + t.messages[stop:]})


# --- the domain loads and declares everything -------------------------------------------------

def test_domain_validates_and_declares_everything(domain: LibraryDomain) -> None:
    assert domain_problem(LibraryDomain) is None
    assert undeclared(domain) == []
    assert not any(p.endswith(("_id", "_ids")) for t in domain.tools.values()
                   for p in t.spec.function.parameters.get("properties", {}))
    assert len(domain.agent_tools) >= 8 and len(domain.policy_rules) >= 6 and len(domain.intents) >= 5
    assert {"authenticate", "confirm", "own_account"} <= set(domain.policy_rules)
    assert any(len(group) >= 2 for group in domain.identity.factors)  # two-factor


def test_rules_refuse_writes_with_their_ids(domain: LibraryDomain) -> None:
    env = domain.environment()
    state = env.state
    assert isinstance(state, LibraryState)
    capped = next(loan for loan in state.loans.values() if loan.status == "on loan" and loan.renewals >= 2)
    with pytest.raises(PolicyViolation) as info:
        env.call("renew_loan", {"loan_ref": capped.loan_ref})
    assert "renewal_limit" in {r for r, _ in env.toolkit.write_breaches("renew_loan", {"loan_ref": capped.loan_ref})}
    assert info.value.rule in domain.policy_rules
    shelved = next(e for e in state.editions.values() if sum(e.on_shelf.values()) > 0)
    member = next(m for m in state.members.values() if m.fines <= 10)
    with pytest.raises(PolicyViolation, match="policy shelf_first"):
        env.call("place_hold", {"card_number": member.card_number, "isbn": shelved.isbn, "branch_code": "OAK"})
    with pytest.raises(PolicyViolation, match="policy fine_payment"):
        env.call("pay_fine", {"card_number": member.card_number, "amount": member.fines + 5})
    with pytest.raises(ToolError, match="no loan"):
        env.call("renew_loan", {"loan_ref": "LN-000000"})  # an unknown key breaks no rule: the tool says so
    # a card number without its prefix, an ISBN without hyphens: the same entities
    assert env.call("get_member", {"card_number": member.card_number[3:]})["card_number"] == member.card_number
    assert env.call("get_book", {"isbn": shelved.isbn.replace("-", "")})["isbn"] == shelved.isbn


def test_names_target(domain: LibraryDomain) -> None:
    """A confirmation names the write's keys, in any of their forms, and no other of their kind."""
    state = domain.template
    hold = {"card_number": "LC-48213907", "isbn": "978-0-306-40615-7", "branch_code": "ELM"}
    assert domain.names_target(state, "place_hold", hold, "Hold 9780306406157 for card 48213907 at ELM?")
    assert not domain.names_target(state, "place_hold", hold, "Hold 978-0-306-40615-7 for card LC-48213907?")
    assert not domain.names_target(state, "place_hold", {**hold, "branch_code": "OAK"},
                                   "Hold 978-0-306-40615-7 for card LC-48213907 at ELM?")
    assert domain.names_target(state, "renew_loan", {"loan_ref": "ln-583920"}, "Renew loan LN-583920?")
    assert not domain.names_target(state, "renew_loan", {"loan_ref": "LN-583920"},
                                   "Renew loan LN-583920 or LN-583921?")


def test_sampler_is_deterministic(domain: LibraryDomain) -> None:
    sampler = LibraryTaskSampler(domain)
    axes = {"p_indirect": 0.5, "p_revision": 0.25, "p_redirect": 0.15, "p_read_only": 0.15}
    for seed in range(5):
        assert sampler.sample(random.Random(seed), 3, **axes) == sampler.sample(random.Random(seed), 3, **axes)


# --- every check works on it ------------------------------------------------------------------

@pytest.mark.slow
def test_check_domain(domain: LibraryDomain) -> None:
    report = check_domain(domain, 450, min_drawn=5)
    assert report.oracle_pass_rate == 1.0, report.examples
    assert report.missed() == {}, report.examples
    for kind in FaultKind:
        assert report.drawn[kind.value] > 0, kind
    assert report.under_drawn() == [], dict(report.drawn)
    assert report.undeclared == []


# --- targeted cases ---------------------------------------------------------------------------

def test_oracle_episodes_pass_authentication(domain: LibraryDomain,
                                             oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    for bp, t in oracle[:20]:
        assert _failed(t, bp, domain, "authentication")[0]


def test_skipped_authentication_is_caught(domain: LibraryDomain,
                                          oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """Without the identifying call, the first call with a card number touches an account
    before anyone was identified."""
    bp, t = next((bp, t) for bp, t in oracle if bp.ground_truth.calls[0].name == "verify_member_card")
    at = _call_at(t, "verify_member_card")
    skipped = _without(t, at, at + 2)  # the call and its result
    passed, reason, evidence = _failed(skipped, bp, domain, "authentication")
    assert not passed and "before authentication" in reason
    first = json.loads(evidence)["calls"][0]
    assert first["call"] == "get_member"  # get_member(card_number=...)


def test_hallucinated_isbn_is_caught(domain: LibraryDomain,
                                     oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """An ISBN no tool showed (the search that showed it removed) fails grounded_ids; the same
    ISBN without hyphens, once shown, passes (id_forms)."""
    bp, t = next((bp, t) for bp, t in oracle if any(c.name == "search_catalog" for c in bp.ground_truth.calls))
    assert _failed(t, bp, domain, "grounded_ids")[0]
    at = _call_at(t, "search_catalog")
    passed, _, evidence = _failed(_without(t, at, at + 2), bp, domain, "grounded_ids")
    assert not passed
    isbn = next(c for c in bp.ground_truth.calls if c.name == "get_book").arguments["isbn"]
    assert isbn in {p["id"] for p in json.loads(evidence)["ids"]}
    at = _call_at(t, "get_book")
    message = t.messages[at]
    assert isinstance(message, AssistantMessage)
    bare = tuple(c.model_copy(update={"arguments": c.arguments.replace(isbn, isbn.replace("-", ""))})
                 for c in message.tool_calls)
    rewritten = t.model_copy(update={"messages": t.messages[:at] + (message.model_copy(update={"tool_calls": bare}),)
                                     + t.messages[at + 1:]})
    assert _failed(rewritten, bp, domain, "grounded_ids")[0]


def test_pin_the_user_never_gave_is_caught(domain: LibraryDomain,
                                           oracle: list[tuple[TaskBlueprint, Trajectory]]) -> None:
    """The user's PIN taken out of what they said: the agent's verify_member_card uses a PIN it
    was never given, which grounded_ids reports (``pin`` is one of the domain's entity_params)."""
    bp, t = next((bp, t) for bp, t in oracle if bp.ground_truth.calls[0].name == "verify_member_card")
    pin = bp.ground_truth.calls[0].arguments["pin"]
    messages = tuple(m.model_copy(update={"content": m.content.replace(pin, "(I forget)")})
                     if isinstance(m, UserMessage) else m for m in t.messages)
    assert not any(pin in m.content for m in messages if isinstance(m, (UserMessage, ToolMessage))
                   and messages.index(m) < _call_at(t, "verify_member_card"))
    passed, _, evidence = _failed(t.model_copy(update={"messages": messages}), bp, domain, "grounded_ids")
    assert not passed
    assert {"call": "verify_member_card", "id": pin} in json.loads(evidence)["ids"]
