"""The ``trajforge`` command: thin commands that validate config and call one stage.

Exit codes: 0 success; 2 a usage or config error (bad YAML or value, unknown domain, an output
folder that cannot be written, a query against a missing catalog); 1 anything unexpected.
Errors are one line on stderr, and nothing existing is changed before config validates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from trajforge.errors import ConfigError, StoreError, TrajforgeError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Build verified, diverse, multi-turn agent trajectories.")
err = Console(stderr=True)  # progress bar only
out = Console()

OutOption = Annotated[Path, typer.Option("--out", help="dataset folder (holds catalog.duckdb)")]


def _fail(exc: Exception) -> typer.Exit:
    code = 2 if isinstance(exc, (ConfigError, StoreError)) else 1
    # one plain line whatever the terminal width; the message is data, never markup
    typer.echo("error: " + " ".join(str(exc).split()), err=True)
    return typer.Exit(code)


@app.command()
def build(
    config: Annotated[Optional[Path], typer.Option("--config", help="run config YAML")] = None,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="output folder (default data/)")] = None,
    n: Annotated[Optional[int], typer.Option("--n", help="number of blueprints")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="generation seed")] = None,
    domain: Annotated[Optional[str], typer.Option("--domain", help="domain name")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="simulation processes")] = None,
    shard_size: Annotated[Optional[int], typer.Option("--shard-size", help="blueprints per shard")] = None,
    select: Annotated[Optional[int], typer.Option(
        "--select", help="select K diverse trajectories (diversity.select)")] = None,
    dedup_threshold: Annotated[Optional[float], typer.Option(
        "--dedup-threshold", help="remove near-duplicates at cosine >= T (diversity.dedup_threshold)")] = None,
    overrides: Annotated[Optional[list[str]], typer.Option("--set", help="KEY=VALUE config override")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
) -> None:
    """Generate, validate, simulate, verify and store a dataset (resumes an unfinished run);
    with --select/--dedup-threshold, then score, deduplicate and select for diversity."""
    from trajforge.config import load_config, parse_override
    from trajforge.pipeline import run_build
    from trajforge.reporting import build_summary

    try:
        values: dict[str, Any] = dict(parse_override(o) for o in overrides or [])
        values.update({k: v for k, v in {
            "store.out": str(out_dir) if out_dir else None, "generation.n_blueprints": n,
            "generation.seed": seed, "domain.name": domain, "store.workers": workers,
            "store.shard_size": shard_size, "diversity.select": select,
            "diversity.dedup_threshold": dedup_threshold}.items() if v is not None})
        cfg = load_config(config, values)
    except TrajforgeError as exc:
        raise _fail(exc) from None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    try:
        with Progress(TextColumn("[bold]build[/bold]"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("blueprints"), TimeElapsedColumn(), console=err,
                      disable=quiet, transient=True) as bar:
            task = bar.add_task("build", total=cfg.generation.n_blueprints)
            result = run_build(cfg, progress=lambda s: bar.advance(task, s.stop - s.start))
    except TrajforgeError as exc:
        raise _fail(exc) from None
    out.print(build_summary(cfg, result))


@app.command()
def domains() -> None:
    """List the installed domains with their tools and policy rules."""
    from trajforge.environments.registry import domain_names, load_domain_class

    table = Table("domain", "tools (read/write)", "policy rules", "source")
    for name in domain_names():
        try:
            cls = load_domain_class(name)
        except ConfigError as exc:
            raise _fail(exc) from None
        from trajforge.environments.base import ToolKind, toolkit_tools

        tools = toolkit_tools(cls.toolkit_type).values()
        writes = sum(t.kind is ToolKind.write for t in tools)
        table.add_row(name, f"{len(tools)} ({len(tools) - writes}/{writes})", str(len(cls.policy_rules)),
                      f"{cls.__module__}")
    out.print(table)


@app.command()
def show(trajectory_id: str, out_dir: OutOption = Path("data")) -> None:
    """Print one trajectory as a readable transcript, with its verdicts."""
    from trajforge.reporting import render_trajectory

    try:
        out.print(render_trajectory(out_dir, trajectory_id))
    except TrajforgeError as exc:
        raise _fail(exc) from None


@app.command()
def query(
    sql: str,
    out_dir: OutOption = Path("data"),
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json")] = "table",
) -> None:
    """Run one SQL statement over the catalog (views: blueprints, trajectories, verdicts,
    outcomes, rejections, runs, embeddings, scores, selection)."""
    from trajforge.store import query as run_query

    if fmt not in ("table", "csv", "json"):
        raise _fail(ConfigError("--format", f"'{fmt}' is not one of table, csv, json"))
    try:
        columns, rows = run_query(out_dir, sql)
    except TrajforgeError as exc:
        raise _fail(exc) from None
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r)) for r in rows], default=str, indent=1))
    elif fmt == "csv":
        import csv
        import sys

        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        table = Table(*columns)
        for row in rows:
            table.add_row(*("" if v is None else str(v) for v in row))
        out.print(table)


@app.command()
def stats(out_dir: OutOption = Path("data")) -> None:
    """Summarise the dataset in a folder: yield, pass rate per check, rejections, and the
    Vendi score per domain and stratum with the effect of selection (when one was run)."""
    from trajforge.reporting import dataset_stats

    try:
        out.print(dataset_stats(out_dir))
    except TrajforgeError as exc:
        raise _fail(exc) from None


def main() -> None:
    app()


if __name__ == "__main__":
    main()
