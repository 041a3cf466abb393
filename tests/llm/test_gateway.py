"""The gateway against a loopback server: retries, deadlines, classification, accounting."""

from __future__ import annotations

import asyncio
import math
import socket
import time

import pytest

from tests.llm.conftest import ScriptServer, call, ok
from trajforge.schemas.config import GatewayConfig, ModelConfig
from trajforge.simulation.llm import (
    Budget,
    EpisodeLedger,
    Gateway,
    LLMFailure,
    RateLimiter,
    token_entropy,
)

# a generous call timeout: litellm's first call in a process sets itself up inside the call, which
# on a loaded 2-core machine took over 2 s and was counted as one more (timeout) retry; the
# timeout tests set their own
FAST = GatewayConfig(call_timeout_s=15.0, episode_timeout_s=30.0, max_retries=4,
                     backoff_initial_s=0.01, backoff_max_s=0.05)


@pytest.fixture(params=["litellm", "openai"])
def transport(request: pytest.FixtureRequest) -> str:
    """Every behaviour holds on both transports: litellm and the direct one."""
    return request.param


def model(server: ScriptServer, transport: str, name: str = "m", **extra: object) -> ModelConfig:
    return ModelConfig(model=f"openai/{name}", api_base=server.url, transport=transport,  # type: ignore[arg-type]
                       **extra)  # type: ignore[arg-type]


def complete(server: ScriptServer, transport: str, name: str = "m", config: GatewayConfig = FAST,
             ledger: EpisodeLedger | None = None, budget: Budget | None = None, **kwargs: object):
    ledger = ledger or EpisodeLedger.starting_now(config.episode_timeout_s)
    gateway = Gateway(config, budget or Budget(None))

    async def run():
        try:
            return await gateway.complete("agent", model(server, transport, name, **kwargs.pop("model_extra", {})),  # type: ignore[arg-type]
                                          [{"role": "user", "content": "hi"}], ledger=ledger, **kwargs)  # type: ignore[arg-type]
        finally:
            await gateway.aclose()

    return asyncio.run(run()), ledger


@pytest.mark.parametrize("failure,kind", [
    ({"status": 500, "body": {"error": {"message": "boom"}}}, "server_error"),
    ({"status": 502, "body": {"error": {"message": "bad gateway"}}}, "server_error"),
    ({"status": 503, "body": {"error": {"message": "overloaded"}}}, "server_error"),
    ({"status": 504, "body": {"error": {"message": "upstream timed out"}}}, "timeout"),
    ({"status": 408, "body": {"error": {"message": "request timeout"}}}, "timeout"),
    ({"raw": "<html>bad gateway</html>", "status": 200}, "malformed"),  # a body that is not JSON
    (ok(content=None), "empty"),  # neither text nor tool calls
    ({"status": 200, "body": {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                              "choices": []}}, "malformed"),  # no choices
], ids=["500", "502", "503", "504", "408", "non-json", "empty", "no-choices"])
def test_transient_failures_are_retried_and_counted(script_server: ScriptServer, transport: str, failure,
                                                    kind: str) -> None:
    script_server.queue("m", failure, failure)
    completion, ledger = complete(script_server, transport)
    assert completion.first.content == "hello"
    assert script_server.count("m") == 3
    assert ledger.roles["agent"].retries == 2
    assert ledger.roles["agent"].failures == {kind: 2}
    assert ledger.roles["agent"].calls == 1


def test_429_honours_retry_after(script_server: ScriptServer, transport: str) -> None:
    script_server.queue("m", {"status": 429, "body": {"error": {"message": "slow down"}},
                              "headers": {"Retry-After": "0.6"}})
    began = time.monotonic()
    _, ledger = complete(script_server, transport)
    assert time.monotonic() - began >= 0.6
    assert ledger.roles["agent"].failures["rate_limit"] == 1


def test_a_server_error_honours_retry_after(script_server: ScriptServer, transport: str) -> None:
    script_server.queue("m", {"status": 503, "body": {"error": {"message": "warming up"}},
                              "headers": {"Retry-After": "0.6"}})
    began = time.monotonic()
    _, ledger = complete(script_server, transport)
    assert time.monotonic() - began >= 0.6
    assert ledger.roles["agent"].failures["server_error"] == 1


def test_a_refused_connection_is_retried_then_fails_as_connection(transport: str) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gone = ModelConfig(model="openai/m", api_base=f"http://127.0.0.1:{port}/v1", transport=transport)  # type: ignore[arg-type]
    ledger = EpisodeLedger.starting_now(30)
    gateway = Gateway(FAST, Budget(None))

    async def run() -> None:
        try:
            await gateway.complete("agent", gone, [{"role": "user", "content": "hi"}], ledger=ledger)
        finally:
            await gateway.aclose()

    with pytest.raises(LLMFailure) as raised:
        asyncio.run(run())
    assert raised.value.kind == "connection" and raised.value.attempts == FAST.max_retries + 1
    assert ledger.roles["agent"].failures == {"connection": FAST.max_retries + 1}


def test_a_hung_request_becomes_a_retry(script_server: ScriptServer, transport: str) -> None:
    script_server.queue("m", {**ok(), "delay_s": 30})
    began = time.monotonic()
    config = FAST.model_copy(update={"call_timeout_s": 0.5})
    completion, ledger = complete(script_server, transport, config=config)
    assert completion.first.content == "hello"
    assert time.monotonic() - began < 5
    assert ledger.roles["agent"].failures["timeout"] == 1 and ledger.roles["agent"].retries == 1


def test_the_episode_deadline_ends_retries(script_server: ScriptServer, transport: str) -> None:
    script_server.default = {**ok(), "delay_s": 30}
    config = FAST.model_copy(update={"call_timeout_s": 0.3, "episode_timeout_s": 1.0})
    began = time.monotonic()
    with pytest.raises(LLMFailure) as failure:
        complete(script_server, transport, config=config)
    assert failure.value.kind == "deadline"
    assert time.monotonic() - began < 3


@pytest.mark.parametrize("failure,kind", [
    ({"status": 400, "body": {"error": {"message": "bad request"}}}, "bad_request"),
    ({"status": 404, "body": {"error": {"message": "no such model"}}}, "bad_request"),
    ({"status": 422, "body": {"detail": [{"msg": "field required"}]}}, "bad_request"),
    ({"status": 401, "body": {"error": {"message": "invalid api key"}}}, "auth"),
    ({"status": 403, "body": {"error": {"message": "forbidden"}}}, "auth"),
    (ok(finish="content_filter"), "content_filter"),
    ({"status": 400, "body": {"error": {"message": "This model's maximum context length is 8192 tokens",
                                        "code": "context_length_exceeded"}}}, "context_window"),
    ({"status": 400, "body": {"error": {"message": "the request exceeds the available context size, "
                                                   "try increasing it"}}}, "context_window"),  # llama.cpp
], ids=["400", "404", "422", "401", "403", "content-filter", "context-window", "context-window-llama.cpp"])
def test_permanent_failures_are_not_retried(script_server: ScriptServer, transport: str, failure, kind: str) -> None:
    script_server.queue("m", failure)
    with pytest.raises(LLMFailure) as raised:
        complete(script_server, transport)
    assert raised.value.kind == kind
    assert script_server.count("m") == 1


def test_retries_stop_at_the_limit(script_server: ScriptServer, transport: str) -> None:
    script_server.default = {"status": 500, "body": {"error": {"message": "down"}}}
    with pytest.raises(LLMFailure) as raised:
        complete(script_server, transport)
    assert raised.value.kind == "server_error"
    assert script_server.count("m") == FAST.max_retries + 1


def test_a_truncated_answer_is_retried_once_then_used(script_server: ScriptServer, transport: str) -> None:
    script_server.default = ok(content="cut", finish="length")
    completion, ledger = complete(script_server, transport)
    assert completion.first.content == "cut"
    assert script_server.count("m") == 2 and ledger.roles["agent"].failures["length"] == 1


def test_an_unpriced_model_is_unknown_not_free(script_server: ScriptServer, transport: str) -> None:
    budget = Budget(1.0)
    completion, ledger = complete(script_server, transport, budget=budget)
    assert completion.cost_usd is None
    assert ledger.cost_usd() is None and ledger.roles["agent"].usage("agent").cost_usd is None
    assert budget.unpriced_calls == 1 and budget.spent_usd == 0


def test_configured_prices_cost_and_fill_the_budget(script_server: ScriptServer, transport: str) -> None:
    budget = Budget(0.0011)
    prices = {"input_cost_per_token": 1e-5, "output_cost_per_token": 1e-5}
    completion, ledger = complete(script_server, transport, budget=budget, model_extra=prices)
    assert completion.cost_usd == pytest.approx(110 * 1e-5)
    assert ledger.cost_usd() == pytest.approx(0.0011)
    assert budget.exhausted()


def test_tool_calls_headers_and_n_reach_the_server(script_server: ScriptServer, transport: str) -> None:
    script_server.queue("m", ok(content=None, tool_calls=[call("f", '{"a": 1}')], n=2))
    completion, _ = complete(script_server, transport, tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {}}}}],
        headers={"X-Trajforge-Episode": "bp_1;7"}, n=2)
    assert len(completion.choices) == 2
    assert completion.first.tool_calls[0].name == "f"
    assert completion.first.tool_calls[0].arguments == '{"a": 1}'
    request = script_server.requests[-1]
    assert request["model"] == "m"  # the provider prefix is not sent
    assert request["n"] == 2 and request["tools"][0]["function"]["name"] == "f"
    sent = {k.lower(): v for k, v in script_server.headers[-1].items()}
    assert sent["x-trajforge-episode"] == "bp_1;7"
    assert sent["authorization"] == "Bearer no-key"
    assert (sent["user-agent"] == "trajforge") == (transport == "openai")  # the transport asked for took it


def test_the_configured_key_is_sent_as_a_bearer_token(script_server: ScriptServer, transport: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAJFORGE_TEST_KEY", "sk-local-1")
    complete(script_server, transport, model_extra={"api_key_env": "TRAJFORGE_TEST_KEY", "temperature": 0.3,
                                                    "max_tokens": 64})
    sent = {k.lower(): v for k, v in script_server.headers[-1].items()}
    assert sent["authorization"] == "Bearer sk-local-1"
    request = script_server.requests[-1]
    assert request["temperature"] == 0.3 and request["max_tokens"] == 64


def test_one_gateway_reuses_its_connections_and_closes_them(script_server: ScriptServer, transport: str) -> None:
    gateway = Gateway(FAST, Budget(None))
    ledger = EpisodeLedger.starting_now(30)

    async def run() -> None:
        try:
            for _ in range(3):
                await gateway.complete("agent", model(script_server, transport),
                                       [{"role": "user", "content": "hi"}], ledger=ledger)
        finally:
            await gateway.aclose()

    asyncio.run(run())
    assert len(script_server.peers) == 3 and len(set(script_server.peers)) == 1
    # and aclose closed them: the server sees the connection end
    deadline = time.monotonic() + 5
    while not all(c.is_closing() for c in script_server.connections) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert script_server.connections and all(c.is_closing() for c in script_server.connections)


def test_entropy_comes_from_top_logprobs(script_server: ScriptServer, transport: str) -> None:
    top = [{"token": "a", "logprob": math.log(0.5), "bytes": None},
           {"token": "b", "logprob": math.log(0.5), "bytes": None}]
    logprobs = {"content": [{"token": "a", "logprob": math.log(0.5), "bytes": None,
                             "top_logprobs": top}] * 3}
    script_server.queue("m", ok(logprobs=logprobs))
    completion, _ = complete(script_server, transport, model_extra={"logprobs": True})
    assert completion.first.entropy == pytest.approx(math.log(2))
    assert script_server.requests[-1]["logprobs"] is True
    assert token_entropy([{"logprob": 0.0}]) == 0.0


def test_rate_limiter_spaces_requests() -> None:
    limiter = RateLimiter(rpm=600, tpm=None)  # 10 per second, a burst of 600 at first

    async def run() -> float:
        limiter._requests = (0.0, time.monotonic())  # start with an empty bucket
        began = time.monotonic()
        for _ in range(5):
            await limiter.acquire(1)
        return time.monotonic() - began

    assert asyncio.run(run()) >= 0.45
