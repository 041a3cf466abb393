"""Which transport a model's calls take (``openai_http.transport_of``), and what the direct one
spares: a build whose models are all self-hosted never imports litellm."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.llm.conftest import ScriptServer
from trajforge.config import validate_config
from trajforge.errors import ConfigError
from trajforge.schemas.config import ModelConfig, RunConfig
from trajforge.simulation.openai_http import served_name, transport_of


@pytest.mark.parametrize("api_base", [
    "http://127.0.0.1:8000/v1", "http://127.8.0.1:8000/v1", "http://localhost:8000/v1",
    "http://LOCALHOST/v1", "http://[::1]:8000/v1", "http://0.0.0.0:8000/v1", "http://10.1.2.3/v1",
    "http://172.20.0.5:30000/v1", "https://192.168.1.20/v1", "http://169.254.3.4/v1",
    "http://[fd00::5]:8000/v1",
])
@pytest.mark.parametrize("name", ["openai/qwen", "hosted_vllm/Qwen/Qwen2.5-7B", "qwen"])
def test_auto_goes_direct_to_a_self_hosted_openai_compatible_server(api_base: str, name: str) -> None:
    assert transport_of(ModelConfig(model=name, api_base=api_base)) == "openai"


@pytest.mark.parametrize("model", [
    ModelConfig(model="openai/gpt-4.1-mini"),  # no api_base: a provider
    ModelConfig(model="openai/m", api_base="https://api.example.com/v1"),  # a public host
    ModelConfig(model="openai/m", api_base="http://8.8.8.8/v1"),
    ModelConfig(model="openai/m", api_base="http://172.32.0.1/v1"),  # just past 172.16.0.0/12
    ModelConfig(model="openai/m", api_base="http://vllm.internal:8000/v1"),  # names are not resolved
    ModelConfig(model="anthropic/claude-sonnet-4", api_base="http://127.0.0.1:8000/v1"),
    ModelConfig(model="ollama/llama3", api_base="http://localhost:11434"),
    ModelConfig(model="openai/m", api_base="http://127.0.0.1:8000/v1", transport="litellm"),
], ids=["no-api-base", "public-name", "public-ip", "not-rfc1918", "unresolved-name", "anthropic-prefix",
        "ollama-prefix", "explicit-litellm"])
def test_auto_keeps_litellm_for_everything_else(model: ModelConfig) -> None:
    assert transport_of(model) == "litellm"


def test_explicit_openai_forces_the_direct_transport_for_any_api_base() -> None:
    model = ModelConfig(model="openai/gpt-4.1-mini", api_base="https://api.example.com/v1", transport="openai")
    assert transport_of(model) == "openai"


def test_explicit_openai_without_api_base_fails_at_load_naming_the_field() -> None:
    with pytest.raises(ConfigError) as raised:
        validate_config(RunConfig, {"simulation": {"agents": ["llm"], "agent_model": {
            "model": "openai/m", "transport": "openai"}}})
    assert raised.value.field == "simulation.agent_model.transport"
    assert "set api_base" in str(raised.value)


@pytest.mark.parametrize("name,sent", [("openai/foo", "foo"), ("hosted_vllm/Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B"),
                                       ("foo", "foo"), ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B")])
def test_the_provider_prefix_is_not_sent(name: str, sent: str) -> None:
    assert served_name(name) == sent


def test_a_build_of_direct_models_never_imports_litellm(script_server: ScriptServer) -> None:
    """A fresh interpreter quiets the provider logs (as ``trajforge build`` does), makes gateway
    calls to a loopback server with the default transport and closes the gateway: litellm is
    never imported."""
    code = textwrap.dedent(f"""
        import asyncio, json, sys
        from trajforge.schemas.config import GatewayConfig, ModelConfig
        from trajforge.simulation.llm import Budget, EpisodeLedger, Gateway, quiet_provider_logs

        quiet_provider_logs()
        model = ModelConfig(model="openai/m", api_base={script_server.url!r})

        async def main():
            gateway = Gateway(GatewayConfig(), Budget(None))
            try:
                return [await gateway.complete("agent", model, [{{"role": "user", "content": "hi"}}],
                                               ledger=EpisodeLedger.starting_now(30)) for _ in range(2)]
            finally:
                await gateway.aclose()

        completions = asyncio.run(main())
        print(json.dumps({{"content": [c.first.content for c in completions],
                          "cost": [c.cost_usd for c in completions],
                          "litellm": sorted(m for m in sys.modules if m.split(".")[0] == "litellm")}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["content"] == ["hello", "hello"] and result["cost"] == [None, None]
    assert result["litellm"] == []
    assert script_server.count("m") == 2


@pytest.mark.parametrize(("env", "url", "expected"), [
    ({}, "http://10.0.0.5:8000/v1", None),
    ({"HTTP_PROXY": "http://proxy.lan:3128"}, "http://10.0.0.5:8000/v1", "http://proxy.lan:3128"),
    ({"HTTP_PROXY": "http://proxy.lan:3128"}, "https://10.0.0.5/v1", None),  # by scheme
    ({"HTTPS_PROXY": "http://proxy.lan:3128"}, "https://10.0.0.5/v1", "http://proxy.lan:3128"),
    ({"HTTP_PROXY": "http://proxy.lan:3128", "NO_PROXY": "10.0.0.5"}, "http://10.0.0.5:8000/v1", None),
])
def test_the_direct_transport_reads_the_proxy_settings(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                       url: str, expected: str | None) -> None:
    from trajforge.simulation.openai_http import env_proxy

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert env_proxy(url) == expected


def test_the_direct_transport_sends_through_the_configured_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real request through a loopback proxy: it receives the absolute URL of the server."""
    import asyncio

    from trajforge.simulation.openai_http import OpenAIClient

    seen: list[str] = []
    answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}).encode()

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.split(b"\r\n")[0].decode())
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(answer)).encode() + b"\r\nConnection: close\r\n\r\n" + answer)
        await writer.drain()
        writer.close()

    async def main() -> dict:
        server = await asyncio.start_server(proxy, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        client = OpenAIClient(4)
        try:
            return await client.chat("http://10.255.255.1:9/v1", {"model": "m", "messages": []},
                                     api_key=None, headers=None, timeout=10)
        finally:
            await client.aclose()
            server.close()

    assert asyncio.run(main())["choices"][0]["message"]["content"] == "hi"
    assert seen == ["POST http://10.255.255.1:9/v1/chat/completions HTTP/1.1"]
