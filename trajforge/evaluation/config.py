"""What an evaluation is asked to do: ``EvalConfig`` (the fields of ``trajforge eval`` and of the
``evaluate-policy`` flow, which read their defaults from it) and ``PlayConfig`` (how the episodes
are played, for callers that bring their own agents, such as the loop). Light on imports: the CLI
reads the defaults from here to show them in ``--help``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.schemas.config import GatewayConfig, ModelConfig, SimulationConfig, UserSimulatorConfig


def default_of(model: type[BaseModel], name: str) -> Any:
    """The default of ``model``'s field ``name``: the one place it is written."""
    return model.model_fields[name].get_default(call_default_factory=True)


class PlayConfig(BaseModel):
    """How an evaluation plays its episodes. Episode limits default to the build's (a policy is
    measured on episodes as long as the ones it was trained on)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trials: int = Field(1, ge=1, description="episodes per blueprint (pass^k up to k)")
    max_turns: int = Field(default_of(SimulationConfig, "max_turns"), ge=2, description="user turns per episode")
    max_steps_per_turn: int = Field(default_of(SimulationConfig, "max_steps_per_turn"), ge=1,
                                    description="agent messages per user turn")
    concurrency: int = Field(8, ge=1, description="episodes in flight (and generated together)")
    checks: tuple[str, ...] | None = Field(None, description="None runs every check")
    user_model: ModelConfig | None = Field(None, description="an LLM user through the gateway; None: scripted")
    user_simulator: UserSimulatorConfig = UserSimulatorConfig()
    gateway: GatewayConfig = GatewayConfig()


class EvalConfig(BaseModel):
    """One ``trajforge eval`` (the CLI command and the ``evaluate-policy`` flow take the same
    fields): which policy, which blueprints, which user, how long each episode may run."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(description="hf:PATH, vllm:PATH or litellm:MODEL")
    out: Path = Field(Path("data"), description="dataset folder: held-out blueprints, and where the rows go")
    split: str = Field("test", description="the split of the dataset's blueprints to play")
    salt: str = Field("", description="the family split's salt (as the export's)")
    fresh: int | None = Field(None, ge=1, description="play N freshly generated blueprints instead")
    fresh_seed: int = Field(1_000_003, description="generation seed of fresh blueprints")
    limit: int | None = Field(None, ge=1, description="at most this many blueprints")
    trials: int = Field(default_of(PlayConfig, "trials"), ge=1, description="episodes per blueprint (pass^k up to k)")
    max_turns: int = Field(default_of(PlayConfig, "max_turns"), ge=2, description="user turns per episode")
    max_steps_per_turn: int = Field(default_of(PlayConfig, "max_steps_per_turn"), ge=1,
                                    description="agent messages per user turn")
    max_new_tokens: int = Field(256, ge=1, description="tokens a local model may write per turn")
    temperature: float = Field(0.0, ge=0, description="0: greedy")
    batch_size: int = Field(default_of(PlayConfig, "concurrency"), ge=1, description="episodes generated together")
    api_base: str | None = Field(None, description="for litellm: an OpenAI-compatible server")
    seed: int = Field(0, description="sampling seed")
    user_model: str | None = Field(None, description="an LLM plays the user (litellm name); None: scripted")
    user_api_base: str | None = Field(None, description="the user model's server")
    threads: int | None = Field(None, ge=1, description="torch CPU threads for an hf: policy")
    bf16: bool = Field(False, description=(
        "an hf: policy computes under bfloat16 autocast: faster on a CPU with bf16 instructions and on a "
        "GPU, greedy episodes may branch (benchmarks/results/eval_settings.md); off: the model's own precision"))
    prefix_cache: bool = Field(True, description=(
        "an hf: policy keeps the keys and values of each episode's last turn and computes only what "
        "the next prompt adds (trajforge.simulation.prefix_cache); off: every turn from the start"))

    def play(self) -> PlayConfig:
        user = ModelConfig(model=self.user_model, api_base=self.user_api_base) if self.user_model is not None else None
        return PlayConfig(trials=self.trials, max_turns=self.max_turns, max_steps_per_turn=self.max_steps_per_turn,
                          concurrency=self.batch_size, user_model=user)
