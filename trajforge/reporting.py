"""Human-readable views of a dataset: the build summary, stats and transcripts (rich renderables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Column, Table
from rich.text import Text

from trajforge.errors import StoreError
from trajforge.store import CATALOG_FILE, query

if TYPE_CHECKING:
    from trajforge.pipeline import BuildResult
    from trajforge.schemas.config import RunConfig


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
    rejections = query(out, f"SELECT reason, count(*) FROM rejections {where} GROUP BY 1 ORDER BY 2 DESC")[1]
    if rejections:
        rej = Table("reason", "blueprints", title="rejected")
        for reason, count in rejections:
            rej.add_row(reason, str(count))
        tables.append(rej)
    return tables


def _q_key(q: object) -> str:
    return "inf" if q == "inf" or (isinstance(q, float) and q == float("inf")) else f"{float(q):g}"  # type: ignore[arg-type]


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
        t = Table(Column("group", overflow="fold"), "items", f"Vendi q={q}", "selected", f"selected Vendi q={q}", title=title)
        for row in summary.get(key, []):
            t.add_row(row["group"], str(row["items"]), _v(row["vendi"], q),
                      str(row.get("selected", "-")), _v(row.get("vendi_selected"), q))
        tables.append(t)
    return tables


def build_summary(config: "RunConfig", result: "BuildResult") -> Group:
    head = Text.assemble(
        ("Built ", "bold"), (f"{result.run_id}", "cyan"),
        f" ({config.domain.name}, {config.generation.n_blueprints} blueprints): "
        f"{result.shards_done} shard(s) computed, {result.shards_skipped} already done, "
        f"{result.seconds:.1f} s\n")
    where = Text.assemble(("Dataset: ", "bold"), str(result.out.resolve()),
                          ("\nCatalog: ", "bold"), str((result.out / CATALOG_FILE).resolve()),
                          f"\nTry: trajforge stats --out {result.out}   |   "
                          f"trajforge query \"SELECT * FROM outcomes LIMIT 5\" --out {result.out}")
    extra = diversity_tables(result.diversity.summary) if result.diversity is not None else []
    return Group(head, *_tables(result.out, result.run_id), *extra, where)


def dataset_stats(out: Path) -> Group:
    from trajforge.store.derived import selection_summaries

    runs = query(out, "SELECT run_id FROM runs")[1]
    latest: dict[str, dict[str, Any]] = {}
    for summary in selection_summaries(out):  # oldest first: the last one per run wins
        latest[summary["run_id"]] = summary
    extra = [t for s in latest.values() for t in diversity_tables(s)]
    return Group(Text(f"{out.resolve()}: {len(runs)} run(s)"), *_tables(out, None), *extra)


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
