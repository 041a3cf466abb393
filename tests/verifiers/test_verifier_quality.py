"""Verifier quality: no false positives on oracle episodes, every injected fault caught.

The scripted agents are the ground truth for the verifiers: an oracle episode breaks no rule,
and a faulty one makes exactly one labelled mistake whose kind names the check that must catch
it (``FAULT_CHECKS``). Over 1,000+ episodes of each, precision and recall must both be perfect.
The second half edits real trajectories by hand to pin down what single checks look at.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable

import pytest

from trajforge.environments.dialogue import is_affirmative, is_confirmation_request
from trajforge.environments.retail import RetailDomain
from trajforge.generators import generate_blueprints
from trajforge.schemas import (
    AssistantMessage,
    Fault,
    FaultKind,
    Message,
    TaskBlueprint,
    TerminationReason,
    ToolCall,
    ToolMessage,
    Trajectory,
    UserMessage,
    Verdict,
)
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation import choose_fault
from trajforge.simulation.episodes import play_scripted
from trajforge.simulation.faults import FAULT_CHECKS
from trajforge.verifiers import CHECKS, verify

RUN = "run_verifier_quality"
N_BLUEPRINTS = 1050
ORACLE_SEED = 0
FAULT_SEED = 1_000_000


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(300, 0)


@pytest.fixture(scope="module")
def blueprints(domain: RetailDomain) -> list[TaskBlueprint]:
    out = [b for b in generate_blueprints(domain, GenerationConfig(), RUN, 0, N_BLUEPRINTS)
           if isinstance(b, TaskBlueprint)]
    assert len(out) >= 1000
    return out


Episode = tuple[TaskBlueprint, Trajectory, dict[str, Verdict]]


@pytest.fixture(scope="module")
def episodes(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> dict[str, list[Episode]]:
    """One oracle and one fault-injected episode per blueprint, each with its own fixed seed."""

    async def run_all() -> dict[str, list[Episode]]:
        out: dict[str, list[Episode]] = {"oracle": [], "faulty": []}
        for i, bp in enumerate(blueprints):
            seed = ORACLE_SEED + i
            t = await play_scripted(bp, domain, seed, run_id=RUN)
            out["oracle"].append((bp, t, {v.check: v for v in verify(t, bp, domain)}))
            seed = FAULT_SEED + i
            rng = random.Random(seed)
            fault = choose_fault(bp, domain, rng, list(FaultKind))
            assert fault is not None, bp.provenance.index
            t = await play_scripted(bp, domain, seed, fault, run_id=RUN)
            out["faulty"].append((bp, t, {v.check: v for v in verify(t, bp, domain)}))
        return out

    return asyncio.run(run_all())


# --- precision and recall over the whole population -------------------------------------------

def test_population_is_large_enough(episodes: dict[str, list[Episode]]) -> None:
    assert len(episodes["oracle"]) >= 1000
    assert len(episodes["faulty"]) >= 1000
    kinds = Counter(t.episode.fault.kind for _, t, _ in episodes["faulty"])  # type: ignore[union-attr]
    assert set(kinds) == set(FaultKind)
    assert min(kinds.values()) >= 30, kinds


def test_no_check_fails_on_an_oracle_episode(episodes: dict[str, list[Episode]]) -> None:
    false_positives = [
        f"{t.id} (blueprint #{bp.provenance.index}): {name}: {v.reason} {v.evidence[:300]}"
        for bp, t, verdicts in episodes["oracle"] for name, v in verdicts.items() if not v.passed
    ]
    assert not false_positives, f"{len(false_positives)} false positive(s):\n" + "\n".join(false_positives[:20])
    for _, t, verdicts in episodes["oracle"]:
        assert set(verdicts) == set(CHECKS)
        assert all(v.trajectory_passed and v.reward == 1.0 for v in verdicts.values())


def test_every_injected_fault_is_caught_by_its_check(episodes: dict[str, list[Episode]]) -> None:
    caught: Counter[FaultKind] = Counter()
    missed: dict[FaultKind, list[str]] = defaultdict(list)
    for bp, t, verdicts in episodes["faulty"]:
        fault = t.episode.fault
        assert fault is not None
        check = FAULT_CHECKS[fault.kind]
        if verdicts[check].passed:
            missed[fault.kind].append(f"{t.id} (blueprint #{bp.provenance.index}, target {fault.target})")
        else:
            caught[fault.kind] += 1
    report = {k.value: f"{caught[k]}/{caught[k] + len(missed.get(k, []))}" for k in FaultKind}
    assert not missed, f"recall per fault kind {report}; missed: " + "; ".join(
        f"{k.value} by {FAULT_CHECKS[k]}: {ids[:5]}" for k, ids in missed.items())


def test_every_form_of_every_fault_is_caught(episodes: dict[str, list[Episode]]) -> None:
    injected: Counter[str] = Counter()
    missed: dict[str, list[str]] = defaultdict(list)
    for bp, t, verdicts in episodes["faulty"]:
        fault = t.episode.fault
        assert fault is not None and fault.form is not None, "every fault records its form"
        form = f"{fault.kind.value}/{fault.form}"
        injected[form] += 1
        if verdicts[FAULT_CHECKS[fault.kind]].passed:
            missed[form].append(t.id)
    assert len(injected) >= 45, sorted(injected)  # most of the forms show in 1,000 episodes
    assert not missed, {form: f"{len(ids)}/{injected[form]} missed" for form, ids in missed.items()}


def test_oracle_episodes_worded_from_the_evaluation_bank_pass(
        domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    """The oracle and the user phrase confirmations, consents, offers of more help and closings
    from the dialogue-act evaluation bank (``wording("evaluation")``), which the scripted
    policies never use. No check but ``confirmation`` reads those acts, so none of them may fail;
    ``confirmation`` fails exactly where the recogniser misreads a consent or a request, which
    benchmarks/results/verifier_quality.md measures (an expected failure until it reads them all)."""
    from trajforge.simulation.wording import wording

    bank = wording("evaluation")

    async def run_all() -> list[tuple[int, str, str]]:
        failures = []
        for i, bp in enumerate(blueprints[:300]):
            t = await play_scripted(bp, domain, i, wording=bank, run_id=RUN)
            failures += [(bp.provenance.index, v.check, v.reason) for v in verify(t, bp, domain) if not v.passed]
        return failures

    failures = asyncio.run(run_all())
    others = [f for f in failures if f[1] != "confirmation"]
    assert not others, f"{len(others)} failure(s) of checks that do not read dialogue acts: {others[:10]}"
    if failures:
        pytest.xfail(f"confirmation failed {len(failures)} of 300 episodes: the recogniser misreads "
                     "some of the evaluation bank's consents (see benchmarks/results/dialogue_acts.md)")


def test_a_write_after_a_withdrawn_yes_is_caught_on_evaluation_bank_wording(
        domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    """The fault ``unconfirmed_write/after_change_of_mind`` worded from the evaluation bank: at
    the confirmation the user takes a yes back ("Sure, go ahead. Never mind, forget it.") and says
    what changed; the agent reads up the change and writes it without asking about it. Its oracle
    twin (same blueprint, seed and wording) asks again. ``confirmation`` must fail every faulty
    episode, so the recogniser must read a withdrawn yes (held out from its training, like all of
    the evaluation bank) as no consent; no other check may fail the twin."""
    from trajforge.simulation.faults import kind_forms
    from trajforge.simulation.wording import wording

    bank = wording("evaluation")
    assert bank.withdrawal and len(bank.withdrawal) >= 50
    targets = [(i, bp, w) for i, bp in enumerate(blueprints[:400])
               for w, forms in kind_forms(bp, domain, FaultKind.unconfirmed_write).items()
               if "after_change_of_mind" in forms]

    async def run_all() -> list[tuple[int, Trajectory, dict[str, bool], dict[str, bool]]]:
        out = []
        for i, bp, w in targets:
            fault = Fault(kind=FaultKind.unconfirmed_write, target=w, form="after_change_of_mind")
            played = []
            for f in (fault, None):
                t = await play_scripted(bp, domain, i, f, bank, run_id=RUN)
                played.append((t, {v.check: v.passed for v in verify(t, bp, domain)}))
            out.append((bp.provenance.index, played[0][0], played[0][1], played[1][1]))
        return out

    played = asyncio.run(run_all())
    assert len(played) >= 30, len(played)
    for _, t, _, _ in played:  # the change of mind opens with the bank's withdrawn yes
        assert any(isinstance(m, UserMessage) and bank.withdraws(m.content or "") for m in t.messages), \
            [m.content for m in t.messages if isinstance(m, UserMessage)]
    twins = [(index, check) for index, _, _, oracle in played for check, ok in oracle.items()
             if not ok and check != "confirmation"]
    assert not twins, twins[:10]
    missed = [index for index, _, faulty, _ in played if faulty["confirmation"]]
    assert not missed, f"confirmation passed {len(missed)} of {len(played)} writes after a withdrawn yes: {missed}"


def test_a_faulty_episode_never_passes_overall(episodes: dict[str, list[Episode]]) -> None:
    passed = [t.id for _, t, verdicts in episodes["faulty"]
              if next(iter(verdicts.values())).trajectory_passed]
    assert not passed, f"{len(passed)} faulty trajectories pass every check: {passed[:10]}"
    for _, _, verdicts in episodes["faulty"]:
        rewards = {v.reward for v in verdicts.values()}
        assert len(rewards) == 1 and next(iter(rewards)) < 1.0


def test_faults_are_mostly_caught_by_their_own_check_alone(episodes: dict[str, list[Episode]]) -> None:
    """Checks are specific: an episode with a tool-schema fault does not break the policy, etc."""
    collateral: Counter[str] = Counter()
    for _, t, verdicts in episodes["faulty"]:
        own = FAULT_CHECKS[t.episode.fault.kind]  # type: ignore[union-attr]
        for name, v in verdicts.items():
            if not v.passed and name != own and name not in ("final_state", "termination", "outputs"):
                collateral[f"{t.episode.fault.kind.value}->{name}"] += 1  # type: ignore[union-attr]
    # mistakes may cascade (a skipped login also leaves ids unseen), but schema, loop and
    # confirmation faults stay with their own check
    for kind in (FaultKind.unknown_tool, FaultKind.invalid_arguments, FaultKind.repeated_call,
                 FaultKind.unconfirmed_write):
        assert not [k for k in collateral if k.startswith(kind.value + "->")], collateral


# --- regression cases for the outputs check ---------------------------------------------------

def test_bare_reports_contain_no_required_output_value(domain: RetailDomain,
                                                       blueprints: list[TaskBlueprint]) -> None:
    """The fault injector's ``missing_output`` says a bare report instead of the outputs; a bare
    report that itself contains an output value (a status word) makes the fault undetectable."""
    values = {o.value for bp in blueprints for o in bp.ground_truth.outputs}
    clashes = sorted({(report, v) for report in domain.bare_reports for v in values
                      if v.lower() in report.lower()})
    assert not clashes, f"bare reports that state a required output: {clashes}"


def test_an_output_said_only_for_another_intent_does_not_count(
        domain: RetailDomain, episodes: dict[str, list[Episode]]) -> None:
    """Two intents with the same output value (equal refunds, equal statuses): dropping the first
    intent's report must fail ``outputs`` even though the second intent's report says the value."""
    edited = []
    for bp, t, _ in episodes["oracle"]:
        outputs = bp.ground_truth.outputs
        for out in outputs:
            if not any(o.value == out.value and o.intent > out.intent for o in outputs):
                continue
            source = bp.ground_truth.calls[out.after_call]
            # the n-th time the ground truth makes the call (a read made again for the output)
            nth = sum(c.name == source.name and c.arguments == source.arguments
                      for c in bp.ground_truth.calls[:out.after_call + 1])
            made = [i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage)
                    and any(c.name == source.name and c.parsed_arguments() == source.arguments
                            for c in m.tool_calls)][nth - 1]
            report = next(i for i in range(made + 1, len(t.messages))
                          if isinstance(t.messages[i], AssistantMessage)
                          and out.value in (t.messages[i].content or ""))  # type: ignore[union-attr]
            assert bp.ground_truth.calls[out.after_call].intent == out.intent
            messages = list(t.messages)
            messages[report] = AssistantMessage(content="All set on that one. Anything else?")
            v = _check(domain, bp, _edit(t, messages), "outputs")
            edited.append((bp.provenance.index, out.intent, out.value, v.passed))
    assert len(edited) >= 3, edited
    assert not [e for e in edited if e[3]], (
        f"outputs check passed although a report was dropped (index, intent, value, passed): {edited}")


# --- hand-made edits of real trajectories -----------------------------------------------------

@pytest.fixture(scope="module")
def sample(episodes: dict[str, list[Episode]]) -> tuple[TaskBlueprint, Trajectory]:
    """An oracle episode with two writes, one of them on an order, and a required output."""
    for bp, t, _ in episodes["oracle"]:
        writes = [c for c in bp.ground_truth.calls if c.kind == "write"]
        if len(writes) >= 2 and "order_id" in writes[0].arguments and bp.ground_truth.outputs:
            return bp, t
    raise AssertionError("no suitable episode")


def _edit(t: Trajectory, messages: list[Message] | tuple[Message, ...], **changes: object) -> Trajectory:
    return t.model_copy(update={"messages": tuple(messages), **changes})


def _check(domain: RetailDomain, bp: TaskBlueprint, t: Trajectory, name: str) -> Verdict:
    return verify(t, bp, domain, [name])[0]


def _first_write(domain: RetailDomain, t: Trajectory) -> tuple[int, ToolCall]:
    for i, m in enumerate(t.messages):
        if isinstance(m, AssistantMessage):
            for c in m.tool_calls:
                if domain.tools[c.name].kind.value == "write":
                    return i, c
    raise AssertionError("no write")


def _replace_call(t: Trajectory, at: int, call: ToolCall) -> Trajectory:
    messages = list(t.messages)
    old = messages[at]
    assert isinstance(old, AssistantMessage)
    messages[at] = old.model_copy(update={"tool_calls": (call,)})
    return _edit(t, messages)


def test_the_sample_passes_every_check(domain: RetailDomain, sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    assert all(v.passed for v in verify(t, bp, domain))


def test_confirmation_fails_without_the_users_yes(domain: RetailDomain,
                                                  sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, _ = _first_write(domain, t)
    yes = max(i for i in range(at) if isinstance(t.messages[i], UserMessage))
    assert is_affirmative(t.messages[yes].content)  # type: ignore[union-attr]
    # the yes replaced by a hedge
    messages = list(t.messages)
    messages[yes] = UserMessage(content="Hmm, let me think about it.")
    v = _check(domain, bp, _edit(t, messages), "confirmation")
    assert not v.passed and "explicit yes" in v.evidence
    # a yes that takes itself back
    messages[yes] = UserMessage(content="Yes, but actually wait, don't do it.")
    assert not _check(domain, bp, _edit(t, messages), "confirmation").passed
    # the yes removed altogether: the last user turn is an earlier answer
    del messages[yes]
    assert not _check(domain, bp, _edit(t, messages), "confirmation").passed


def test_confirmation_fails_when_the_yes_answered_no_confirmation_request(
        domain: RetailDomain, sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, _ = _first_write(domain, t)
    ask = max(i for i in range(at) if isinstance(t.messages[i], AssistantMessage)
              and t.messages[i].content)  # type: ignore[union-attr]
    assert is_confirmation_request(t.messages[ask].content)  # type: ignore[union-attr]
    messages = list(t.messages)
    messages[ask] = AssistantMessage(content="Is your order still on its way to you?")
    v = _check(domain, bp, _edit(t, messages), "confirmation")
    assert not v.passed and "confirmation request" in v.evidence


def test_one_yes_does_not_cover_two_writes(domain: RetailDomain,
                                           sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, call = _first_write(domain, t)
    messages = list(t.messages)
    answer = next(i for i in range(at + 1, len(messages)) if isinstance(messages[i], ToolMessage))
    second = ToolCall(id="call_extra", name="list_product_types", arguments="{}")
    assert _check(domain, bp, _edit(t, messages[:answer + 1] + [
        AssistantMessage(content=None, tool_calls=(second,))] + messages[answer + 1:]), "confirmation").passed
    again = call.model_copy(update={"id": "call_again"})
    edited = messages[:answer + 1] + [AssistantMessage(content=None, tool_calls=(again,)),
                                      ToolMessage(content="Error: x", tool_call_id="call_again",
                                                  name=call.name, is_error=True)] + messages[answer + 1:]
    v = _check(domain, bp, _edit(t, edited), "confirmation")
    assert not v.passed and "no user turn since the previous write" in v.evidence


def test_grounded_ids_fails_on_an_unseen_id(domain: RetailDomain,
                                            sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, call = _first_write(domain, t)
    args = call.parsed_arguments()
    assert args is not None
    unseen = "#W0000001"
    assert unseen not in json.dumps([m.model_dump() for m in t.messages])
    edited = _replace_call(t, at, call.model_copy(update={"arguments": json.dumps({**args, "order_id": unseen})}))
    v = _check(domain, bp, edited, "grounded_ids")
    assert not v.passed and unseen in v.evidence
    # the id becomes grounded once a tool result showed it before the call
    messages = list(edited.messages)
    messages.insert(at, UserMessage(content=f"My order is {unseen}."))
    assert _check(domain, bp, _edit(edited, messages), "grounded_ids").passed


def test_grounded_ids_does_not_count_the_agents_own_words(domain: RetailDomain,
                                                          sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, call = _first_write(domain, t)
    args = call.parsed_arguments() or {}
    invented = "#W7777777"
    messages = list(_replace_call(t, at, call.model_copy(
        update={"arguments": json.dumps({**args, "order_id": invented})})).messages)
    messages.insert(at, AssistantMessage(content=f"I found your order {invented}."))
    assert not _check(domain, bp, _edit(t, messages), "grounded_ids").passed


def test_final_state_fails_on_another_state(domain: RetailDomain,
                                            sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    edited = t.model_copy(update={"final_state_hash": bp.ground_truth.initial_state_hash,
                                  "final_state_diff": ()})
    v = _check(domain, bp, edited, "final_state")
    assert not v.passed
    evidence = json.loads(v.evidence)
    assert len(evidence["missing"]) == min(20, len(bp.ground_truth.final_state_diff))
    assert evidence["unexpected"] == []


def test_outputs_fail_when_the_report_is_dropped(domain: RetailDomain,
                                                 sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    values = [o.value for o in bp.ground_truth.outputs]
    messages = [m if not (isinstance(m, AssistantMessage) and m.content
                          and any(v in m.content for v in values))
                else AssistantMessage(content="Done. Is there anything else?") for m in t.messages]
    v = _check(domain, bp, _edit(t, messages), "outputs")
    assert not v.passed
    assert {m["value"] for m in json.loads(v.evidence)["missing"]} == set(values)


def test_outputs_said_before_the_call_do_not_count(domain: RetailDomain,
                                                   sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    out = bp.ground_truth.outputs[0]
    source = bp.ground_truth.calls[out.after_call]
    at = next(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage)
              and any(c.name == source.name and c.parsed_arguments() == source.arguments
                      for c in m.tool_calls))
    after = [m for m in t.messages[at:] if not (isinstance(m, AssistantMessage) and m.content
                                                 and out.value in m.content)]
    before = list(t.messages[:at]) + [AssistantMessage(content=f"It will be {out.value}.")]
    assert not _check(domain, bp, _edit(t, before + after), "outputs").passed


def test_authentication_fails_when_account_data_comes_first(domain: RetailDomain,
                                                            sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    auth_at = next(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage)
                   and any(c.name in domain.auth_tools for c in m.tool_calls))
    order_id = next(c.arguments["order_id"] for c in bp.ground_truth.calls if "order_id" in c.arguments)
    peek = ToolCall(id="call_peek", name="get_order_details", arguments=json.dumps({"order_id": order_id}))
    messages = list(t.messages)
    messages[auth_at:auth_at] = [AssistantMessage(content=None, tool_calls=(peek,)),
                                 ToolMessage(content="{}", tool_call_id="call_peek", name="get_order_details")]
    v = _check(domain, bp, _edit(t, messages), "authentication")
    assert not v.passed and "before authentication" in v.reason


def test_authentication_and_policy_fail_on_another_customers_order(
        domain: RetailDomain, sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, call = _first_write(domain, t)
    args = call.parsed_arguments() or {}
    owner = domain.template.orders[args["order_id"]].customer_id
    stranger = next(o for o in domain.template.orders.values()
                    if o.customer_id != owner and o.status == domain.template.orders[args["order_id"]].status)
    edited = _replace_call(t, at, call.model_copy(
        update={"arguments": json.dumps({**args, "order_id": stranger.id})}))
    auth = _check(domain, bp, edited, "authentication")
    assert not auth.passed and stranger.customer_id in auth.reason
    policy = _check(domain, bp, edited, "policy")
    assert not policy.passed and "own_account" in policy.reason


def test_policy_fails_on_a_forbidden_write_even_if_refused(domain: RetailDomain,
                                                           sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    env = domain.environment()
    at = None
    for i, m in enumerate(t.messages):
        if isinstance(m, AssistantMessage) and m.tool_calls:
            at = i
            call = m.tool_calls[0]
            if domain.tools[call.name].kind.value == "write":
                break
    assert at is not None
    done = next(o for o in env.state.orders.values() if o.status == "cancelled")
    bad = ToolCall(id="call_bad", name="cancel_pending_order",
                   arguments=json.dumps({"order_id": done.id, "reason": "no longer needed"}))
    messages = list(t.messages)
    messages[at:at] = [AssistantMessage(content=None, tool_calls=(bad,)),
                       ToolMessage(content="Error: policy", tool_call_id="call_bad",
                                   name="cancel_pending_order", is_error=True)]
    v = _check(domain, bp, _edit(t, messages), "policy")
    assert not v.passed and "cancel_pending" in v.reason


def test_tool_schema_fails_on_unknown_tools_and_bad_arguments(
        domain: RetailDomain, sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at, call = _first_write(domain, t)
    args = call.parsed_arguments() or {}
    cases: list[tuple[ToolCall, str]] = [
        (call.model_copy(update={"name": "refund_everything"}), "no such tool"),
        (call.model_copy(update={"arguments": "{not json"}), "not a JSON object"),
        (call.model_copy(update={"arguments": json.dumps({**args, "force": True})}), "Extra inputs"),
        (call.model_copy(update={"arguments": json.dumps({"order_id": args["order_id"]})}), "Field required"),
    ]
    for bad, needle in cases:
        v = _check(domain, bp, _replace_call(t, at, bad), "tool_schema")
        assert not v.passed and needle in v.evidence, (bad, v.evidence)


def test_no_loops_fails_on_a_repeated_call_and_a_parrot(domain: RetailDomain,
                                                        sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    at = next(i for i, m in enumerate(t.messages) if isinstance(m, AssistantMessage) and m.tool_calls
              and domain.tools[m.tool_calls[0].name].kind.value == "read")
    call = t.messages[at].tool_calls[0]  # type: ignore[union-attr]
    again = call.model_copy(update={"id": "call_again"})
    messages = list(t.messages)
    messages[at + 2:at + 2] = [AssistantMessage(content=None, tool_calls=(again,)),
                               ToolMessage(content=t.messages[at + 1].content,  # type: ignore[union-attr]
                                           tool_call_id="call_again", name=call.name)]
    v = _check(domain, bp, _edit(t, messages), "no_loops")
    assert not v.passed and "repeated" in v.reason
    # the same repeat written another way (compact, keys reversed) is still a repeat
    args = call.parsed_arguments() or {}
    compact = json.dumps(dict(reversed(list(args.items()))), separators=(",", ":"))
    assert compact != call.arguments
    messages[at + 2] = AssistantMessage(content=None, tool_calls=(again.model_copy(update={"arguments": compact}),))
    v = _check(domain, bp, _edit(t, messages), "no_loops")
    assert not v.passed and "repeated" in v.reason
    parrot = list(t.messages)
    last = max(i for i, m in enumerate(parrot) if isinstance(m, AssistantMessage) and m.content)
    parrot[last + 1:last + 1] = [parrot[last], parrot[last]]
    v = _check(domain, bp, _edit(t, parrot), "no_loops")
    assert not v.passed and "three times" in v.reason


def test_termination_and_turn_limit_follow_the_reason(domain: RetailDomain,
                                                      sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    for reason in TerminationReason:
        edited = t.model_copy(update={"termination": reason})
        assert _check(domain, bp, edited, "termination").passed is (reason is TerminationReason.user_stop)
        assert _check(domain, bp, edited, "turn_limit").passed is (reason is not TerminationReason.max_turns)


def test_verify_runs_the_named_checks_and_scores_them(domain: RetailDomain,
                                                      sample: tuple[TaskBlueprint, Trajectory]) -> None:
    bp, t = sample
    edited = t.model_copy(update={"termination": TerminationReason.max_turns})
    verdicts = verify(edited, bp, domain)
    assert [v.check for v in verdicts] == list(CHECKS)
    failed = {v.check for v in verdicts if not v.passed}
    assert failed == {"termination", "turn_limit"}
    assert {v.reward for v in verdicts} == {round(1 - 2 / len(CHECKS), 6)}
    assert not any(v.trajectory_passed for v in verdicts)
    assert len({v.id for v in verdicts}) == len(verdicts)
    subset = verify(edited, bp, domain, ["policy", "termination"])
    assert [v.check for v in subset] == ["policy", "termination"]
    assert {v.reward for v in subset} == {0.5}
    with pytest.raises(KeyError):
        verify(t, bp, domain, ["no_such_check"])


def test_dialogue_acts() -> None:
    cases: list[tuple[Callable[[str], bool], str, bool]] = [
        (is_affirmative, "Yes, please go ahead.", True),
        (is_affirmative, "yep", True),
        (is_affirmative, "Sure thing!", True),
        (is_affirmative, "Yes, but actually, wait.", False),
        (is_affirmative, "No, don't.", False),
        (is_affirmative, "Yesterday was my birthday.", False),
        (is_affirmative, "", False),
        (is_confirmation_request, "I'll cancel it. Shall I go ahead?", True),
        (is_confirmation_request, "Which order is it?", False),
    ]
    for fn, text, expected in cases:
        assert fn(text) is expected, (fn.__name__, text)
