"""Policies a trained model plays the agent with: ``hf:PATH`` (transformers ``generate``, CPU or
GPU), ``vllm:PATH`` (an in-process vLLM engine; optional), and ``litellm:MODEL`` (any model the
gateway reaches, incl. a ``vllm serve`` endpoint; see ``trajforge.sft.evaluate``).

Local models speak the text format of their chat template: the conversation and the tools are
rendered with ``apply_chat_template``, the model writes an assistant message, and
``parse_completion`` reads it back: text, then ``<tool_call>{"name": ..., "arguments": {...}}
</tool_call>`` blocks (the format of ``trajforge.sft.tiny.CHAT_TEMPLATE`` and of Hermes-style
templates). A block that is not valid JSON, names no tool or has non-object arguments is kept as
a call and answered with an error tool message, never executed: malformed calls are data, and
they are what ``format_valid`` counts.

Generation is batched across episodes: each episode's ``respond`` queues its prompt, and one
worker thread generates the queued prompts together (``BatchedGenerator``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from trajforge.errors import ConfigError, PolicyFailure
from trajforge.schemas.arrow import conversation, message_to_row
from trajforge.schemas.messages import AssistantMessage, Message, ToolCall, agent_view
from trajforge.schemas.trajectory import TerminationReason
from trajforge.simulation.prefix_cache import PrefixCache, generate_with_prefix_cache
from trajforge.simulation.runner import AgentReply

MALFORMED_CALL = "malformed tool call: write <tool_call>{\"name\": TOOL, \"arguments\": {...}}</tool_call>"
UNKNOWN_TOOL = "unknown tool"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)


@dataclass(frozen=True)
class ParsedTurn:
    content: str | None
    calls: tuple[ToolCall, ...]
    rejected: dict[str, str]


def parse_completion(text: str, tool_names: set[str], call_prefix: str) -> ParsedTurn:
    """An assistant message from the model's text (the inverse of the chat template)."""
    first = text.find("<tool_call>")
    content = (text if first < 0 else text[:first]).strip() or None
    calls: list[ToolCall] = []
    rejected: dict[str, str] = {}
    if first >= 0:
        for k, raw in enumerate(_BLOCK.findall(text[first:])):
            call_id = f"{call_prefix}_{k}"
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            if not (isinstance(body, dict) and isinstance(body.get("name"), str)
                    and isinstance(body.get("arguments", {}), dict)):
                calls.append(ToolCall(id=call_id, name=str(body.get("name", "")) if isinstance(body, dict) else "",
                                      arguments=raw.strip()))
                rejected[call_id] = MALFORMED_CALL
                continue
            call = ToolCall(id=call_id, name=body["name"],
                            arguments=json.dumps(body.get("arguments", {}), ensure_ascii=False))
            calls.append(call)
            if call.name not in tool_names:
                rejected[call_id] = f"{UNKNOWN_TOOL} '{call.name}'"
    return ParsedTurn(content, tuple(calls), rejected)


def chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in the chat-template shape (arguments as objects, no ``None`` keys), as the
    agent sees them: the user's own tool calls and their results left out (``agent_view``)."""
    return conversation([message_to_row(m) for m in agent_view(messages)])


P = TypeVar("P")
R = TypeVar("R")


class BatchedGenerator(Generic[P, R]):
    """Collects the prompts of concurrent episodes and generates them in batches on a worker
    thread, so the event loop keeps the other episodes moving while the model runs. Prompts and
    results are text here, token ids in the RL rollouts (``trajforge.rl.rollout``)."""

    def __init__(self, generate_batch: Callable[[list[P]], list[R]], max_batch: int = 16) -> None:
        self._generate_batch = generate_batch
        self._max_batch = max_batch
        self._pending: list[tuple[P, asyncio.Future[R]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def generate(self, prompt: P) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._pending.append((prompt, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let every episode that is ready queue its prompt first
        while self._pending:
            batch, self._pending = self._pending[:self._max_batch], self._pending[self._max_batch:]
            try:
                texts = await asyncio.to_thread(self._generate_batch, [p for p, _ in batch])
            except Exception as exc:  # noqa: BLE001 - the batch's episodes fail, the evaluation goes on
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), text in zip(batch, texts, strict=True):  # one text per prompt
                if not future.done():
                    future.set_result(text)


class TemplateAgent:
    """An agent backed by a local model's chat template and a ``BatchedGenerator``. One
    instance per episode."""

    def __init__(self, name: str, tokenizer: Any, generator: BatchedGenerator[str, str],
                 tools: Sequence[Mapping[str, Any]], max_prompt_tokens: int) -> None:
        self.name = name
        self.tokenizer = tokenizer
        self.generator = generator
        self.tools = [dict(t) for t in tools]
        self._tool_names = {t["function"]["name"] for t in self.tools}
        self._max_prompt_tokens = max_prompt_tokens
        self._turn = 0

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        prompt = self.tokenizer.apply_chat_template(chat_messages(messages), tools=self.tools,
                                                    tokenize=False, add_generation_prompt=True)
        if len(self.tokenizer(prompt, add_special_tokens=False)["input_ids"]) > self._max_prompt_tokens:
            raise PolicyFailure(TerminationReason.agent_error,
                                "the conversation no longer fits the model's context "
                                f"({self._max_prompt_tokens} tokens)")
        try:
            text = await self.generator.generate(prompt)
        except Exception as exc:  # noqa: BLE001 - a generation failure ends this episode only
            raise PolicyFailure(TerminationReason.llm_error, f"generation failed: {exc}") from None
        self._turn += 1
        turn = parse_completion(text, self._tool_names, f"call_{self._turn}")
        return AgentReply(AssistantMessage(content=turn.content, tool_calls=turn.calls),
                          rejected=turn.rejected)


# --- backends ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class DecodingConfig:
    max_new_tokens: int = 256
    temperature: float = 0.0  # 0: greedy
    top_p: float = 1.0
    seed: int = 0
    bf16: bool = False  # hf: compute under bfloat16 autocast (the weights stay as loaded)
    prefix_cache: int = 0  # hf: sequences whose keys and values are kept for reuse (0: none; prefix_cache.py)


def prepare_torch(threads: int | None, keep_memory: bool = True) -> None:
    """A process that trains or runs a model with torch on the CPU: its threads (None: leave
    torch's default; on a shared CPU one thread can be several times faster than two, as OpenMP
    workers spin-wait for each other), and, with ``keep_memory``, malloc keeping freed memory
    (``keep_freed_memory``: 18% more training tokens per second on this project's 2-core machine,
    ``benchmarks/results/freeze_speed-allocator.md``). ``keep_memory=False`` leaves glibc's
    default: for a long process that mixes generation (key/value caches of every length) with
    training, where the kept blocks fragment (``trajforge loop``, below)."""
    if keep_memory:
        keep_freed_memory()
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_MMAP_MAX, _DEFAULT_TRIM_THRESHOLD = 65536, 128 * 1024


def keep_freed_memory(keep: bool = True) -> bool:
    """Whether glibc's malloc keeps freed memory for reuse (``keep``) or gives it back at once
    (its default: every block over its mmap threshold is mapped fresh and unmapped when freed).
    A CPU training step allocates and frees the same large activation and gradient buffers each
    pass; mapped fresh, each page is faulted in and zeroed by the kernel again. Kept, they are
    reused (``benchmarks/freeze_speed.py --allocator`` measures the difference). Process-wide;
    returns whether it applied (False off glibc, where nothing changes). ``keep=False`` sets
    glibc's initial values back; its threshold that adapts to freed blocks then stays fixed."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mmap_max, trim = (0, 2**31 - 1) if keep else (_DEFAULT_MMAP_MAX, _DEFAULT_TRIM_THRESHOLD)
    return bool(mallopt(_M_MMAP_MAX, mmap_max)) and bool(mallopt(_M_TRIM_THRESHOLD, trim))


def sampling_kwargs(temperature: float, top_p: float, generator: Any) -> dict[str, Any]:
    """``generate`` arguments for greedy decoding (temperature 0) or seeded sampling: each call
    draws its torch seed from ``generator``, so a run's sequence of calls is reproducible."""
    import torch

    if temperature <= 0:
        return {"do_sample": False}
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    return {"do_sample": True, "temperature": temperature, "top_p": top_p}


def load_hf(path: str, device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) from a local folder or a Hub id; a clear error when neither loads."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError("--model", f"cannot load '{path}' as a local model folder or a Hub id: {first}") from None
    if tokenizer.chat_template is None:
        raise ConfigError("--model", f"'{path}' has no chat template; a tool-calling template is needed")
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)  # type: ignore[arg-type]  # transformers types `to` through a decorator that drops self
    model.eval()
    return model, tokenizer


def hf_generate_batch(model: Any, tokenizer: Any, settings: DecodingConfig,
                      cache: PrefixCache | None = None) -> Callable[[list[str]], list[str]]:
    """A batch generate function for a transformers model (left padding), with ``cache`` or, by
    default, a prefix cache of ``settings.prefix_cache`` entries (none at 0)."""
    import torch

    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    end_ids = [tokenizer.eos_token_id]
    end_token = tokenizer.eos_token
    generator = torch.Generator(device="cpu").manual_seed(settings.seed)
    kept = cache if cache is not None else PrefixCache(settings.prefix_cache)  # 0 entries: no cache

    def generate(prompts: list[str]) -> list[str]:
        kwargs: dict[str, Any] = {"max_new_tokens": settings.max_new_tokens, "eos_token_id": end_ids,
                                  "pad_token_id": tokenizer.pad_token_id,
                                  **sampling_kwargs(settings.temperature, settings.top_p, generator)}
        ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        new = generate_with_prefix_cache(model, kept, ids, tokenizer.pad_token_id, end_ids, kwargs, settings.bf16)
        texts = []
        for row in tokenizer.batch_decode(new, skip_special_tokens=False):
            texts.append(row.split(end_token)[0].replace(tokenizer.pad_token, ""))
        return texts

    return generate


def vllm_generate_batch(path: str, settings: DecodingConfig) -> tuple[Callable[[list[str]], list[str]], Any, int]:
    """(batch generate, tokenizer, context length) for an in-process vLLM engine."""
    try:
        from vllm import LLM, SamplingParams
    except ImportError:
        raise ConfigError("--policy", "vllm:PATH needs vLLM: pip install vllm (a GPU machine)") from None
    engine = LLM(model=path, seed=settings.seed, enable_prefix_caching=True)
    tokenizer = engine.get_tokenizer()
    params = SamplingParams(max_tokens=settings.max_new_tokens, temperature=settings.temperature,
                            top_p=settings.top_p, stop=[tokenizer.eos_token] if tokenizer.eos_token else None,
                            skip_special_tokens=False)

    def generate(prompts: list[str]) -> list[str]:
        return [r.outputs[0].text for r in engine.generate(prompts, params, use_tqdm=False)]

    return generate, tokenizer, int(engine.llm_engine.model_config.max_model_len)


def context_length(model: Any, default: int = 4096) -> int:
    return int(getattr(model.config, "max_position_embeddings", default) or default)
