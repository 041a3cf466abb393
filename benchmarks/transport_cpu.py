"""Client CPU per model call of each way to reach an OpenAI-compatible server: the HTTP library
the gateway's direct transport could use (httpx, aiohttp), bare ``litellm.acompletion``, and
the gateway itself on each of its transports.

A fixed-answer server on loopback (aiohttp, in a process of its own, ``--latency-ms`` per
answer) answers every ``POST /v1/chat/completions`` with the same tool-call completion. Each
client runs in a fresh Python process: it imports its library (timed), makes one wave of
``--concurrency`` calls to open its connections and finish any lazy set-up (not counted), then
``--calls`` calls at concurrency ``--concurrency`` (a semaphore), all with the same request (a
1.5 KB system prompt, a user message, three tool schemas). Client CPU per call is
``time.process_time()`` of the client process over the counted calls / calls; server CPU per
call is the server process's CPU over the same span. The clients run ``--rounds`` times,
interleaved, and the medians are reported (min-max). Results:
``results/transport_cpu.{md,json}``.

    .venv/bin/python benchmarks/transport_cpu.py --calls 2000 --concurrency 64 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

CLIENTS = ("httpx", "aiohttp", "litellm", "gateway-openai", "gateway-litellm")
LABELS = {"httpx": "httpx `AsyncClient.post` (pooled)", "aiohttp": "aiohttp `ClientSession.post` (pooled)",
          "litellm": "bare `litellm.acompletion`", "gateway-openai": "`Gateway.complete`, transport openai (aiohttp)",
          "gateway-litellm": "`Gateway.complete`, transport litellm"}
MODEL = "openai/bench"
SYSTEM = ("You are a customer-service agent for an online retailer. Follow the policy: verify the "
          "user's identity before any change, confirm every write with the user, never invent ids. "
          * 8)[:1500]
TOOLS = [{"type": "function", "function": {
    "name": name, "description": f"{name.replace('_', ' ')} of the given record",
    "parameters": {"type": "object", "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
                   "required": ["id"]}}} for name in ("get_order", "cancel_order", "update_address")]
MESSAGES = [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Hi, I'd like to cancel order #W1234567, it was a mistake."}]
ANSWER = {
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "bench",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
        "role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_order", "arguments": "{\"id\": \"#W1234567\"}"}}]}}],
    "usage": {"prompt_tokens": 480, "completion_tokens": 18, "total_tokens": 498}}


# --- the server (its own process) -----------------------------------------------------------------

def serve(port_file: Path, latency_ms: float) -> None:
    from aiohttp import web

    body = json.dumps(ANSWER).encode()

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        if latency_ms:
            await asyncio.sleep(latency_ms / 1000)
        return web.Response(body=body, content_type="application/json")

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", answer)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        port_file.write_text(str(port))
        await asyncio.Event().wait()

    asyncio.run(main())


# --- the clients (each in its own process) --------------------------------------------------------

def make_call(client: str, url: str, concurrency: int) -> tuple[Any, Any]:
    """(an async function making one call, an async function closing the client)."""
    if client == "httpx":
        import httpx

        http = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency,
                                                     max_keepalive_connections=concurrency))
        body = {"model": "bench", "messages": MESSAGES, "tools": TOOLS}

        async def call_httpx() -> Any:
            response = await http.post(f"{url}/chat/completions", json=body,
                                       headers={"Authorization": "Bearer no-key"}, timeout=60)
            response.raise_for_status()
            return response.json()

        return call_httpx, http.aclose
    if client == "aiohttp":
        import aiohttp

        state: dict[str, Any] = {}
        body = {"model": "bench", "messages": MESSAGES, "tools": TOOLS}

        async def call_aiohttp() -> Any:
            if "session" not in state:  # a session belongs to the running loop
                state["session"] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))
            async with state["session"].post(f"{url}/chat/completions", json=body,
                                             headers={"Authorization": "Bearer no-key"},
                                             timeout=aiohttp.ClientTimeout(total=60)) as response:
                response.raise_for_status()
                return await response.json()

        async def close_aiohttp() -> None:
            await state["session"].close()

        return call_aiohttp, close_aiohttp
    if client == "litellm":
        import litellm

        litellm.suppress_debug_info = True

        async def call_litellm() -> Any:
            return await asyncio.wait_for(litellm.acompletion(
                model=MODEL, api_base=url, api_key="no-key", messages=MESSAGES, tools=TOOLS,
                num_retries=0, max_retries=0, timeout=60), 60)

        async def close_litellm() -> None:
            from trajforge.simulation.llm import _close_litellm

            await _close_litellm()

        return call_litellm, close_litellm
    from trajforge.schemas.config import GatewayConfig, ModelConfig
    from trajforge.simulation.llm import Budget, EpisodeLedger, Gateway, quiet_provider_logs

    quiet_provider_logs()
    transport = client.removeprefix("gateway-")
    gateway = Gateway(GatewayConfig(call_timeout_s=60), Budget(None), concurrency=concurrency)
    model = ModelConfig(model=MODEL, api_base=url, transport=transport)  # type: ignore[arg-type]
    ledger = EpisodeLedger.starting_now(3600)

    async def call_gateway() -> Any:
        return await gateway.complete("agent", model, MESSAGES, ledger=ledger, tools=TOOLS)

    return call_gateway, gateway.aclose


def client_phase(client: str, url: str, calls: int, concurrency: int) -> dict[str, Any]:
    began = time.perf_counter()
    call, close = make_call(client, url, concurrency)
    import_s = time.perf_counter() - began

    async def main() -> dict[str, Any]:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                await call()

        try:
            await asyncio.gather(*(one() for _ in range(concurrency)))  # warm-up: not counted
            print("warm", flush=True)  # the parent reads the server's CPU here
            sys.stdin.readline()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(one() for _ in range(calls)))
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        finally:
            await close()
        return {"client": client, "calls": calls, "import_s": import_s, "client_cpu_s": cpu, "wall_s": wall}

    return asyncio.run(main())


# --- orchestration --------------------------------------------------------------------------------

def process_cpu_s(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def run_client(client: str, url: str, calls: int, concurrency: int, server_pid: int) -> dict[str, Any]:
    proc = subprocess.Popen([sys.executable, __file__, "--client", client, "--url", url, "--calls", str(calls),
                             "--concurrency", str(concurrency)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    while (line := proc.stdout.readline()) and line.strip() != "warm":
        pass
    server0 = process_cpu_s(server_pid)
    proc.stdin.write("\n")
    proc.stdin.flush()
    out = proc.stdout.read()
    if proc.wait() != 0:
        raise RuntimeError(f"client {client} failed")
    result = json.loads(out.strip().splitlines()[-1])
    result["server_cpu_s"] = process_cpu_s(server_pid) - server0
    result["client_cpu_ms_per_call"] = 1000 * result["client_cpu_s"] / calls
    result["server_cpu_ms_per_call"] = 1000 * result["server_cpu_s"] / calls
    result["calls_per_s"] = calls / result["wall_s"]
    return result


def spread(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def render(payload: dict[str, Any]) -> str:
    rounds = payload["rounds"]
    med = {c: statistics.median(r["client_cpu_ms_per_call"] for r in rounds[c]) for c in payload["clients"]}
    lines = [f"# Client CPU per model call: HTTP libraries, litellm and the gateway's transports ({payload['date']})",
             "", f"- command: `{payload['command']}`",
             f"- load average at start: {payload['load_before']}; at the end: {payload['load_after']}",
             f"- {payload['calls']} counted calls per client per round at concurrency {payload['concurrency']}, "
             f"server latency {payload['latency_ms']:g} ms, {payload['n_rounds']} interleaved rounds; "
             "medians (min-max)",
             "- " + ", ".join(f"{name} {version}" for name, version in payload["packages"].items()),
             "", *machine_markdown(payload["machine"]), "",
             "| client | client CPU ms/call | calls/s | server CPU ms/call | import s |", "|---|---:|---:|---:|---:|"]
    for client in payload["clients"]:
        results = rounds[client]
        lines.append(f"| {LABELS[client]} | {spread([r['client_cpu_ms_per_call'] for r in results])} | "
                     f"{spread([r['calls_per_s'] for r in results], 0)} | "
                     f"{spread([r['server_cpu_ms_per_call'] for r in results])} | "
                     f"{spread([r['import_s'] for r in results])} |")
    lines.append("")
    if "httpx" in med and "aiohttp" in med:
        saving = 1 - med["aiohttp"] / med["httpx"]
        lines.append(f"aiohttp uses {saving:.0%} less client CPU per call than httpx "
                     f"({med['aiohttp']:.2f} against {med['httpx']:.2f} ms).")
    if "gateway-openai" in med and "gateway-litellm" in med:
        lines.append(f"The gateway's direct transport: {med['gateway-openai']:.2f} ms/call against "
                     f"{med['gateway-litellm']:.2f} ms through litellm "
                     f"({med['gateway-litellm'] / med['gateway-openai']:.1f}x).")
    lines += ["", "Client CPU counts only the timed calls (imports and the warm-up wave excluded); import s is the "
              "client's import of its library (for the gateway rows, of trajforge's gateway; litellm is imported "
              "by its first call, in the warm-up)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--clients", nargs="+", choices=CLIENTS, default=list(CLIENTS))
    parser.add_argument("--stem", default="transport_cpu")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # internal: the server process
    parser.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)  # internal: one client
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency_ms)
        return
    if args.client:
        print(json.dumps(client_phase(args.client, args.url, args.calls, args.concurrency)))
        return
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as scratch:
        port_file = Path(scratch) / "port"
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file),
                                   "--latency-ms", str(args.latency_ms)])
        try:
            deadline = time.monotonic() + 30
            while not (port_file.exists() and port_file.read_text()):
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start")
                time.sleep(0.05)
            url = f"http://127.0.0.1:{port_file.read_text()}/v1"
            rounds: dict[str, list[dict[str, Any]]] = {c: [] for c in args.clients}
            for number in range(args.rounds):
                for client in args.clients:
                    result = run_client(client, url, args.calls, args.concurrency, server.pid)
                    rounds[client].append(result)
                    print(f"round {number + 1} {client}: {result['client_cpu_ms_per_call']:.2f} ms/call, "
                          f"{result['calls_per_s']:.0f} calls/s", file=sys.stderr)
        finally:
            server.terminate()
            server.wait(10)
    payload = {"date": utc_now(), "command": command_line(), "load_before": load_before,
               "load_after": [round(x, 2) for x in os.getloadavg()], "calls": args.calls,
               "concurrency": args.concurrency, "latency_ms": args.latency_ms, "n_rounds": args.rounds,
               "clients": args.clients, "machine": machine_info(),
               "packages": {name: _version(name) for name in ("httpx", "aiohttp", "litellm", "openai")},
               "rounds": rounds}
    markdown = render(payload)
    md_path, _ = write_results(args.stem, payload, markdown, RESULTS)
    print(markdown)
    print(f"wrote {md_path}", file=sys.stderr)


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    main()
