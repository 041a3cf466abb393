"""Episodes played by a local model token-in, token-out, for RL.

The evaluation agent (``trajforge.simulation.local_model.TemplateAgent``) re-renders the whole conversation
with the chat template every turn, so its earlier messages are seen in their canonical form, not
as the model wrote them. For a policy gradient the trained sequence must be exactly what the
model sampled, so ``TokenAgent`` keeps the episode as one growing list of token ids:

- turn 0: the rendered prompt (system, tools, the user's first message, the assistant header);
- each agent turn: the ids the model sampled (``env_mask`` 1), closed by the end token if the
  model ran out of new tokens (mask 0);
- between turns: the rendering of the messages that came after the agent's last message (tool
  results, the user's reply, the next assistant header), taken as the text the template adds
  (mask 0). This needs a prefix-stable chat template (rendering a longer conversation extends the
  rendering of a shorter one), which the tiny model's template and Hermes-style ones are; an
  unstable one ends the episode with a clear error.

The model sees these ids when it generates, so the logprobs TRL computes for training are those of
the actions taken. Generation is batched across the concurrent episodes
(``trajforge.simulation.local_model.BatchedGenerator``) and sampled with a seeded generator.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.environments.base import Domain
from trajforge.errors import PolicyFailure
from trajforge.rl.reward import EpisodeReward, RewardConfig, episode_reward
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.ids import hash_seed
from trajforge.schemas.messages import AssistantMessage, Message
from trajforge.schemas.trajectory import TerminationReason, Trajectory, Verdict
from trajforge.simulation.episodes import EpisodeContext, EpisodeJob, EpisodePlayer, PlayedEpisode
from trajforge.simulation.local_model import (
    BatchedGenerator,
    chat_messages,
    context_length,
    parse_completion,
    sampling_kwargs,
)
from trajforge.simulation.prefix_cache import PrefixCache, entries_for, generate_with_prefix_cache
from trajforge.simulation.runner import AgentReply, EpisodeLimits
from trajforge.simulation.worker_state import blueprint_domain
from trajforge.verifiers import verify

TokenBatch = Callable[[list[list[int]]], list[list[int]]]


class RolloutConfig(BaseModel):
    """How the policy plays an episode (``rollout:`` in the RL and loop configs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(8, ge=1, description="user turns")
    max_steps_per_turn: int = Field(6, ge=1, description=(
        "agent messages per user turn (the oracle of a single-intent retail task makes up to 4 calls "
        "before it speaks: 322 of 2,179 such conversations; at 4 those tasks cannot be passed)"))
    max_new_tokens: int = Field(96, ge=1)
    temperature: float = Field(1.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_context: int | None = Field(None, ge=2, description="None: the model's max_position_embeddings")
    batch_size: int = Field(16, ge=1, description="episodes generated together")
    concurrency: int = Field(64, ge=1, description="episodes in flight")
    prefix_cache: bool = Field(True, description=(
        "each turn reuses the keys and values of the episode's earlier turns (the weights are fixed "
        "within one play; the cache is emptied at the start of each, trajforge.simulation.prefix_cache)"))
    bf16: bool | None = Field(None, description=(
        "sample under bfloat16 autocast (the weights stay as they are); None: as the policy trains "
        "(GRPO's settled bf16, so grpo.bf16: auto decides both; the rollouts' speed-up under bf16 is not "
        "measured yet)"))


@dataclass
class Rollout:
    """One played episode: the trajectory, its reward, and the token sequence to train on."""

    blueprint: TaskBlueprint
    seed: int
    trajectory: Trajectory
    verdicts: list[Verdict]
    reward: EpisodeReward
    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]

    @property
    def policy_tokens(self) -> int:
        return sum(self.env_mask)


def rollout_seed(blueprint_id: str, salt: str, index: int) -> int:
    return hash_seed(blueprint_id, salt, index, "rollout")


def token_generate_batch(model: Any, tokenizer: Any, settings: RolloutConfig, seed: int,
                         cache: PrefixCache | None = None, bf16: bool = False) -> TokenBatch:
    """Sample a continuation for each list of ids (left-padded together, through ``cache``; None:
    none), under bfloat16 autocast when ``bf16``; each result ends at the first end token
    (included) or after ``max_new_tokens``."""
    import torch

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    end = tokenizer.eos_token_id
    rng = torch.Generator(device="cpu").manual_seed(seed)
    kept = cache if cache is not None else PrefixCache(0)  # 0 entries: no cache

    def generate(prompts: list[list[int]]) -> list[list[int]]:
        kwargs: dict[str, Any] = {"max_new_tokens": settings.max_new_tokens, "eos_token_id": end,
                                  "pad_token_id": pad, **sampling_kwargs(settings.temperature, settings.top_p, rng)}
        if kwargs["do_sample"]:
            kwargs["top_k"] = 0  # the policy's own distribution (what GRPO's log-probs are of)
        was_training = model.training
        model.eval()
        try:
            return generate_with_prefix_cache(model, kept, prompts, pad, [end], kwargs, bf16)
        finally:
            if was_training:
                model.train()

    return generate


class TokenAgent:
    """An agent that keeps its episode as one token sequence (see the module note)."""

    def __init__(self, name: str, tokenizer: Any, generator: BatchedGenerator[list[int], list[int]],
                 tools: Sequence[Mapping[str, Any]], max_context: int, max_new_tokens: int) -> None:
        self.name = name
        self.tokenizer = tokenizer
        self.generator = generator
        self.tools = [dict(t) for t in tools]
        self._tool_names = {t["function"]["name"] for t in self.tools}
        self._max_context = max_context
        self._max_new = max_new_tokens
        self.ids: list[int] = []
        self.mask: list[int] = []
        self.prompt_len = 0
        self._turn = 0

    def _render(self, messages: Sequence[Message], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(chat_messages(messages), tools=self.tools, tokenize=False,
                                                  add_generation_prompt=generation_prompt)

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        full = self._render(messages, True)
        if not self.ids:
            self.ids = self._encode(full)
            self.prompt_len = len(self.ids)
        else:
            last = max(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
            before = self._render(messages[:last + 1], False)
            if not full.startswith(before):
                raise PolicyFailure(TerminationReason.agent_error,
                                    "the chat template is not prefix-stable; token-level rollouts need one")
            added = self._encode(full[len(before):])
            self.ids += added
            self.mask += [0] * len(added)
        if len(self.ids) + self._max_new > self._max_context:
            raise PolicyFailure(TerminationReason.agent_error,
                                f"the conversation no longer fits the model's context ({self._max_context} tokens)")
        new = await self.generator.generate(list(self.ids))
        self.ids += new
        self.mask += [1] * len(new)
        end = self.tokenizer.eos_token_id
        if not new or new[-1] != end:  # out of new tokens: close the message as the template would
            self.ids.append(end)
            self.mask.append(0)
        text = self.tokenizer.decode([t for t in new if t != end], skip_special_tokens=False)
        self._turn += 1
        turn = parse_completion(text, self._tool_names, f"call_{self._turn}")
        return AgentReply(AssistantMessage(content=turn.content, tool_calls=turn.calls), rejected=turn.rejected)


@dataclass
class RolloutPlayer:
    """Plays groups of episodes with one model; one instance per model (and per RNG stream)."""

    model: Any
    tokenizer: Any
    settings: RolloutConfig
    reward: RewardConfig = field(default_factory=RewardConfig)
    seed: int = 0
    name: str = "rl-policy"
    trains_bf16: bool = False  # the precision the policy trains in: what ``rollout.bf16: None`` follows

    def __post_init__(self) -> None:
        self._cache = PrefixCache(entries_for(self.settings.batch_size) if self.settings.prefix_cache else 0)
        self.bf16 = self.trains_bf16 if self.settings.bf16 is None else self.settings.bf16
        self._generate = token_generate_batch(self.model, self.tokenizer, self.settings, self.seed, self._cache,
                                              self.bf16)
        self._max_context = self.settings.max_context or context_length(self.model)

    def play(self, jobs: Sequence[tuple[TaskBlueprint, int]], run_id: str = "rl",
             generate: TokenBatch | None = None) -> list[Rollout]:
        """Play each (blueprint, seed) once; results in the order of ``jobs``. ``generate``
        replaces the model's own ``generate`` (e.g. TRL's colocated vLLM engine)."""
        self._cache.clear()  # the weights may have changed since the last play
        return asyncio.run(self._play(jobs, run_id, generate or self._generate))

    async def _play(self, jobs: Sequence[tuple[TaskBlueprint, int]], run_id: str,
                    generate: TokenBatch) -> list[Rollout]:
        generator: BatchedGenerator[list[int], list[int]] = BatchedGenerator(generate, self.settings.batch_size)

        def make_agent(episode: EpisodeContext) -> TokenAgent:
            tools = [t.model_dump(mode="json") for t in episode.domain.tool_specs()]
            return TokenAgent(self.name, self.tokenizer, generator, tools, self._max_context,
                              self.settings.max_new_tokens)

        player = EpisodePlayer(blueprint_domain, make_agent,
                               limits=EpisodeLimits(self.settings.max_turns, self.settings.max_steps_per_turn),
                               run_id=run_id, concurrency=self.settings.concurrency)
        def score(p: PlayedEpisode[None]) -> Rollout:
            assert isinstance(p.agent, TokenAgent)
            return self._score(p.job.blueprint, p.job.seed, p.trajectory, p.agent, p.domain)

        episodes: list[EpisodeJob[None]] = [EpisodeJob(bp, seed) for bp, seed in jobs]
        played = await player.play_all(episodes, score)
        return [r for r in played if r is not None]  # no budget: every episode is played

    def _score(self, bp: TaskBlueprint, seed: int, trajectory: Trajectory, agent: TokenAgent,
               domain: Domain) -> Rollout:
        verdicts = verify(trajectory, bp, domain)
        reward = episode_reward(trajectory, bp, verdicts, self.reward)
        prompt = agent.ids[:agent.prompt_len]
        completion = agent.ids[agent.prompt_len:]
        mask = list(agent.mask)
        if not prompt:  # the agent never spoke (the first prompt did not fit)
            prompt = [self.tokenizer.eos_token_id]
        if not completion:
            completion, mask = [self.tokenizer.eos_token_id], [0]
        return Rollout(bp, seed, trajectory, list(verdicts), reward, prompt, completion, mask)
