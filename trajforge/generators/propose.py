"""The LLM blueprint proposer.

For blueprint ``i``, a model sees real entities sampled from the domain's state (an account and
what it owns, say), the policy, the tools and the intent kinds, and proposes a task as JSON: the
user's identity, their intents with slot values, the ground-truth calls in order, and the values
the agent must tell the user. The proposal becomes a blueprint exactly as a programmatic draft
does (``compose_blueprint``: persona and disclosure plan are sampled here, not by the model),
and is validated by executing its ground truth and checking policy. A rejected proposal goes
back to the model with the exact error, for up to ``rounds`` rounds. An optional committee of
reviewer models votes on realism and solvability; a majority accepts. Every round is recorded
(``proposals`` table: round, reason, votes), so acceptance per round and per reason is one query.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, ValidationError

from trajforge.environments.base import Domain
from trajforge.environments.tasks import DraftCall, DraftIntent, DraftOutput, DraftTask
from trajforge.errors import LLMFailure, TaskRejected
from trajforge.generators.compose import (
    BlueprintCheck,
    blueprint_seed,
    compose_blueprint,
    validate_blueprint,
)
from trajforge.schemas.base import Record
from trajforge.schemas.blueprint import BlueprintRejection, ProposalRecord, TaskBlueprint
from trajforge.schemas.config import GenerationConfig, ModelConfig, ProposerConfig
from trajforge.schemas.ids import content_id
from trajforge.simulation.llm import EpisodeLedger, Gateway, ledgers_cost
from trajforge.simulation.llm_agent import episode_tag

GENERATOR = "llm_proposer"
VERSION = "2"  # 2: user behaviours (generators.behaviours)


class ProposedCall(Record):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["read", "write"]
    needs: tuple[str, ...] = Field(default=(), description="slots the user must give first, or 'identity'")


class ProposedOutput(Record):
    key: str
    value: str
    after: int = Field(ge=0, description="index into the intent's calls")


class ProposedIntent(Record):
    kind: str
    slots: dict[str, str]
    calls: list[ProposedCall]
    outputs: list[ProposedOutput] = Field(default_factory=list)
    evidence_burden: int = Field(default=0, ge=0)
    revision: tuple[str, str] | None = Field(default=None, description="(slot, value said first)")
    initial_kind: str | None = None
    initial_slots: dict[str, str] = Field(default_factory=dict)


class ProposedTask(Record):
    identity: dict[str, str]
    auth_calls: list[ProposedCall] = Field(min_length=1)
    intents: list[ProposedIntent] = Field(min_length=1, max_length=4)

    def to_draft(self) -> DraftTask:
        def call(c: ProposedCall) -> DraftCall:
            return DraftCall(c.name, dict(c.arguments), c.kind, tuple(c.needs))

        return DraftTask(
            identity=dict(self.identity), auth_calls=[call(c) for c in self.auth_calls],
            intents=[DraftIntent(kind=i.kind, slots=dict(i.slots), calls=[call(c) for c in i.calls],
                                 outputs=[DraftOutput(o.key, o.value, o.after) for o in i.outputs],
                                 evidence_burden=i.evidence_burden, revision=i.revision,
                                 initial_kind=i.initial_kind, initial_slots=dict(i.initial_slots))
                     for i in self.intents])

    @classmethod
    def from_draft(cls, draft: DraftTask) -> ProposedTask:
        def call(c: DraftCall) -> ProposedCall:
            return ProposedCall(name=c.name, arguments=c.arguments, kind=c.kind, needs=c.needs)

        return cls(identity=draft.identity, auth_calls=[call(c) for c in draft.auth_calls],
                   intents=[ProposedIntent(kind=i.kind, slots=i.slots, calls=[call(c) for c in i.calls],
                                           outputs=[ProposedOutput(key=o.key, value=o.value, after=o.after)
                                                    for o in i.outputs],
                                           evidence_burden=i.evidence_burden, revision=i.revision,
                                           initial_kind=i.initial_kind, initial_slots=i.initial_slots)
                            for i in draft.intents])


_JSON_BLOCK = re.compile(r"\{.*\}", re.S)


def parse_proposal(text: str | None, domain: Domain) -> ProposedTask:
    """The proposal in a model's answer, checked against the domain's intent kinds and slots.
    Raises ``TaskRejected`` with the exact problem."""
    match = _JSON_BLOCK.search(text or "")
    if not match:
        raise TaskRejected("no_json", "the answer holds no JSON object")
    try:
        proposal = ProposedTask.model_validate_json(match.group(0))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "proposal"
        raise TaskRejected("bad_schema", f"{where}: {error['msg']}") from None
    for k, intent in enumerate(proposal.intents):
        for kind in filter(None, (intent.kind, intent.initial_kind)):
            spec = domain.intents.get(kind)
            if spec is None:
                raise TaskRejected("unknown_intent", f"intents.{k}.kind {kind!r}; use one of "
                                                     f"{sorted(domain.intents)}")
        missing = [s for s in domain.intents[intent.kind].core_slots if s not in intent.slots]
        if missing:
            raise TaskRejected("missing_slots", f"intents.{k}.slots lacks {missing}")
        for call in intent.calls:
            if call.name not in domain.tools:
                raise TaskRejected("unknown_tool", f"intents.{k}: no tool {call.name!r}")
        if any(o.after >= len(intent.calls) for o in intent.outputs):
            raise TaskRejected("bad_output", f"intents.{k}.outputs: 'after' must index its calls")
    return proposal


def proposer_prompt(domain: Domain) -> str:
    kinds = {kind: {"writes": spec.writes, "slots": list(spec.slots), "core_slots": list(spec.core_slots)}
             for kind, spec in domain.intents.items()}
    tools = [spec.model_dump(mode="json")["function"] for spec in domain.tool_specs()]
    return "\n".join([
        f"You design realistic support tasks for the '{domain.name}' domain, used to train and "
        f"test support agents. A task is what one user ({domain.prose.role}) wants and the exact "
        "tool calls a correct agent makes to serve them.",
        "", "The agent's policy:", domain.policy, "",
        "Tools (name, description, parameters):", json.dumps(tools), "",
        "Intent kinds (slots are the facts the agent needs; core slots are always in the "
        "user's request):", json.dumps(kinds), "",
        "Answer with one JSON object and nothing else, of this shape:",
        json.dumps(ProposedTask.model_json_schema()), "",
        "Rules: use only the entities you are given (real ids and values); auth_calls "
        "authenticate the user first; the calls of each intent are in the order a careful "
        "agent makes them, reads before writes, and every write must be allowed by the policy; "
        "an output is a value that appears in the result of the call it follows, which the agent "
        "must tell the user.",
    ])


def _request(entities: dict[str, Any], n_intents: int) -> str:
    return (f"Entities from the service's database:\n{json.dumps(entities)}\n\nPropose one task "
            f"with {n_intents} intent(s). Answer with the JSON object only.")


def review_prompt(bp: TaskBlueprint) -> str:
    task = {"goal": bp.user.goal, "intents": [i.model_dump(mode="json") for i in bp.user.intents],
            "known_facts": bp.user.known_facts, "hidden_facts": bp.user.hidden_facts,
            "calls": [c.model_dump(mode="json") for c in bp.ground_truth.calls]}
    return ("You review a proposed support task for a training set. Is it realistic (a real "
            "user could want this, said this way) and solvable (a correct agent can do it with "
            "the tools, from what the user knows)? Answer with JSON only: "
            '{"realistic": true|false, "solvable": true|false, "reason": "..."}\n\n'
            f"Task: {json.dumps(task)}")


def _vote(text: str | None) -> dict[str, Any]:
    match = _JSON_BLOCK.search(text or "")
    try:
        vote = json.loads(match.group(0)) if match else {}
    except ValueError:
        vote = {}
    ok = bool(vote.get("realistic")) and bool(vote.get("solvable"))
    return {"accept": ok, "reason": str(vote.get("reason", "unparseable vote" if not vote else ""))[:300]}


async def _review(gateway: Gateway, model: ModelConfig, bp: TaskBlueprint, k: int,
                  ledger: EpisodeLedger, headers: dict[str, str]) -> list[dict[str, Any]]:
    prompt = [{"role": "user", "content": review_prompt(bp)}]

    async def one(j: int) -> dict[str, Any]:
        completion = await gateway.complete("reviewer", model, prompt, ledger=ledger,
                                            headers={**headers, "X-Trajforge-Reviewer": str(j)})
        return _vote(completion.first.content)

    return list(await asyncio.gather(*(one(j) for j in range(k))))


async def propose_blueprint(gateway: Gateway, config: ProposerConfig, generation: GenerationConfig,
                            domain: Domain, index: int, run_id: str, ledger: EpisodeLedger
                            ) -> tuple[TaskBlueprint | BlueprintRejection, list[ProposalRecord]]:
    seed = blueprint_seed(generation.seed, index)
    rng = random.Random(seed)
    n_intents = rng.randint(generation.min_intents, generation.max_intents)
    entities = domain.sample_entities(rng)
    headers = episode_tag(f"proposal:{index}", seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": proposer_prompt(domain)},
                                      {"role": "user", "content": _request(entities, n_intents)}]
    records: list[ProposalRecord] = []
    check = BlueprintCheck(False, "no_rounds")
    bp_id: str | None = None
    for round_ in range(1, config.rounds + 1):
        try:
            completion = await gateway.complete("proposer", config.model, messages, ledger=ledger,
                                                headers=headers)
        except LLMFailure as failure:
            check = BlueprintCheck(False, "llm_error", str(failure))
            records.append(_record(run_id, index, round_, config, check, None, []))
            break
        text = completion.first.content
        votes: list[dict[str, Any]] = []
        bp: TaskBlueprint | None = None
        try:
            draft = parse_proposal(text, domain).to_draft()
            bp = compose_blueprint(domain, draft, random.Random(seed), seed=seed, index=index,
                                   generator=GENERATOR, version=VERSION,
                                   p_behaviour=generation.p_behaviour)
            check = validate_blueprint(bp, domain)
        except TaskRejected as exc:
            check = BlueprintCheck(False, exc.reason, exc.detail)
        except (KeyError, IndexError, ValueError, TypeError) as exc:  # a draft the composer cannot use
            check = BlueprintCheck(False, "bad_draft", f"{type(exc).__name__}: {exc}")
        if check.ok and bp is not None and config.committee:
            try:
                votes = await _review(gateway, config.reviewer_model or config.model, bp,
                                      config.committee, ledger, headers)
            except LLMFailure as failure:
                check = BlueprintCheck(False, "llm_error", str(failure))
            else:
                if sum(v["accept"] for v in votes) * 2 <= len(votes):
                    check = BlueprintCheck(False, "committee_rejected",
                                           "; ".join(v["reason"] for v in votes if not v["accept"]))
        bp_id = bp.id if bp is not None else None
        records.append(_record(run_id, index, round_, config, check, bp_id, votes))
        if check.ok and bp is not None:
            return bp, records
        messages += [{"role": "assistant", "content": text or ""},
                     {"role": "user", "content": f"Rejected ({check.reason}): {check.detail}. "
                                                 "Fix it and answer with the corrected JSON object only."}]
    rejection = BlueprintRejection(
        id=content_id({"run_id": run_id, "index": index}, prefix="rj_"), run_id=run_id,
        domain=domain.name, index=index, seed=seed, generator=GENERATOR, reason=check.reason,
        detail=check.detail, blueprint_id=bp_id)
    return rejection, records


def _record(run_id: str, index: int, round_: int, config: ProposerConfig, check: BlueprintCheck,
            blueprint_id: str | None, votes: list[dict[str, Any]]) -> ProposalRecord:
    return ProposalRecord(
        id=content_id({"run_id": run_id, "index": index, "round": round_}, prefix="pp_"),
        run_id=run_id, index=index, round=round_, model=config.model.model, accepted=check.ok,
        reason="accepted" if check.ok else check.reason, detail=check.detail[:1000],
        blueprint_id=blueprint_id, votes=json.dumps(votes))


async def propose_blueprints(gateway: Gateway, generation: GenerationConfig, domain: Domain,
                             run_id: str, start: int, stop: int, timeout_s: float, concurrency: int
                             ) -> tuple[list[TaskBlueprint | BlueprintRejection], list[ProposalRecord], float | None]:
    """Blueprints ``start..stop-1`` by the proposer, their round records, and what it cost
    (``None`` when a model could not be priced)."""
    proposer = generation.proposer
    assert proposer is not None
    gate = asyncio.Semaphore(concurrency)
    ledgers: list[EpisodeLedger] = []

    async def one(index: int) -> tuple[TaskBlueprint | BlueprintRejection, list[ProposalRecord]]:
        async with gate:
            ledger = EpisodeLedger.starting_now(timeout_s)
            ledgers.append(ledger)
            return await propose_blueprint(gateway, proposer, generation, domain, index, run_id, ledger)

    results = await asyncio.gather(*(one(i) for i in range(start, stop)))
    return [r[0] for r in results], [p for r in results for p in r[1]], ledgers_cost(ledgers)


# --- the scripted proposer and reviewer (for serve-policy) --------------------------------------

def scripted_draft(domain: Domain, sampler: Any, generation: GenerationConfig, seed: int) -> DraftTask:
    """What the scripted proposer proposes (once corrected) for the blueprint of ``seed``: the
    programmatic sampler's draft, drawn after the same entity sample the client makes."""
    rng = random.Random(seed)
    n_intents = rng.randint(generation.min_intents, generation.max_intents)
    domain.sample_entities(rng)
    return sampler.sample(rng, n_intents, p_indirect=generation.p_indirect_reference,
                          p_revision=generation.p_revision, p_redirect=generation.p_redirect,
                          p_read_only=generation.p_read_only_intent)


def scripted_blueprints(domain: Domain, generation: GenerationConfig, start: int,
                        stop: int) -> list[TaskBlueprint]:
    """The blueprints a build with the scripted proposer accepts, so the scripted endpoint can
    also play the agent and user of proposer-made tasks."""
    sampler = domain.task_sampler()
    out = []
    for index in range(start, stop):
        seed = blueprint_seed(generation.seed, index)
        try:
            draft = ProposedTask.from_draft(scripted_draft(domain, sampler, generation, seed)).to_draft()
            out.append(compose_blueprint(domain, draft, random.Random(seed), seed=seed, index=index,
                                         generator=GENERATOR, version=VERSION,
                                         p_behaviour=generation.p_behaviour))
        except TaskRejected:
            continue
    return out


def scripted_proposer_role(domain: Domain, generation: GenerationConfig
                           ) -> Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]:
    """Answers proposer requests with the programmatic sampler's draft for the blueprint index
    the request is about. On the first round of every fourth index it proposes a write on an
    entity that does not exist (an id with digits changed: the kind of mistake models make), so
    the feedback loop runs;
    when told its proposal was rejected, it answers correctly."""
    sampler = domain.task_sampler()

    def answer(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        tag = headers.get("x-trajforge-episode", "")
        seed = int(tag.partition(";")[2] or 0)
        proposal = ProposedTask.from_draft(
            scripted_draft(domain, sampler, generation, seed)).model_dump(mode="json")
        first_round = not any(m.get("role") == "assistant" for m in body.get("messages") or [])
        if first_round and seed % 4 == 0:
            for intent in proposal["intents"]:
                write = next((c for c in intent["calls"] if c["kind"] == "write"), None)
                if write is not None and _invent_id(domain, write["arguments"], seed):
                    break
        return {"role": "assistant", "content": json.dumps(proposal)}

    return answer


def _invent_id(domain: Domain, arguments: dict[str, Any], seed: int) -> bool:
    """Replace the first entity-valued argument with a well-formed id two characters off (in a
    large id space almost surely no entity's); whether one was."""
    from trajforge.simulation.faults import mutate_id

    for key, value in arguments.items():
        if isinstance(value, str) and domain.references_entity(key):
            invented = mutate_id(value, random.Random(seed), [value])
            if invented is not None:
                arguments[key] = invented
                return True
    return False


def scripted_reviewer_role() -> Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]:
    """Votes a task realistic unless it asks for more than three things in one conversation,
    and solvable when every write it needs has a ground-truth call (deterministic, so tests can
    count the committee's rejections)."""

    def answer(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        text = (body.get("messages") or [{}])[-1].get("content") or ""
        task = json.loads(text.split("Task: ", 1)[1]) if "Task: " in text else {}
        intents = task.get("intents", [])
        realistic = len(intents) <= 3
        vote = {"realistic": realistic, "solvable": bool(task.get("calls")),
                "reason": "" if realistic else "more than three requests in one chat is not realistic"}
        return {"role": "assistant", "content": json.dumps(vote)}

    return answer
