"""Tool specifications: OpenAI-style function schemas, derived from typed Python tools."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class FunctionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]


class ToolSpec(BaseModel):
    """``{"type": "function", "function": {name, description, parameters}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["function"] = "function"
    function: FunctionSpec

    @property
    def name(self) -> str:
        return self.function.name
