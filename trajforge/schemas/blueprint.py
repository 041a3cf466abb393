"""Task blueprints: who the user is, what they want and reveal, and the executed ground truth."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from trajforge.schemas.base import Record
from trajforge.schemas.ids import content_id


class Style(StrEnum):
    """How the user talks, one voice for the whole dialogue."""

    terse = "terse"
    polite = "polite"
    chatty = "chatty"
    formal = "formal"
    non_native = "non_native"  # plain, slightly unidiomatic English
    frustrated = "frustrated"  # has been let down before and says so
    elderly = "elderly"  # unhurried, warm, a little old-fashioned
    hurried = "hurried"  # in a hurry: short, wants it done


class Volunteering(StrEnum):
    """How much the user says before being asked."""

    low = "low"
    medium = "medium"
    high = "high"


class Behaviour(StrEnum):
    """What the user does beyond giving facts, a labelled property of the blueprint
    (``UserSpec.behaviours``). The scripted user acts each out once, at the turn written here;
    the scripted agent answers it in its next message."""

    corrects_detail = "corrects_detail"  # the first detail with digits it says is wrong, corrected at once
    question_back = "question_back"  # answers the agent's first question with a question
    withholds_detail = "withholds_detail"  # won't give the first detail asked until told why it is needed
    off_topic = "off_topic"  # brings up something unrelated with its first answer
    impatient = "impatient"  # complains about the time it takes, with its first answer
    asks_human = "asks_human"  # asks for a person in its opening (its requests are the agent's to handle)
    price_second_thoughts = "price_second_thoughts"  # changes its mind when a confirmation names a price
    ends_unhappy = "ends_unhappy"  # says it is unhappy in its closing: an intent was refused
    wrong_detail = "wrong_detail"  # first gives an identity detail a digit off (its ``misstate`` step); the
    # lookup finds nothing, and it gives the right one when the agent says so and asks again


class Persona(Record):
    style: Style
    verbosity: int = Field(ge=1, le=3)
    patience: int = Field(ge=1, le=6, description="unproductive agent turns tolerated in a row")
    volunteers: Volunteering
    traits: tuple[str, ...] = ()


# what a correct agent ends an intent with: done, refused under the policy, handed to a human
Outcome = Literal["done", "refused", "transferred"]


class Intent(Record):
    """One thing the user wants. ``slots`` hold the final user-facing values (after revisions)."""

    kind: str
    slots: dict[str, str] = Field(default_factory=dict)
    initial_kind: str | None = Field(default=None, description="what the user asks first, if redirected")
    outcome: Outcome = Field(
        default="done", description="what a correct agent ends with (the kind's IntentSpec.outcome)")


DisclosureAction = Literal["reveal_intent", "revise", "redirect", "clarify", "misstate"]
Trigger = Literal["opening", "after_previous_intent", "on_confirmation", "on_question"]


class DisclosureStep(Record):
    """One move of the user's plan: state an intent, revise a fact, redirect the intent, (when
    the agent asks which one is meant: ``clarify``, ``on_question``) give the exact value of a fact
    first described in words that fit more than one entity (``fact``; ``value``: the exact one), or
    (``misstate``, with ``Behaviour.wrong_detail``) give identity fact ``fact`` first as ``value``,
    a value the identity lookup finds nothing for."""

    intent: int
    action: DisclosureAction
    trigger: Trigger
    fact: str | None = None
    value: str | None = None


class Scenario(Record):
    """What the user brings with them, in their own words (first person; ``generators.scenario``):
    the goal says it in the second person, the scripted user says parts of it. Empty parts were
    not drawn; a blueprint stored before scenarios has an empty one."""

    background: str = Field(default="", description="who the user is, what is going on in their life")
    situations: tuple[str, ...] = Field(default=(), description="per intent: why they want it ('' if none)")
    constraint: str = Field(default="", description="a preference or limit that leaves the outcome as it is")
    fallbacks: tuple[str, ...] = Field(default=(), description="per intent: what they would accept instead")


class UserSpec(Record):
    persona: Persona
    goal: str
    scenario: Scenario = Field(default_factory=Scenario)
    known_facts: dict[str, str] = Field(description="facts the user volunteers")
    hidden_facts: dict[str, str] = Field(description="facts the user gives only when asked")
    intents: tuple[Intent, ...]
    disclosure: tuple[DisclosureStep, ...]
    behaviours: tuple[Behaviour, ...] = Field(
        default=(), description="what the user does beyond giving facts, in Behaviour's order")

    def fact(self, key: str) -> str | None:
        return self.known_facts.get(key, self.hidden_facts.get(key))

    @property
    def misstate(self) -> DisclosureStep | None:
        """The ``misstate`` step of ``Behaviour.wrong_detail``, if the plan has one."""
        return next((d for d in self.disclosure if d.action == "misstate"), None)


class GroundTruthCall(Record):
    name: str
    arguments: dict[str, Any]
    kind: Literal["read", "write", "user"] = Field(
        description="user: a user tool (on the user's device) the user performs when the agent asks")
    intent: int
    needs: tuple[str, ...] = Field(default=(), description="user facts this call depends on")


class RequiredOutput(Record):
    """A value the agent must say after the ground-truth call ``after_call`` has happened."""

    intent: int
    key: str
    value: str
    after_call: int


class StateChange(Record):
    table: str
    key: str
    path: str
    before: Any = None
    after: Any = None


class GroundTruth(Record):
    calls: tuple[GroundTruthCall, ...]
    initial_state_hash: str
    final_state_hash: str
    final_state_diff: tuple[StateChange, ...]
    outputs: tuple[RequiredOutput, ...]
    refused: tuple[GroundTruthCall, ...] = Field(
        default=(), description="per refused intent, the write the user asks for: the policy forbids "
                                "it once the intent's calls have run (generation checks it)")


class StructuralDescriptors(Record):
    n_intents: int
    write_count: int
    read_count: int
    evidence_burden: tuple[int, ...] = Field(description="reads needed to fix each write's arguments")
    dependency_depth: int
    tool_topology: str
    n_revisions: int
    n_redirects: int


class Provenance(Record):
    generator: str
    version: str
    seed: int
    index: int
    parent_id: str | None = None


class EnvironmentRef(Record):
    """Which fresh state the blueprint runs on: a domain built at a size from a seed."""

    domain: str
    size: int
    seed: int


class TaskBlueprint(Record):
    id: str
    environment: EnvironmentRef
    user: UserSpec
    ground_truth: GroundTruth
    policy_rules: tuple[str, ...]
    structure: StructuralDescriptors
    provenance: Provenance

    @property
    def domain(self) -> str:
        return self.environment.domain

    @property
    def policy_bound(self) -> bool:
        """Whether a correct agent refuses an intent under the policy or hands one to a human."""
        return any(i.outcome != "done" for i in self.user.intents)

    @staticmethod
    def make_id(environment: EnvironmentRef, user: UserSpec, ground_truth: GroundTruth,
                policy_rules: tuple[str, ...]) -> str:
        """Content id over what defines the task (not provenance: the same task is the same)."""
        return content_id(
            {
                "environment": environment.model_dump(mode="json"),
                # the goal says the scenario and the kind decides the outcome, so a blueprint stored
                # before either keeps its id
                "user": user.model_dump(mode="json", exclude={"scenario": True, "behaviours": True,
                                                               "intents": {"__all__": {"outcome"}}}),
                "calls": [c.model_dump(mode="json") for c in ground_truth.calls],
                "final_state_hash": ground_truth.final_state_hash,
                "outputs": [o.model_dump(mode="json") for o in ground_truth.outputs],
                "policy_rules": list(policy_rules),
                # only when there are any, so a blueprint stored before them keeps its id
                **({"behaviours": [str(b) for b in user.behaviours]} if user.behaviours else {}),
                # only when there is one, so a blueprint stored before refusals keeps its id
                **({"refused": [c.model_dump(mode="json") for c in ground_truth.refused]}
                   if ground_truth.refused else {}),
            },
            prefix="bp_",
        )


class BlueprintRejection(Record):
    """A blueprint that failed generation or validation, kept with its reason."""

    id: str
    run_id: str
    domain: str
    index: int
    seed: int
    generator: str
    reason: str
    detail: str
    blueprint_id: str | None = None


class ProposalRecord(Record):
    """One round of the LLM blueprint proposer for one blueprint index: what the model proposed
    and whether validation (and the review committee) accepted it."""

    id: str
    run_id: str
    index: int
    round: int
    model: str
    accepted: bool
    reason: str = Field(description="'accepted' or the rejection code")
    detail: str = ""
    blueprint_id: str | None = None
    votes: str = Field(default="[]", description="JSON list of the reviewers' votes")
