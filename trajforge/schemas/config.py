"""``RunConfig``: the one validated configuration of a build (YAML + CLI overrides)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from trajforge.schemas.base import Record
from trajforge.schemas.ids import content_id
from trajforge.schemas.trajectory import FaultKind

AgentKind = Literal["oracle", "faulty", "llm"]
RunnerKind = Literal["threads", "processes", "dask", "ray"]
AgentPhrasing = Literal["varied", "plain"]


class DomainConfig(Record):
    """The domain a build runs in, or (``names``) the domains of a mixed build: blueprint ``i``
    belongs to the domain ``domain_at(i)`` draws by ``weights`` (default equal) from a seed of
    its own (``seed`` and ``i``), so a batch's domains depend on nothing but the index. Every
    domain is built at ``size`` from ``seed``, or, with ``fresh_every``, from a world seed per
    group of blueprints (``seed_at``)."""

    name: str = "retail"
    names: tuple[str, ...] = Field(default=(), description="a mixed build's domains (``name`` is then unused)")
    weights: tuple[float, ...] = Field(default=(), description="one per name, > 0; default: equal")
    size: int = Field(default=300, ge=10, le=1_000_000, description="the domain's size (its users, or its own unit)")
    seed: int = 0
    fresh_every: int = Field(default=0, ge=0, description=(
        "0: every blueprint plays in the one world built from seed; k: each run of k consecutive "
        "blueprints gets a world of its own (built at size from seed and the group), so accounts, "
        "emails and ids do not recur across groups and a model trained on the data cannot "
        "memorise them (keep size small: a world is built per group)"))

    @model_validator(mode="after")
    def _check_mix(self) -> DomainConfig:
        if len(set(self.names)) != len(self.names):
            raise ValueError("domain.names lists a domain twice")
        if self.weights and len(self.weights) != len(self.names):
            raise ValueError(f"domain.weights has {len(self.weights)} values for {len(self.names)} names")
        if any(w <= 0 for w in self.weights):
            raise ValueError("domain.weights must all be > 0")
        return self

    @property
    def all_names(self) -> tuple[str, ...]:
        """Every domain of the build, in configured order."""
        return self.names or (self.name,)

    def domain_at(self, index: int) -> str:
        """The domain of blueprint ``index``."""
        if len(self.all_names) == 1:
            return self.all_names[0]
        weights = self.weights or (1.0,) * len(self.names)
        return random.Random(f"domain-mix:{self.seed}:{index}").choices(self.names, weights)[0]

    def seed_at(self, index: int) -> int:
        """The seed of the world blueprint ``index`` plays in: ``seed``, or with ``fresh_every``
        a 31-bit seed of its group's own (a hash of ``seed`` and the group, stable across runs)."""
        if not self.fresh_every:
            return self.seed
        digest = hashlib.sha256(f"world:{self.seed}:{index // self.fresh_every}".encode()).digest()
        return int.from_bytes(digest[:4], "big") >> 1


ModelTransport = Literal["auto", "litellm", "openai"]


class ModelConfig(Record):
    """A model any litellm provider can serve. The API key is read at call time from the
    environment variable ``api_key_env`` names (or litellm's provider default); it is never
    stored in a config, a record or a log."""

    model: str = Field(min_length=1, description="a litellm model string, e.g. openai/gpt-4.1-mini")
    api_base: str | None = Field(default=None, description="an OpenAI-compatible server (vllm serve, ...)")
    transport: ModelTransport = Field(
        default="auto", description="how calls reach the model: 'litellm' (any provider); 'openai', "
        "a direct POST to {api_base}/chat/completions (needs api_base; an openai/ or hosted_vllm/ "
        "prefix is stripped from the model name); 'auto', 'openai' when api_base is on loopback, "
        "localhost or a private network (RFC 1918, link-local) and the model string has no provider "
        "prefix or openai/ or hosted_vllm/ (a self-hosted server), else 'litellm'")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    logprobs: bool = Field(default=False, description="ask for top-5 logprobs (agent entropy)")
    rpm: int | None = Field(default=None, ge=1, description="requests per minute, per process")
    tpm: int | None = Field(default=None, ge=1, description="tokens per minute, per process")
    input_cost_per_token: float | None = Field(default=None, ge=0,
                                               description="price, for models litellm cannot price")
    output_cost_per_token: float | None = Field(default=None, ge=0)

    @field_validator("transport")
    @classmethod
    def _direct_needs_api_base(cls, transport: ModelTransport, info: ValidationInfo) -> ModelTransport:
        if transport == "openai" and not info.data.get("api_base"):
            raise ValueError("transport 'openai' calls {api_base}/chat/completions: set api_base, "
                             "or use 'auto' or 'litellm'")
        return transport


class ProposerConfig(Record):
    """The LLM blueprint proposer: a model drafts each task from sampled real entities, every
    draft is validated by executing its ground truth, a rejected one goes back with the exact
    error for up to ``rounds`` rounds, and an optional committee of ``committee`` reviewers
    votes on realism and solvability (a majority accepts)."""

    model: ModelConfig
    rounds: int = Field(default=3, ge=1, le=10)
    committee: int = Field(default=0, ge=0, le=9)
    reviewer_model: ModelConfig | None = Field(default=None, description="default: the proposer's model")


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
    p_policy_bound: float = Field(default=0.15, ge=0, le=1,
                                  description="share of blueprints drawn to hold a refusal or a "
                                              "hand-over (IntentSpec.outcome); the others may too")
    p_behaviour: float = Field(default=0.5, ge=0, le=1,
                               description="share of blueprints whose user does one or two things "
                                           "beyond giving facts (schemas.blueprint.Behaviour)")
    proposer: ProposerConfig | None = Field(default=None, description="None: the programmatic generator")
    near_copy_share: float = Field(default=0.0, ge=0, le=0.9,
                                   description="share of blueprints that are paraphrased copies "
                                               "of earlier ones (to evaluate dedup)")

    @model_validator(mode="after")
    def _intent_range(self) -> GenerationConfig:
        if self.min_intents > self.max_intents:
            raise ValueError("min_intents must not exceed max_intents")
        return self


class UserSimulatorConfig(Record):
    retries: int = Field(default=2, ge=0, le=10, description="regenerations of a failed user turn")
    best_of: int = Field(default=1, ge=1, le=8, description="candidates per user turn")


class RewriteConfig(Record):
    """A model re-words the scripted agent's turns (``simulation/rewrite.py``); a rewrite that
    changes a value, the act or what is asked is refused and the scripted text kept."""

    model: ModelConfig
    retries: int = Field(default=2, ge=0, le=10, description="re-asks of a rewrite a guard refused")


class GatewayConfig(Record):
    """How model calls are made. Operational only: not part of the run id."""

    call_timeout_s: float = Field(default=120.0, gt=0, description="wall-clock deadline per call")
    episode_timeout_s: float = Field(default=1800.0, gt=0, description="wall-clock deadline per episode")
    max_retries: int = Field(default=8, ge=0, le=100, description="per call, transient errors only")
    backoff_initial_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    max_cost_usd: float | None = Field(default=None, gt=0,
                                       description="no new episode starts once the run spent this")


class SimulationConfig(Record):
    agents: tuple[AgentKind, ...] = Field(default=("oracle", "faulty"), min_length=1,
                                          description="one episode per blueprint per entry")
    agent_model: ModelConfig | None = Field(default=None, description="the model of the llm agent")
    user_model: ModelConfig | None = Field(default=None, description="None: the scripted user")
    user_simulator: UserSimulatorConfig = UserSimulatorConfig()
    rewrite: RewriteConfig | None = Field(default=None, description="a model that re-words the scripted "
                                          "agent's turns under guards; None: the scripted wording")
    gateway: GatewayConfig = GatewayConfig()
    fault_kinds: tuple[FaultKind, ...] = Field(default=tuple(FaultKind), min_length=1)
    max_turns: int = Field(default=40, ge=2, le=1000)
    max_steps_per_turn: int = Field(default=12, ge=1, le=100)
    agent_phrasing: AgentPhrasing = Field(default="varied", description=(
        "varied: the scripted agent draws each message's phrasing from its banks; plain: it "
        "words each dialogue act one way (the first phrasing of each bank, its own and the "
        "domain's), for a small model that should spend its training on decisions and values, "
        "not on synonyms (the user stays varied)"))
    concurrency: int = Field(default=32, ge=1, le=4096, description="episodes in flight, all processes")

    @model_validator(mode="after")
    def _llm_needs_model(self) -> SimulationConfig:
        if "llm" in self.agents and self.agent_model is None:
            raise ValueError("agents lists 'llm' but agent_model is not set")
        return self

    def uses_models(self) -> bool:
        return self.agent_model is not None or self.user_model is not None or self.rewrite is not None


class VerificationConfig(Record):
    checks: tuple[str, ...] | None = Field(default=None, description="None runs every check")
    judge: ModelConfig | None = Field(default=None, description="an optional checklist judge model")


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
    server: Literal["managed", "temporary"] = Field(
        default="managed", description="without PREFECT_API_URL: 'managed', one local server per user that "
        "outlives the command and is reused (flows/server.py); 'temporary', one per command under <out>/.prefect")
    server_home: str | None = Field(default=None, description="the managed server's folder; none: "
                                    "$XDG_STATE_HOME/trajforge/prefect (~/.local/state/trajforge/prefect)")
    server_idle_s: int = Field(default=900, ge=1, description="the managed server stops itself after this "
                               "long without a build (and so does the warm process)")
    warm_process: bool = Field(default=True, description="after the build, leave a warm process behind (one per "
                               "user and Python environment, flows/warm.py) that the next `trajforge build` "
                               "starts in; false: start none (one already running still serves)")

    @model_validator(mode="after")
    def _address_needs_cluster(self) -> OrchestrationConfig:
        if self.address is not None and self.runner not in ("dask", "ray"):
            raise ValueError(f"an address is for the dask or ray runner, not {self.runner}")
        return self


# where and how fast models are reached does not change what a run is
_MODEL_OPERATIONAL = {"api_base", "api_key_env", "transport", "rpm", "tpm", "input_cost_per_token",
                      "output_cost_per_token"}
_OPERATIONAL: dict[str, Any] = {"concurrency": True, "gateway": True,
                                   "agent_model": _MODEL_OPERATIONAL,
                                   "user_model": _MODEL_OPERATIONAL,
                                   "rewrite": {"model": _MODEL_OPERATIONAL}}


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
    method: Literal["auto", "exact", "stochastic"] = Field(
        default="auto", description="exact greedy, stochastic greedy (sampled), or auto: exact "
        "up to 4e9 candidates x picks per stratum, stochastic above")
    candidates: Literal["passed", "all"] = "passed"
    device: str | None = Field(default=None, description="cpu, cuda, ...; None: cuda if present")
    batch_size: int | None = Field(default=None, ge=1, le=65_536)
    threads: int | None = Field(default=None, ge=1, le=256)
    seed: int = Field(default=0, description="seed of the random-subset baseline")

    @property
    def active(self) -> bool:
        return self.select is not None or self.dedup_threshold is not None

    @model_validator(mode="after")
    def _order(self) -> DiversityConfig:
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
    orchestration: OrchestrationConfig = OrchestrationConfig()
    diversity: DiversityConfig = DiversityConfig()

    @model_validator(mode="after")
    def _copies_share_a_world(self) -> RunConfig:
        if self.domain.fresh_every and self.generation.near_copy_share:
            raise ValueError("generation.near_copy_share needs one world: a near copy paraphrases an "
                             "earlier blueprint of its own world (set domain.fresh_every to 0)")
        return self

    def uses_models(self) -> bool:
        return (self.simulation.uses_models() or self.generation.proposer is not None
                or self.verification.judge is not None)

    def run_id(self) -> str:
        """Content id of the work a run does. Blueprint count and storage layout are left out,
        so re-running resumes, and raising ``n_blueprints`` extends the same run."""
        generation = self.generation.model_dump(
            mode="json", exclude={"n_blueprints": True, "proposer": {
                "model": _MODEL_OPERATIONAL, "reviewer_model": _MODEL_OPERATIONAL}})
        if not generation["near_copy_share"]:
            generation.pop("near_copy_share")  # runs from before the field keep their ids
        simulation = self.simulation.model_dump(mode="json", exclude=_OPERATIONAL)
        for field, default in (("rewrite", None), ("agent_phrasing", "varied")):
            if simulation[field] == default:
                simulation.pop(field)  # runs from before the field keep their ids
        domain = self.domain.model_dump(mode="json")
        if not domain["fresh_every"]:
            domain.pop("fresh_every")  # runs from before the field keep their ids
        return content_id(
            {
                "domain": domain,
                "generation": generation,
                "simulation": simulation,
                "verification": self.verification.model_dump(
                    mode="json", exclude={"judge": _MODEL_OPERATIONAL}),
            },
            prefix="run_",
            length=16,
        )
