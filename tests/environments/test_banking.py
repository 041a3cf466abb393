"""The banking domain: deterministic data, tools, the policy as write rules, and the sampler."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from trajforge.environments import Environment
from trajforge.environments.banking import BankingDomain
from trajforge.environments.banking.data import (
    DISPUTE_THRESHOLD,
    TODAY,
    Account,
    BankingState,
    Card,
    Transaction,
    build_banking_state,
    days_ago,
)
from trajforge.environments.banking.policy import POLICY_TEXT, RULES, TOOL_RULES
from trajforge.environments.banking.reports import describe, parse_description
from trajforge.environments.banking.tasks import BankingTaskSampler
from trajforge.environments.base import ToolKind
from trajforge.environments.validate import domain_problem
from trajforge.errors import PolicyViolation, TaskRejected, ToolError
from trajforge.schemas import ToolCall


@pytest.fixture(scope="module")
def domain() -> BankingDomain:
    return BankingDomain(80, 0)


@pytest.fixture()
def env(domain: BankingDomain) -> Environment:
    return domain.environment()


def _state(env: Environment) -> BankingState:
    assert isinstance(env.state, BankingState)
    return env.state


def _account(env: Environment, pred: Callable[[Account], bool]) -> Account:
    found = next((a for a in _state(env).accounts.values() if pred(a)), None)
    assert found is not None, "no account in the test state satisfies the condition"
    return found


def _card(env: Environment, pred: Callable[[Card], bool]) -> Card:
    found = next((c for c in _state(env).cards.values() if pred(c)), None)
    assert found is not None, "no card in the test state satisfies the condition"
    return found


def _txn(env: Environment, pred: Callable[[Transaction], bool]) -> Transaction:
    found = next((t for t in _state(env).transactions.values() if pred(t)), None)
    assert found is not None, "no transaction in the test state satisfies the condition"
    return found


def _refused(env: Environment, name: str, args: dict[str, Any], rule: str) -> None:
    """The write is refused with ``rule`` before it runs, and the state is unchanged."""
    before = env.state_hash()
    with pytest.raises(PolicyViolation) as info:
        env.call(name, args)
    assert info.value.rule == rule
    message = env.execute(ToolCall(id="c", name=name, arguments=json.dumps(args)))
    assert message.is_error and f"policy {rule}" in message.content
    assert env.state_hash() == before


def _disputable(t: Transaction) -> bool:
    return t.status == "posted" and not t.disputed and days_ago(t.date) <= 60 and t.amount <= 500


# --- the domain's shape -------------------------------------------------------------------------

def test_domain_loads_and_meets_the_bar(domain: BankingDomain) -> None:
    assert domain_problem(BankingDomain) is None
    assert domain.name == "banking"
    agent_tools = [t for t in domain.tools.values() if t.name not in domain.auth_tools]
    assert len(agent_tools) >= 10
    assert len(domain.policy_rules) >= 8
    assert len(domain.intents) >= 6
    assert domain.transfer_tool in domain.tools
    assert all(len(group) == 2 for group in domain.identity.factors)  # two factors each
    refusals = [k for k, spec in domain.intents.items() if not spec.writes]
    assert "dispute_refused" in refusals and "dispute_escalated" in refusals


def test_data_builder_is_deterministic_for_a_seed() -> None:
    a = build_banking_state(random.Random(5), 30)
    b = build_banking_state(random.Random(5), 30)
    assert a == b and a.model_dump_json() == b.model_dump_json()
    c = build_banking_state(random.Random(6), 30)
    assert set(c.customers) != set(a.customers)
    assert BankingDomain(30, 5).template == a


def test_every_account_has_a_long_history(domain: BankingDomain) -> None:
    state = domain.template
    assert isinstance(state, BankingState)
    assert len(state.customers) == 80
    for account in state.accounts.values():
        history = [state.transactions[t] for t in account.transaction_ids]
        assert len(history) >= (32 if account.type == "checking" else 10)
        assert all(t.account_id == account.id and days_ago(t.date) >= 0 for t in history)
        assert [t.date for t in history] == sorted((t.date for t in history), reverse=True)
    phones = Counter(c.phone for c in state.customers.values())
    emails = Counter(c.email for c in state.customers.values())
    assert max(phones.values()) == 1 and max(emails.values()) == 1


def test_policy_text_lists_the_rules_and_today() -> None:
    for i, rule in enumerate(RULES, start=1):
        assert f"{i}. [{rule}]" in POLICY_TEXT
    assert TODAY.isoformat() in POLICY_TEXT


def test_tool_rules_name_known_rules_and_writes(domain: BankingDomain) -> None:
    writes = {t.name for t in domain.tools.values() if t.kind is ToolKind.write}
    assert set(TOOL_RULES) == writes
    assert {r for rules in TOOL_RULES.values() for r in rules} <= set(RULES)


# --- reads ----------------------------------------------------------------------------------------

def test_identify_by_phone_and_birth_date_or_email_and_passcode(env: Environment) -> None:
    customer = next(iter(_state(env).customers.values()))
    assert env.call("find_customer_by_phone", {"phone": customer.phone,
                                               "date_of_birth": customer.date_of_birth}) == customer.id
    assert env.call("find_customer_by_email", {"email": customer.email.upper(),
                                               "passcode": customer.passcode}) == customer.id
    with pytest.raises(ToolError):
        env.call("find_customer_by_phone", {"phone": customer.phone, "date_of_birth": "1900-01-01"})
    with pytest.raises(ToolError):
        env.call("find_customer_by_email", {"email": customer.email, "passcode": "000000x"})


def test_profile_hides_the_passcode_and_accounts_hide_their_index(env: Environment) -> None:
    customer = next(iter(_state(env).customers.values()))
    profile = env.call("get_customer_profile", {"customer_id": customer.id})
    assert "passcode" not in profile and profile["phone"] == customer.phone
    accounts = env.call("list_accounts", {"customer_id": customer.id})
    assert [a["id"] for a in accounts] == list(customer.account_ids)
    assert all("transaction_ids" not in a and "remaining_daily_limit" in a for a in accounts)


def test_list_transactions_filters(env: Environment) -> None:
    account = _account(env, lambda a: a.type == "checking")
    every = env.call("list_transactions", {"account_id": account.id})
    assert len(every) == len(account.transaction_ids)
    category = every[0].category
    some = env.call("list_transactions", {"account_id": account.id, "category": category})
    assert some and all(t.category == category for t in some)
    day = every[len(every) // 2].date
    ranged = env.call("list_transactions", {"account_id": account.id, "start_date": day, "end_date": day})
    assert ranged and all(t.date == day for t in ranged)
    merchant = every[0].merchant
    named = env.call("list_transactions", {"account_id": account.id, "merchant": merchant.lower()[:4]})
    assert any(t.merchant == merchant for t in named)
    with pytest.raises(ToolError):
        env.call("list_transactions", {"account_id": account.id, "start_date": "last week"})


def test_unknown_ids_are_tool_errors_not_policy(env: Environment) -> None:
    for name, args in (("get_account", {"account_id": "ACC-000000"}),
                       ("dispute_transaction", {"transaction_id": "TXN-00000000", "reason": "wrong amount"}),
                       ("freeze_card", {"card_id": "CRD-0000000"}),
                       ("pay_payee", {"from_account_id": "ACC-000000", "payee_id": "PYE-0000",
                                      "amount": 5.0})):
        with pytest.raises(ToolError) as info:
            env.call(name, args)
        assert not isinstance(info.value, PolicyViolation)


# --- writes: happy paths ----------------------------------------------------------------------------

def test_transfer_between_own_accounts_moves_money(env: Environment) -> None:
    state = _state(env)
    source = _account(env, lambda a: a.status == "active" and a.remaining_limit >= 50 and a.balance >= 50
                      and any(state.accounts[b].status == "active" and b != a.id
                              for b in state.customers[a.customer_id].account_ids))
    target_id = next(b for b in state.customers[source.customer_id].account_ids
                     if b != source.id and state.accounts[b].status == "active")
    before = state.accounts[target_id].balance
    transfer = env.call("transfer_between_accounts", {"from_account_id": source.id,
                                                      "to_account_id": target_id, "amount": 50.0})
    assert transfer.from_balance_after == round(source.balance - 50, 2)
    assert state.accounts[source.id].transferred_today == round(source.transferred_today + 50, 2)
    assert state.accounts[target_id].balance == round(before + 50, 2)
    assert state.transfers[transfer.id] == transfer


def test_dispute_a_posted_recent_charge(env: Environment) -> None:
    txn = _txn(env, _disputable)
    dispute = env.call("dispute_transaction", {"transaction_id": txn.id, "reason": "wrong amount"})
    assert dispute.status == "under review" and dispute.amount == txn.amount
    assert _state(env).transactions[txn.id].dispute_id == dispute.id
    _refused(env, "dispute_transaction", {"transaction_id": txn.id, "reason": "wrong amount"},
             "dispute_once")


def test_freeze_unfreeze_and_replace_a_card(env: Environment) -> None:
    card = _card(env, lambda c: c.status == "active")
    _refused(env, "replace_card", {"card_id": card.id, "reason": "lost"}, "lost_frozen_first")
    assert env.call("freeze_card", {"card_id": card.id}).status == "frozen"
    _refused(env, "freeze_card", {"card_id": card.id}, "freeze_active")
    result = env.call("replace_card", {"card_id": card.id, "reason": "lost"})
    old, new = result["old_card"], result["new_card"]
    assert old["status"] == "replaced" and old["replaced_by"] == new["id"]
    assert new["status"] == "active" and new["last_four"] != card.last_four
    assert new["id"] in _state(env).customers[card.customer_id].card_ids
    _refused(env, "unfreeze_card", {"card_id": new["id"]}, "unfreeze_frozen")
    _refused(env, "replace_card", {"card_id": card.id, "reason": "damaged"}, "replace_eligible")


def test_update_phone(env: Environment) -> None:
    customer = next(iter(_state(env).customers.values()))
    profile = env.call("update_phone", {"customer_id": customer.id, "phone": "555-000-1212"})
    assert profile["phone"] == "555-000-1212" == _state(env).customers[customer.id].phone


# --- writes: each rule refused with its id ------------------------------------------------------------

def test_money_rules(env: Environment) -> None:
    state = _state(env)

    def sibling(a: Account) -> str | None:
        return next((b for b in state.customers[a.customer_id].account_ids
                     if b != a.id and state.accounts[b].status == "active"), None)

    source = _account(env, lambda a: a.status == "active" and sibling(a) is not None
                      and a.balance > a.remaining_limit + 10)
    target = sibling(source)
    args = {"from_account_id": source.id, "to_account_id": target}
    _refused(env, "transfer_between_accounts", {**args, "amount": source.remaining_limit + 5},
             "transfer_limit")
    _refused(env, "transfer_between_accounts", {**args, "amount": -5.0}, "transfer_limit")
    poor = _account(env, lambda a: a.status == "active" and a.balance < a.remaining_limit - 1
                    and sibling(a) is not None)
    _refused(env, "transfer_between_accounts", {"from_account_id": poor.id, "to_account_id": sibling(poor),
                                                "amount": round(poor.balance + 1, 2)}, "sufficient_funds")
    frozen = _account(env, lambda a: a.status != "active" and a.balance > 10 and a.remaining_limit > 10)
    other = next(b for b in state.customers[frozen.customer_id].account_ids if b != frozen.id) \
        if len(state.customers[frozen.customer_id].account_ids) > 1 else source.id
    _refused(env, "transfer_between_accounts", {"from_account_id": frozen.id, "to_account_id": other,
                                                "amount": 5.0}, "account_active")
    _refused(env, "transfer_between_accounts", {**args, "to_account_id": source.id, "amount": 5.0},
             "own_accounts")
    stranger = _account(env, lambda a: a.customer_id != source.customer_id and a.status == "active")
    _refused(env, "transfer_between_accounts", {**args, "to_account_id": stranger.id, "amount": 5.0},
             "own_accounts")
    payee = next(p for p in state.payees.values() if p.customer_id != source.customer_id)
    _refused(env, "pay_payee", {"from_account_id": source.id, "payee_id": payee.id, "amount": 5.0},
             "payee_owned")


def test_dispute_rules(env: Environment) -> None:
    pending = _txn(env, lambda t: t.status == "pending" and not t.disputed)
    _refused(env, "dispute_transaction", {"transaction_id": pending.id, "reason": "wrong amount"},
             "dispute_posted")
    old = _txn(env, lambda t: t.status == "posted" and days_ago(t.date) > 60 and not t.disputed)
    _refused(env, "dispute_transaction", {"transaction_id": old.id, "reason": "wrong amount"},
             "dispute_window")
    disputed = _txn(env, lambda t: t.disputed and days_ago(t.date) <= 60)
    _refused(env, "dispute_transaction", {"transaction_id": disputed.id, "reason": "wrong amount"},
             "dispute_once")
    fine = _txn(env, _disputable)
    _refused(env, "dispute_transaction", {"transaction_id": fine.id, "reason": "changed my mind"},
             "dispute_reason")
    large = _txn(env, lambda t: t.status == "posted" and not t.disputed and days_ago(t.date) <= 60
                 and t.amount > DISPUTE_THRESHOLD)
    _refused(env, "dispute_transaction", {"transaction_id": large.id, "reason": "wrong amount"},
             "dispute_threshold")


def test_card_rules(env: Environment) -> None:
    closed = _card(env, lambda c: c.status in ("closed", "replaced"))
    _refused(env, "freeze_card", {"card_id": closed.id}, "freeze_active")
    _refused(env, "unfreeze_card", {"card_id": closed.id}, "unfreeze_frozen")
    _refused(env, "replace_card", {"card_id": closed.id, "reason": "damaged"}, "replace_eligible")
    frozen = _card(env, lambda c: c.status == "frozen")
    _refused(env, "replace_card", {"card_id": frozen.id, "reason": "bored of it"}, "replace_eligible")
    active = _card(env, lambda c: c.status == "active")
    _refused(env, "replace_card", {"card_id": active.id, "reason": "stolen"}, "lost_frozen_first")


def test_policy_breaches_reports_own_account(domain: BankingDomain) -> None:
    state = domain.template
    assert isinstance(state, BankingState)
    card = next(c for c in state.cards.values() if c.status == "active")
    other = next(c for c in state.customers if c != card.customer_id)
    assert domain.policy_breaches(state, "freeze_card", {"card_id": card.id}, other) == ["own_account"]
    assert domain.policy_breaches(state, "freeze_card", {"card_id": card.id}, card.customer_id) == []
    txn = next(iter(state.transactions.values()))
    assert domain.account_owner(state, {"transaction_id": txn.id}) == \
        state.accounts[txn.account_id].customer_id


def test_ids_with_or_without_their_dash(domain: BankingDomain) -> None:
    assert domain.canonical_ids("acc204518 and ACC 204518 and CRD-5521903") == \
        "ACC-204518 and ACC-204518 and CRD-5521903"
    assert domain.canonical_ids("TXN40918273") == "TXN-40918273"


# --- descriptions and the sampler ----------------------------------------------------------------------

def test_descriptions_name_exactly_one_charge(domain: BankingDomain) -> None:
    state = domain.template
    assert isinstance(state, BankingState)
    rng = random.Random(3)
    made = 0
    for account in list(state.accounts.values())[:20]:
        history = [state.transactions[t].model_dump(mode="json") for t in account.transaction_ids]
        for txn in history[:10]:
            text = describe(txn, history, rng)
            if text is None:
                continue
            made += 1
            assert [t["id"] for t in history if parse_description(text).fits(t)] == [txn["id"]]
    assert made > 100
    assert parse_description("the coffee shop charge last Tuesday").day == "2026-06-16"
    assert parse_description("the $54.20 gas station charge").amount == 54.2


def _sample(domain: BankingDomain, seed: int) -> Any:
    return BankingTaskSampler(domain).sample(random.Random(seed), 3, p_indirect=0.5, p_revision=0.25,
                                             p_redirect=0.15, p_read_only=0.15)


def test_sampler_is_deterministic(domain: BankingDomain) -> None:
    assert _sample(domain, 11) == _sample(domain, 11)
    assert any(_sample(domain, 11) != _sample(domain, s) for s in range(12, 16))


def test_sampler_draws_every_kind_and_ground_truth_runs(domain: BankingDomain) -> None:
    kinds: Counter[str] = Counter()
    for seed in range(250):
        try:
            task = _sample(domain, seed)
        except TaskRejected:
            continue
        env = domain.environment()
        for call in task.auth_calls + [c for i in task.intents for c in i.calls]:
            env.call(call.name, call.arguments)
        kinds.update(i.kind for i in task.intents)
        escalated = [k for k, i in enumerate(task.intents) if i.kind == "dispute_escalated"]
        assert not escalated or escalated == [len(task.intents) - 1]  # a hand-over ends the task
    assert set(kinds) == set(domain.intents)


def test_refusal_outputs_are_the_blocking_fact(domain: BankingDomain) -> None:
    seen = set()
    for seed in range(300):
        try:
            task = _sample(domain, seed)
        except TaskRejected:
            continue
        for intent in task.intents:
            if intent.kind == "dispute_refused":
                assert all(c.kind == "read" for c in intent.calls)
                seen.add(intent.outputs[0].key)
    assert seen == {"status", "date", "dispute_id"}


def test_check_domain_small(domain: BankingDomain) -> None:
    """60 blueprints (about 7 s): every oracle episode passes, every drawn fault is caught."""
    from trajforge.evaluation.domain_check import check_domain

    report = check_domain(domain, 60)
    assert report.oracle_pass_rate == 1.0, report.examples
    assert not report.missed(), report.examples
    assert not report.undeclared


def test_sample_planned_keeps_the_shape(domain: BankingDomain) -> None:
    from trajforge.environments.tasks import IntentPlan, TaskPlan

    sampler = BankingTaskSampler(domain)
    plan = TaskPlan(auth_tool="find_customer_by_email",
                    intents=(IntentPlan("dispute_charge", indirect=True),
                             IntentPlan("transfer_funds", revision=True)))
    made = 0
    for seed in range(60):
        try:
            task = sampler.sample_planned(random.Random(seed), plan)
        except TaskRejected:
            continue
        made += 1
        assert [i.kind for i in task.intents] == ["dispute_charge", "transfer_funds"]
        assert task.auth_calls[0].name == "find_customer_by_email" and set(task.identity) == {"email", "passcode"}
        assert task.intents[0].slots["account"].startswith("my ") and task.intents[1].revision is not None
    assert made >= 5
