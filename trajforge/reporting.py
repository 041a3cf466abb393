"""Human-readable views of a dataset: the build summary, stats and transcripts (rich renderables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from trajforge.errors import StoreError
from trajforge.store import CATALOG_FILE, query

if TYPE_CHECKING:
    from trajforge.pipeline import BuildResult
    from trajforge.schemas.config import RunConfig


# who an ending is blamed on: a user simulator or a provider failing is not the agent's fault
BLAME = {"user_error": "user simulator", "llm_error": "model provider", "tool_crash": "environment",
         "user_stop": "-", "user_gave_up": "agent", "transfer": "-"}


def _one(out: Path, sql: str) -> object:
    return query(out, sql)[1][0][0]


def _tables(out: Path, run_id: str | None) -> list[Table]:
    where = f"WHERE run_id = '{run_id}'" if run_id else ""
    and_run = f"AND run_id = '{run_id}'" if run_id else ""
    yields = Table("stage", "count", title="yield")
    generated = _one(out, f"SELECT count(*) FROM blueprints {where}")
    rejected = _one(out, f"SELECT count(*) FROM rejections {where}")
    episodes = _one(out, f"SELECT count(*) FROM trajectories {where}")
    passed = _one(out, f"SELECT count(*) FROM outcomes WHERE passed {and_run}")
    for name, value in (("blueprints generated", int(generated) + int(rejected)),  # type: ignore[arg-type]
                        ("blueprints valid", generated), ("blueprints rejected", rejected),
                        ("episodes", episodes), ("episodes passing every check", passed)):
        yields.add_row(name, str(value))
    checks = Table("check", "pass rate", "failed", title="verification")
    for check, rate, failed in query(out, f"""
            SELECT "check", avg(passed::INT), count(*) FILTER (WHERE NOT passed)
            FROM verdicts {where} GROUP BY 1 ORDER BY 1""")[1]:
        checks.add_row(check, f"{rate:.1%}", str(failed))
    overall = _one(out, f"SELECT avg(passed::INT) FROM outcomes {where}")
    checks.add_row("[bold]overall[/bold]", f"{(overall or 0):.1%}", "")
    agents = Table("agent", "fault", "episodes", "pass rate", title="by policy")
    for agent, fault, count, rate in query(out, f"""
            SELECT t.agent, coalesce(t.fault_kind, '-'), count(*), avg(o.passed::INT)
            FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id
            {where.replace('run_id', 't.run_id')} GROUP BY 1, 2 ORDER BY 1, 2""")[1]:
        agents.add_row(agent, fault, str(count), f"{rate:.1%}")
    tables = [yields, checks, agents]
    endings = Table("termination", "episodes", "blame", title="how episodes ended")
    for termination, count in query(out, f"""
            SELECT termination, count(*) FROM trajectories {where} GROUP BY 1 ORDER BY 2 DESC""")[1]:
        endings.add_row(termination, str(count), BLAME.get(termination, "agent"))
    tables.append(endings)
    models = query(out, f"""
            SELECT u.role, sum(u.calls), sum(u.prompt_tokens), sum(u.completion_tokens),
                   count(*) FILTER (WHERE u.cost_usd IS NULL), sum(u.cost_usd), sum(u.retries)
            FROM trajectories, unnest(usage) AS x(u)
            {where} {"AND" if where else "WHERE"} u.prompt_tokens > 0 GROUP BY 1 ORDER BY 1""")[1]
    if models:
        calls = Table("role", "calls", "prompt tokens", "completion tokens", "cost (USD)", "retries",
                      title="model calls")
        for role, n, prompt, completion, unpriced, cost, retries in models:
            if cost is None:
                price = "unknown (no price)"
            else:
                price = f"{cost:.4f}" + (f" + unknown ({unpriced} unpriced)" if unpriced else "")
            calls.add_row(role, str(n), f"{prompt:,}", f"{completion:,}", price, str(retries))
        tables.append(calls)
    rejections = query(out, f"SELECT reason, count(*) FROM rejections {where} GROUP BY 1 ORDER BY 2 DESC")[1]
    if rejections:
        rej = Table("reason", "blueprints", title="rejected")
        for reason, count in rejections:
            rej.add_row(reason, str(count))
        tables.append(rej)
    return tables


def build_summary(config: "RunConfig", result: "BuildResult") -> Group:
    cached = getattr(result, "cached", None)
    from_cache = f" ({cached} from Prefect's cache)" if cached is not None else ""
    startup = getattr(result, "startup_seconds", 0.0)
    prefect = f" (Prefect server start-up {startup:.1f} s)" if startup else ""
    head = Text.assemble(
        ("Built ", "bold"), (f"{result.run_id}", "cyan"),
        f" ({config.domain.name}, {config.generation.n_blueprints} blueprints): "
        f"{result.shards_done} shard(s) computed, {result.shards_skipped} already done{from_cache}, "
        f"{result.seconds:.1f} s{prefect}\n")
    where = Text.assemble(("Dataset: ", "bold"), str(result.out.resolve()),
                          ("\nCatalog: ", "bold"), str((result.out / CATALOG_FILE).resolve()),
                          f"\nTry: trajforge stats --out {result.out}   |   "
                          f"trajforge query \"SELECT * FROM outcomes LIMIT 5\" --out {result.out}")
    return Group(head, *_tables(result.out, result.run_id), where)


def recent_runs(out: Path, limit: int = 10) -> Table:
    """The latest build invocations: what each added and what it cost."""
    table = Table(title="recent runs")
    table.add_column("started (UTC)", no_wrap=True)
    table.add_column("run", overflow="ellipsis", no_wrap=True, max_width=12)
    table.add_column("outcome", no_wrap=True, min_width=9)
    for header in ("batches new/cached", "episodes added", "passed", "cost $", "s"):
        table.add_column(header, justify="right")
    for started, run_id, outcome, computed, cached, episodes, passed, cost, unpriced, seconds in query(out, f"""
            SELECT strftime(started_at AT TIME ZONE 'UTC', '%m-%d %H:%M'), run_id, outcome,
                   batches_computed, batches_cached + batches_adopted, episodes, episodes_passed,
                   cost_usd, episodes_unpriced, seconds
            FROM runs WHERE started_at IS NOT NULL ORDER BY started_at DESC LIMIT {int(limit)}""")[1]:
        shown_cost = f"{cost:.2f}" + (f" +{unpriced} unpriced" if unpriced else "")
        table.add_row(started, run_id, outcome, f"{computed}/{cached}", str(episodes), str(passed),
                      shown_cost, f"{seconds:.0f}")
    return table


def dataset_stats(out: Path) -> Group:
    (runs, invocations), = query(out, "SELECT count(DISTINCT run_id), count(*) FROM runs")[1]
    parts: list[object] = [Text(f"{out.resolve()}: {runs} run(s), {invocations} invocation(s)")]
    recent = recent_runs(out)
    if recent.row_count:
        parts.append(recent)
    return Group(*parts, *_tables(out, None))  # type: ignore[arg-type]


def render_trajectory(out: Path, trajectory_id: str) -> Group:
    safe = trajectory_id.replace("'", "''")
    rows = query(out, f"SELECT agent, fault_kind, termination, messages FROM trajectories WHERE id = '{safe}'")[1]
    if not rows:
        raise StoreError(f"no trajectory '{trajectory_id}' in {out}")
    agent, fault, termination, messages = rows[0]
    parts: list[object] = [Text.assemble(("trajectory ", "bold"), trajectory_id,
                                         f"  agent={agent} fault={fault or '-'} end={termination}")]
    styles = {"user": "green", "assistant": "cyan", "tool": "magenta", "system": "dim"}
    for m in messages:
        if m["role"] == "system":
            continue
        body = m["content"] or ""
        for call in m["tool_calls"] or []:
            body += f"-> {call['name']}({call['arguments']})"
        if m["role"] == "tool" and len(body) > 300:
            body = body[:300] + " ..."
        label = m["role"] + (" (error)" if m["is_error"] else "")
        parts.append(Text.assemble((f"{label:>10}: ", styles[m["role"]]), body))
    verdicts = Table("check", "passed", "reason", title="verdicts")
    for check, passed, reason, evidence in query(
            out, f"SELECT \"check\", passed, reason, evidence FROM verdicts WHERE trajectory_id = '{safe}' ORDER BY 1")[1]:
        detail = "" if passed else f"{reason} {json.loads(evidence)}"[:200]
        verdicts.add_row(check, "yes" if passed else "[red]no[/red]", detail or reason)
    parts.append(verdicts)
    return Panel(Group(*parts))  # type: ignore[return-value]
