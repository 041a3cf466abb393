"""The direct transport: model calls to a self-hosted OpenAI-compatible server (vLLM, SGLang,
llama.cpp, ``trajforge serve-policy``) as plain ``POST {api_base}/chat/completions``, without
litellm. For such a server litellm's provider mapping, logging callbacks, cost map and thread
hops are pure overhead, and ``import litellm`` alone takes seconds before a build's first call.

It does one HTTP exchange and nothing else: the gateway (``llm.py``) keeps the deadline, the
retries, the rate limits and the accounting for both transports, and this module's
``http_failure`` is the one mapping of an HTTP error reply to a failure kind, which the litellm
path's ``classify_exception`` uses too.

The HTTP library was chosen by measurement (``benchmarks/transport_cpu.py``, results in
``benchmarks/results/transport_cpu.md``): client CPU per call, 2,000 calls at concurrency 64
against a loopback server, on this project's 2-core machine, medians of 3 interleaved rounds:
aiohttp 0.25 ms, httpx 5.65 ms (httpcore's pool scans every queued request against every
connection on each request and answer, so its cost grows with the concurrency: 1.20 ms at 8),
bare ``litellm.acompletion`` 5.67 ms; through the gateway, this transport 0.88 ms against 5.30 ms
through litellm. aiohttp is far more than 30% cheaper, so it is used, although httpx is a core
dependency (through Prefect) and aiohttp comes with the ``[llm]`` extra (litellm's own transport
is aiohttp): a model-backed build needs that extra either way, as before.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from trajforge.errors import FailureKind, LLMCallError
from trajforge.schemas.config import ModelConfig

Transport = Literal["litellm", "openai"]

# the model-string prefixes that mean "an OpenAI-compatible server"; litellm strips them too
_OPENAI_PREFIXES = ("openai", "hosted_vllm")
# where a server is self-hosted: loopback, RFC 1918, link-local, IPv6 unique-local, and the
# unspecified address (``http://0.0.0.0:8000``, as vLLM prints its own address, is this host)
_LOCAL_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "0.0.0.0/32",
    "::1/128", "fe80::/10", "fc00::/7", "::/128"))
# what servers say in a 400 whose prompt did not fit (vLLM, SGLang, llama.cpp, OpenAI: the
# substrings litellm's own mapping looks for)
_CONTEXT_WINDOW = ("maximum context length", "context_length_exceeded", "exceed context limit",
                   "longer than the model's context length", "exceeds the available context size",
                   "model's maximum context limit", "input tokens exceed the configured limit",
                   "prompt is too long")


def transport_of(model: ModelConfig) -> Transport:
    """The transport a call to ``model`` takes: the configured one, and for ``auto`` the direct
    one exactly when the model is served by a self-hosted OpenAI-compatible server (an
    ``api_base`` on this host or a private network, and an ``openai/`` or ``hosted_vllm/`` model
    string or none at all), which litellm cannot price meaningfully anyway."""
    if model.transport != "auto":
        return model.transport
    if not model.api_base:
        return "litellm"
    provider, slash, _ = model.model.partition("/")
    if slash and provider not in _OPENAI_PREFIXES:
        return "litellm"
    return "openai" if is_local_host(urlsplit(model.api_base).hostname) else "litellm"


def is_local_host(host: str | None) -> bool:
    """Whether ``host`` names this machine or a private network. Names other than
    ``localhost`` are not resolved (a DNS lookup per call would cost more than it saves)."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in _LOCAL_NETWORKS)


def served_name(model: str) -> str:
    """The model name the server is asked for: ``openai/foo`` sends ``foo``, as litellm does."""
    provider, slash, name = model.partition("/")
    return name if slash and provider in _OPENAI_PREFIXES else model


def http_failure(status: int, message: str,
                 headers: Mapping[str, str] | None = None) -> LLMCallError:
    """The failure an HTTP error reply is, for either transport."""
    kind: FailureKind
    if status == 429:
        kind = "rate_limit"
    elif status in (401, 403):
        kind = "auth"
    elif status in (408, 504):
        kind = "timeout"
    elif status >= 500:
        kind = "server_error"
    elif 400 <= status < 500 and any(s in message.lower() for s in _CONTEXT_WINDOW):
        kind = "context_window"
    else:
        kind = "bad_request"
    retry_after = retry_after_s(headers) if kind in ("rate_limit", "server_error") else None
    return LLMCallError(kind, message, retry_after)


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """The seconds a ``Retry-After`` header asks for (``None`` when absent or not a number)."""
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _error_text(status: int, text: str) -> str:
    """The server's own error message (OpenAI's ``{"error": {"message": ...}}``), else the
    start of the body."""
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and error.get("message"):
        detail = str(error["message"])
        if error.get("code"):
            detail += f" ({error['code']})"
    elif isinstance(error, str):
        detail = error
    else:
        detail = text.strip()
    return f"HTTP {status}: {detail.splitlines()[0][:300] if detail else 'no body'}"


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTP_PROXY``/``HTTPS_PROXY`` by its
    scheme), or None when there is none or ``NO_PROXY`` exempts its host; the standard library's
    reading of those variables."""
    from urllib.parse import urlsplit
    from urllib.request import getproxies, proxy_bypass

    parts = urlsplit(url)
    proxy = getproxies().get(parts.scheme)
    if not proxy or (parts.hostname and proxy_bypass(parts.hostname)):
        return None
    return proxy


class OpenAIClient:
    """One pooled HTTP client for the direct calls of one gateway (so of one event loop), with
    as many connections as the gateway has calls in flight. It never retries: the gateway
    counts every attempt. Made on the loop it serves (an aiohttp session belongs to one)."""

    def __init__(self, max_connections: int) -> None:
        try:
            import aiohttp
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("the direct transport needs aiohttp: pip install 'trajforge[llm]'") from exc
        self._aiohttp = aiohttp
        # HTTP(S)_PROXY and NO_PROXY count, as they do for litellm's own aiohttp transport, but
        # read once per server (``env_proxy``): aiohttp's trust_env reads them, and ~/.netrc,
        # on a worker thread for every request (two thread hops a call, measured: ~7% of an
        # LLM-mode build's samples went to handing those to the thread pool)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max_connections), trust_env=False,
            headers={"User-Agent": "trajforge"})
        self._proxies: dict[str, str | None] = {}

    async def chat(self, api_base: str, body: dict[str, Any], *, api_key: str | None,
                   headers: Mapping[str, str] | None, timeout: float) -> dict[str, Any]:
        """The parsed JSON answer of one ``chat/completions`` request; any failure raises
        ``LLMCallError``."""
        aiohttp = self._aiohttp
        sent = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if headers:
            sent.update(headers)
        try:
            if api_base not in self._proxies:
                self._proxies[api_base] = env_proxy(api_base)
            async with self._session.post(f"{api_base.rstrip('/')}/chat/completions", json=body,
                                          headers=sent, proxy=self._proxies[api_base],
                                          timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                status, raw = response.status, await response.read()
                if status >= 300:
                    text = raw.decode("utf-8", "replace")
                    raise http_failure(status, _error_text(status, text), response.headers)
        except TimeoutError:  # aiohttp's own timeouts are TimeoutErrors too
            raise LLMCallError("timeout", f"no answer in {timeout:.1f} s") from None
        except aiohttp.ClientError as exc:  # refused, reset, closed mid-answer
            raise LLMCallError("connection", f"{type(exc).__name__}: {exc}"[:300]) from None
        try:
            answer = json.loads(raw)
        except ValueError:
            raise LLMCallError("malformed", f"the body is not JSON: {raw[:100]!r}") from None
        if not isinstance(answer, dict):
            raise LLMCallError("malformed", f"the body is not a JSON object: {raw[:100]!r}")
        return answer

    async def aclose(self) -> None:
        await self._session.close()
