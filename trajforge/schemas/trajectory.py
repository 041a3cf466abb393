"""Trajectories (one simulated episode) and verdicts (one row per trajectory and check)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from trajforge.schemas.base import Record
from trajforge.schemas.blueprint import StateChange
from trajforge.schemas.ids import content_id
from trajforge.schemas.messages import Message
from trajforge.schemas.tools import ToolSpec


class TerminationReason(StrEnum):
    user_stop = "user_stop"  # the user ended it, goal met
    user_gave_up = "user_gave_up"  # the user ended it, goal not met or patience spent
    agent_stop = "agent_stop"  # the agent ended the conversation
    max_turns = "max_turns"
    transfer = "transfer"
    tool_crash = "tool_crash"
    agent_error = "agent_error"
    llm_error = "llm_error"
    user_error = "user_error"


class FaultKind(StrEnum):
    """The labelled mistakes the fault-injecting agent makes, one per episode."""

    wrong_argument = "wrong_argument"
    unconfirmed_write = "unconfirmed_write"
    hallucinated_id = "hallucinated_id"
    skipped_authentication = "skipped_authentication"
    policy_violation = "policy_violation"
    missing_output = "missing_output"
    premature_end = "premature_end"
    unknown_tool = "unknown_tool"
    invalid_arguments = "invalid_arguments"
    repeated_call = "repeated_call"
    misstatement = "misstatement"  # a wrong fact stated about an entity (grounded_claims)


class Fault(Record):
    kind: FaultKind
    target: int = Field(default=0, description="which write (or step) the fault hits")
    form: str | None = Field(default=None, description="which of the kind's forms realises it "
                                                       "(e.g. 'other_entity'), so recall is reported per form")


class EpisodeSpec(Record):
    """How an episode was simulated: policies, the injected fault, seed and limits."""

    agent: str
    user: str
    seed: int
    max_turns: int
    fault: Fault | None = None


class RoleUsage(Record):
    role: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = Field(default=0.0, description="None when a model could not be priced")
    retries: int = 0


class FlagKind(StrEnum):
    """What a trajectory can be flagged for (a property of its data, not a verdict on the agent)."""

    instructions_in_tool_output = "instructions_in_tool_output"  # environments.injection


class TrajectoryFlag(Record):
    kind: FlagKind
    message: int = Field(description="index of the flagged message in ``messages``")
    tool: str = Field(description="the tool whose output it is")
    cue: str = Field(description="why: the cue family that fired (e.g. 'override', 'address+directive')")
    excerpt: str = Field(description="the flagged text, cut to 160 characters")


class Trajectory(Record):
    id: str
    blueprint_id: str
    run_id: str
    domain: str
    episode: EpisodeSpec
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    termination: TerminationReason
    final_state_hash: str
    final_state_diff: tuple[StateChange, ...]
    usage: tuple[RoleUsage, ...] = ()
    cost_usd: float | None = Field(default=None, description="None when a model could not be priced")
    latency_s: float = 0.0
    agent_entropy: tuple[float | None, ...] | None = None
    retries: int = Field(default=0, description="model calls retried after transient errors")
    error: str | None = Field(default=None, description="why a policy failed (llm_error, user_error)")
    flags: tuple[TrajectoryFlag, ...] = Field(
        default=(), description="tool outputs whose text reads as instructions to the agent")

    @staticmethod
    def make_id(blueprint_id: str, episode: EpisodeSpec) -> str:
        return content_id({"blueprint_id": blueprint_id, "episode": episode.model_dump(mode="json")},
                          prefix="tr_")


class Verdict(Record):
    id: str
    trajectory_id: str
    blueprint_id: str
    run_id: str
    check: str
    passed: bool
    reason: str
    evidence: str = Field(description="JSON text")
    trajectory_passed: bool
    reward: float
    verifier_version: str | None = Field(
        default=None, description="digest of the checks' code and the check set that made it "
                                  "(trajforge.verifiers.version); None: a judge's, or stored before versions")

    @staticmethod
    def make_id(trajectory_id: str, check: str) -> str:
        return content_id({"trajectory_id": trajectory_id, "check": check}, prefix="vd_")
