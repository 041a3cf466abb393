"""The one LLM gateway. Every model call in trajforge goes through ``Gateway.complete``, and this
is the only module that imports litellm.

Two transports carry the calls (``ModelConfig.transport``, resolved per call by
``openai_http.transport_of``): **litellm**, for any provider, and the **direct** one
(``openai_http``), a plain ``POST {api_base}/chat/completions`` for self-hosted OpenAI-compatible
servers, about six times cheaper in client CPU per call (``benchmarks/results/transport_cpu.md``).
litellm is imported on the first call that needs it, so a build whose models are all served
directly never imports it (and does not wait seconds for it before its first call).

What it guarantees, whatever the provider does:

- **A wall-clock deadline on every call**, enforced by the event loop (``asyncio.wait_for``),
  never only by the HTTP client: litellm's own timeout does not interrupt a blocked read, and a
  hung connection must become a retry, not a stuck run. The deadline is the smaller of the call
  timeout and what is left of the episode's deadline.
- **Retries on transient errors only** (429 honouring ``Retry-After``, 5xx, timeouts, connection
  errors, malformed bodies and empty answers), with exponential backoff and jitter, counted per
  role in the episode's ledger. litellm's and the OpenAI SDK's own retries are switched off, so
  the count is exact. Permanent errors (bad request, auth, context window, content filter) fail
  at once with their kind.
- **Rate limits** per model (requests and tokens per minute, per process).
- **Token and cost accounting** per role and episode, and a run-wide ``Budget``. A model litellm
  cannot price (and that has no price in its ``ModelConfig``) is recorded as unknown (``None``),
  never as zero; so is a direct call without configured prices.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# these live in trajforge.errors; code that imports them from here (their old home) keeps working
from trajforge.errors import TRANSIENT, FailureKind, LLMCallError, LLMFailure  # noqa: F401
from trajforge.schemas.config import GatewayConfig, ModelConfig
from trajforge.schemas.trajectory import RoleUsage
from trajforge.simulation.openai_http import (
    OpenAIClient,
    http_failure,
    retry_after_s,
    served_name,
    transport_of,
)

# a truncated answer is deterministic at temperature 0: one more try, then it is used as it is
_MAX_LENGTH_RETRIES = 1


# --- accounting ---------------------------------------------------------------------------------


@dataclass
class RoleLedger:
    calls: int = 0  # successful calls
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    retries: int = 0
    failures: Counter[str] = field(default_factory=Counter)

    def usage(self, role: str) -> RoleUsage:
        return RoleUsage(role=role, calls=self.calls, prompt_tokens=self.prompt_tokens,
                         completion_tokens=self.completion_tokens,
                         cost_usd=None if self.unpriced_calls else round(self.cost_usd, 10),
                         retries=self.retries)


@dataclass
class EpisodeLedger:
    """What one episode's model calls cost, and the wall-clock deadline they share."""

    deadline: float  # time.monotonic() value
    roles: dict[str, RoleLedger] = field(default_factory=dict)
    entropy: list[float | None] = field(default_factory=list)  # per agent call

    @classmethod
    def starting_now(cls, timeout_s: float) -> EpisodeLedger:
        return cls(deadline=time.monotonic() + timeout_s)

    def role(self, name: str) -> RoleLedger:
        if name not in self.roles:
            self.roles[name] = RoleLedger()
        return self.roles[name]

    def cost_usd(self) -> float | None:
        if any(r.unpriced_calls for r in self.roles.values()):
            return None
        return round(sum(r.cost_usd for r in self.roles.values()), 10)

    def retries(self) -> int:
        return sum(r.retries for r in self.roles.values())


class Budget:
    """The run's spend, shared by every episode of a process (its threads included). Prices that
    are unknown are counted, not guessed. Processes other than this one report their spend
    through the run's spend file (``RunStore.record_spend``); ``at_least`` takes it in."""

    def __init__(self, cap_usd: float | None, spent_usd: float = 0.0) -> None:
        self.cap_usd = cap_usd
        self._spent = spent_usd
        self._lock = threading.Lock()
        self.unpriced_calls = 0

    @property
    def spent_usd(self) -> float:
        return self._spent

    def add(self, cost: float | None) -> None:
        with self._lock:
            if cost is None:
                self.unpriced_calls += 1
            else:
                self._spent += cost

    def at_least(self, spent_usd: float) -> None:
        """Raise the spend to what the run is known to have spent elsewhere."""
        with self._lock:
            self._spent = max(self._spent, spent_usd)

    def exhausted(self) -> bool:
        return self.cap_usd is not None and self.spent_usd >= self.cap_usd


def ledgers_cost(ledgers: Sequence[EpisodeLedger]) -> float | None:
    """What a group of ledgers cost together; ``None`` when any of them could not be priced."""
    costs = [ledger.cost_usd() for ledger in ledgers]
    return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


# --- rate limiting ------------------------------------------------------------------------------


class RateLimiter:
    """Token buckets for requests and tokens per minute. Token use is estimated before the call
    (prompt characters / 4 + max_tokens) and corrected after it."""

    def __init__(self, rpm: int | None, tpm: int | None) -> None:
        self.rpm = rpm
        self.tpm = tpm
        now = time.monotonic()
        self._requests = (float(rpm or 0), now)
        self._tokens = (float(tpm or 0), now)
        self._lock = asyncio.Lock()

    @staticmethod
    def _level(bucket: tuple[float, float], rate: int, now: float) -> float:
        level, at = bucket
        return min(float(rate), level + (now - at) * rate / 60.0)

    async def acquire(self, tokens: int) -> None:
        async with self._lock:
            while True:
                now = time.monotonic()
                waits = []
                if self.rpm:
                    level = self._level(self._requests, self.rpm, now)
                    waits.append(0.0 if level >= 1 else (1 - level) * 60.0 / self.rpm)
                if self.tpm:
                    level = self._level(self._tokens, self.tpm, now)
                    need = min(tokens, self.tpm)
                    waits.append(0.0 if level >= need else (need - level) * 60.0 / self.tpm)
                wait = max(waits, default=0.0)
                if wait <= 0:
                    if self.rpm:
                        self._requests = (self._level(self._requests, self.rpm, now) - 1, now)
                    if self.tpm:
                        self._tokens = (self._level(self._tokens, self.tpm, now) - tokens, now)
                    return
                await asyncio.sleep(wait)

    def correct(self, estimated: int, actual: int) -> None:
        if self.tpm:
            level, at = self._tokens
            self._tokens = (level + estimated - actual, at)


# --- responses ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawToolCall:
    id: str | None
    name: str | None
    arguments: str | None


@dataclass(frozen=True)
class Choice:
    content: str | None
    tool_calls: tuple[RawToolCall, ...]
    finish_reason: str | None
    entropy: float | None = None  # mean per-token entropy (nats) over the top logprobs


@dataclass(frozen=True)
class Completion:
    choices: tuple[Choice, ...]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None

    @property
    def first(self) -> Choice:
        return self.choices[0]


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def token_entropy(top_logprobs: Sequence[Any]) -> float | None:
    """Entropy (nats) of one token's distribution, estimated from its top-k logprobs
    renormalized to sum to one."""
    probs = [math.exp(float(_get(t, "logprob"))) for t in top_logprobs
             if _get(t, "logprob") is not None]
    total = sum(probs)
    if total <= 0:
        return None
    return -sum((p / total) * math.log(p / total) for p in probs if p > 0)


def _choice_entropy(choice: Any) -> float | None:
    logprobs = _get(choice, "logprobs")
    content = _get(logprobs, "content") if logprobs is not None else None
    if not content:
        return None
    values = [e for e in (token_entropy(_get(t, "top_logprobs") or ()) for t in content)
              if e is not None]
    return sum(values) / len(values) if values else None


def parse_response(response: Any) -> tuple[tuple[Choice, ...], int, int]:
    """Choices and token counts of a litellm response; malformed ones raise ``LLMCallError``."""
    raw_choices = _get(response, "choices") or []
    if not raw_choices:
        raise LLMCallError("malformed", "the response has no choices")
    choices = []
    for raw in raw_choices:
        message = _get(raw, "message")
        if message is None:
            raise LLMCallError("malformed", "a choice has no message")
        finish = _get(raw, "finish_reason")
        if finish == "content_filter":
            raise LLMCallError("content_filter", "the provider filtered the answer")
        calls = tuple(RawToolCall(id=_get(c, "id"), name=_get(_get(c, "function"), "name"),
                                  arguments=_get(_get(c, "function"), "arguments"))
                      for c in (_get(message, "tool_calls") or ()))
        content = _get(message, "content")
        if isinstance(content, list):  # content parts
            content = "".join(str(_get(p, "text") or "") for p in content)
        choices.append(Choice(content=content, tool_calls=calls, finish_reason=finish,
                              entropy=_choice_entropy(raw)))
    usage = _get(response, "usage")
    return (tuple(choices), int(_get(usage, "prompt_tokens") or 0),
            int(_get(usage, "completion_tokens") or 0))


def classify_exception(exc: BaseException) -> LLMCallError:
    """Map whatever a provider raised to a failure kind (transient or not)."""
    if isinstance(exc, LLMCallError):
        return exc
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return LLMCallError("timeout", "no answer before the call deadline")
    name = type(exc).__name__
    names = {c.__name__ for c in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    text = str(exc).splitlines()[0][:300] if str(exc) else name
    # litellm's own classes first: it has read the provider's message (and its connection
    # errors carry a status of 500)
    if "ContextWindowExceededError" in names:
        return LLMCallError("context_window", text)
    if "ContentPolicyViolationError" in names:
        return LLMCallError("content_filter", text)
    if "RateLimitError" in names:
        return LLMCallError("rate_limit", text, _retry_after(exc))
    if "AuthenticationError" in names or "PermissionDeniedError" in names:
        return LLMCallError("auth", text)
    if "Timeout" in names or "APITimeoutError" in names:
        return LLMCallError("timeout", text)
    if "APIConnectionError" in names or isinstance(exc, ConnectionError | OSError):
        return LLMCallError("connection", text)
    # litellm reports a refused connection and a body that is not JSON as a 500 of its own: what
    # it wraps says what happened, so both transports give the same kind for the same server
    causes = _cause_names(exc)
    if "JSONDecodeError" in causes:
        return LLMCallError("malformed", text)
    if {"APIConnectionError", "ConnectError", "ConnectionError"} & causes:
        return LLMCallError("connection", text)
    if isinstance(status, int):  # the same mapping as the direct transport's
        return http_failure(status, text, _headers(exc))
    if {"InternalServerError", "ServiceUnavailableError"} & names:
        return LLMCallError("server_error", text, _retry_after(exc))
    if "BadRequestError" in names or "NotFoundError" in names or "UnprocessableEntityError" in names:
        return LLMCallError("bad_request", text)
    if "JSONDecodeError" in names:
        return LLMCallError("malformed", text)
    return LLMCallError("bad_request", f"{name}: {text}")


def _cause_names(exc: BaseException) -> set[str]:
    """The class names (bases included) of the exceptions ``exc`` was raised from."""
    names: set[str] = set()
    seen = {id(exc)}
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        names.update(c.__name__ for c in type(cause).__mro__)
        cause = cause.__cause__ or cause.__context__
    return names


def _headers(exc: BaseException) -> Any:
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers


def _retry_after(exc: BaseException) -> float | None:
    return retry_after_s(_headers(exc))


# --- the gateway --------------------------------------------------------------------------------


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the map at import
    try:
        import litellm
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("this model's calls go through litellm: pip install 'trajforge[llm]' (a "
                          "self-hosted OpenAI-compatible server needs no extra: transport 'openai')") from exc
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class Gateway:
    """Makes model calls for every role of every episode of one process, on one event loop."""

    def __init__(self, config: GatewayConfig, budget: Budget, rng: random.Random | None = None,
                 concurrency: int = 64) -> None:
        self.config = config
        self.budget = budget
        self.rng = rng or random.Random(0)
        self._concurrency = concurrency
        self._gate = asyncio.Semaphore(concurrency)  # calls in flight, so a slow provider
        self._limiters: dict[str, RateLimiter] = {}  # cannot pile up unbounded sockets
        self._litellm: Any = None  # imported by the first call that goes through it
        self._direct: OpenAIClient | None = None  # made by the first direct call, on this loop

    def _limiter(self, model: ModelConfig) -> RateLimiter | None:
        if not (model.rpm or model.tpm):
            return None
        key = f"{model.model}@{model.api_base}"
        if key not in self._limiters:
            self._limiters[key] = RateLimiter(model.rpm, model.tpm)
        return self._limiters[key]

    def _litellm_module(self) -> Any:
        if self._litellm is None:
            self._litellm = _import_litellm()
        return self._litellm

    def _direct_client(self) -> OpenAIClient:
        if self._direct is None:
            self._direct = OpenAIClient(max_connections=self._concurrency)
        return self._direct

    @staticmethod
    def _api_key(model: ModelConfig) -> str | None:
        key = os.environ.get(model.api_key_env) if model.api_key_env else None
        if key:
            return key
        if model.api_base and not model.api_key_env:
            # local OpenAI-compatible servers usually take any key; the SDK insists on one
            return os.environ.get("OPENAI_API_KEY") or "no-key"
        return None

    @staticmethod
    def _request(model: ModelConfig, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]] | None,
                 tool_choice: Any, n: int) -> dict[str, Any]:
        """The fields of the request that both transports send alike."""
        request: dict[str, Any] = {"messages": messages}
        if tools:
            request["tools"] = list(tools)
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
        if n > 1:
            request["n"] = n
        if model.temperature is not None:
            request["temperature"] = model.temperature
        if model.max_tokens is not None:
            request["max_tokens"] = model.max_tokens
        if model.logprobs:
            request["logprobs"] = True
            request["top_logprobs"] = 5
        return request

    def _sender(self, model: ModelConfig, request: dict[str, Any],
                headers: dict[str, str] | None) -> Callable[[float], Awaitable[Any]]:
        """One attempt of the call, given its timeout, on the model's transport."""
        if transport_of(model) == "openai":
            assert model.api_base is not None  # the config's validator and the rule see to it
            client, api_base = self._direct_client(), model.api_base
            body = {"model": served_name(model.model), **request}
            # litellm falls back to OPENAI_API_KEY when api_key_env names an unset variable
            api_key = self._api_key(model) or os.environ.get("OPENAI_API_KEY")
            return lambda timeout: client.chat(api_base, body, api_key=api_key, headers=headers,
                                               timeout=timeout)
        litellm = self._litellm_module()
        kwargs: dict[str, Any] = {"model": model.model, "num_retries": 0, "max_retries": 0, **request}
        if model.api_base:
            kwargs["api_base"] = model.api_base
        api_key = self._api_key(model)
        if api_key:
            kwargs["api_key"] = api_key
        if headers:
            kwargs["extra_headers"] = headers
        return lambda timeout: litellm.acompletion(timeout=timeout, **kwargs)

    def _cost(self, model: ModelConfig, response: Any, prompt: int, completion: int) -> float | None:
        if model.input_cost_per_token is not None or model.output_cost_per_token is not None:
            return (prompt * (model.input_cost_per_token or 0.0)
                    + completion * (model.output_cost_per_token or 0.0))
        if isinstance(response, dict):  # a direct call: a self-hosted server has no list price
            return None
        # litellm prices every response it returns (in its hidden params); a model it cannot
        # price gets None there, which stays unknown, never zero
        hidden = getattr(response, "_hidden_params", None) or {}
        if "response_cost" in hidden:
            cost = hidden.get("response_cost")
            return float(cost) if cost is not None else None
        try:
            return float(self._litellm_module().completion_cost(completion_response=response))
        except Exception:  # noqa: BLE001 - litellm raises for models it cannot price: unknown, not zero
            return None

    def _backoff(self, attempt: int, error: LLMCallError) -> float:
        base = min(self.config.backoff_max_s, self.config.backoff_initial_s * (2 ** attempt))
        delay = base * (0.5 + 0.5 * self.rng.random())  # "equal jitter"
        if error.retry_after is not None:
            delay = max(delay, error.retry_after)
        return delay

    async def complete(self, role: str, model: ModelConfig, messages: list[dict[str, Any]], *,
                       ledger: EpisodeLedger, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: Any = None, n: int = 1,
                       headers: dict[str, str] | None = None) -> Completion:
        """One logical call: attempts until a good answer, a permanent error or the deadline."""
        book = ledger.role(role)
        send = self._sender(model, self._request(model, messages, tools, tool_choice, n), headers)
        limiter = self._limiter(model)
        estimate = sum(len(str(m.get("content") or "")) for m in messages) // 4 + (model.max_tokens or 256)
        attempt = 0
        length_retries = 0
        while True:
            remaining = ledger.deadline - time.monotonic()
            if remaining <= 0:
                book.failures["deadline"] += 1
                raise LLMFailure(role, "deadline", "the episode deadline passed", attempt)
            timeout = min(self.config.call_timeout_s, remaining)
            attempt += 1
            book.attempts += 1
            try:
                if limiter is not None:
                    await asyncio.wait_for(limiter.acquire(estimate), timeout)
                async with self._gate:
                    response = await asyncio.wait_for(send(timeout), timeout)
                choices, prompt, completion = parse_response(response)
                if all(not c.content and not c.tool_calls for c in choices):
                    raise LLMCallError("empty", "the answer has neither text nor tool calls")
                if (choices[0].finish_reason == "length" and length_retries < _MAX_LENGTH_RETRIES):
                    length_retries += 1
                    raise LLMCallError("length", "the answer was cut at max_tokens")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every provider error is classified, none escapes raw
                error = classify_exception(exc)
                book.failures[error.kind] += 1
                if not error.transient or attempt > self.config.max_retries:
                    raise LLMFailure(role, error.kind, str(error), attempt) from None
                delay = self._backoff(attempt - 1, error)
                if delay >= ledger.deadline - time.monotonic():
                    raise LLMFailure(role, "deadline", f"no time left to retry after {error}",
                                     attempt) from None
                book.retries += 1
                await asyncio.sleep(delay)
                continue
            if limiter is not None:
                limiter.correct(estimate, prompt + completion)
            cost = self._cost(model, response, prompt, completion)
            book.calls += 1
            book.prompt_tokens += prompt
            book.completion_tokens += completion
            if cost is None:
                book.unpriced_calls += 1
            else:
                book.cost_usd += cost
            self.budget.add(cost)
            return Completion(choices=choices, prompt_tokens=prompt, completion_tokens=completion,
                              cost_usd=cost)

    async def aclose(self) -> None:
        """Close the direct transport's connections, and litellm's cached async HTTP clients
        when a call went through litellm, before the loop ends."""
        if self._direct is not None:
            direct, self._direct = self._direct, None
            await direct.aclose()
        if self._litellm is not None:
            await _close_litellm()


async def _close_litellm() -> None:
    try:
        from litellm.llms.custom_httpx.async_client_cleanup import (
            close_litellm_async_clients,
        )
    except ImportError:  # pragma: no cover - moved in some litellm releases
        return
    try:
        await close_litellm_async_clients()
    except Exception:  # noqa: BLE001 - best effort at shutdown
        pass
    try:  # litellm's background logging worker lives on this loop too
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

        await GLOBAL_LOGGING_WORKER.stop(discard_pending=True, timeout=2.0)
    except Exception:  # noqa: BLE001 - absent in some releases; best effort at shutdown
        pass


def quiet_provider_logs() -> None:
    """Keep litellm's and the HTTP clients' own logging out of the user's terminal: every
    failure they would print is classified and recorded in the trajectory (retries, error)
    instead. It imports nothing, so a build that never needs litellm never loads it: litellm
    adds its handlers at import but leaves these levels alone (but httpx's, which it lowers to
    WARNING, above anything httpx logs), so they hold whenever it is imported later."""
    import logging

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
