"""The policies an evaluation can play, by spec: ``hf:PATH`` and ``vllm:PATH`` (a local model
speaking its chat template's text format, ``simulation/local_model.py``) and ``litellm:MODEL``
(any model the gateway reaches). Each becomes an agent factory of the episode layer; models are
loaded once, when the factory is made."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from trajforge.errors import ConfigError
from trajforge.schemas.config import GatewayConfig, ModelConfig
from trajforge.simulation.episodes import AgentFactory, EpisodeContext, llm_agents
from trajforge.simulation.runner import AgentPolicy


@dataclass(frozen=True)
class PolicySpec:
    kind: str  # hf, vllm, litellm
    target: str

    @classmethod
    def parse(cls, text: str) -> PolicySpec:
        kind, sep, target = text.partition(":")
        if not sep or kind not in ("hf", "vllm", "litellm") or not target:
            raise ConfigError("--policy", f"'{text}' is not hf:PATH, vllm:PATH or litellm:MODEL")
        return cls(kind, target)


def template_agents(name: str, tokenizer: Any, generator: Any, max_prompt_tokens: int) -> AgentFactory:
    """Agents for a local model: each episode gets a ``TemplateAgent`` sharing ``generator``."""
    from trajforge.simulation.local_model import TemplateAgent

    def local(episode: EpisodeContext) -> AgentPolicy:
        tools = [t.model_dump(mode="json") for t in episode.domain.tool_specs()]
        return TemplateAgent(name, tokenizer, generator, tools, max_prompt_tokens)

    return local


def model_agents(model: Any, tokenizer: Any, name: str, *, max_new_tokens: int, batch_size: int,
                 temperature: float, seed: int, bf16: bool, prefix_cache: bool) -> AgentFactory:
    """Agents for a model already in memory (e.g. the policy being trained in ``trajforge loop``)."""
    from trajforge.simulation.local_model import BatchedGenerator, DecodingConfig, context_length, hf_generate_batch

    gen = DecodingConfig(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, bf16=bf16,
                         prefix_cache=cache_entries(prefix_cache, batch_size))
    return template_agents(name, tokenizer, BatchedGenerator(hf_generate_batch(model, tokenizer, gen), batch_size),
                           context_length(model) - max_new_tokens)


def cache_entries(prefix_cache: bool, batch_size: int) -> int:
    """Prefix-cache entries for ``batch_size`` episodes in flight (0: no cache)."""
    from trajforge.simulation.prefix_cache import entries_for

    return entries_for(batch_size) if prefix_cache else 0


def agent_factory(spec: PolicySpec, *, max_new_tokens: int, temperature: float, seed: int,
                  api_base: str | None, batch_size: int, bf16: bool, prefix_cache: bool,
                  gateway: GatewayConfig | None = None) -> AgentFactory:
    """How each episode gets its agent for a policy spec. Model loading happens here, once."""
    if spec.kind in ("hf", "vllm"):
        from trajforge.simulation.local_model import (
            BatchedGenerator,
            DecodingConfig,
            context_length,
            hf_generate_batch,
            load_hf,
            vllm_generate_batch,
        )

        gen = DecodingConfig(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, bf16=bf16,
                             prefix_cache=cache_entries(prefix_cache, batch_size))
        if spec.kind == "hf":
            model, tokenizer = load_hf(spec.target)
            generate, context = hf_generate_batch(model, tokenizer, gen), context_length(model)
        else:
            generate, tokenizer, context = vllm_generate_batch(spec.target, gen)
        return template_agents(f"{spec.kind}:{spec.target}", tokenizer, BatchedGenerator(generate, batch_size),
                               context - max_new_tokens)

    from trajforge.simulation.llm import Budget, Gateway

    config = gateway or GatewayConfig()
    model_config = ModelConfig(model=spec.target, api_base=api_base, temperature=temperature,
                               max_tokens=max_new_tokens)
    holder: dict[str, AgentFactory] = {}

    def remote(episode: EpisodeContext) -> AgentPolicy:
        # the gateway binds to the running loop, so it is made on the first episode
        if "agents" not in holder:
            holder["agents"] = llm_agents(Gateway(config, Budget(config.max_cost_usd), random.Random(seed),
                                                  concurrency=batch_size), model_config)
        return holder["agents"](episode)

    return remote
