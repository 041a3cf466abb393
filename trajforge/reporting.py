"""Human-readable views of a dataset: the build summary, stats and transcripts (rich renderables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Column, Table
from rich.text import Text

from trajforge.errors import StoreError
from trajforge.store import CATALOG_FILE, query

if TYPE_CHECKING:
    from trajforge.schemas.config import RunConfig
    from trajforge.store.builds import BuildResult


# who an ending is blamed on: a user simulator or a provider failing is not the agent's fault
BLAME = {"user_error": "user simulator", "llm_error": "model provider", "tool_crash": "environment",
         "user_stop": "-", "user_gave_up": "agent", "transfer": "-"}


def _one(out: Path, sql: str) -> object:
    return query(out, sql)[1][0][0]


def _count(out: Path, sql: str) -> int:
    return int(query(out, sql)[1][0][0])


def _tables(out: Path, run_id: str | None) -> list[Table]:
    where = f"WHERE run_id = '{run_id}'" if run_id else ""
    and_run = f"AND run_id = '{run_id}'" if run_id else ""
    yields = Table("stage", "count", title="yield")
    generated = _count(out, f"SELECT count(*) FROM blueprints {where}")
    rejected = _count(out, f"SELECT count(*) FROM rejections {where}")
    episodes = _count(out, f"SELECT count(*) FROM trajectories {where}")
    passed = _count(out, f"SELECT count(*) FROM outcomes WHERE passed {and_run}")
    for name, value in (("blueprints generated", generated + rejected),
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
    by_domain = query(out, f"""
            SELECT t.domain, count(DISTINCT t.blueprint_id), count(*),
                   avg(o.passed::INT) FILTER (WHERE t.fault_kind IS NULL AND t.agent LIKE '%oracle%'),
                   avg(o.passed::INT)
            FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id
            {where.replace('run_id', 't.run_id')} GROUP BY 1 ORDER BY 1""")[1]
    domains = Table("domain", "blueprints", "episodes", "oracle pass rate", "pass rate", title="by domain")
    for domain, blueprints, count, oracle, rate in by_domain:
        domains.add_row(domain, str(blueprints), str(count), "-" if oracle is None else f"{oracle:.1%}",
                        f"{rate:.1%}")
    tables.append(domains)
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


def _q_key(q: float | str) -> str:
    return "inf" if q == "inf" or (isinstance(q, float) and q == float("inf")) else f"{float(q):g}"


def _v(scores: dict[str, float] | None, q: str) -> str:
    return "-" if not scores else f"{scores[q]:.2f}"


def diversity_tables(summary: dict[str, Any]) -> list[Table]:
    """The diversity stage's summary: Vendi of candidates, kept and selected trajectories and
    of random subsets of the same size, per domain and per stratum."""
    q = _q_key(summary["config"]["q"])
    orders = summary.get("orders", [q])
    head = Table("", *[f"Vendi q={o}" for o in orders], "items",
                 title=f"diversity {summary['selection_id']} (run {summary['run_id']}; "
                       f"{summary.get('embedder', {}).get('key', '-')} on "
                       f"{summary['config']['view']})")
    if summary["candidates"] == 0:
        head.add_row("candidates", *["-" for _ in orders], "0")
        return [head]
    head.add_row("candidates", *[_v(summary["vendi_candidates"], o) for o in orders],
                 str(summary["candidates"]))
    dedup = summary.get("dedup")
    if dedup:
        head.add_row(f"after dedup (>= {dedup['threshold']} on {dedup['view']})",
                     *[_v(summary["vendi_kept"], o) for o in orders], str(dedup["kept"]))
    sel = summary.get("selection")
    if sel and sel.get("vendi_selected"):
        head.add_row("[bold]selected[/bold]", *[_v(sel["vendi_selected"], o) for o in orders],
                     str(sel["selected"]))
        for name, key in (("random from candidates (mean of 10)", "random_from_candidates"),
                          ("random from kept (mean of 10)", "random_from_kept")):
            base = sel.get(key)
            if base:
                head.add_row(name, *[f"{base[o]['mean']:.2f} ± {base[o]['std']:.2f}" for o in orders],
                             str(sel["selected"]))
    tables = [head]
    if dedup and dedup.get("near_copies"):
        nc = dedup["near_copies"]
        copies = Table("near-copies (paraphrased blueprints)", "count", "share", title="dedup vs labels")
        copies.add_row("copies removed", str(round(nc["copies_removed"] * nc["copies"])),
                       f"{nc['copies_removed']:.1%}")
        if nc["originals_kept"] is not None:
            copies.add_row("originals kept", str(round(nc["originals_kept"] * nc["originals"])),
                           f"{nc['originals_kept']:.1%}")
        tables.append(copies)
    for title, key in (("Vendi by domain", "by_domain"), ("Vendi by stratum", "by_stratum")):
        t = Table(Column("group", overflow="fold"), "items", f"Vendi q={q}", "selected", f"selected Vendi q={q}",
                  title=title)
        for row in summary.get(key, []):
            t.add_row(row["group"], str(row["items"]), _v(row["vendi"], q),
                      str(row.get("selected", "-")), _v(row.get("vendi_selected"), q))
        tables.append(t)
    return tables


def build_summary(config: RunConfig, result: BuildResult) -> Group:
    cached = getattr(result, "cached", None)
    from_cache = f" ({cached} from Prefect's cache)" if cached is not None else ""
    startup, server = getattr(result, "startup_seconds", 0.0), getattr(result, "server", "")
    prefect = (f" (Prefect server start-up {startup:.1f} s)" if server == "started" else
               f" (Prefect server reused, {startup:.1f} s to reach it)" if server == "reused" else "")
    head = Text.assemble(
        ("Built ", "bold"), (f"{result.run_id}", "cyan"),
        f" ({', '.join(config.domain.all_names)}, {config.generation.n_blueprints} blueprints): "
        f"{result.shards_done} shard(s) computed, {result.shards_skipped} already done{from_cache}, "
        f"{result.seconds:.1f} s{prefect}\n")
    where = Text.assemble(("Dataset: ", "bold"), str(result.out.resolve()),
                          ("\nCatalog: ", "bold"), str((result.out / CATALOG_FILE).resolve()),
                          f"\nTry: trajforge stats --out {result.out}   |   "
                          f"trajforge query \"SELECT * FROM outcomes LIMIT 5\" --out {result.out}")
    extra = diversity_tables(result.diversity.summary) if result.diversity is not None else []
    return Group(head, *_tables(result.out, result.run_id), *extra, where)


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
    from trajforge.store.derived import selection_summaries

    (runs, invocations), = query(out, "SELECT count(DISTINCT run_id), count(*) FROM runs")[1]
    parts: list[RenderableType] = [Text(f"{out.resolve()}: {runs} run(s), {invocations} invocation(s)")]
    recent = recent_runs(out)
    if recent.row_count:
        parts.append(recent)
    latest: dict[str, dict[str, Any]] = {}
    for summary in selection_summaries(out):  # oldest first: the last one per run wins
        latest[summary["run_id"]] = summary
    extra = [t for s in latest.values() for t in diversity_tables(s)]
    return Group(*parts, *_tables(out, None), *extra)


def render_trajectory(out: Path, trajectory_id: str) -> Panel:
    safe = trajectory_id.replace("'", "''")
    rows = query(out, f"SELECT agent, fault_kind, termination, messages FROM trajectories WHERE id = '{safe}'")[1]
    if not rows:
        raise StoreError(f"no trajectory '{trajectory_id}' in {out}")
    agent, fault, termination, messages = rows[0]
    parts: list[RenderableType] = [Text.assemble(("trajectory ", "bold"), trajectory_id,
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
            out, "SELECT \"check\", passed, reason, evidence FROM verdicts "
                 f"WHERE trajectory_id = '{safe}' ORDER BY 1")[1]:
        detail = "" if passed else f"{reason} {json.loads(evidence)}"[:200]
        verdicts.add_row(check, "yes" if passed else "[red]no[/red]", detail or reason)
    parts.append(verdicts)
    return Panel(Group(*parts))
