"""``RunConfig``: the one validated configuration of a build (YAML + CLI overrides)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from trajforge.schemas.base import Record
from trajforge.schemas.ids import content_id
from trajforge.schemas.trajectory import FaultKind

AgentKind = Literal["oracle", "faulty"]
RunnerKind = Literal["threads", "processes", "dask", "ray"]


class DomainConfig(Record):
    name: str = "retail"
    size: int = Field(default=300, ge=10, le=1_000_000, description="customers (or the domain's unit)")
    seed: int = 0


class GenerationConfig(Record):
    n_blueprints: int = Field(default=300, ge=1)
    seed: int = 0
    min_intents: int = Field(default=1, ge=1, le=4)
    max_intents: int = Field(default=4, ge=1, le=4)
    p_indirect_reference: float = Field(default=0.5, ge=0, le=1,
                                        description="share of targets named by description, not id")
    p_revision: float = Field(default=0.25, ge=0, le=1)
    p_redirect: float = Field(default=0.15, ge=0, le=1)
    p_read_only_intent: float = Field(default=0.15, ge=0, le=1)

    @model_validator(mode="after")
    def _intent_range(self) -> "GenerationConfig":
        if self.min_intents > self.max_intents:
            raise ValueError("min_intents must not exceed max_intents")
        return self


class SimulationConfig(Record):
    agents: tuple[AgentKind, ...] = Field(default=("oracle", "faulty"), min_length=1,
                                          description="one episode per blueprint per entry")
    fault_kinds: tuple[FaultKind, ...] = Field(default=tuple(FaultKind), min_length=1)
    max_turns: int = Field(default=40, ge=2, le=1000)
    max_steps_per_turn: int = Field(default=12, ge=1, le=100)
    concurrency: int = Field(default=32, ge=1, le=4096)


class VerificationConfig(Record):
    checks: tuple[str, ...] | None = Field(default=None, description="None runs every check")


class StoreConfig(Record):
    out: Path = Path("data")
    shard_size: int = Field(default=500, ge=1, le=1_000_000, description="blueprints per batch (shard)")
    workers: int = Field(default=1, ge=1, le=64,
                         description="batches at once: threads, processes or local Dask/Ray workers")


class OrchestrationConfig(Record):
    """How the build's Prefect flow runs its batches; never part of the run id (any runner
    builds exactly the same rows)."""

    runner: RunnerKind = Field(default="threads", description="Prefect task runner")
    address: str | None = Field(default=None, description="an existing Dask scheduler "
                                "(tcp://host:8786) or Ray cluster (ray://host:10001); none "
                                "starts a local cluster")
    retries: int = Field(default=2, ge=0, le=10,
                         description="retries of a stage after a transient error (never others)")

    @model_validator(mode="after")
    def _address_needs_cluster(self) -> "OrchestrationConfig":
        if self.address is not None and self.runner not in ("dask", "ray"):
            raise ValueError(f"an address is for the dask or ray runner, not {self.runner}")
        return self


class RunConfig(Record):
    name: str = "default"
    domain: DomainConfig = DomainConfig()
    generation: GenerationConfig = GenerationConfig()
    simulation: SimulationConfig = SimulationConfig()
    verification: VerificationConfig = VerificationConfig()
    store: StoreConfig = StoreConfig()
    orchestration: OrchestrationConfig = OrchestrationConfig()

    def run_id(self) -> str:
        """Content id of the work a run does. Blueprint count and storage layout are left out,
        so re-running resumes, and raising ``n_blueprints`` extends the same run."""
        generation = self.generation.model_dump(mode="json")
        generation.pop("n_blueprints")
        return content_id(
            {
                "domain": self.domain.model_dump(mode="json"),
                "generation": generation,
                "simulation": self.simulation.model_dump(mode="json", exclude={"concurrency"}),
                "verification": self.verification.model_dump(mode="json"),
            },
            prefix="run_",
            length=16,
        )
