"""The programmatic generator: a domain's draft task, plus a persona and a disclosure plan.

Blueprint ``i`` of a run depends only on (generation seed, i), never on shard layout, so a
resumed or extended run regenerates exactly the same blueprints. Every blueprint is validated
by executing its ground truth on a fresh state before any dialogue is simulated.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trajforge.environments.base import Domain, Environment, actor_of
from trajforge.environments.tasks import DraftTask, IntentSpec
from trajforge.errors import TaskRejected, ToolError
from trajforge.generators.behaviours import admitted, draw_behaviours, labelled, misstate_step
from trajforge.generators.scenario import goal_text, sample_scenario
from trajforge.schemas.blueprint import (
    Behaviour,
    BlueprintRejection,
    DisclosureStep,
    EnvironmentRef,
    GroundTruth,
    GroundTruthCall,
    Intent,
    Persona,
    Provenance,
    RequiredOutput,
    StructuralDescriptors,
    Style,
    TaskBlueprint,
    UserSpec,
    Volunteering,
)
from trajforge.schemas.config import GenerationConfig
from trajforge.schemas.ids import canonical_json, content_id, hash_seed, hash_stream

GENERATOR = "programmatic"
VERSION = "8"  # 2: goals composed from the domain's scenarios (generators.scenario); 3: policy-bound
# draws (GenerationConfig.p_policy_bound), value-conditioned situations only for facts the user tells;
# 4: user behaviours (generators.behaviours); 5: clarify steps (a description that fits several entities);
# 6: clarify steps in airline too ("my trip to Denver" when two eligible reservations fly there);
# 7: and in banking ("my savings account") and telecom ("my line on the Plus 15GB plan");
# 8: the wrong_detail behaviour (an identity detail a digit off, the lookup fails, the agent asks again)
TRAITS = ("impatient", "detail-oriented", "friendly", "skeptical", "apologetic", "busy")


def blueprint_seed(seed: int, index: int) -> int:
    return hash_seed(seed, index)


def sample_persona(rng: random.Random) -> Persona:
    return Persona(style=rng.choice(list(Style)), verbosity=rng.randint(1, 3),
                   patience=rng.randint(2, 5), volunteers=rng.choice(list(Volunteering)),
                   traits=tuple(sorted(rng.sample(TRAITS, rng.randint(0, 2)))))


def _volunteer(rng: random.Random, persona: Persona) -> bool:
    if persona.volunteers is Volunteering.high:
        return True
    return persona.volunteers is Volunteering.medium and rng.random() < 0.5


def _dependency_depth(results: list[str], calls: list[GroundTruthCall]) -> int:
    """Longest chain of calls where a call's argument value came out of an earlier result."""
    depth: list[int] = []
    for j, call in enumerate(calls):
        values = [str(x) for v in call.arguments.values() for x in (v if isinstance(v, list) else [v])
                  if str(x)]
        parents = [depth[i] for i in range(j) if any(v in results[i] for v in values)]
        depth.append(1 + max(parents, default=0))
    return max(depth, default=0)


def _topology(calls: list[GroundTruthCall]) -> str:
    names: list[str] = []
    for call in calls:
        if not names or names[-1] != call.name:
            names.append(call.name)
    return ">".join(names)


P_BEHAVIOUR: float = GenerationConfig.model_fields["p_behaviour"].default


def compose_blueprint(domain: Domain, draft: DraftTask, rng: random.Random, *, seed: int,
                      index: int, generator: str = GENERATOR, version: str = VERSION,
                      p_behaviour: float = P_BEHAVIOUR,
                      behaviours: tuple[Behaviour, ...] | None = None) -> TaskBlueprint:
    """The blueprint of ``draft``. Its user's behaviours are drawn (``p_behaviour``, from a
    stream of their own) unless ``behaviours`` are given (a variant keeps its parent's, where
    the task admits them)."""
    persona = sample_persona(rng)
    known: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for key, value in draft.identity.items():
        (known if persona.volunteers is Volunteering.high else hidden)[key] = value
    intents: list[Intent] = []
    disclosure: list[DisclosureStep] = []
    for k, intent in enumerate(draft.intents):
        first_kind = intent.initial_kind or intent.kind
        first_spec: IntentSpec = domain.intents[first_kind]
        said_first = {**intent.slots, **intent.initial_slots}
        if intent.revision:
            said_first[intent.revision[0]] = intent.revision[1]
        if intent.clarify:
            said_first[intent.clarify[0]] = intent.clarify[1]
        for slot in dict.fromkeys(first_spec.core_slots + first_spec.slots):
            if slot in said_first:
                core = slot in first_spec.core_slots
                (known if core or _volunteer(rng, persona) else hidden)[f"{k}.{slot}"] = said_first[slot]
        for slot, value in intent.slots.items():  # facts only the final kind needs
            known.setdefault(f"{k}.{slot}", value) if f"{k}.{slot}" in known else \
                hidden.setdefault(f"{k}.{slot}", value)
        disclosure.append(DisclosureStep(intent=k, action="reveal_intent",
                                         trigger="opening" if k == 0 else "after_previous_intent",
                                         value=first_kind))
        if intent.revision:
            disclosure.append(DisclosureStep(intent=k, action="revise", trigger="on_confirmation",
                                             fact=intent.revision[0],
                                             value=intent.slots[intent.revision[0]]))
        if intent.initial_kind:
            disclosure.append(DisclosureStep(intent=k, action="redirect", trigger="on_confirmation",
                                             value=intent.kind))
        if intent.clarify:
            disclosure.append(DisclosureStep(intent=k, action="clarify", trigger="on_question",
                                             fact=intent.clarify[0], value=intent.slots[intent.clarify[0]]))
        intents.append(Intent(kind=intent.kind, slots=intent.slots, initial_kind=intent.initial_kind,
                              outcome=domain.intents[intent.kind].outcome))

    calls: list[GroundTruthCall] = [GroundTruthCall(name=c.name, arguments=c.arguments, kind=c.kind,
                                                    intent=0, needs=c.needs)
                                    for c in draft.auth_calls]
    outputs: list[RequiredOutput] = []
    burdens: list[int] = []
    refused = [GroundTruthCall(name=c.name, arguments=c.arguments, kind=c.kind, intent=k, needs=c.needs)
               for k, intent in enumerate(draft.intents) for c in intent.refused]
    for k, intent in enumerate(draft.intents):
        offset = len(calls)
        calls += [GroundTruthCall(name=c.name, arguments=c.arguments, kind=c.kind, intent=k,
                                  needs=c.needs) for c in intent.calls]
        outputs += [RequiredOutput(intent=k, key=o.key, value=o.value, after_call=offset + o.after)
                    for o in intent.outputs]
        burdens += [intent.evidence_burden for c in intent.calls if c.kind == "write"]

    env = domain.environment()
    calls, outputs, results = _executed(env, calls, outputs, set(domain.auth_tools))
    writes = [c for c in calls if c.kind == "write"]
    rules = {"authenticate", "own_account"} | ({"confirm"} if writes else set())
    for call in writes:
        rules.update(domain.tool_rules.get(call.name, ()))
    scenario = sample_scenario(domain.scenario, domain, draft, rng, hidden)
    options = admitted(domain, hidden, intents, disclosure, {**known, **hidden})
    chosen = (set(behaviours) & set(options) if behaviours is not None
              else draw_behaviours(options, hash_stream("behaviours", seed), p_behaviour))
    if Behaviour.wrong_detail in chosen:
        step = misstate_step(domain, {**known, **hidden}, known, calls, hash_stream("wrong_detail", seed))
        if step is None:
            chosen.discard(Behaviour.wrong_detail)
        else:
            disclosure.append(step)
    user = UserSpec(persona=persona, goal=goal_text(domain, draft, scenario, rng), scenario=scenario,
                    known_facts=known, hidden_facts=hidden, intents=tuple(intents),
                    disclosure=tuple(disclosure), behaviours=labelled(chosen, intents))
    ground_truth = GroundTruth(calls=tuple(calls), initial_state_hash=domain.hasher.hash(domain.template),
                               final_state_hash=env.state_hash(), final_state_diff=env.diff(),
                               outputs=tuple(outputs), refused=tuple(refused))
    environment = EnvironmentRef(domain=domain.name, size=domain.size, seed=domain.seed)
    policy_rules = tuple(sorted(rules))
    structure = StructuralDescriptors(
        n_intents=len(intents), write_count=len(writes),
        read_count=sum(c.kind == "read" for c in calls),
        evidence_burden=tuple(burdens), dependency_depth=_dependency_depth(results, calls),
        tool_topology=_topology(calls),
        n_revisions=sum(d.action == "revise" for d in disclosure),
        n_redirects=sum(d.action == "redirect" for d in disclosure))
    return TaskBlueprint(
        id=TaskBlueprint.make_id(environment, user, ground_truth, policy_rules),
        environment=environment, user=user, ground_truth=ground_truth, policy_rules=policy_rules,
        structure=structure,
        provenance=Provenance(generator=generator, version=version, seed=seed, index=index))


def _executed(env: Environment, calls: list[GroundTruthCall], outputs: list[RequiredOutput],
              auth_tools: set[str]) -> tuple[list[GroundTruthCall], list[RequiredOutput], list[str]]:
    """The calls executed in order, with their results. A careful agent reads an entity once
    unless a write changed it, so a read identical to an earlier one (name and canonical
    arguments) that returns the earlier result again is left out of the ground truth; a read an
    output is said after stays (the agent looks again at what it is asked about directly), as
    do identity lookups. Outputs' ``after_call`` follow the calls kept."""
    anchors = {o.after_call for o in outputs}
    kept: list[GroundTruthCall] = []
    results: list[str] = []
    moved: dict[int, int] = {}
    seen: dict[str, str] = {}  # read -> its latest result
    for t, call in enumerate(calls):
        result = str(_run(env, call))
        key = f"{call.name}:{canonical_json(call.arguments)}"
        if (call.kind == "read" and t not in anchors and call.name not in auth_tools
                and seen.get(key) == result):
            continue
        if call.kind == "read":
            seen[key] = result
        moved[t] = len(kept)
        kept.append(call)
        results.append(result)
    return kept, [o.model_copy(update={"after_call": moved[o.after_call]}) for o in outputs], results


def _run(env: Environment, call: GroundTruthCall) -> object:
    try:
        result = env.call(call.name, call.arguments, actor_of(call.kind))
    except ToolError as exc:
        raise TaskRejected("ground_truth_call_failed", f"{call.name}: {exc}") from None
    from trajforge.environments.base import _result_text

    return _result_text(result)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _grounded(value: str, text: str) -> bool:
    """The output is in the result: verbatim, or as the same number (``40.60`` vs ``40.6``)."""
    if value in text:
        return True
    try:
        wanted = float(value)
    except ValueError:
        return False
    return any(abs(float(n) - wanted) < 0.005 for n in _NUMBER.findall(text))


@dataclass(frozen=True)
class BlueprintCheck:
    ok: bool
    reason: str = ""
    detail: str = ""


def validate_blueprint(bp: TaskBlueprint, domain: Domain) -> BlueprintCheck:
    """Execute the ground truth on a fresh state: every call succeeds, no policy rule breaks,
    the final state hash matches, each required output is in its call's result, and each
    intent's calls end as its kind's ``outcome`` says (a refusal writes nothing and the write it
    refuses breaks a rule once its calls have run, a hand-over ends with the transfer tool)."""
    for k, intent in enumerate(bp.user.intents):
        own = [c for c in bp.ground_truth.calls if c.intent == k]
        if intent.outcome == "refused" and any(c.kind == "write" for c in own):
            return BlueprintCheck(False, "outcome_mismatch", f"intent {k} {intent.kind} is refused but writes")
        if intent.outcome == "transferred" and (not own or own[-1].name != domain.transfer_tool):
            return BlueprintCheck(False, "outcome_mismatch",
                                  f"intent {k} {intent.kind} is handed over but does not end with "
                                  f"{domain.transfer_tool}")
    env = domain.environment()
    authenticated: str | None = None
    results: list[str] = []
    for i, call in enumerate(bp.ground_truth.calls):
        if call.kind == "write":
            breaches = domain.policy_breaches(env.state, call.name, call.arguments, authenticated)
            if breaches:
                return BlueprintCheck(False, "policy_breach", f"call {i} {call.name}: {breaches}")
        try:
            result = env.call(call.name, call.arguments, actor_of(call.kind))
        except ToolError as exc:
            return BlueprintCheck(False, "call_failed", f"call {i} {call.name}: {exc}")
        from trajforge.environments.base import _result_text

        results.append(_result_text(result))
        if call.name in domain.auth_tools:
            authenticated = str(result)
        last = i + 1 == len(bp.ground_truth.calls) or bp.ground_truth.calls[i + 1].intent != call.intent
        for refused in (r for r in bp.ground_truth.refused if last and r.intent == call.intent):
            if not domain.policy_breaches(env.state, refused.name, refused.arguments, authenticated):
                return BlueprintCheck(False, "outcome_mismatch",
                                      f"intent {call.intent} refuses {refused.name}, which breaks no rule")
    if env.state_hash() != bp.ground_truth.final_state_hash:
        return BlueprintCheck(False, "state_mismatch", "replayed final state differs")
    for out in bp.ground_truth.outputs:
        if not _grounded(out.value, results[out.after_call]):
            return BlueprintCheck(False, "output_not_grounded", f"{out.key}={out.value}")
    return BlueprintCheck(True)


POLICY_TRIES = 12  # extra draws for a blueprint drawn to be policy-bound


def policy_bound(domain: Domain, draft: DraftTask) -> bool:
    """Whether a correct agent refuses one of ``draft``'s intents or hands one over."""
    return any(domain.intents[i.kind].outcome != "done" for i in draft.intents)


def _draft(domain: Domain, sampler: Any, config: GenerationConfig, seed: int,
           rng: random.Random) -> DraftTask:
    """The blueprint's task. One in ``p_policy_bound`` (its own stream, so the others are the
    tasks they would be without it) is drawn again, from a stream per try, until one holds a
    refusal or a hand-over, up to ``POLICY_TRIES`` times; the first draw stands if none does."""
    n_intents = rng.randint(config.min_intents, config.max_intents)

    def sample(r: random.Random) -> DraftTask:
        return sampler.sample(r, n_intents, p_indirect=config.p_indirect_reference,
                              p_revision=config.p_revision, p_redirect=config.p_redirect,
                              p_read_only=config.p_read_only_intent)

    draft = sample(rng)
    if policy_bound(domain, draft) or hash_stream("bound", seed).random() >= config.p_policy_bound:
        return draft
    for attempt in range(POLICY_TRIES):
        try:
            other = sample(hash_stream("bound", seed, attempt))
        except TaskRejected:
            continue
        if policy_bound(domain, other):
            return other
    return draft


def _generate_one(domain: Domain, sampler: Any, config: GenerationConfig,
                  run_id: str, index: int) -> TaskBlueprint | BlueprintRejection:
    seed = blueprint_seed(config.seed, index)
    rng = random.Random(seed)
    bp_id = None
    try:
        draft = _draft(domain, sampler, config, seed, rng)
        bp = compose_blueprint(domain, draft, rng, seed=seed, index=index, p_behaviour=config.p_behaviour)
        bp_id = bp.id
        check = validate_blueprint(bp, domain)
    except TaskRejected as exc:
        check = BlueprintCheck(False, exc.reason, exc.detail)
    if check.ok:
        return bp
    return BlueprintRejection(
        id=content_id({"run_id": run_id, "index": index}, prefix="rj_"), run_id=run_id,
        domain=domain.name, index=index, seed=seed, generator=GENERATOR,
        reason=check.reason, detail=check.detail, blueprint_id=bp_id)


def _copy_rng(seed: int, index: int) -> random.Random:
    """The near-copy draw for index ``i`` uses its own stream, so originals are the same
    blueprints whatever ``near_copy_share`` is."""
    return hash_stream("copy", seed, index)


def is_near_copy(config: GenerationConfig, index: int) -> bool:
    return index > 0 and config.near_copy_share > 0 and \
        _copy_rng(config.seed, index).random() < config.near_copy_share


def _near_copy(domain: Domain, sampler: Any, config: GenerationConfig, run_id: str,
               index: int) -> TaskBlueprint | BlueprintRejection | None:
    """Blueprint ``index`` as a paraphrase of an earlier original (or None: no source found)."""
    from trajforge.generators.paraphrase import paraphrase_blueprint

    rng = _copy_rng(config.seed, index)
    rng.random()  # the draw ``is_near_copy`` made
    for _ in range(20):
        source = rng.randrange(index)
        if is_near_copy(config, source):
            continue
        original = _generate_one(domain, sampler, config, run_id, source)
        if isinstance(original, BlueprintRejection):
            continue
        seed = blueprint_seed(config.seed, index)
        bp = paraphrase_blueprint(original, rng, seed=seed, index=index, prose=domain.prose)
        check = validate_blueprint(bp, domain)
        if check.ok:
            return bp
        return BlueprintRejection(
            id=content_id({"run_id": run_id, "index": index}, prefix="rj_"), run_id=run_id,
            domain=domain.name, index=index, seed=seed, generator="paraphrase",
            reason=check.reason, detail=check.detail, blueprint_id=bp.id)
    return None


def generate_blueprints(domain: Domain, config: GenerationConfig, run_id: str, start: int,
                        stop: int) -> Iterator[TaskBlueprint | BlueprintRejection]:
    """Blueprints ``start..stop-1`` of a run, each validated; failures come as rejections.

    With ``near_copy_share`` > 0, that share of indices (drawn per index) are paraphrased
    copies of an earlier original (``generators.paraphrase``), for dedup evaluation."""
    sampler = domain.task_sampler()
    for index in range(start, stop):
        if is_near_copy(config, index):
            copy = _near_copy(domain, sampler, config, run_id, index)
            if copy is not None:
                yield copy
                continue
        yield _generate_one(domain, sampler, config, run_id, index)
