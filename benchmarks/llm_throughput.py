"""Model-call throughput of an LLM-mode build versus bare ``litellm.acompletion`` calls.

Both talk, through litellm over real HTTP, to ``trajforge serve-policy`` on loopback with a
fixed latency per answer (100 ms by default), at the same concurrency, in the same run:

- **bare**: one process replays, with nothing but ``litellm.acompletion`` and a semaphore, the
  exact requests an LLM-mode build sends (the agent's and the user simulator's view of scripted
  episodes of the same blueprints, with the episode header, so the server does the same work);
  the requests are prepared before the clock starts.
- **build**: ``trajforge build`` with the oracle agent and the scripted user served by the
  endpoint (both roles through litellm; ``--transport auto`` puts them on the gateway's direct
  transport instead), with 1 and with 2 simulation processes.

Each phase gets a freshly started server (its answers are cached per episode). Reported: model
calls per second, the build's rate as a share of the bare rate, client CPU per call (all client
processes) and server CPU per call.

From the server's request timeline (``/stats?timeline=1``: arrival and answer of every request):
- **launch to first request**: from the build command's launch to the first model request
  (a warm machine: the managed Prefect server already up, started by a scripted build before the
  phases; for bare the replay starts with its requests prepared, so none is reported);
- **whole-command** calls/s (calls over the command's wall time) and **in-window** calls/s
  (calls between the first request's arrival and the last answer);
- **in flight** from the first request until the last 5% of the conversations begin (told apart
  by the episode header each request carries; after that fewer are left to start than the gate
  holds, so in flight must fall): the time-weighted mean, the minimum once it first reached 90%
  of the concurrency (the ramp before that is reported as its own time), the lowest mean over
  any 100 ms and over any whole second after the ramp, the share of that time below 90% of the
  concurrency, the longest stretch below 90% and the longest below half of it (a batch boundary
  shows as one). The
  instantaneous minimum counts every conversation between two calls: a client stall (a full
  garbage collection of a large heap: 250-300 ms in the bare replay, whose prepared requests are
  all in memory) shows as answers the server sent with no new request for as long; answers the
  server sends in the same millisecond show as a dip of a few milliseconds.

With a fixed latency every conversation of a wave is answered at the same instant, so all of
them are between calls at once and in flight dips for as long as the client takes to send the
next calls; ``--latency-jitter-ms`` draws each answer's latency from an interval (as a real
server's vary with the answer's length), which spreads them out.

    .venv/bin/python benchmarks/llm_throughput.py --episodes 1000 --concurrency 128
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402

from trajforge.simulation.serve_process import PolicyServerProcess  # noqa: E402

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
TRAJFORGE = [sys.executable, "-m", "trajforge.cli"]


def write_config(folder: Path, episodes: int, concurrency: int, api_base: str,
                 transport: str = "litellm") -> Path:
    import yaml

    config = {
        "generation": {"n_blueprints": episodes},
        "simulation": {
            "agents": ["llm"], "concurrency": concurrency,
            "agent_model": {"model": "openai/oracle", "api_base": api_base, "transport": transport},
            "user_model": {"model": "openai/user", "api_base": api_base, "transport": transport},
            "gateway": {"call_timeout_s": 60, "episode_timeout_s": 1800},
        },
    }
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_server(config: Path, latency_ms: float, jitter_ms: float) -> PolicyServerProcess:
    return PolicyServerProcess(config, "--latency-ms", str(latency_ms), "--latency-jitter-ms", str(jitter_ms))


def tail_start(timeline: list[list[Any]], tail: float = 0.05) -> float:
    """When the last ``tail`` of the conversations began: the first request of the earliest of
    them (conversations are told apart by the episode each request names, ``ServerStats``). From
    then on fewer conversations are left to start than the gate holds, so in flight must fall."""
    began: dict[str, float] = {}
    for t, d, episode in timeline:
        if d > 0:
            began[episode] = min(t, began.get(episode, t))
    order = sorted(began.values())
    return order[min(len(order) - 1, math.ceil((1 - tail) * len(order)))]


def _spread(bins: dict[int, float], a: float, b: float, level: int, width: float = 1.0) -> None:
    """Adds ``level`` over ``[a, b)`` (seconds after the ramp) to ``bins``, the mean in flight
    per ``width`` seconds (bin ``k`` covers ``[k * width, (k + 1) * width)``)."""
    a, b = a / width, b / width
    while a < b:
        edge = min(b, math.floor(a) + 1)
        bins[int(a)] = bins.get(int(a), 0.0) + level * (edge - a)
        a = edge


def window_metrics(timeline: list[list[Any]], limit: int, launched: float | None) -> dict[str, Any]:
    """In-flight statistics over the server's request timeline (see the module note)."""
    events = sorted((t, d) for t, d, _ in timeline)
    starts = [t for t, d in events if d > 0]
    ends = [t for t, d in events if d < 0]
    if not starts or not ends:
        return {}
    first, last = starts[0], ends[-1]
    cut = tail_start(timeline)
    level, prev, area = 0, first, 0.0
    ramp_end = None
    low_time = 0.0
    min_after_ramp = None
    longest_half_gap, half_since = 0.0, None
    longest_low, low_since = 0.0, None  # the longest stretch below 90% of the limit
    bins: dict[int, float] = {}  # mean in flight per whole second after the ramp
    tenths: dict[int, float] = {}  # and per 100 ms
    for t, d in events:
        if t > cut:
            break
        span = t - prev
        if span > 0:
            area += level * span
            if ramp_end is not None:
                low_time += span if level < 0.9 * limit else 0.0
                min_after_ramp = level if min_after_ramp is None else min(min_after_ramp, level)
                _spread(bins, prev - ramp_end, t - ramp_end, level)
                _spread(tenths, prev - ramp_end, t - ramp_end, level, 0.1)
        prev = t
        level += d
        if ramp_end is None and level >= 0.9 * limit:
            ramp_end = t
        if ramp_end is not None:
            if level < 0.9 * limit and low_since is None:
                low_since = t
            elif level >= 0.9 * limit and low_since is not None:
                longest_low = max(longest_low, t - low_since)
                low_since = None
            if level < 0.5 * limit and half_since is None:
                half_since = t
            elif level >= 0.5 * limit and half_since is not None:
                longest_half_gap = max(longest_half_gap, t - half_since)
                half_since = None
    window = cut - first
    after_ramp = cut - ramp_end if ramp_end is not None else 0.0
    return {"first_request_after_launch_s": (first - launched) if launched is not None else None,
            "window_s": last - first, "in_window_calls_per_s": len(ends) / (last - first) if last > first else None,
            "tail_starts_after_first_s": cut - first,
            "inflight_mean": area / window if window > 0 else None,
            "ramp_to_90pct_s": (ramp_end - first) if ramp_end is not None else None,
            "inflight_min_after_ramp": min_after_ramp,
            "inflight_min_1s_after_ramp": min((bins[k] for k in range(int(after_ramp))), default=None),
            "inflight_min_100ms_after_ramp": min((tenths[k] for k in range(int(after_ramp * 10))), default=None),
            "share_below_90pct_after_ramp": low_time / after_ramp if after_ramp > 0 else None,
            "longest_below_90pct_s": longest_low, "longest_below_half_s": longest_half_gap}


def server_cpu_s(server: PolicyServerProcess) -> float:
    import psutil

    times = psutil.Process(server.proc.pid).cpu_times()
    return times.user + times.system


# --- bare phase (runs in its own process) -------------------------------------------------------

def episode_requests(config_path: Path) -> list[list[tuple[str, list[dict[str, Any]], Any]]]:
    """Per episode, the (model, messages, tools) of every call an LLM-mode build makes, taken
    from scripted episodes of the same blueprints (same policies as the endpoint serves)."""
    from trajforge.config import load_config
    from trajforge.environments.registry import load_domain
    from trajforge.generators import generate_blueprints
    from trajforge.schemas.blueprint import TaskBlueprint
    from trajforge.schemas.messages import AssistantMessage, UserMessage, message_to_openai
    from trajforge.simulation.batch import episode_seed
    from trajforge.simulation.episodes import EpisodeJob, EpisodePlayer
    from trajforge.simulation.llm_agent import episode_tag
    from trajforge.simulation.llm_user import STOP_TOOL, user_instructions, user_view

    config = load_config(config_path)
    domain = load_domain(config.domain.name, config.domain.size, config.domain.seed)
    tools = [s.model_dump(mode="json") for s in domain.tool_specs()]
    episodes = []
    for bp in generate_blueprints(domain, config.generation, "bench", 0, config.generation.n_blueprints):
        if not isinstance(bp, TaskBlueprint):
            continue
        seed = episode_seed(bp.id, 0, "bare")
        traj = asyncio.run(EpisodePlayer(lambda _: domain, run_id="bench").play(EpisodeJob(bp, seed))).trajectory
        payload = [message_to_openai(m) for m in traj.messages]
        system = user_instructions(bp, domain)
        headers = episode_tag(bp.id, seed)
        calls: list[tuple[str, list[dict[str, Any]], Any, dict[str, str]]] = []
        for i, message in enumerate(traj.messages):
            if isinstance(message, AssistantMessage):
                calls.append(("openai/oracle", payload[:i], tools, headers))
            elif isinstance(message, UserMessage):
                calls.append(("openai/user", user_view(system, traj.messages[:i])[0], [STOP_TOOL], headers))
        episodes.append(calls)
    return episodes


def bare_phase(config_path: Path, url: str, concurrency: int) -> dict[str, Any]:
    episodes = episode_requests(config_path)
    import litellm

    litellm.suppress_debug_info = True

    async def main() -> tuple[int, float]:
        gate = asyncio.Semaphore(concurrency)
        calls = 0

        async def replay(requests: list[Any]) -> None:
            nonlocal calls
            async with gate:  # one episode per slot, its calls in order, like the build
                for model, messages, tools, headers in requests:
                    await asyncio.wait_for(litellm.acompletion(
                        model=model, api_base=url, api_key="no-key", messages=messages,
                        tools=tools, extra_headers=headers, num_retries=0, max_retries=0,
                        timeout=60), 60)
                    calls += 1

        began = time.perf_counter()
        await asyncio.gather(*(replay(r) for r in episodes))
        return calls, time.perf_counter() - began

    cpu0 = time.process_time()
    calls, wall = asyncio.run(main())
    cpu = time.process_time() - cpu0
    return {"calls": calls, "episodes": len(episodes), "wall_s": wall, "client_cpu_s": cpu}


# --- orchestration --------------------------------------------------------------------------------

def run_bare(config: Path, latency_ms: float, jitter_ms: float, concurrency: int) -> dict[str, Any]:
    server = start_server(config, latency_ms, jitter_ms)
    try:
        cpu0 = server_cpu_s(server)
        out = subprocess.run([sys.executable, __file__, "--phase", "bare", "--config", str(config),
                              "--url", server.url, "--concurrency", str(concurrency)],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["server_cpu_s"] = server_cpu_s(server) - cpu0
        result["window"] = window_metrics(server.stats(timeline=True)["timeline"], concurrency, None)
    finally:
        server.stop()
    return result


def _forked_build_cpu(proc: subprocess.Popen[str], interval_s: float = 0.1) -> float:
    """CPU seconds of the child the warm build process forked for ``proc``'s command (and its
    reaped children), sampled until the command ends: that child is not ``proc``'s descendant, so
    ``RUSAGE_CHILDREN`` misses it. The last sample is at most ``interval_s`` before its end."""
    import psutil

    from trajforge.flows.warm import warm_status

    info = warm_status()
    if info is None:
        return 0.0
    warm = psutil.Process(int(info["pid"]))
    known = {c.pid for c in warm.children()}
    cpu: dict[int, float] = {}
    while proc.poll() is None:
        try:
            for child in warm.children():
                if child.pid not in known:
                    t = child.cpu_times()
                    cpu[child.pid] = t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass
        time.sleep(interval_s)
    return sum(cpu.values())


def run_build(config: Path, latency_ms: float, jitter_ms: float, workers: int, scratch: Path) -> dict[str, Any]:
    import yaml

    server = start_server(config, latency_ms, jitter_ms)
    tree = yaml.safe_load(config.read_text())
    for role in ("agent_model", "user_model"):
        tree["simulation"][role]["api_base"] = server.url
    run_config = scratch / f"build-{workers}.yaml"
    run_config.write_text(yaml.safe_dump(tree))
    out = scratch / f"out-{workers}"
    try:
        cpu0 = server_cpu_s(server)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        launched = time.time()
        began = time.perf_counter()
        proc = subprocess.Popen([*TRAJFORGE, "build", "--config", str(run_config), "--out", str(out),
                                 "--workers", str(workers), "--shard-size",
                                 str(max(1, tree["generation"]["n_blueprints"] // (4 * workers))), "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        forked_cpu = _forked_build_cpu(proc)  # the build runs there when the warm process serves it
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"the build failed: {err}")
        wall = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_cpu = server_cpu_s(server) - cpu0
        window = window_metrics(server.stats(timeline=True)["timeline"], tree["simulation"]["concurrency"], launched)
    finally:
        server.stop()
    from trajforge.store import query

    calls, episodes, passed, retries = query(out, """
        SELECT (SELECT sum(u.calls) FROM trajectories, unnest(usage) AS x(u)),
               (SELECT count(*) FROM trajectories), (SELECT avg(passed::INT) FROM outcomes),
               (SELECT sum(retries) FROM trajectories)""")[1][0]
    client_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) + forked_cpu
    return {"workers": workers, "served_warm": forked_cpu > 0, "calls": int(calls), "episodes": int(episodes),
            "pass_rate": float(passed), "retries": int(retries), "wall_s": wall,
            "client_cpu_s": client_cpu, "server_cpu_s": server_cpu, "window": window}


def derive(result: dict[str, Any]) -> dict[str, Any]:
    calls = result["calls"]
    return {**result, "calls_per_s": calls / result["wall_s"],
            "client_cpu_ms_per_call": 1000 * result["client_cpu_s"] / calls,
            "server_cpu_ms_per_call": 1000 * result["server_cpu_s"] / calls}


def render(payload: dict[str, Any]) -> str:
    bare = payload["bare"]
    lines = [f"# LLM-mode build vs bare litellm ({payload['date']})", "",
             f"Command: `{payload['command']}`", "",
             f"{payload['episodes']} episodes (blueprints, one LLM-agent episode each; agent and user "
             f"both served by `trajforge serve-policy` over HTTP, the build's calls through transport "
             f"{payload.get('transport', 'litellm')}), server latency "
             f"{payload['latency_ms']:g} ms (+- {payload.get('latency_jitter_ms', 0):g} ms), concurrency {payload['concurrency']}. Each phase had a "
             "freshly started server.", "",
             "| phase | workers | model calls | wall s | calls/s | share of bare rate | client CPU ms/call | server CPU ms/call |",
             "|---|---|---|---|---|---|---|---|",
             f"| bare `litellm.acompletion` | 1 | {bare['calls']} | {bare['wall_s']:.1f} | "
             f"{bare['calls_per_s']:.1f} | 100% | {bare['client_cpu_ms_per_call']:.2f} | "
             f"{bare['server_cpu_ms_per_call']:.2f} |"]
    for build in payload["builds"]:
        lines.append(
            f"| `trajforge build` | {build['workers']} | {build['calls']} | {build['wall_s']:.1f} | "
            f"{build['calls_per_s']:.1f} | {build['calls_per_s'] / bare['calls_per_s']:.0%} | "
            f"{build['client_cpu_ms_per_call']:.2f} | {build['server_cpu_ms_per_call']:.2f} |")
    lines += ["", "From the server's request timeline (in flight measured from the first request until the "
              "last 5% of the conversations begin; see the script's note):", "",
              "| phase | workers | launch to first request s | in-window calls/s | whole-command share of "
              "bare calls/s | mean in flight | ramp to 90% s | min in flight after ramp | lowest 100 ms mean | "
              "lowest 1 s mean | time below 90% | longest below 90% s | longest below 50% s |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def _n(x: Any, f: str = ".2f") -> str:
        return "-" if x is None else format(x, f)

    for name, row in [("bare", bare), *[("build", b) for b in payload["builds"]]]:
        w = row.get("window") or {}
        share = row["calls_per_s"] / bare["calls_per_s"]
        lines.append(f"| {name} | {row.get('workers', 1)} | {_n(w.get('first_request_after_launch_s'))} | "
                     f"{_n(w.get('in_window_calls_per_s'), '.1f')} | {share:.2f}x | {_n(w.get('inflight_mean'), '.1f')} | "
                     f"{_n(w.get('ramp_to_90pct_s'))} | {_n(w.get('inflight_min_after_ramp'), '.0f')} | "
                     f"{_n(w.get('inflight_min_100ms_after_ramp'), '.1f')} | "
                     f"{_n(w.get('inflight_min_1s_after_ramp'), '.1f')} | "
                     f"{_n(w.get('share_below_90pct_after_ramp'), '.1%')} | "
                     f"{_n(w.get('longest_below_90pct_s'), '.3f')} | {_n(w.get('longest_below_half_s'))} |")
    lines += ["", "Build pass rates: " + ", ".join(
        f"{b['workers']} worker(s): {b['pass_rate']:.1%} of {b['episodes']} episodes, "
        f"{b['retries']} retries" for b in payload["builds"]), "",
        "Workers: batches at once on the default threads runner, all in one process (they share "
        "its episode loop and the concurrency gate).", "",
        "Client CPU for the build includes process start-up (imports of litellm, about 4 s per "
        "process), blueprint generation, tool execution, verification and Parquet writing.", ""]
    lines.append(f"Load average at the end (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in payload['load_avg_at_end'])} "
                 "(other work on the 2 cores slows every phase alike).")
    lines += payload.get("notes", [])
    lines += ["", *machine_markdown(payload["machine"])]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--latency-jitter-ms", type=float, default=0.0,
                        help="each answer's latency drawn uniformly from --latency-ms +- this")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--phase", choices=["all", "bare"], default="all")
    parser.add_argument("--config", type=Path)
    parser.add_argument("--url")
    parser.add_argument("--stem", default="llm_throughput")
    parser.add_argument("--transport", choices=["litellm", "auto", "openai"], default="litellm",
                        help="the build's models' transport (auto and openai: the direct one, for loopback)")
    args = parser.parse_args()
    if args.phase == "bare":
        print(json.dumps(bare_phase(args.config, args.url, args.concurrency)))
        return
    with tempfile.TemporaryDirectory(prefix="tf-llm-bench-") as tmp:
        scratch = Path(tmp)
        # a warm machine: the managed Prefect server of the benchmark's own state folder and the
        # warm build process, both left by a scripted build before the clock (stopped at the end)
        os.environ["XDG_STATE_HOME"] = str(scratch / "state")
        subprocess.run([*TRAJFORGE, "build", "--n", "4", "--out", str(scratch / "warm"), "--quiet"],
                       check=True, capture_output=True, text=True)
        config = write_config(scratch, args.episodes, args.concurrency, "http://127.0.0.1:1/v1", args.transport)
        bare = derive(run_bare(config, args.latency_ms, args.latency_jitter_ms, args.concurrency))
        print("bare", json.dumps(bare), flush=True)
        builds = []
        for workers in args.workers:
            build = derive(run_build(config, args.latency_ms, args.latency_jitter_ms, workers, scratch))
            print("build", json.dumps(build), flush=True)
            builds.append(build)
        from trajforge.flows.server import server_home, stop_server
        from trajforge.flows.warm import stop_warm

        stop_warm()  # the warm build process the first build left behind (flows/warm.py)
        stop_server(server_home())
    payload = {"date": utc_now(), "command": command_line(), "episodes": args.episodes,
               "concurrency": args.concurrency, "latency_ms": args.latency_ms,
               "latency_jitter_ms": args.latency_jitter_ms, "transport": args.transport,
               "bare": bare,
               "builds": builds, "load_avg_at_end": os.getloadavg(), "machine": machine_info()}
    md, js = write_results(args.stem, payload, render(payload), RESULTS)
    print(f"wrote {md} and {js}")


if __name__ == "__main__":
    main()
