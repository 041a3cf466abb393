"""The ``trajforge`` command: thin commands that validate config and call one stage.

Exit codes: 0 success; 2 a usage or config error (bad YAML or value, unknown domain, an output
folder that cannot be written, a query against a missing catalog); 1 anything unexpected.
Errors are one line on stderr, and nothing existing is changed before config validates.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from trajforge.errors import ConfigError, StoreError, TrajforgeError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Build verified, diverse, multi-turn agent trajectories.")
err = Console(stderr=True)  # progress bar only
out = Console()


def fresh_consoles() -> None:
    """New consoles for this process's terminal (a child of the warm process, flows/warm.py, was
    imported by a process whose output was no terminal)."""
    global err, out
    err = Console(stderr=True)
    out = Console()

OutOption = Annotated[Path, typer.Option("--out", help="dataset folder (holds catalog.duckdb)")]


MAX_ERROR_CHARS = 400  # an error line says what and where; a failing row's content is not the news


def _fail(exc: Exception) -> typer.Exit:
    code = 2 if isinstance(exc, (ConfigError, StoreError)) else 1
    # one plain line whatever the terminal width; the message is data, never markup
    line = " ".join(str(exc).split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[:MAX_ERROR_CHARS - 3] + "..."
    log = next((n[len("log: "):] for n in getattr(exc, "__notes__", ()) if n.startswith("log: ")), None)
    typer.echo("error: " + line + (f" (details: {log})" if log else ""), err=True)
    return typer.Exit(code)


@contextmanager
def _reading(out_dir: Path, allow_damaged: bool) -> Iterator[None]:
    """A command that reads the catalog: one warning line per damaged shard, then the read goes
    on without them (``--allow-damaged``) or stops with the one-line ``DamagedData`` error."""
    from trajforge.store.catalog import CATALOG_FILE, catalog_check
    from trajforge.store.integrity import by_shard, reading_damaged

    if (out_dir / CATALOG_FILE).is_file():
        with _one_line():
            check = catalog_check(out_dir)
        for shard, files in by_shard(check.damaged):
            typer.echo(f"warning: {shard} is damaged ({files}); its rows are "
                       + ("left out" if allow_damaged else "unreadable"), err=True)
    with reading_damaged(allow_damaged):
        yield


@contextmanager
def _removed_on_failure(folder: Path) -> Iterator[None]:
    """A folder the command creates is removed again when the command fails."""
    existed = folder.exists()
    try:
        yield
    except BaseException:
        if not existed:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
        raise


AllowDamagedOption = Annotated[bool, typer.Option(
    "--allow-damaged", help="read on without shards that fail their checksums (named in a warning)")]


@contextmanager
def _one_line(train_extra: str | None = None) -> Iterator[None]:
    """A command's errors as one line and an exit code; with ``train_extra`` (the command's
    name), a missing training stack is that command's config error, with the install hint."""
    try:
        yield
    except ImportError as exc:
        if train_extra is None:
            raise
        raise _fail(ConfigError(train_extra, f"needs the train extra (pip install -e '.[train]'): {exc}")) from None
    except TrajforgeError as exc:
        raise _fail(exc) from None


def _config_values(overrides: list[str] | None, options: dict[str, Any]) -> dict[str, Any]:
    """A command's config overrides: its ``--set KEY=VALUE`` ones, then the options it was
    given (``None``: not given), keyed by their dotted config path."""
    from trajforge.config import parse_override

    values: dict[str, Any] = dict(parse_override(o) for o in overrides or [])
    values.update({k: v for k, v in options.items() if v is not None})
    return values


@app.command()
def build(
    config: Annotated[Path | None, typer.Option("--config", help="run config YAML")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="output folder (default data/)")] = None,
    n: Annotated[int | None, typer.Option("--n", help="number of blueprints")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="generation seed")] = None,
    domain: Annotated[str | None, typer.Option("--domain", help="domain name")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="batches at once (threads, processes or local cluster workers)")] = None,
    shard_size: Annotated[int | None, typer.Option("--shard-size", help="blueprints per batch (shard)")] = None,
    runner: Annotated[str | None, typer.Option(
        "--runner", help="Prefect task runner: threads, processes, dask or ray")] = None,
    address: Annotated[str | None, typer.Option(
        "--address", help="existing Dask (tcp://...) or Ray (ray://...) cluster")] = None,
    select: Annotated[int | None, typer.Option(
        "--select", help="select K diverse trajectories (diversity.select)")] = None,
    dedup_threshold: Annotated[float | None, typer.Option(
        "--dedup-threshold", help="remove near-duplicates at cosine >= T (diversity.dedup_threshold)")] = None,
    overrides: Annotated[list[str] | None, typer.Option("--set", help="KEY=VALUE config override")] = None,
    agent_model: Annotated[str | None, typer.Option(
        "--agent-model", help="litellm model string for the agent (e.g. openai/gpt-4.1-mini)")] = None,
    user_model: Annotated[str | None, typer.Option(
        "--user-model", help="litellm model string for the user simulator")] = None,
    api_base: Annotated[str | None, typer.Option(
        "--api-base", help="OpenAI-compatible server URL for the model roles")] = None,
    max_cost_usd: Annotated[float | None, typer.Option(
        "--max-cost-usd", help="no new episode starts once the run has spent this")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", help="episodes in flight")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the plan and cost estimate only")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="if another build holds --out, wait for it to end")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="show Prefect's log and tracebacks")] = False,
) -> None:
    """Generate, validate, simulate, verify and store a dataset (resumes an unfinished run);
    with --select/--dedup-threshold, then score, deduplicate and select for diversity.

    Runs as a Prefect flow: against PREFECT_API_URL when set, else the managed local server
    (started by the first build, reused by the next; orchestration.server: temporary for one
    whose state lives in OUT/.prefect)."""
    from trajforge.config import load_config
    from trajforge.reporting import build_summary

    with _one_line():
        values = _config_values(overrides, {
            "store.out": str(out_dir) if out_dir else None, "generation.n_blueprints": n,
            "generation.seed": seed, "domain.name": domain, "store.workers": workers,
            "store.shard_size": shard_size, "simulation.agent_model.model": agent_model,
            "simulation.user_model.model": user_model,
            "simulation.gateway.max_cost_usd": max_cost_usd,
            "simulation.concurrency": concurrency, "orchestration.runner": runner,
            "orchestration.address": address, "diversity.select": select,
            "diversity.dedup_threshold": dedup_threshold})
        if api_base is not None:
            for role, given in (("agent_model", agent_model), ("user_model", user_model)):
                if given is not None:
                    values[f"simulation.{role}.api_base"] = api_base
        cfg = load_config(config, values)
        if agent_model is not None and "llm" not in cfg.simulation.agents:
            cfg = cfg.model_copy(update={"simulation": cfg.simulation.model_copy(
                update={"agents": ("llm",)})})
        from trajforge.flows.runners import check_runner

        check_runner(cfg.orchestration)
    if dry_run:
        from trajforge.plan import estimate_plan, render_plan

        out.print(render_plan(cfg, estimate_plan(cfg)))
        return
    if cfg.uses_models():
        from trajforge.simulation.llm import quiet_provider_logs

        quiet_provider_logs()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from trajforge.flows.build import build as build_flow

    with _one_line():
        with Progress(TextColumn("[bold]build[/bold]"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("blueprints"), TimeElapsedColumn(), console=err,
                      disable=quiet, transient=True) as bar:
            task = bar.add_task("build", total=cfg.generation.n_blueprints)
            result = _build_one_line(lambda: build_flow(
                cfg, progress=lambda s: bar.advance(task, s.stop - s.start), quiet=True, wait=wait,
                verbose=verbose), verbose)
    from trajforge.store.integrity import reading_damaged

    _warn_damaged(result.damaged, cfg.store.out)
    with reading_damaged(True), _one_line():  # this run's rows; damage elsewhere is warned of above
        out.print(build_summary(cfg, result))
    if cfg.orchestration.warm_process:
        from trajforge.flows.warm import ensure_warm

        ensure_warm(cfg.orchestration.server_idle_s)  # in the background, for the next build


def _build_one_line(run: Any, verbose: bool) -> Any:
    """Any failure of the build flow as one line (its root cause, naming the log; the
    traceback too with --verbose)."""
    from trajforge.flows.logs import one_line_failure

    try:
        return run()
    except TrajforgeError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure, rendered as one line
        if verbose:
            import traceback

            traceback.print_exception(exc)
        raise one_line_failure(exc) from None


def _warn_damaged(damaged: Any, out_dir: Path) -> None:
    """One warning line per damaged shard a build's catalog refresh left out."""
    from trajforge.store.integrity import by_shard

    for shard, files in by_shard(damaged):
        typer.echo(f"warning: {shard} is damaged ({files}) and left out of the catalog; repair with "
                   f"`trajforge check --out {out_dir} --repair`", err=True)


@app.command("serve-policy")
def serve_policy(
    config: Annotated[Path | None, typer.Option("--config", help="the run config whose blueprints to serve")] = None,
    n: Annotated[int | None, typer.Option("--n", help="number of blueprints")] = None,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="0 picks a free port")] = 8000,
    latency_ms: Annotated[float, typer.Option("--latency-ms", help="added to every answer")] = 0.0,
    latency_jitter_ms: Annotated[float, typer.Option(
        "--latency-jitter-ms", help="each answer's added latency drawn from --latency-ms +- this")] = 0.0,
    rate_429: Annotated[float, typer.Option("--rate-429", help="share of requests answered 429")] = 0.0,
    rate_500: Annotated[float, typer.Option("--rate-500")] = 0.0,
    rate_timeout: Annotated[float, typer.Option("--rate-timeout", help="answered 504 after --timeout-delay-s")] = 0.0,
    rate_hang: Annotated[float, typer.Option("--rate-hang", help="never answered")] = 0.0,
    rate_malformed: Annotated[float, typer.Option("--rate-malformed", help="agent tool calls with broken JSON")] = 0.0,
    timeout_delay_s: Annotated[float, typer.Option("--timeout-delay-s")] = 5.0,
    rate_empty: Annotated[float, typer.Option("--rate-empty", help="answers with no content and no tool calls")] = 0.0,
    rate_user_as_agent: Annotated[float, typer.Option(
        "--rate-user-as-agent", help="user simulator answers spoken in the agent's voice")] = 0.0,
    rate_stall: Annotated[float, typer.Option("--rate-stall", help="answered after exactly --stall-s")] = 0.0,
    stall_s: Annotated[float, typer.Option("--stall-s")] = 2.0,
    rate_injection: Annotated[float, typer.Option(
        "--rate-injection", help="agent requests: instructions planted in their tool outputs")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", help="seed of the injected faults")] = 0,
    wording: Annotated[str, typer.Option(
        "--wording", help="phrasing of confirmations, consents, offers of help and closings: scripted "
                          "(the policies' own) or evaluation (the dialogue-act evaluation bank)")] = "scripted",
) -> None:
    """Serve the scripted oracle, faulty agent, user, proposer and judge as an OpenAI-compatible
    endpoint (models: oracle, faulty, user, proposer, judge)."""
    import asyncio

    from trajforge.config import load_config
    from trajforge.serving import build_server
    from trajforge.simulation.serve import ServerFaults, serve

    with _one_line():
        for name, rate in (("--rate-429", rate_429), ("--rate-500", rate_500),
                           ("--rate-timeout", rate_timeout), ("--rate-hang", rate_hang),
                           ("--rate-malformed", rate_malformed)):
            if not 0 <= rate <= 1:
                raise ConfigError(name, f"must be between 0 and 1, got {rate}")
        if rate_429 + rate_500 + rate_timeout + rate_hang > 1:
            raise ConfigError("--rate-*", "the request failure rates add up to more than 1")
        for name, ms in (("--latency-ms", latency_ms), ("--latency-jitter-ms", latency_jitter_ms)):
            if ms < 0:
                raise ConfigError(name, f"must not be negative, got {ms:g}")
        from trajforge.serving import BehaviourFaults

        behaviour = BehaviourFaults(rate_empty=rate_empty, rate_user_as_agent=rate_user_as_agent,
                                    rate_stall=rate_stall, stall_s=stall_s, rate_injection=rate_injection)
        for name, rate in behaviour.rates().items():
            if not 0 <= rate <= 1:
                raise ConfigError(name, f"must be between 0 and 1, got {rate}")
        cfg = load_config(config, {"generation.n_blueprints": n} if n is not None else None)
        faults = ServerFaults(rate_429=rate_429, rate_500=rate_500, rate_timeout=rate_timeout,
                              rate_hang=rate_hang, rate_malformed=rate_malformed,
                              latency_s=latency_ms / 1000.0, latency_jitter_s=latency_jitter_ms / 1000.0,
                              timeout_delay_s=timeout_delay_s)
        from trajforge.simulation.wording import WORDINGS
        from trajforge.simulation.wording import wording as named_wording

        if wording not in WORDINGS:
            raise ConfigError("--wording", f"unknown wording {wording!r}; choose one of {', '.join(WORDINGS)}")
        server = build_server(cfg, faults, seed, named_wording(wording), behaviour)

    def ready(bound: int) -> None:
        typer.echo(f"serving http://{host}:{bound}/v1 ({len(server.blueprints)} blueprints; "
                   f"models: oracle, faulty, user, {', '.join(server.extra_roles)})")
        sys.stdout.flush()

    try:
        asyncio.run(serve(server, host, port, ready))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        raise _fail(ConfigError("--port", f"cannot listen on {host}:{port}: {exc.strerror or exc}")) from None


@app.command()
def deploy(
    cron: Annotated[str, typer.Option("--cron", help='schedule, e.g. "0 3 * * *" (03:00 daily)')],
    config: Annotated[Path | None, typer.Option("--config", help="run config YAML")] = None,
    name: Annotated[str | None, typer.Option("--name", help="deployment name (default: the config's name)")] = None,
    pool: Annotated[str, typer.Option("--pool", help="process work pool (created if missing)")] = "trajforge",
    grow: Annotated[int, typer.Option("--grow", help="each run adds this many blueprints to the run")] = 0,
    serve: Annotated[bool, typer.Option("--serve", help="serve it from this process instead of a work pool")] = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="output folder (default data/)")] = None,
    overrides: Annotated[list[str] | None, typer.Option("--set", help="KEY=VALUE config override")] = None,
    train_config: Annotated[Path | None, typer.Option(
        "--train-config", help="also train on the export and evaluate the model after each build "
                               "(a train config, e.g. configs/sft-tiny.yaml)")] = None,
) -> None:
    """Register a scheduled build with a Prefect server (PREFECT_API_URL). A worker runs it:
    `prefect worker start --pool POOL`; or pass --serve to run it from this process. With
    --train-config each run is build -> export -> train sft -> eval (trajforge-build-train-eval)."""
    from trajforge.config import load_config

    with _one_line():
        values = _config_values(overrides, {"store.out": str(out_dir) if out_dir else None})
        cfg = load_config(config, values)
        if grow < 0:
            raise ConfigError("--grow", f"{grow} is negative")
        from trajforge.flows.deploy import check_schedule, deployment_name, register, serve_deployment

        check_schedule(cron)
        train = None
        if train_config is not None:
            from trajforge.sft.train import load_train_config

            if not train_config.is_file():
                raise ConfigError("--train-config", f"{train_config} does not exist")
            train = load_train_config(train_config).model_dump(mode="json")
        dep_name = name or cfg.name
        if serve:
            serve_deployment(cfg, cron, dep_name, grow, train)
            return
        deployment_id = register(cfg, cron, dep_name, pool, grow, train)
    full_name = deployment_name(dep_name, train is not None)
    out.print(f"Registered deployment {full_name} ({deployment_id}), "
              f"schedule '{cron}', work pool '{pool}'.\n"
              f"Run its builds with a worker: prefect worker start --pool {pool}\n"
              f"Run one now: prefect deployment run '{full_name}'")


domains_app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                          help="The installed domains; `domains check NAME` plays one.")
app.add_typer(domains_app, name="domains")


@domains_app.callback()
def domains(ctx: typer.Context) -> None:
    """List the installed domains with their tools and policy rules; each broken one is one
    line on stderr, ``NAME: broken: PROBLEM (SOURCE)``. Exits 0 when at least one domain loads,
    2 when none does (or two packages register one name)."""
    from trajforge.environments.base import ToolKind, toolkit_tools
    from trajforge.environments.registry import domain_names, load_domain_class
    from trajforge.environments.validate import BrokenDomain

    if ctx.invoked_subcommand is not None:
        return
    with _one_line():
        names = domain_names()
    table = Table("domain", "tools (read/write/user)", "policy rules", "source")
    broken: list[str] = []
    for name in names:
        try:
            cls = load_domain_class(name)
        except BrokenDomain as exc:
            broken.append(" ".join(f"{name}: broken: {exc.problem} ({exc.source})".split()))
            continue
        tools = toolkit_tools(cls.toolkit_type).values()  # type: ignore[arg-type]  # mypy: a class is Hashable
        kinds = [sum(t.kind is kind for t in tools) for kind in (ToolKind.read, ToolKind.write, ToolKind.user)]
        table.add_row(name, f"{len(tools)} ({'/'.join(map(str, kinds))})", str(len(cls.policy_rules)),
                      f"{cls.__module__}")
    if table.row_count:
        out.print(table)
    for line in broken:
        typer.echo(line, err=True)
    if not table.row_count:
        raise typer.Exit(2)


@domains_app.command("check")
def domains_check(
    name: Annotated[str, typer.Argument(help="a registered domain")],
    blueprints: Annotated[int, typer.Option("--blueprints", "-n", min=1, help="blueprints to play")] = 1000,
    size: Annotated[int, typer.Option(min=10, help="the domain's size")] = 300,
    seed: Annotated[int, typer.Option(help="the domain's seed")] = 0,
    min_drawn: Annotated[int, typer.Option(min=1, help="fewer draws of a fault kind: under-drawn")] = 30,
    json_out: Annotated[Path | None, typer.Option("--json", help="also write the tallies here")] = None,
) -> None:
    """Play an oracle and a fault-injected episode of NAME per blueprint and print, per check,
    the oracle episodes it failed and, per fault kind, how often it was drawn and caught, and
    what the domain does not declare that a check needs. Exits 1 when an oracle episode fails,
    a fault is missed or a kind is under-drawn."""
    from trajforge.environments.registry import load_domain
    from trajforge.evaluation.domain_check import check_domain
    from trajforge.simulation.faults import FAULT_CHECKS

    with _one_line():
        domain = load_domain(name, size, seed)
        report = check_domain(domain, blueprints, min_drawn=min_drawn)
    rate = report.oracle_pass_rate
    out.print(f"{name}: {report.blueprints} blueprints ({sum(report.rejections.values())} rejected), "
              f"{report.oracle_episodes} oracle episodes, pass rate "
              f"{'-' if rate is None else f'{rate:.1%}'}")
    checks = Table("check", "oracle episodes failed")
    for check in report.checks:
        checks.add_row(check, str(report.oracle_failures[check]))
    out.print(checks)
    faults = Table("fault kind", "named check", "drawn", "caught", "recall")
    for kind, named in FAULT_CHECKS.items():
        n, caught = report.drawn[kind.value], report.caught[kind.value]
        low = " (under-drawn)" if n < min_drawn else ""
        faults.add_row(kind.value, named, f"{n}{low}", str(caught), f"{caught / n:.1%}" if n else "-")
    out.print(faults)
    for line in report.undeclared:
        out.print(f"undeclared: {line}")
    for example in report.examples:
        out.print(f"example: {json.dumps(example)[:400]}")
    if json_out is not None:
        json_out.write_text(json.dumps(report.as_dict(), indent=1) + "\n")
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def show(trajectory_id: str, out_dir: OutOption = Path("data"), allow_damaged: AllowDamagedOption = False) -> None:
    """Print one trajectory as a readable transcript, with its verdicts."""
    from trajforge.reporting import render_trajectory

    with _reading(out_dir, allow_damaged), _one_line():
        out.print(render_trajectory(out_dir, trajectory_id))


@app.command()
def query(
    sql: str,
    out_dir: OutOption = Path("data"),
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json")] = "table",
    allow_damaged: AllowDamagedOption = False,
) -> None:
    """Run one SQL statement over the catalog (views: blueprints, trajectories, verdicts,
    outcomes, rejections, runs, embeddings, scores, selection)."""
    from trajforge.store import query as run_query

    if fmt not in ("table", "csv", "json"):
        raise _fail(ConfigError("--format", f"'{fmt}' is not one of table, csv, json"))
    with _reading(out_dir, allow_damaged), _one_line():
        columns, rows = run_query(out_dir, sql)
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str, indent=1))
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
def stats(out_dir: OutOption = Path("data"), allow_damaged: AllowDamagedOption = False) -> None:
    """Summarise the dataset in a folder: recent runs, yield, pass rate per check, rejections,
    and the Vendi score per domain and stratum with the effect of selection (when one was run).
    Checks the committed files against their checksums first."""
    from trajforge.reporting import dataset_stats

    with _reading(out_dir, allow_damaged), _one_line():
        out.print(dataset_stats(out_dir))


@app.command("check")
def check_command(
    out_dir: OutOption = Path("data"),
    repair: Annotated[bool, typer.Option(
        "--repair", help="recompute damaged shards from their run's config, remove orphans and "
                         "temporaries, rebuild the catalog")] = False,
) -> None:
    """Verify every committed file against its manifest checksum; list damaged files, orphans
    (shard files no manifest commits) and leftover temporaries, and how to repair them. Exits 1
    when something is damaged (0 after a successful --repair)."""
    from trajforge.store.integrity import check_dataset

    with _one_line():
        if not out_dir.is_dir():
            raise StoreError(f"{out_dir} is not a folder")
        if repair:
            from trajforge.store.repair import repair as run_repair

            with _one_line():
                fixed = _build_one_line(lambda: run_repair(out_dir), False)
            for run_id, start, stop in fixed.recomputed:
                typer.echo(f"recomputed: run {run_id} shard {start}-{stop}")
            for rel in fixed.removed:
                typer.echo(f"removed: {rel}")
            found = fixed.after or check_dataset(out_dir)
        else:
            found = check_dataset(out_dir)
    for damage in found.damaged:
        typer.echo(f"damaged: {damage.describe()}")
    for rel in found.orphans:
        typer.echo(f"orphan: {rel} (no manifest line commits it; not in the catalog)")
    for rel in found.temporaries:
        typer.echo(f"temporary: {rel}")
    shards = len({d.shard for d in found.damaged})
    typer.echo(f"{found.files_checked} committed files checked: {len(found.damaged)} damaged in {shards} "
               f"shard(s), {len(found.orphans)} orphan(s), {len(found.temporaries)} temporary file(s)")
    if found.damaged or found.orphans or found.temporaries:
        typer.echo(f"repair: trajforge check --out {out_dir} --repair")
    if found.damaged:
        raise typer.Exit(1)


catalog_app = typer.Typer(no_args_is_help=True, help="The DuckDB catalog of a dataset folder.")
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("rebuild")
def catalog_rebuild(out_dir: OutOption = Path("data")) -> None:
    """Recreate OUT/catalog.duckdb from the runs' manifests alone (damaged files left out and
    named), under the folder's build lock."""
    from trajforge.store.catalog import refresh_catalog_checked
    from trajforge.store.lock import build_lock

    with _one_line():
        if not out_dir.is_dir():
            raise StoreError(f"{out_dir} is not a folder")
        with build_lock(out_dir):
            refreshed = refresh_catalog_checked(out_dir, fresh=True)
    _warn_damaged(refreshed.check.damaged, out_dir)
    typer.echo(f"catalog: {refreshed.path} ({sum(map(len, refreshed.check.intact.values()))} shard files, "
               f"{len(refreshed.check.damaged)} damaged left out)")


server_app = typer.Typer(no_args_is_help=True, help="The managed local Prefect server builds share "
                         "(started by the first build, stopped after orchestration.server_idle_s without one).")
app.add_typer(server_app, name="server")
ServerConfigOption = Annotated[Path | None, typer.Option("--config", help="run config YAML (its "
                                                         "orchestration.server_home)")]


def _server_home(config: Path | None) -> Path:
    from trajforge.config import load_config
    from trajforge.flows.server import server_home

    return server_home(load_config(config).orchestration.server_home)


@server_app.command("status")
def server_status_command(config: ServerConfigOption = None) -> None:
    """Whether the managed server is up: its API address, pid and age."""
    import time

    from trajforge.flows.server import server_status

    with _one_line():
        home = _server_home(config)
        info = server_status(home)
    from trajforge.flows.warm import warm_status

    warm = warm_status()
    if warm is not None:
        typer.echo(f"warm build process: pid {warm['pid']}, up {time.time() - warm['started_at']:.0f} s")
    if info is None:
        typer.echo(f"no managed Prefect server is running ({home})")
        return
    typer.echo(f"managed Prefect server at {info.api_url} (pid {info.pid}, Prefect {info.prefect}, up "
               f"{time.time() - info.started_at:.0f} s; {home})")


@server_app.command("stop")
def server_stop_command(config: ServerConfigOption = None) -> None:
    """Stop the managed server and the warm build process now (the next build starts new ones)."""
    from trajforge.flows.server import stop_server
    from trajforge.flows.warm import stop_warm

    with _one_line():
        home = _server_home(config)
        warm = stop_warm()
        info = stop_server(home)
    if warm is not None:
        typer.echo(f"stopped the warm build process (pid {warm['pid']})")
    typer.echo(f"stopped the managed Prefect server (pid {info.pid})" if info is not None
               else f"no managed Prefect server was running ({home})")


def _viewer_missing(command: str, exc: ImportError) -> typer.Exit:
    return _fail(ConfigError(command, f"needs the view extra (pip install -e '.[view]'): {exc}"))


@app.command()
def view(
    out_dir: OutOption = Path("data"),
    port: Annotated[int, typer.Option("--port", help="loopback port (0 picks a free one)")] = 8765,
    allow_damaged: AllowDamagedOption = False,
) -> None:
    """Browse the dataset in a web browser: overview plots, filtered trajectory list with
    search, transcripts with evidence and passing twins, blueprints, evaluations. Read-only,
    served on 127.0.0.1 until interrupted."""
    try:
        from trajforge.viewer.server import serve
    except ImportError as exc:
        raise _viewer_missing("view", exc) from None

    def ready(url: str) -> None:
        typer.echo(f"serving {url} (read-only view of {out_dir}; Ctrl-C stops)")
        sys.stdout.flush()

    with _reading(out_dir, allow_damaged), _one_line():
        try:
            serve(out_dir, port, ready, allow_damaged)
        except KeyboardInterrupt:
            pass


@app.command()
def report(
    out_dir: OutOption = Path("data"),
    to: Annotated[Path | None, typer.Option(
        "--to", help="folder for the static site, default OUT/report (an earlier report there is replaced)")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="trajectories with a page of their own")] = 1000,
    allow_damaged: AllowDamagedOption = False,
) -> None:
    """Write the viewer's pages as a static, self-contained site (open index.html, or publish it)."""
    try:
        from trajforge.viewer.site import write_site
    except ImportError as exc:
        raise _viewer_missing("report", exc) from None

    with _reading(out_dir, allow_damaged), _one_line():
        summary = write_site(out_dir, to or out_dir / "report", limit, allow_damaged)
    out.print(f"report: {summary.folder / 'index.html'} ({summary.pages} pages, "
              f"{summary.trajectories} of {summary.of_total} trajectories)")


FormatOption = Annotated[list[str] | None, typer.Option(
    "--format", help="sft, preferences, sharegpt, openai, rl_tasks or all (repeat or comma-separate)")]
SplitsOption = Annotated[str | None, typer.Option(
    "--splits", help="train,validation,test ratios by blueprint family (default 0.8,0.1,0.1)")]
SaltOption = Annotated[str, typer.Option("--split-salt", help="salt for a different family split")]
RunOption = Annotated[list[str] | None, typer.Option("--run", help="export only this run id (repeatable)")]
LicenseOption = Annotated[str, typer.Option("--license", help="license id for the dataset card")]


@app.command()
def export(
    out_dir: OutOption = Path("data"),
    to: Annotated[Path | None, typer.Option("--to", help="export folder (default OUT/export)")] = None,
    formats: FormatOption = None,
    splits: SplitsOption = None,
    salt: SaltOption = "",
    runs: RunOption = None,
    license_id: LicenseOption = "apache-2.0",
    shard_rows: Annotated[int, typer.Option("--shard-rows", min=1, help="rows per Parquet shard")] = 2000,
    allow_damaged: AllowDamagedOption = False,
) -> None:
    """Write training-ready exports (Parquet with datasets Features, per split) and a dataset card."""
    from trajforge.store.card import write_card
    from trajforge.store.export_writer import write_export
    from trajforge.store.features import export_formats
    from trajforge.store.splits import split_config

    to = to or out_dir / "export"
    with _reading(out_dir, allow_damaged), _one_line(), _removed_on_failure(to):
        summary = write_export(out_dir, to, export_formats(formats, "--format"),
                               split_config(splits, salt, "--splits"), runs, shard_rows=shard_rows)
        write_card(out_dir, to, summary, license_id=license_id)
    table = Table("format", "train", "validation", "test", title=f"export: {to}")
    for fmt, counts in summary.rows.items():
        table.add_row(fmt, *(str(counts.get(s, 0)) for s in ("train", "validation", "test")))
    out.print(table)
    if summary.contamination:
        out.print(f"{len(summary.contamination)} test blueprint(s) near-duplicate a train goal "
                  "(listed in the card)")


@app.command("verify")
def verify_command(
    out_dir: OutOption = Path("data"),
    input_file: Annotated[Path | None, typer.Option(
        "--input", help="JSONL or Parquet of openai-format conversations with a blueprint_id each "
                        "(default: re-verify the stored trajectories)")] = None,
    runs: Annotated[list[str] | None, typer.Option(
        "--run", help="only this run id: its trajectories, or its blueprints for --input (repeatable)")] = None,
    checks: Annotated[list[str] | None, typer.Option(
        "--checks", help="checks to run (repeat or comma-separate; default: the run's configured ones)")] = None,
    allow_damaged: AllowDamagedOption = False,
) -> None:
    """Re-run the checks: over the stored trajectories (a new verdict set per run, in the
    catalog's `verifications` view, tagged with its verifier version), or with --input over
    conversations produced elsewhere, replayed against the dataset's blueprints (verdicts
    written beside the input as <stem>.verdicts.jsonl). Prints pass rates per check and how many
    verdicts differ from the stored ones; malformed input rows are listed and counted."""
    from trajforge.store.reverify import check_names, reverify, verify_file

    with _reading(out_dir, allow_damaged), _one_line():
        names = check_names(checks)
        if input_file is None:
            report = reverify(out_dir, runs, names)
        else:
            report = verify_file(out_dir, input_file, runs, names)
    table = Table("check", "pass rate", "failed", "changed", title="verify: " + ", ".join(
        f"{run} {version}" for run, version in report.versions.items()))
    for name, tally in sorted(report.checks.items()):
        table.add_row(name, f"{tally.passed / tally.verdicts:.1%}", str(tally.verdicts - tally.passed),
                      f"{tally.changed}/{tally.compared}" if tally.compared else "-")
    if report.trajectories:
        table.add_row("overall", f"{report.passed / report.trajectories:.1%}",
                      str(report.trajectories - report.passed), "")
        out.print(table)
    for number, reason in report.malformed:
        typer.echo(f"row {number}: {reason}")
    if input_file is not None:
        typer.echo(f"{report.rows} row(s): {report.trajectories} verified, {len(report.malformed)} malformed"
                   + (f", {report.termination_assumed} without a termination (taken as user_stop)"
                      if report.termination_assumed else ""))
        if not report.trajectories:
            raise _fail(StoreError(f"--input {input_file}: no usable row"))
    typer.echo(f"{report.changed} of {report.compared} verdicts differ from the stored ones")
    for path in report.written:
        typer.echo(f"verdicts: {path}")


@app.command()
def publish(
    repo_id: Annotated[str, typer.Option("--repo-id", help="Hub dataset repo, ORG/NAME")],
    out_dir: OutOption = Path("data"),
    to: Annotated[Path | None, typer.Option(
        "--to", help="staging folder (default OUT/publish/ORG__NAME)")] = None,
    private: Annotated[bool, typer.Option("--private", help="create the repo private")] = False,
    revision: Annotated[str | None, typer.Option("--revision", help="branch to commit to")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="only write the folder that would be uploaded")] = False,
    formats: FormatOption = None,
    splits: SplitsOption = None,
    salt: SaltOption = "",
    runs: RunOption = None,
    license_id: LicenseOption = "apache-2.0",
    allow_damaged: AllowDamagedOption = False,
) -> None:
    """Stage the exports and card, then upload them to the Hugging Face Hub (token from HF_TOKEN
    or `hf auth login`)."""
    from trajforge.store.features import export_formats
    from trajforge.store.publish import check_repo_id, default_staging, folder_files, stage
    from trajforge.store.publish import publish as upload
    from trajforge.store.splits import split_config

    with _reading(out_dir, allow_damaged), _one_line():
        check_repo_id(repo_id)
        folder = to or default_staging(out_dir, repo_id)
        stage(out_dir, folder, repo_id=repo_id, formats=export_formats(formats, "--format"),
              split_config=split_config(splits, salt, "--splits"), run_ids=runs, license_id=license_id)
        files = folder_files(folder)
        if dry_run:
            out.print(f"Dry run: {len(files)} files staged in {folder} (nothing uploaded)")
            return
        urls = upload(folder, repo_id, private=private, revision=revision)
    out.print(f"Published {len(files)} files to https://huggingface.co/datasets/{repo_id} "
              f"in {len(urls)} commit(s)")


# --- training and evaluation (trajforge/sft) ----------------------------------------------------

train_app = typer.Typer(no_args_is_help=True,
                        help="Train a model: SFT on an export, or RL on environment rewards (TRL).")
app.add_typer(train_app, name="train")


@train_app.command("sft")
def train_sft_command(
    config: Annotated[Path | None, typer.Option(
        "--config", help="train config YAML (see configs/sft-tiny.yaml)")] = None,
    model: Annotated[str | None, typer.Option("--model", help="tiny, minilm, a local model folder or a Hub id")] = None,
    data: Annotated[str | None, typer.Option("--data", help="export folder, dataset folder or Hub dataset id")] = None,
    output_dir: Annotated[Path | None, typer.Option(
        "--output-dir", help="checkpoints, final model, loss curves")] = None,
    overrides: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE override, e.g. sft.max_steps=100 (sft.* are trl.SFTConfig fields)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue from the last checkpoint in --output-dir")] = False,
) -> None:
    """Fine-tune a causal LM on the sft export with TRL's SFTTrainer (assistant-only loss)."""

    with _one_line(train_extra="train"):
        from trajforge.sft.train import load_train_config, train_sft

        values = _config_values(overrides, {"model": model, "data": data,
                                            "output_dir": str(output_dir) if output_dir else None})
        cfg = load_train_config(config, values)
        summary = train_sft(cfg, resume=resume)
    table = Table("", "", title=f"train sft: {summary['output_dir']}")
    for key in ("parameters", "train_rows", "validation_rows", "global_step", "train_loss",
                "final_eval_loss", "seconds", "tokens_per_second", "loss_curve_png"):
        value = summary[key]
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    chosen = summary.get("precision")
    table.add_row("precision", ("bf16" if summary["bf16"] else "fp32") + (
        f" (sft.bf16 auto: tokens/s {chosen['tokens_per_second']})" if chosen else ""))
    out.print(table)


@train_app.command("rl")
def train_rl_command(
    config: Annotated[Path | None, typer.Option("--config", help="RL config YAML (see configs/rl-tiny.yaml)")] = None,
    model: Annotated[str | None, typer.Option("--model", help="the policy to train: a local model folder")] = None,
    tasks: Annotated[str | None, typer.Option("--tasks", help="dataset folder whose blueprints are the tasks")] = None,
    output_dir: Annotated[Path | None, typer.Option("--output-dir", help="the trained policy and its curves")] = None,
    overrides: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE override, e.g. grpo.max_steps=20 (grpo.* are trl.GRPOConfig fields)")] = None,
) -> None:
    """GRPO on environment rewards: the policy plays whole episodes against the scripted user,
    the verifiers score them, and TRL's GRPOTrainer trains the policy's own tokens."""

    with _one_line(train_extra="train"):
        from trajforge.rl.train import load_rl_config, train_rl

        values = _config_values(overrides, {"model": model, "tasks": tasks,
                                            "output_dir": str(output_dir) if output_dir else None})
        summary = train_rl(load_rl_config(config, values))
    table = Table("", "", title=f"train rl: {summary['output_dir']}")
    for key in ("tasks", "global_step", "episodes", "mean_reward", "pass_rate", "seconds"):
        table.add_row(key, str(summary[key]))
    out.print(table)


@app.command("loop")
def loop_command(
    config: Annotated[Path | None, typer.Option(
        "--config", help="loop config YAML (see configs/loop-tiny.yaml)")] = None,
    model: Annotated[str | None, typer.Option("--model", help="the starting policy: a local model folder")] = None,
    tasks: Annotated[str | None, typer.Option(
        "--tasks", help="dataset folder: seed tasks, held-out tasks, records")] = None,
    output_dir: Annotated[Path | None, typer.Option("--output-dir", help="the final policy and loop.png")] = None,
    iterations: Annotated[int | None, typer.Option("--iterations", min=1)] = None,
    overrides: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE override, e.g. pool.capacity=32")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no per-iteration lines")] = False,
) -> None:
    """The online boundary-sample resynthesis loop: rollout, reward, detect boundary tasks,
    resynthesize variants of them, train; per-iteration rows in the catalog's loop_iterations."""

    with _one_line(train_extra="loop"):
        from trajforge.loop.run import load_loop_config, run_loop

        values = _config_values(overrides, {"model": model, "tasks": tasks, "iterations": iterations,
                                            "output_dir": str(output_dir) if output_dir else None})
        result = run_loop(load_loop_config(config, values), progress=None if quiet else err.print)
    table = Table("iteration", "pool", "seed/resynth", "boundary", "retired (sat/hopeless)", "variants acc/prop",
                  "trajectories", "mean reward", "held-out pass@1", title=f"loop {result.run_id}")
    table.add_row("0", "", "", "", "", "", "0", "", f"{result.initial_pass_at_1:.3f}")
    for r in result.iterations:
        table.add_row(str(r.iteration), str(r.pool_size), f"{r.pool_seed}/{r.pool_resynthesized}",
                      str(r.boundary_count), f"{r.saturated_retired}/{r.hopeless_retired}",
                      f"{r.variants_accepted}/{r.variants_proposed}", str(r.trajectories_total),
                      "" if r.mean_reward is None else f"{r.mean_reward:.3f}",
                      "" if r.heldout_pass_at_1 is None else f"{r.heldout_pass_at_1:.3f}")
    out.print(table)
    out.print(f"plot: {result.plot}; rows: trajforge query --out {values.get('tasks') or 'data'} "
              f"\"SELECT * FROM loop_iterations WHERE run_id = '{result.run_id}'\"")


def _eval_defaults() -> dict[str, Any]:
    from trajforge.evaluation.config import EvalConfig, default_of

    return {name: default_of(EvalConfig, name) for name in EvalConfig.model_fields}


_EVAL = _eval_defaults()  # `trajforge eval`'s defaults are EvalConfig's


@app.command("eval")
def eval_command(
    policy: Annotated[str, typer.Option("--policy", help="hf:PATH, vllm:PATH or litellm:MODEL")],
    out_dir: Annotated[Path, typer.Option(
        "--out", help="dataset folder: held-out blueprints, and where results go")] = _EVAL["out"],
    split: Annotated[str, typer.Option(
        "--split", help="the split of --out's blueprints to play")] = _EVAL["split"],
    salt: SaltOption = _EVAL["salt"],
    fresh: Annotated[int | None, typer.Option("--fresh", help="play N freshly generated blueprints instead")] = None,
    fresh_seed: Annotated[int, typer.Option(
        "--fresh-seed", help="generation seed of --fresh")] = _EVAL["fresh_seed"],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="at most this many blueprints")] = None,
    trials: Annotated[int, typer.Option(
        "--trials", min=1, help="episodes per blueprint (pass^k up to k)")] = _EVAL["trials"],
    max_turns: Annotated[int, typer.Option(
        "--max-turns", min=2, help="user turns per episode")] = _EVAL["max_turns"],
    max_steps: Annotated[int, typer.Option("--max-steps-per-turn", min=1,
                                           help="agent messages per user turn")] = _EVAL["max_steps_per_turn"],
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1)] = _EVAL["max_new_tokens"],
    temperature: Annotated[float, typer.Option(
        "--temperature", min=0.0, help="0: greedy")] = _EVAL["temperature"],
    batch_size: Annotated[int, typer.Option(
        "--batch-size", min=1, help="episodes generated together")] = _EVAL["batch_size"],
    api_base: Annotated[str | None, typer.Option("--api-base", help="for litellm: an OpenAI-compatible server")] = None,
    user_model: Annotated[str | None, typer.Option(
        "--user-model", help="an LLM plays the user (litellm model name); default: the scripted user")] = None,
    user_api_base: Annotated[str | None, typer.Option("--user-api-base", help="the user model's server")] = None,
    seed: Annotated[int, typer.Option("--seed")] = _EVAL["seed"],
    threads: Annotated[int | None, typer.Option(
        "--threads", min=1, help="CPU threads for a local model (1 is faster on a shared CPU)")] = None,
    bf16: Annotated[bool, typer.Option(
        "--bf16", help="a local model computes under bfloat16 autocast (faster on CPUs with bf16)")] = _EVAL["bf16"],
    prefix_cache: Annotated[bool, typer.Option(
        "--prefix-cache/--no-prefix-cache",
        help="a local model reuses the keys and values of each episode's earlier turns")] = _EVAL["prefix_cache"],
    json_out: Annotated[Path | None, typer.Option("--json", help="also write the summary as JSON here")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
) -> None:
    """Play a policy as the agent on held-out blueprints against the scripted user (or an LLM
    user, --user-model), verify every episode, and report pass@1, pass^k, tool-call format validity
    and failures by check."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with _one_line(train_extra="eval"):
        from trajforge.config import validate_config
        from trajforge.evaluation.config import EvalConfig
        from trajforge.evaluation.run import prepare_evaluation, render_table, save_evaluation, summary_json

        prepared = prepare_evaluation(validate_config(EvalConfig, {
            "policy": policy, "out": out_dir, "split": split, "salt": salt, "fresh": fresh,
            "fresh_seed": fresh_seed, "limit": limit, "trials": trials, "max_turns": max_turns,
            "max_steps_per_turn": max_steps, "max_new_tokens": max_new_tokens, "temperature": temperature,
            "batch_size": batch_size, "api_base": api_base, "seed": seed, "user_model": user_model,
            "user_api_base": user_api_base, "threads": threads, "bf16": bf16,
            "prefix_cache": prefix_cache}))
        with Progress(TextColumn("[bold]eval[/bold]"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("episodes"), TimeElapsedColumn(), console=err, disable=quiet,
                      transient=True) as bar:
            task = bar.add_task("eval", total=len(prepared.blueprints) * trials)
            result = prepared.run(progress=lambda: bar.advance(task))
        save_evaluation(out_dir, result)
    out.print(render_table(result))
    out.print(f"{len(result.rows)} episodes in {result.path}; query them with "
              f"trajforge query --out {out_dir} \"SELECT * FROM evaluations WHERE eval_id = '{result.eval_id}'\"")
    if json_out is not None:
        json_out.write_text(json.dumps(summary_json(result), indent=1))


def main(use_warm: bool = True) -> None:
    """The console script: usage errors (a bad option value, an unknown command) as one line
    too, rather than a usage box. ``trajforge build`` runs in a child of the warm process when
    one serves this environment (flows/warm.py), unless ``use_warm`` is false."""
    from trajforge.flows.warm import command_environment, run_warm
    from trajforge.interrupts import keep_interrupts

    keep_interrupts()  # a Ctrl-C Python drops (raised in a finalizer) is raised again
    # nothing a build does may leave the machine: Prefect's analytics off (a user's own value wins)
    os.environ.update(command_environment(os.environ))
    if sys.argv[1:2] == ["build"] and use_warm:  # a warm process's child runs it itself
        warm = run_warm(sys.argv)
        if warm is not None:
            sys.exit(warm)
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as exc:  # typer's usage errors (its own click's ClickException)
        if type(exc).__name__ == "NoArgsIsHelpError":  # no arguments: the help, as always
            show = getattr(exc, "show", None)
            if show is not None:
                show()
            sys.exit(0)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        typer.echo(f"error: {' '.join(exc.format_message().split())}{hint}", err=True)
        sys.exit(2 if exc.exit_code == 1 else exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
