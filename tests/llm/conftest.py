"""Loopback HTTP servers for the LLM tests: real sockets, real litellm (and the direct transport),
no network.

``script_server`` answers each request with the next behaviour queued for its model, so a
test states exactly what the "provider" does. ``policy_endpoint`` runs ``trajforge
serve-policy`` (the real CLI) in a subprocess for whole builds.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")
from aiohttp import web

from trajforge.simulation.serve_process import PolicyServerProcess


def ok(content: str | None = "hello", tool_calls: list[dict[str, Any]] | None = None,
       finish: str = "stop", logprobs: Any = None, n: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"status": 200, "body": {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": i, "message": message, "finish_reason": finish, "logprobs": logprobs}
                    for i in range(n)],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}}


def call(name: str, arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class ScriptServer:
    """Each request to model M gets the next queued behaviour of M (a dict: status, body,
    headers, delay_s, raw) or, when the queue is empty, ``default``."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.peers: list[Any] = []  # the client's (host, port) per request: one per connection
        self.connections: list[asyncio.BaseTransport] = []  # every connection a request came on
        self.default = ok()
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._ready = threading.Event()

    def queue(self, model: str, *behaviours: dict[str, Any]) -> None:
        self.queues[model].extend(behaviours)

    def count(self, model: str) -> int:
        return sum(1 for r in self.requests if r.get("model") == model)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        self.peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        if request.transport is not None and request.transport not in self.connections:
            self.connections.append(request.transport)
        queue = self.queues[body.get("model", "")]
        behaviour = queue.popleft() if queue else self.default
        if behaviour.get("delay_s"):
            await asyncio.sleep(behaviour["delay_s"])
        if "raw" in behaviour:
            return web.Response(text=behaviour["raw"], status=behaviour.get("status", 200),
                                content_type="application/json")
        return web.json_response(behaviour["body"], status=behaviour["status"],
                                 headers=behaviour.get("headers"))

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        runner = web.AppRunner(app, handler_cancellation=True)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/v1"
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> ScriptServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@pytest.fixture
def script_server() -> Iterator[ScriptServer]:
    server = ScriptServer().start()
    yield server
    server.stop()


@pytest.fixture
def policy_endpoint() -> Iterator[Any]:
    started: list[PolicyServerProcess] = []

    def start(config: Path, *flags: str) -> PolicyServerProcess:
        endpoint = PolicyServerProcess(config, *flags)
        started.append(endpoint)
        return endpoint

    yield start
    for endpoint in started:
        endpoint.stop()
