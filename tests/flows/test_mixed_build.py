"""A mixed-domain build: one run over several built-in domains (``domain.names``), through the
real CLI and Prefect flow, with per-domain stats, card section, splits and exports."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.schemas.config import DomainConfig
from trajforge.store.catalog import query

runner = CliRunner()
NAMES = ("retail", "airline", "banking")


def test_domain_at_is_a_pure_function_of_the_index_with_the_weights() -> None:
    mix = DomainConfig(names=("retail", "airline"), weights=(3, 1))
    drawn = [mix.domain_at(i) for i in range(2000)]
    assert drawn == [mix.domain_at(i) for i in range(2000)]
    share = Counter(drawn)["retail"] / len(drawn)
    assert 0.72 < share < 0.78
    assert DomainConfig().all_names == ("retail",) and DomainConfig().domain_at(7) == "retail"


def test_mixed_build_keeps_each_blueprint_in_its_domain(tmp_path: Path) -> None:
    out = tmp_path / "mixed"
    result = runner.invoke(app, ["build", "--out", str(out), "--n", "36", "--quiet",
                                 "--set", f"domain.names=[{', '.join(NAMES)}]"])
    assert result.exit_code == 0, f"{result.stderr}\n{result.exception!r}"
    mix = DomainConfig(names=NAMES)
    rows = query(out, "SELECT gen_index, domain FROM blueprints ORDER BY 1")[1]
    assert rows and all(domain == mix.domain_at(i) for i, domain in rows)
    assert {d for _, d in rows} == set(NAMES)
    # every domain's oracle passes, every faulty episode fails, each in its own domain
    per = query(out, "SELECT t.domain, t.fault_kind IS NULL, bool_and(o.passed), bool_or(o.passed) "
                     "FROM trajectories t JOIN outcomes o ON o.trajectory_id = t.id GROUP BY 1, 2")[1]
    for domain, oracle, all_passed, any_passed in per:
        assert (all_passed if oracle else not any_passed), (domain, oracle)
    stats = runner.invoke(app, ["stats", "--out", str(out)])
    assert stats.exit_code == 0 and "by domain" in stats.stdout
    for name in NAMES:
        assert name in stats.stdout
    export = runner.invoke(app, ["export", "--out", str(out), "--to", str(tmp_path / "export"),
                                 "--format", "openai"])
    assert export.exit_code == 0, export.stderr
    card = (tmp_path / "export" / "README.md").read_text()
    assert "## Domains" in card and all(f"`{name}`" in card for name in NAMES)
    shards = sorted((tmp_path / "export").rglob("*.parquet"))
    assert shards
    domains = {m["domain"] for path in shards for m in pq.read_table(path).column("metadata").to_pylist()}
    assert domains == set(NAMES)  # every split's rows carry their domain
