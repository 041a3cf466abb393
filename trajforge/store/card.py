"""The dataset card: README.md with Hub YAML metadata, how the data was made, yields, pass
rates, diversity, cost, splits and plots.

``card_stats`` reads what the card reports from the catalog; ``render_card`` is a pure function
of those stats and the export summary; ``write_plots`` draws the PNGs (matplotlib, the
``export`` extra). Nothing here reads the environment, and no local path is written: the card
names files relative to the dataset folder only.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import yaml

from trajforge import __version__
from trajforge.errors import StoreError
from trajforge.store.catalog import connect
from trajforge.store.export_writer import ExportSummary, relation_columns
from trajforge.store.features import FEATURES
from trajforge.store.splits import SPLITS

PLOTS_DIR = "plots"
PLOTS = {
    "turns": "turns.png",
    "tools": "tool_usage.png",
    "structure": "structure.png",
}

FORMAT_PURPOSE = {
    "sft": "TRL conversational SFT: `messages` + `tools`, one row per trajectory that passed every check",
    "preferences": "DPO-style pairs: shared `prompt`, `chosen` / `rejected` agent turns, failing checks named",
    "sharegpt": ("LLaMA-Factory ShareGPT: `conversations` (human / gpt / function_call / observation), "
                 "`system`, `tools`"),
    "openai": "OpenAI chat fine-tuning rows (`arguments` as JSON text) with a `metadata` object "
              "(trajectory, blueprint, run, termination) that `trajforge verify --input` reads back; "
              "also as `openai/<split>.jsonl`",
    "rl_tasks": "one row per blueprint: environment, opening prompt, tools and what the verifiers check, for RL",
}


@dataclass
class Yields:
    """How many records each stage produced; ``selected`` is None when no selection stage ran."""

    generated: int = 0
    valid: int = 0
    simulated: int = 0
    passed: int = 0
    selected: int | None = None


@dataclass
class CardStats:
    """What the card reports about the source catalog (all runs exported)."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    # per domain: (domain, blueprints, episodes, episodes passing every check)
    by_domain: list[tuple[str, int, int, int]] = field(default_factory=list)
    generators: list[tuple[str, str, int]] = field(default_factory=list)
    policies: list[tuple[str, str, int]] = field(default_factory=list)
    yields: Yields = field(default_factory=Yields)
    checks: list[tuple[str, float, int]] = field(default_factory=list)
    vendi: dict[str, float] = field(default_factory=dict)
    cost_total: float = 0.0
    unpriced: int = 0
    turns: list[tuple[int, bool]] = field(default_factory=list)  # (user turns, passed)
    tool_calls: Counter[str] = field(default_factory=Counter)
    structure: list[dict[str, int]] = field(default_factory=list)
    rejections: list[tuple[str, int]] = field(default_factory=list)


def _vendi_from_selections(out: Path, runs: list[str]) -> dict[str, float]:
    """Vendi score (order 1) per domain of the latest diversity selection of these runs."""
    from trajforge.store.derived import selection_summaries

    latest = {s["run_id"]: s for s in selection_summaries(out) if s.get("run_id") in runs}
    vendi: dict[str, float] = {}
    for summary in latest.values():
        for row in summary.get("by_domain") or []:
            scores = row.get("vendi_selected") or row.get("vendi") or {}
            if "1" in scores:
                vendi[str(row["group"])] = float(scores["1"])
    return vendi


def _vendi(con: duckdb.DuckDBPyConnection, runs: list[str]) -> dict[str, float]:
    """Vendi score per domain, when a diversity stage recorded one: a ``diversity`` or
    ``scores`` relation with a ``domain`` column and a column named ``vendi*``."""
    for relation in ("diversity",):
        columns = relation_columns(con, relation)
        vendi = sorted(c for c in columns if c.lower().startswith("vendi"))
        if "domain" in columns and vendi:
            where = "WHERE list_contains(?, run_id)" if "run_id" in columns else ""
            params = [runs] if where else []
            rows = con.execute(f'SELECT domain, max("{vendi[0]}") FROM {relation} {where} '
                               "GROUP BY 1 ORDER BY 1", params).fetchall()
            return {d: float(v) for d, v in rows if v is not None}
    return {}


def card_stats(out: Path, run_ids: list[str]) -> CardStats:
    con = connect(out, read_only=True)
    try:
        con.execute("SET enable_progress_bar = false")
        stats = _card_stats(con, run_ids)
    except duckdb.Error as exc:
        raise StoreError(f"cannot read catalog at {out}: {str(exc).strip().splitlines()[0]}") from exc
    finally:
        con.close()
    if not stats.vendi:
        stats.vendi = _vendi_from_selections(out, list(run_ids))
    return stats


def _one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple[Any, ...]:
    """The row of an aggregate query (which always has exactly one)."""
    row = con.execute(sql, params).fetchone()
    if row is None:
        raise StoreError(f"the catalog query returned no row: {sql}")
    return row


def _count(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> int:
    return int(_one_row(con, sql, params)[0])


def _card_stats(con: duckdb.DuckDBPyConnection, runs: list[str]) -> CardStats:
    q = con.execute
    r = [list(runs)]
    stats = CardStats()
    for run_id, name, config, created in q(
            "SELECT run_id, name, config, created_at FROM runs WHERE list_contains(?, run_id) "
            "ORDER BY run_id", r).fetchall():
        stats.runs.append({"run_id": run_id, "name": name, "created_at": str(created),
                           "config": json.loads(config) if isinstance(config, str) else config})
    stats.domains = [d for (d,) in q("SELECT DISTINCT domain FROM blueprints WHERE list_contains(?, run_id) "
                                     "ORDER BY 1", r).fetchall()]
    stats.by_domain = [(d, int(b), int(e), int(p)) for d, b, e, p in q(
        "SELECT t.domain, count(DISTINCT t.blueprint_id), count(*), count(*) FILTER (WHERE o.passed) "
        "FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id "
        "WHERE list_contains(?, t.run_id) GROUP BY 1 ORDER BY 1", r).fetchall()]
    stats.generators = [(g, v, int(n)) for g, v, n in q(
        "SELECT generator, generator_version, count(*) FROM blueprints WHERE list_contains(?, run_id) "
        "GROUP BY 1, 2 ORDER BY 1, 2", r).fetchall()]
    stats.policies = [(a, u, int(n)) for a, u, n in q(
        'SELECT agent, "user", count(*) FROM trajectories WHERE list_contains(?, run_id) '
        "GROUP BY 1, 2 ORDER BY 1, 2", r).fetchall()]
    valid = _count(con, "SELECT count(*) FROM blueprints WHERE list_contains(?, run_id)", r)
    rejected = _count(con, "SELECT count(*) FROM rejections WHERE list_contains(?, run_id)", r)
    selected: int | None = None
    if ({"trajectory_id", "selected"} <= relation_columns(con, "selection")
            and _count(con, "SELECT count(*) FROM selection")):
        selected = _count(con, "SELECT count(DISTINCT s.trajectory_id) FROM selection s "
                          "JOIN outcomes o ON o.trajectory_id = s.trajectory_id "
                          "WHERE s.selected AND o.passed AND list_contains(?, o.run_id)", r)
    stats.yields = Yields(
        generated=valid + rejected, valid=valid, selected=selected,
        simulated=_count(con, "SELECT count(*) FROM trajectories WHERE list_contains(?, run_id)", r),
        passed=_count(con, "SELECT count(*) FROM outcomes WHERE passed AND list_contains(?, run_id)", r))
    stats.checks = [(c, float(rate), int(failed)) for c, rate, failed in q(
        'SELECT "check", avg(passed::INT), count(*) FILTER (WHERE NOT passed) FROM verdicts '
        "WHERE list_contains(?, run_id) GROUP BY 1 ORDER BY 1", r).fetchall()]
    stats.rejections = [(reason, int(n)) for reason, n in q(
        "SELECT reason, count(*) FROM rejections WHERE list_contains(?, run_id) GROUP BY 1 ORDER BY 2 DESC, 1",
        r).fetchall()]
    stats.vendi = _vendi(con, list(runs))
    total, unpriced = _one_row(con, "SELECT coalesce(sum(cost_usd), 0), count(*) FILTER (WHERE cost_usd IS NULL) "
                               "FROM trajectories WHERE list_contains(?, run_id)", r)
    stats.cost_total, stats.unpriced = float(total), int(unpriced)
    stats.turns = [(int(n), bool(p)) for n, p in q(
        "SELECT len(list_filter(t.messages, lambda m: m.role = 'user')), coalesce(o.passed, false) "
        "FROM trajectories t LEFT JOIN outcomes o ON o.trajectory_id = t.id "
        "WHERE list_contains(?, t.run_id)", r).fetchall()]
    stats.tool_calls = Counter({name: int(n) for name, n in q(
        "SELECT c.name, count(*) FROM (SELECT unnest("
        "  flatten(list_transform(t.messages, lambda m: coalesce(m.tool_calls, [])))) AS c "
        "  FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id "
        "  WHERE o.passed AND list_contains(?, t.run_id)) GROUP BY 1", r).fetchall()})
    stats.structure = [
        {"n_intents": a, "write_count": b, "read_count": c, "dependency_depth": d}
        for a, b, c, d in q(
            "SELECT structure.n_intents, structure.write_count, structure.read_count, "
            "structure.dependency_depth FROM blueprints WHERE list_contains(?, run_id)", r).fetchall()]
    return stats


# --- plots ------------------------------------------------------------------------------------

def write_plots(stats: CardStats, folder: Path) -> list[str]:
    """Draw the card's PNGs into ``folder / plots``; their paths relative to ``folder``. Empty
    when matplotlib is not installed (the card then says so)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return []
    target = folder / PLOTS_DIR
    target.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    # no timestamp or software version in the files, so equal data gives equal bytes
    save_metadata: dict[str, str | None] = {"Software": None}

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    top = max((n for n, _ in stats.turns), default=1)
    bins = [b - 0.5 for b in range(0, top + 2)]
    ax.hist([n for n, p in stats.turns if p], bins=bins, alpha=0.75, label="passed every check")
    ax.hist([n for n, p in stats.turns if not p], bins=bins, alpha=0.6, label="failed a check")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("user turns per trajectory")
    ax.set_ylabel("trajectories")
    ax.set_title("Turn counts")
    ax.legend()
    fig.tight_layout()
    fig.savefig(target / PLOTS["turns"], dpi=100, metadata=save_metadata)
    plt.close(fig)
    written.append(f"{PLOTS_DIR}/{PLOTS['turns']}")

    fig, ax = plt.subplots(figsize=(6.4, max(2.4, 0.32 * len(stats.tool_calls) + 1.2)))
    items = sorted(stats.tool_calls.items(), key=lambda kv: (kv[1], kv[0]))
    ax.barh([k for k, _ in items], [v for _, v in items], color="#4c72b0")
    ax.set_xlabel("calls in passing trajectories")
    ax.set_title("Tool usage")
    fig.tight_layout()
    fig.savefig(target / PLOTS["tools"], dpi=100, metadata=save_metadata)
    plt.close(fig)
    written.append(f"{PLOTS_DIR}/{PLOTS['tools']}")

    keys = ("n_intents", "write_count", "read_count", "dependency_depth")
    fig, axes = plt.subplots(1, len(keys), figsize=(10, 2.8))
    for ax, key in zip(axes, keys, strict=True):
        counts = Counter(s[key] for s in stats.structure)
        xs = sorted(counts)
        ax.bar(xs, [counts[x] for x in xs], color="#55a868")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(key.replace("_", " "), fontsize=10)
        ax.set_xlabel("value")
    axes[0].set_ylabel("blueprints")
    fig.suptitle("Structural complexity of the blueprints")
    fig.tight_layout()
    fig.savefig(target / PLOTS["structure"], dpi=100, metadata=save_metadata)
    plt.close(fig)
    written.append(f"{PLOTS_DIR}/{PLOTS['structure']}")
    return written


# --- rendering --------------------------------------------------------------------------------

def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return label
    return "10M<n<100M"


def card_metadata(stats: CardStats, summary: ExportSummary, license_id: str, pretty_name: str) -> dict[str, Any]:
    default = "sft" if "sft" in summary.files else next(iter(summary.files), None)
    configs = []
    for fmt in summary.formats:
        if fmt not in summary.files:
            continue
        config: dict[str, Any] = {"config_name": fmt, "data_files": [
            {"split": s, "path": f"{fmt}/{s}-*.parquet"} for s in SPLITS if s in summary.files[fmt]]}
        if fmt == default:
            config["default"] = True
        configs.append(config)
    largest = max((sum(v.values()) for v in summary.rows.values()), default=0)
    return {
        "pretty_name": pretty_name,
        "license": license_id,
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["synthetic", "agent", "tool-calling", "function-calling", "multi-turn", "trajforge",
                 *stats.domains],
        "size_categories": [size_category(largest)],
        "configs": configs,
    }


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _feature_text(feature: dict[str, Any]) -> str:
    kind = feature.get("_type")
    if kind == "Value":
        return feature["dtype"]
    if kind == "Json":
        return "json"
    if kind == "List":
        return f"list[{_feature_text(feature['feature'])}]"
    return "{" + ", ".join(f"{k}: {_feature_text(v)}" for k, v in feature.items()) + "}"


def render_card(stats: CardStats, summary: ExportSummary, *, repo_id: str | None,
                license_id: str = "apache-2.0", pretty_name: str | None = None,
                plots: list[str] | None = None) -> str:
    """The README.md text. Pure: everything comes from the arguments."""
    name = pretty_name or (repo_id.split("/")[-1] if repo_id else "trajforge dataset")
    meta = card_metadata(stats, summary, license_id, name)
    load_id = repo_id or "ORG/NAME"
    y = stats.yields
    accepted = y.selected if y.selected is not None else y.passed
    parts: list[str] = ["---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(), "---", ""]
    parts += [f"# {name}", "",
              f"Verified multi-turn tool-use conversations in the {', '.join(f'`{d}`' for d in stats.domains)} "
              f"domain{'s' if len(stats.domains) != 1 else ''}, made with "
              f"trajforge {__version__}. Every task blueprint's ground "
              "truth was executed before any dialogue; each simulated user ↔ agent ↔ tool episode was checked "
              "by deterministic verifiers, and failures are kept, with the checks they failed, for preference "
              "training.", ""]

    parts += ["## Configs", ""]
    rows = []
    for fmt in summary.formats:
        if fmt in summary.rows:
            counts = summary.rows[fmt]
            rows.append([f"`{fmt}`", FORMAT_PURPOSE[fmt], *(counts.get(s, 0) for s in SPLITS)])
    parts += [_table(["config", "what", *SPLITS], rows), ""]
    parts += ["```python", "from datasets import load_dataset", "",
              f'sft = load_dataset("{load_id}", "sft", split="train")',
              "# TRL: SFTTrainer(model, train_dataset=sft, args=SFTConfig(assistant_only_loss=True))",
              "# needs a chat template with {% generation %} markers; tools go to apply_chat_template(tools=...)",
              f'pairs = load_dataset("{load_id}", "preferences", split="train")  # DPOTrainer',
              "```", ""]

    parts += ["## How it was made", "",
              f"- **Domains**: {', '.join(stats.domains)}",
              "- **Blueprint generators**: " + ", ".join(
                  f"`{g}` version {v} ({n} blueprints)" for g, v, n in stats.generators),
              "- **Agent / user policies (models)**: " + ", ".join(
                  f"`{a}` with user `{u}` ({n} episodes)" for a, u, n in stats.policies),
              f"- **trajforge version**: {__version__}",
              "- **Runs**: " + ", ".join(f"`{run['run_id']}`" for run in stats.runs)]
    for run in stats.runs:
        config = run["config"] or {}
        seeds = {"generation.seed": config.get("generation", {}).get("seed"),
                 "domain.seed": config.get("domain", {}).get("seed")}
        parts.append(f"- **Seeds** of `{run['run_id']}`: " + ", ".join(f"{k}={v}" for k, v in seeds.items()))
    parts.append("")
    for run in stats.runs:
        parts += [f"<details><summary>Config of run <code>{run['run_id']}</code> ({run['name']})</summary>", "",
                  "```yaml", yaml.safe_dump(run["config"], sort_keys=False).rstrip(), "```", "", "</details>", ""]

    parts += ["## Yield", "",
              _table(["stage", "count", "of previous"], [
                  ["blueprints generated", y.generated, ""],
                  ["blueprints valid (ground truth executed)", y.valid,
                   _pct(y.valid / y.generated) if y.generated else "-"],
                  ["episodes simulated", y.simulated, ""],
                  ["episodes passing every check", y.passed,
                   _pct(y.passed / y.simulated) if y.simulated else "-"],
                  ["selected (diversity)",
                   y.selected if y.selected is not None else f"{y.passed} (no selection stage ran: all passing)",
                   _pct(y.selected / y.passed) if y.selected is not None and y.passed else ""],
              ]), ""]
    if stats.rejections:
        parts += ["Blueprints rejected at validation: " + ", ".join(f"{r} ({n})" for r, n in stats.rejections), ""]

    if len(stats.by_domain) > 1:
        parts += ["## Domains", "", "A mixed build: its blueprints and episodes per domain.", "",
                  _table(["domain", "blueprints", "episodes", "passing every check"],
                         [[f"`{d}`", b, e, f"{p} ({_pct(p / e) if e else '-'})"] for d, b, e, p in stats.by_domain]),
                  ""]

    parts += ["## Verification", "", "Pass rate per check over every simulated episode (the "
              "fault-injecting agent's episodes are meant to fail one check each):", "",
              _table(["check", "pass rate", "failed"], [[f"`{c}`", _pct(rate), n] for c, rate, n in stats.checks]), ""]

    parts += ["## Diversity", ""]
    if stats.vendi:
        parts += [_table(["domain", "Vendi score"], [[d, f"{v:.2f}"] for d, v in stats.vendi.items()]), ""]
    else:
        parts += ["No Vendi score was computed for this build.", ""]

    parts += ["## Cost", ""]
    if stats.unpriced:
        parts += [f"{stats.unpriced} episode(s) used a model that could not be priced; the known cost is "
                  f"${stats.cost_total:.4f}, so the cost per accepted trajectory is at least "
                  f"${(stats.cost_total / accepted) if accepted else 0:.6f}.", ""]
    else:
        per = f"${stats.cost_total / accepted:.6f}" if accepted else "n/a (nothing accepted)"
        parts += [f"Total model cost ${stats.cost_total:.4f}; cost per accepted trajectory {per}"
                  + (" (scripted policies cost nothing)." if stats.cost_total == 0 else "."), ""]

    sc = summary.split_config
    parts += ["## Splits", "",
              f"Blueprints are split by **family** (a blueprint and all its variants share one split) by a hash "
              f"of the family id: train {sc.train:g} / validation {sc.validation:g} / test {sc.test:g}"
              + (f", salt `{sc.salt}`" if sc.salt else "") + ".", "",
              _table(["split", "families", "blueprints"],
                     [[s, summary.families_per_split.get(s, 0), summary.blueprints_per_split.get(s, 0)]
                      for s in SPLITS]),
              "",
              f"**Contamination check**: {len(summary.contamination)} test blueprint(s) have a goal text whose "
              f"word-shingle Jaccard similarity with a train blueprint's goal is ≥ {sc.near_duplicate_threshold:g}"
              + ("." if not summary.contamination else ":"), ""]
    if summary.contamination:
        shown = summary.contamination[:20]
        parts += [_table(["test blueprint", "nearest train blueprint", "Jaccard"],
                         [[f"`{d.test_id}`", f"`{d.train_id}`", f"{d.similarity:.2f}"] for d in shown]), ""]
        if len(summary.contamination) > len(shown):
            parts += [f"(and {len(summary.contamination) - len(shown)} more in `trajforge_export.json`)", ""]
    if summary.skipped:
        parts += ["Rows left out of a format: " + ", ".join(f"{k}: {v}" for k, v in sorted(summary.skipped.items()))
                  + " (a dialogue that could not be made to alternate,"
                    " or a pair with no divergent assistant turn).", ""]

    parts += ["## Plots", ""]
    if plots:
        titles = {PLOTS["turns"]: "Turn counts", PLOTS["tools"]: "Tool usage",
                  PLOTS["structure"]: "Structural complexity"}
        for path in plots:
            parts += [f"![{titles.get(Path(path).name, path)}]({path})", ""]
    else:
        parts += ["(Plots need matplotlib: `pip install trajforge[export]`.)", ""]

    parts += ["## Fields", ""]
    for fmt in summary.formats:
        if fmt in summary.files:
            parts += [f"**`{fmt}`**: " + ", ".join(f"`{k}` ({_feature_text(v)})" for k, v in FEATURES[fmt].items()), ""]
    parts += ["Messages are JSON objects in the OpenAI chat shape (keys with no value are left out); in "
              "`sft`, `preferences` and `rl_tasks` a tool call's `arguments` is a JSON object, in `openai` "
              "JSON text. Parquet files carry their `datasets` Features, so `load_dataset` restores them.", ""]

    parts += ["## Limitations", "",
              "The user and, unless the policies above name a model, the agent are scripted policies: wording "
              "comes from phrase banks, so the dialogues are more regular than human conversations. Verifier "
              "checks are deterministic and domain-specific; a passing trajectory satisfies them, not every "
              "possible notion of quality.", ""]
    return "\n".join(parts).rstrip() + "\n"


def write_card(out: Path, to: Path, summary: ExportSummary, *, repo_id: str | None = None,
               license_id: str = "apache-2.0", pretty_name: str | None = None) -> Path:
    """Write ``README.md`` and the plots into the export folder ``to``."""
    stats = card_stats(out, list(summary.run_ids))
    plots = write_plots(stats, Path(to))
    path = Path(to) / "README.md"
    path.write_text(render_card(stats, summary, repo_id=repo_id, license_id=license_id,
                                pretty_name=pretty_name, plots=plots), encoding="utf-8")
    return path
