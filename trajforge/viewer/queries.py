"""What each page shows, read from a snapshot: plain data, no HTML."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from trajforge.store.derived import selection_summaries
from trajforge.viewer.filters import PAGE_SIZE, Filters
from trajforge.viewer.snapshot import Snapshot
from trajforge.viewer.transcript import (
    DiffRow,
    MessageView,
    VerdictView,
    diff_rows,
    first_divergence,
    message_views,
    pretty_json,
)

# list columns shown per row
_ROW_COLUMNS = ("id, blueprint_id, run_id, domain, agent, \"user\", style, fault_kind, termination, n_messages, "
                "user_turns, tool_calls, passed, reward, failed_checks, decision, complexity")


def _rate(part: int | float | None, whole: int | float | None) -> float | None:
    return None if not whole else float(part or 0) / float(whole)


# --- overview ------------------------------------------------------------------------------------

@dataclass
class Overview:
    trajectories: int
    passed: int
    yields: list[tuple[str, int]]
    checks: list[dict[str, Any]]
    domains: list[dict[str, Any]]
    faults: list[dict[str, Any]]
    terminations: list[dict[str, Any]]
    turns: list[tuple[int, int]]
    tool_calls: list[tuple[int, int]]
    complexity: list[dict[str, Any]]
    intents: list[dict[str, Any]]
    vendi: list[dict[str, Any]]
    cost: dict[str, Any]
    index_seconds: float


def overview(snap: Snapshot) -> Overview:
    (n, passed, cost, costed), = snap.rows(
        "SELECT count(*), count(*) FILTER (WHERE passed), sum(cost_usd), count(cost_usd) FROM viewer_index")
    (blueprints,), = snap.rows("SELECT count(*) FROM blueprints")
    (rejected,), = snap.rows("SELECT count(*) FROM rejections")
    yields = [("blueprints generated", blueprints + rejected), ("blueprints valid", blueprints),
              ("episodes", n), ("episodes passing every check", passed)]
    selected = snap.rows("SELECT count(*) FROM viewer_index WHERE decision = 'selected'")[0][0]
    if snap.selection_ids:
        yields.append(("selected for diversity", selected))
    checks = [{"check": c, "verdicts": v, "failed": f, "pass_rate": _rate(v - f, v)}
              for c, v, f in snap.rows('SELECT "check", sum(verdicts), sum(failed) FROM viewer_checks '
                                       'GROUP BY 1 ORDER BY 1')]
    domains = [{"domain": d, "blueprints": b, "episodes": e, "passed": p, "pass_rate": _rate(p, e),
                "oracle_pass_rate": _rate(op, oe)}
               for d, b, e, p, op, oe in snap.rows("""
                   SELECT domain, count(DISTINCT blueprint_id), count(*), count(*) FILTER (WHERE passed),
                          count(*) FILTER (WHERE passed AND agent LIKE '%oracle%'),
                          count(*) FILTER (WHERE agent LIKE '%oracle%')
                   FROM viewer_index GROUP BY 1 ORDER BY 1""")]
    faults = [{"fault_kind": k, "episodes": e, "caught": c, "catch_rate": _rate(c, e)}
              for k, e, c in snap.rows("""
                  SELECT fault_kind, count(*), count(*) FILTER (WHERE NOT coalesce(passed, false))
                  FROM viewer_index WHERE fault_kind IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1""")]
    terminations = [{"termination": t, "episodes": e, "failed": f}
                    for t, e, f in snap.rows("""
                        SELECT termination, count(*), count(*) FILTER (WHERE NOT coalesce(passed, false))
                        FROM viewer_index GROUP BY 1 ORDER BY 2 DESC, 1""")]
    turns = [(int(a), int(b)) for a, b in snap.rows(
        "SELECT user_turns, count(*) FROM viewer_index GROUP BY 1 ORDER BY 1")]
    tool_calls = [(int(a), int(b)) for a, b in snap.rows(
        "SELECT tool_calls, count(*) FROM viewer_index GROUP BY 1 ORDER BY 1")]
    complexity = [{"bucket": c, "episodes": e, "pass_rate": _rate(p, e)} for c, e, p in snap.rows("""
        SELECT coalesce(complexity, '-'), count(*), count(*) FILTER (WHERE passed) FROM viewer_index
        GROUP BY 1 ORDER BY list_position(['low', 'mid', 'high', '-'], coalesce(complexity, '-'))""")]
    intents = [{"n_intents": k, "episodes": e, "pass_rate": _rate(p, e)} for k, e, p in snap.rows("""
        SELECT n_intents, count(*), count(*) FILTER (WHERE passed) FROM viewer_index
        WHERE n_intents IS NOT NULL GROUP BY 1 ORDER BY 1""")]
    accepted = passed if not snap.selection_ids else selected
    return Overview(
        trajectories=n, passed=passed, yields=yields, checks=checks, domains=domains, faults=faults,
        terminations=terminations, turns=turns, tool_calls=tool_calls, complexity=complexity,
        intents=intents, vendi=vendi_tables(snap),
        cost={"total_usd": cost, "priced_episodes": costed, "accepted": accepted,
              "per_accepted_usd": None if cost is None or not accepted else cost / accepted},
        index_seconds=snap.index_seconds)


def vendi_tables(snap: Snapshot) -> list[dict[str, Any]]:
    """Vendi per stratum of each run's latest diversity selection (its stored summary)."""
    latest: dict[str, dict[str, Any]] = {}
    for summary in selection_summaries(snap.out):
        latest[summary["run_id"]] = summary
    out = []
    for summary in latest.values():
        q = summary["config"]["q"]
        key = "inf" if q == "inf" or q == float("inf") else f"{float(q):g}"
        rows = [{"group": r["group"], "items": r["items"], "vendi": (r.get("vendi") or {}).get(key),
                 "selected": r.get("selected"), "vendi_selected": (r.get("vendi_selected") or {}).get(key)}
                for r in summary.get("by_stratum", [])]
        out.append({"run_id": summary["run_id"], "selection_id": summary["selection_id"], "q": key,
                    "rows": rows})
    return out


# --- the list ------------------------------------------------------------------------------------

@dataclass
class ListPage:
    filters: Filters
    rows: list[dict[str, Any]]
    total: int
    pages: int
    options: dict[str, list[str]] = field(default_factory=dict)


def filter_options(snap: Snapshot) -> dict[str, list[str]]:
    """The values each filter can take in this dataset (for the form's drop-downs)."""
    options: dict[str, list[str]] = {}
    for name, column in (("domain", "domain"), ("agent", "agent"), ("user", '"user"'), ("style", "style"),
                         ("fault", "fault_kind"), ("termination", "termination"), ("decision", "decision"),
                         ("run", "run_id")):
        options[name] = [r[0] for r in snap.rows(
            f"SELECT DISTINCT {column} FROM viewer_index WHERE {column} IS NOT NULL ORDER BY 1")]
    options["check"] = [r[0] for r in snap.rows('SELECT DISTINCT "check" FROM viewer_checks ORDER BY 1')]
    return options


def list_page(snap: Snapshot, filters: Filters, page_size: int = PAGE_SIZE, subset: bool = False) -> ListPage:
    """One page of the filtered list; ``subset``: only the trajectories ``snap.restrict`` named."""
    search = snap.ensure_search(filters.q) if filters.q else None
    where, params = filters.where(search)
    if subset:
        where += (" AND " if where else " WHERE ") + "id IN (SELECT id FROM viewer_subset)"
    (total,), = snap.rows(f"SELECT count(*) FROM viewer_index{where}", params)
    pages = max(1, -(-total // page_size))
    page = min(filters.page, pages)
    rows = snap.dicts(f"SELECT {_ROW_COLUMNS} FROM viewer_index{where} ORDER BY ord LIMIT ? OFFSET ?",
                      [*params, page_size, (page - 1) * page_size])
    return ListPage(filters=replace(filters, page=page), rows=rows, total=total, pages=pages,
                    options=filter_options(snap))


# --- one trajectory ------------------------------------------------------------------------------

@dataclass
class TrajectoryPage:
    row: dict[str, Any]  # the index row
    messages: list[dict[str, Any]]
    views: list[MessageView]
    verdicts: list[VerdictView]
    diff: list[DiffRow]
    twin_id: str | None  # the passing twin of a failing episode
    siblings: list[dict[str, Any]]  # the other episodes of its blueprint
    tools: list[dict[str, Any]]
    error: str | None
    flags: list[dict[str, Any]]  # tool outputs whose text reads as instructions (environments.injection)


def index_row(snap: Snapshot, trajectory_id: str) -> dict[str, Any] | None:
    rows = snap.dicts(f"SELECT {_ROW_COLUMNS} FROM viewer_index WHERE id = ?", [trajectory_id])
    return rows[0] if rows else None


def twin_of(snap: Snapshot, row: dict[str, Any]) -> str | None:
    """A failing episode's passing twin: another episode of the same blueprint that passed, the
    oracle's first."""
    if row["passed"]:
        return None
    found = snap.rows("""SELECT id FROM viewer_index WHERE blueprint_id = ? AND id <> ? AND passed
                         ORDER BY agent LIKE '%oracle%' DESC, ord LIMIT 1""", [row["blueprint_id"], row["id"]])
    return found[0][0] if found else None


def trajectory_pages(snap: Snapshot, trajectory_ids: list[str]) -> dict[str, TrajectoryPage]:
    """The pages of a few trajectories (a twin and its failing episode share their blueprint's
    expected diff)."""
    rows = [row for row in (index_row(snap, i) for i in dict.fromkeys(trajectory_ids)) if row is not None]
    # one equality per id: DuckDB pushes ``id = ?`` into the Parquet scan, so only the matching
    # rows' messages are read (an IN list or a computed key reads every message)
    stored: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        # * rather than a column list: a dataset stored before ``flags`` existed has no such column
        found = snap.dicts(f"SELECT * FROM {snap.tables['trajectories']} "
                           "WHERE id = ? AND run_id = ? LIMIT 1", [r["id"], r["run_id"]])
        if found:
            stored[r["id"]] = found[0]
        verdicts[r["id"]] = snap.dicts(f'SELECT "check", passed, reason, evidence FROM {snap.tables["verdicts"]} '
                                       'WHERE trajectory_id = ? AND run_id = ? ORDER BY passed, "check"',
                                       [r["id"], r["run_id"]])
    expected: dict[str, str] = {}
    for bid in sorted({r["blueprint_id"] for r in rows}):  # twins share theirs: read once
        found_bp = snap.rows(f"SELECT final_state_diff FROM {snap.tables['blueprints']} WHERE id = ? LIMIT 1", [bid])
        if found_bp:
            expected[bid] = found_bp[0][0]
    pages = {}
    for row in rows:
        if row["id"] not in stored:
            continue
        st = stored[row["id"]]
        views, verdict_views = message_views(st["messages"], verdicts.get(row["id"], []))
        siblings = snap.dicts(f"SELECT {_ROW_COLUMNS} FROM viewer_index WHERE blueprint_id = ? AND id <> ? "
                              "ORDER BY ord", [row["blueprint_id"], row["id"]])
        try:
            tools = [t.get("function", t) for t in json.loads(st["tools"] or "[]")]
        except ValueError:
            tools = []
        pages[row["id"]] = TrajectoryPage(
            row=row, messages=st["messages"], views=views, verdicts=verdict_views,
            diff=diff_rows(st["final_state_diff"], expected.get(row["blueprint_id"])),
            twin_id=twin_of(snap, row), siblings=siblings, tools=tools, error=st["error"],
            flags=list(st.get("flags") or ()))
    return pages


def trajectory_page(snap: Snapshot, trajectory_id: str) -> TrajectoryPage | None:
    return trajectory_pages(snap, [trajectory_id]).get(trajectory_id)


@dataclass
class ComparePage:
    left: TrajectoryPage
    right: TrajectoryPage
    diverges_at: int
    shared_views: list[MessageView]  # the messages both have, before the divergence (the left's)
    left_views: list[MessageView]  # from the first divergent message on
    right_views: list[MessageView]


def compare_page(snap: Snapshot, trajectory_id: str, other_id: str | None = None) -> ComparePage | None:
    """A failing episode beside its passing twin (or ``other_id``), from the first message where
    they differ."""
    row = index_row(snap, trajectory_id)
    other = other_id or (twin_of(snap, row) if row is not None else None)
    if other is None:
        return None
    pages = trajectory_pages(snap, [trajectory_id, other])
    left, right = pages.get(trajectory_id), pages.get(other)
    if left is None or right is None:
        return None
    at = first_divergence(left.messages, right.messages)
    return ComparePage(left=left, right=right, diverges_at=at,
                       shared_views=[v for v in left.views if _last_index(v) < at],
                       left_views=[v for v in left.views if _last_index(v) >= at],
                       right_views=[v for v in right.views if _last_index(v) >= at])


def _last_index(view: MessageView) -> int:
    """The last message a bubble shows (a call's result is drawn inside it)."""
    return max([view.index, *(c.result_index for c in view.calls if c.result_index is not None)])


# --- blueprints ----------------------------------------------------------------------------------

@dataclass
class BlueprintPage:
    row: dict[str, Any]
    known_facts: dict[str, Any]
    hidden_facts: dict[str, Any]
    intents: list[dict[str, Any]]
    disclosure: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    expected_diff: list[DiffRow]
    episodes: list[dict[str, Any]]


def blueprint_page(snap: Snapshot, blueprint_id: str) -> BlueprintPage | None:
    rows = snap.dicts(f"SELECT * FROM {snap.tables['blueprints']} WHERE id = ? LIMIT 1", [blueprint_id])
    if not rows:
        return None
    row = rows[0]
    calls = [dict(c, arguments=pretty_json(c["arguments"])) for c in row["calls"] or []]
    episodes = snap.dicts(f"SELECT {_ROW_COLUMNS} FROM viewer_index WHERE blueprint_id = ? ORDER BY ord",
                          [blueprint_id])
    return BlueprintPage(
        row=row, known_facts=json.loads(row["known_facts"] or "{}"),
        hidden_facts=json.loads(row["hidden_facts"] or "{}"), intents=json.loads(row["intents"] or "[]"),
        disclosure=json.loads(row["disclosure"] or "[]"), calls=calls,
        expected_diff=diff_rows(row["final_state_diff"], row["final_state_diff"]), episodes=episodes)


# --- runs, evaluations, the loop -------------------------------------------------------------------

@dataclass
class RunsPage:
    runs: list[dict[str, Any]]
    evaluations: list[dict[str, Any]]
    loops: dict[str, list[dict[str, Any]]]


def runs_page(snap: Snapshot) -> RunsPage:
    from trajforge.evaluation.scores import score

    runs = snap.dicts("""SELECT run_id, name, started_at, outcome, episodes, episodes_passed, cost_usd, seconds
                         FROM runs ORDER BY started_at DESC NULLS LAST, run_id LIMIT 100""")
    rows = snap.dicts("""SELECT eval_id, created_at, policy, source, blueprint_id, domain, trials, passed,
                                failed_checks, termination, tool_calls, valid_tool_calls
                         FROM evaluations ORDER BY created_at, eval_id""")
    by_eval: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_eval.setdefault(r["eval_id"], []).append(r)
    evaluations = []
    for eval_id, items in by_eval.items():
        trials = max(int(r["trials"]) for r in items)
        overall, = score([dict(r, domain="all") for r in items], trials)
        evaluations.append({
            "eval_id": eval_id, "created_at": items[0]["created_at"], "policy": items[0]["policy"],
            "source": items[0]["source"], "trials": trials, "blueprints": overall.blueprints,
            "episodes": overall.episodes, "pass_at_1": overall.pass_at_1, "pass_hat": overall.pass_hat,
            "format_validity": overall.format_validity, "failures": overall.failures.most_common(5),
            "domains": score(items, trials)})
    loops: dict[str, list[dict[str, Any]]] = {}
    for r in snap.dicts("SELECT * FROM loop_iterations ORDER BY run_id, iteration"):
        loops.setdefault(r["run_id"], []).append(r)
    return RunsPage(runs=runs, evaluations=evaluations, loops=loops)
