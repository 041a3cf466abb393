"""Records: pydantic models and their Arrow schemas. No I/O, no logic beyond validation."""

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
    Scenario,
    StateChange,
    StructuralDescriptors,
    Style,
    TaskBlueprint,
    UserSpec,
    Volunteering,
)
from trajforge.schemas.config import RunConfig
from trajforge.schemas.ids import canonical_json, content_id
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from trajforge.schemas.tools import FunctionSpec, ToolSpec
from trajforge.schemas.trajectory import (
    EpisodeSpec,
    Fault,
    FaultKind,
    RoleUsage,
    TerminationReason,
    Trajectory,
    Verdict,
)

__all__ = [
    "AssistantMessage", "Behaviour", "BlueprintRejection", "DisclosureStep", "EnvironmentRef", "EpisodeSpec",
    "Fault", "FaultKind", "FunctionSpec", "GroundTruth", "GroundTruthCall", "Intent", "Message",
    "Persona", "Provenance", "RequiredOutput", "RoleUsage", "RunConfig", "Scenario", "StateChange",
    "StructuralDescriptors", "Style", "SystemMessage", "TaskBlueprint", "TerminationReason",
    "ToolCall", "ToolMessage", "ToolSpec", "Trajectory", "UserMessage", "UserSpec", "Verdict",
    "Volunteering", "canonical_json", "content_id",
]
