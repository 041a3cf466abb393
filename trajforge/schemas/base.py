"""The base of every record: strict, immutable pydantic models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """``extra="forbid"`` so typos fail loudly; frozen so records are safe to share and hash."""

    model_config = ConfigDict(extra="forbid", frozen=True)
