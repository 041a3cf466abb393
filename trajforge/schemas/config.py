"""``RunConfig``: the one validated configuration of a build (YAML + CLI overrides)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from trajforge.schemas.base import Record
from trajforge.schemas.ids import content_id
from trajforge.schemas.trajectory import FaultKind

AgentKind = Literal["oracle", "faulty"]


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
    near_copy_share: float = Field(default=0.0, ge=0, le=0.9,
                                   description="share of blueprints that are paraphrased copies "
                                               "of earlier ones (to evaluate dedup)")

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
    shard_size: int = Field(default=500, ge=1, le=1_000_000)
    workers: int = Field(default=1, ge=1, le=64, description="simulation processes")


DiversityView = Literal["goal", "dialogue", "user", "agent", "calls", "structure"]
Stratum = Literal["domain", "intent", "complexity"]


class DiversityConfig(Record):
    """Scoring and selection after the build. Off unless ``select`` or ``dedup_threshold`` is
    set, so the default build needs no model. Not part of the run id: it reads the run's
    trajectories and writes its own tables (embeddings, scores, selection)."""

    select: int | None = Field(default=None, ge=1, description="trajectories to select (k)")
    dedup_threshold: float | None = Field(default=None, gt=0, le=1,
                                          description="cosine at or above which a trajectory is "
                                                      "a near-duplicate of a better one")
    embedder: str = Field(default="minilm", description="minilm (packaged all-MiniLM-L6-v2), "
                          "hashed, structure, or a sentence-transformers model name or path")
    view: DiversityView = Field(default="user", description="what the embedder embeds")
    dedup_embedder: str = "hashed"
    dedup_view: DiversityView = Field(default="calls", description="what dedup compares: the "
                                      "calls view ignores wording, see verifiers/diversity")
    q: float | Literal["inf"] = Field(default=1.0, description="Vendi order reported first")
    quality_weighted: bool = Field(default=True, description="maximise mean reward x Vendi")
    stratify_by: tuple[Stratum, ...] = Field(default=("domain",), description="quotas per "
                                              "stratum; add intent, complexity for coverage")
    allocation: Literal["proportional", "balanced"] = "proportional"
    method: Literal["exact", "stochastic"] = Field(default="exact", description="exact greedy, "
                                                   "or stochastic greedy (sampled, faster)")
    candidates: Literal["passed", "all"] = "passed"
    device: str | None = Field(default=None, description="cpu, cuda, ...; None: cuda if present")
    batch_size: int | None = Field(default=None, ge=1, le=65_536)
    threads: int | None = Field(default=None, ge=1, le=256)
    seed: int = Field(default=0, description="seed of the random-subset baseline")

    @property
    def active(self) -> bool:
        return self.select is not None or self.dedup_threshold is not None

    @model_validator(mode="after")
    def _order(self) -> "DiversityConfig":
        if self.q != "inf" and not self.q > 0:
            raise ValueError("q must be > 0 or 'inf'")
        return self


class RunConfig(Record):
    name: str = "default"
    domain: DomainConfig = DomainConfig()
    generation: GenerationConfig = GenerationConfig()
    simulation: SimulationConfig = SimulationConfig()
    verification: VerificationConfig = VerificationConfig()
    store: StoreConfig = StoreConfig()
    diversity: DiversityConfig = DiversityConfig()

    def run_id(self) -> str:
        """Content id of the work a run does. Blueprint count and storage layout are left out,
        so re-running resumes, and raising ``n_blueprints`` extends the same run."""
        generation = self.generation.model_dump(mode="json")
        generation.pop("n_blueprints")
        if not generation["near_copy_share"]:
            generation.pop("near_copy_share")  # runs from before the field keep their ids
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
