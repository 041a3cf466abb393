"""The scripted policies as an OpenAI-compatible chat-completions endpoint on loopback.

``trajforge serve-policy`` serves, by the request's ``model`` name:

- ``oracle``: the scripted oracle agent; ``faulty``: the fault-injecting agent (the fault is
  drawn from the episode seed exactly as a scripted build draws it);
- ``user``: the scripted user, answering the LLM user simulator's view of the dialogue (its own
  turns as ``assistant``) and ending with an ``end_conversation`` tool call;
- ``proposer`` and ``judge``: see ``generators.propose`` and ``verifiers.judge``;
- ``echo``: a fixed answer, the cheapest request the server can serve (benchmarks).

With ``wording`` (``trajforge serve-policy --wording evaluation``) the oracle, the faulty agent
and the user phrase their confirmation requests, consents, offers of more help and closings
from the dialogue-act evaluation bank, as a model with its own style would
(``simulation.wording``).

Which task an agent or user request belongs to comes from the ``X-Trajforge-Episode`` header
(``blueprint_id;seed``) every trajforge request carries; the server holds the blueprints of the
config it was started with. Policies are stateful per episode and answers are cached by
conversation length, so a retried request gets the same answer and the dialogue stays
consistent whatever the network did.

Optional faults, at given rates per request, exercise the client's resilience: 429 with a
``Retry-After``, 500, a slow 504 (a provider timeout), a request left hanging with no answer,
and, for agent turns with tool calls, malformed tool-call JSON. After a malformed call the
scripted model, like a real one, repeats the call correctly once it sees the tool error.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trajforge.environments.base import Domain
from trajforge.schemas.blueprint import TaskBlueprint
from trajforge.schemas.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    UserMessage,
    message_from_openai,
)
from trajforge.schemas.trajectory import FaultKind
from trajforge.simulation.episodes import scripted_agent, scripted_user
from trajforge.simulation.faults import choose_fault
from trajforge.simulation.llm_agent import EPISODE_HEADER
from trajforge.simulation.llm_user import STOP_TOOL_NAME
from trajforge.simulation.wording import Wording

AGENT_ROLES = ("oracle", "faulty")
ExtraRole = Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]  # (body, headers) -> message
MAX_EPISODES = 20_000  # live episodes kept; the oldest are dropped first


@dataclass(frozen=True)
class ServerFaults:
    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0  # answered 504 after ``timeout_delay_s``
    rate_hang: float = 0.0  # never answered (held for ``hang_s``)
    rate_malformed: float = 0.0  # agent turns with tool calls: arguments cut mid-JSON
    latency_s: float = 0.0
    latency_jitter_s: float = 0.0  # each answer's latency drawn uniformly from latency_s +- this
    timeout_delay_s: float = 5.0
    hang_s: float = 3600.0
    retry_after_s: float = 0.2


@dataclass
class _Episode:
    policy: Any
    answers: dict[int, dict[str, Any]] = field(default_factory=dict)
    corrupted: dict[str, Any] | None = None  # the clean answer behind a malformed one
    messages: list[Message] = field(default_factory=list)  # converted so far


TIMELINE_LIMIT = 1_000_000  # events kept (two per request): enough for any benchmark, bounded


@dataclass
class ServerStats:
    """What the endpoint answered, and when: ``timeline`` holds ``(unix time, +1, episode)`` as
    each completion request arrives and ``(unix time, -1, episode)`` as it is answered (episode:
    the request's ``X-Trajforge-Episode`` header, ``""`` without one), so a benchmark reads the
    time of the first request, the requests in flight over time, and when each conversation
    began."""

    requests: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    malformed: int = 0
    hung: int = 0
    timeline: list[tuple[float, int, str]] = field(default_factory=list)

    def count(self, status: int) -> None:
        self.by_status[status] = self.by_status.get(status, 0) + 1

    def mark(self, delta: int, episode: str) -> None:
        if len(self.timeline) < TIMELINE_LIMIT:
            self.timeline.append((time.time(), delta, episode))


class HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _response(model: str, message: dict[str, Any], n: int, prompt_tokens: int) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    completion = _tokens(json.dumps(message))
    return {
        "id": f"chatcmpl-{random.getrandbits(48):012x}", "object": "chat.completion",
        "created": int(time.time()), "model": model,
        "choices": [{"index": i, "message": message, "finish_reason": finish, "logprobs": None}
                    for i in range(n)],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                  "total_tokens": prompt_tokens + completion},
    }


def _assistant_dict(message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [c.to_openai() for c in message.tool_calls]
    return out


class PolicyServer:
    """Request handling, independent of the HTTP framework (so it is testable on its own)."""

    def __init__(self, domain: Domain, blueprints: dict[str, TaskBlueprint],
                 faults: ServerFaults = ServerFaults(), seed: int = 0,
                 fault_kinds: tuple[FaultKind, ...] = tuple(FaultKind),
                 extra_roles: dict[str, ExtraRole] | None = None, wording: Wording | None = None) -> None:
        self.domain = domain
        self.wording = wording or Wording()
        self.blueprints = blueprints
        self.faults = faults
        self.rng = random.Random(seed)
        self.fault_kinds = fault_kinds
        self.extra_roles = extra_roles or {}
        self.episodes: OrderedDict[tuple[str, str], _Episode] = OrderedDict()
        self.stats = ServerStats()

    # --- episodes ------------------------------------------------------------------------------

    def _episode(self, role: str, header: str | None) -> _Episode:
        if not header or ";" not in header:
            raise HTTPError(400, f"missing {EPISODE_HEADER} header (blueprint_id;seed)")
        key = (role, header)
        if key in self.episodes:
            self.episodes.move_to_end(key)
            return self.episodes[key]
        blueprint_id, _, seed_text = header.partition(";")
        bp = self.blueprints.get(blueprint_id)
        if bp is None:
            raise HTTPError(400, f"unknown blueprint {blueprint_id!r}: start the server with the "
                                 "config of the build")
        seed = int(seed_text)
        if role == "user":
            policy: Any = scripted_user(bp, self.domain, seed, self.wording)
        else:
            fault = (choose_fault(bp, self.domain, random.Random(seed), self.fault_kinds)
                     if role == "faulty" else None)
            policy = scripted_agent(bp, self.domain, seed, fault, self.wording)
        episode = _Episode(policy)
        self.episodes[key] = episode
        while len(self.episodes) > MAX_EPISODES:
            self.episodes.popitem(last=False)
        return episode

    # --- roles ---------------------------------------------------------------------------------

    async def _agent(self, role: str, body: dict[str, Any], header: str | None) -> dict[str, Any]:
        raw = body.get("messages") or []
        episode = self._episode(role, header)
        length = len(raw)
        if length in episode.answers:
            return episode.answers[length]
        last = raw[-1] if raw else {}
        if (episode.corrupted is not None and last.get("role") == "tool"
                and last.get("tool_call_id") in {c["id"] for c in episode.corrupted.get("tool_calls", ())}):
            # the model saw its malformed call fail: it repeats the call, correctly this time
            message = dict(episode.corrupted)
            message["tool_calls"] = [{**c, "id": c["id"] + "r"} for c in message["tool_calls"]]
            episode.corrupted = None
        else:
            # the conversation only grows: convert the new messages, not the whole history
            episode.messages.extend(message_from_openai(m) for m in raw[len(episode.messages):])
            del episode.messages[length:]
            reply = await episode.policy.respond(episode.messages)
            message = _assistant_dict(reply.message)
            if message.get("tool_calls") and self.rng.random() < self.faults.rate_malformed:
                episode.corrupted = message
                self.stats.malformed += 1
                message = {**message, "tool_calls": [
                    {**c, "function": {**c["function"],
                                       "arguments": c["function"]["arguments"][:-2]}}
                    for c in message["tool_calls"]]}
        episode.answers[length] = message
        return message

    async def _user(self, body: dict[str, Any], header: str | None) -> dict[str, Any]:
        raw = body.get("messages") or []
        episode = self._episode("user", header)
        length = len(raw)
        if length in episode.answers:
            return episode.answers[length]
        # back to the agent's side of the dialogue: the simulator's turns are the user's
        messages: list[Message] = [SystemMessage(content=self.domain.policy)]
        for m in raw:
            content = m.get("content") or ""
            if m.get("role") == "assistant":
                messages.append(UserMessage(content=content))
            elif m.get("role") == "user" and not content.startswith("["):
                messages.append(AssistantMessage(content=content))
        reply = await episode.policy.respond(messages)
        message: dict[str, Any] = {"role": "assistant", "content": reply.message.content}
        if reply.stop:
            outcome = "gave_up" if reply.gave_up else "done"
            message["tool_calls"] = [{"id": f"stop_{length}", "type": "function",
                                      "function": {"name": STOP_TOOL_NAME,
                                                   "arguments": json.dumps({"outcome": outcome})}}]
        episode.answers[length] = message
        return message

    # --- the endpoint --------------------------------------------------------------------------

    async def chat(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Status, JSON body and extra headers of one chat-completions request."""
        self.stats.requests += 1
        faults = self.faults
        draw = self.rng.random()
        edges = (faults.rate_hang, faults.rate_429, faults.rate_500, faults.rate_timeout)
        if draw < edges[0]:
            self.stats.hung += 1
            await asyncio.sleep(faults.hang_s)
            return 504, {"error": {"message": "hung"}}, {}
        if draw < sum(edges[:2]):
            return 429, {"error": {"message": "rate limited", "type": "rate_limit_error"}}, {
                "Retry-After": f"{faults.retry_after_s:g}"}
        if draw < sum(edges[:3]):
            return 500, {"error": {"message": "injected server error"}}, {}
        if draw < sum(edges):
            await asyncio.sleep(faults.timeout_delay_s)
            return 504, {"error": {"message": "upstream timeout"}}, {}
        model = str(body.get("model") or "")
        role = model.split("/")[-1]
        lowered = {k.lower(): v for k, v in headers.items()}
        header = lowered.get(EPISODE_HEADER.lower())
        try:
            if role in AGENT_ROLES:
                message = await self._agent(role, body, header)
            elif role == "user":
                message = await self._user(body, header)
            elif role == "echo":  # a fixed answer: the floor of server cost, for benchmarks
                message = {"role": "assistant", "content": "ok"}
            elif role in self.extra_roles:
                message = self.extra_roles[role](body, lowered)
            else:
                raise HTTPError(404, f"unknown model {model!r}; this endpoint serves "
                                     f"{', '.join((*AGENT_ROLES, 'user', *self.extra_roles))}")
        except HTTPError as exc:
            return exc.status, {"error": {"message": str(exc), "type": "invalid_request_error"}}, {}
        if faults.latency_s or faults.latency_jitter_s:
            # drawn only with a jitter: a fixed latency leaves the seeded fault draws as they were
            jitter = faults.latency_jitter_s * (2 * self.rng.random() - 1) if faults.latency_jitter_s else 0.0
            await asyncio.sleep(max(0.0, faults.latency_s + jitter))
        prompt = _tokens("".join(str(m.get("content") or "") for m in body.get("messages") or []))
        return 200, _response(model, message, int(body.get("n") or 1), prompt), {}


def make_app(server: PolicyServer) -> Any:
    from aiohttp import web

    async def completions(request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            server.stats.count(400)
            return web.json_response({"error": {"message": "the body is not JSON"}}, status=400)
        episode = request.headers.get(EPISODE_HEADER, "")
        server.stats.mark(+1, episode)
        try:
            status, payload, headers = await server.chat(body, dict(request.headers))
        finally:
            server.stats.mark(-1, episode)
        server.stats.count(status)
        return web.json_response(payload, status=status, headers=headers)

    async def models(_: web.Request) -> web.Response:
        names = [*AGENT_ROLES, "user", *server.extra_roles]
        return web.json_response({"object": "list", "data": [{"id": n, "object": "model"}
                                                             for n in names]})

    async def stats(request: web.Request) -> web.Response:
        s = server.stats
        body: dict[str, Any] = {"requests": s.requests, "by_status": s.by_status, "malformed": s.malformed,
                                "hung": s.hung}
        if request.query.get("timeline"):
            body["timeline"] = s.timeline
        return web.json_response(body)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/stats", stats)
    return app


async def serve(server: PolicyServer, host: str, port: int,
                on_ready: Callable[[int], None] | None = None) -> None:
    """Serve until cancelled."""
    from aiohttp import web

    # what the server holds from the start (imports, the domain, every blueprint) lives as long as
    # it does: kept out of the collector's full passes, which over a 1,000-blueprint build's went
    # silent for ~365 ms and then sent the answers due meanwhile at once (issue 21)
    gc.freeze()
    runner = web.AppRunner(make_app(server), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=4096)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    if on_ready:
        on_ready(bound)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
