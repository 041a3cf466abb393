"""The diversity stage end to end: a build whose blueprint pool holds deliberate near-copies
(30% paraphrased from others), deduplicated and selected through ``trajforge build --select
--dedup-threshold``, checked from the catalog against the blueprints' provenance labels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.store import query
from trajforge.store.derived import selection_summaries
from trajforge.verifiers.diversity.vendi import vendi_score

runner = CliRunner()
N = 400
K = 80


def _build(out: Path, *extra: str) -> str:
    result = runner.invoke(app, ["build", "--out", str(out), "--n", str(N), "--shard-size", "200",
                                 "--set", "generation.near_copy_share=0.3",
                                 "--set", "simulation.agents=[oracle]", "--quiet", *extra])
    assert result.exit_code == 0, f"{result.stderr}\n{result.stdout}\n{result.exception!r}"
    return result.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("div") / "data"
    stdout = _build(out, "--select", str(K), "--dedup-threshold", "0.9",
                    "--set", "diversity.embedder=hashed")
    return out, stdout


def _labelled(out: Path) -> list[tuple]:
    return query(out, """
        SELECT s.trajectory_id, s.decision, s.duplicate_of, b.generator = 'paraphrase' AS copy
        FROM selection s JOIN trajectories t ON t.id = s.trajectory_id
        JOIN blueprints b ON b.id = t.blueprint_id""")[1]


def test_dedup_removes_the_near_copies_and_keeps_the_originals(built: tuple[Path, str]) -> None:
    out, _ = built
    rows = _labelled(out)
    copies = [r for r in rows if r[3]]
    originals = [r for r in rows if not r[3]]
    assert len(copies) >= 0.2 * len(rows) and len(originals) >= 0.6 * len(rows)
    removed = sum(r[1] == "duplicate" for r in copies) / len(copies)
    kept = sum(r[1] != "duplicate" for r in originals) / len(originals)
    assert removed >= 0.90, removed
    assert kept >= 0.95, kept
    decisions = {r[0]: r[1] for r in rows}
    for r in rows:
        if r[1] == "duplicate":
            assert decisions[r[2]] != "duplicate"  # each names a kept trajectory
    summary = selection_summaries(out)[-1]["dedup"]["near_copies"]
    assert summary["copies_removed"] == pytest.approx(removed)
    assert summary["originals_kept"] == pytest.approx(kept)


def test_selection_beats_random_subsets(built: tuple[Path, str]) -> None:
    out, _ = built
    ids = [r[0] for r in query(out, "SELECT trajectory_id FROM embeddings WHERE view = 'user' ORDER BY 1")[1]]
    vectors = query(out, "SELECT vector FROM embeddings WHERE view = 'user' ORDER BY trajectory_id")[1]
    X = np.asarray([v[0] for v in vectors], dtype=np.float64)
    where = {t: i for i, t in enumerate(ids)}
    chosen = [where[r[0]] for r in query(
        out, "SELECT trajectory_id FROM selection WHERE selected AND stratum = 'retail'")[1]]
    assert len(chosen) == K
    rng = np.random.default_rng(123)
    random = [vendi_score(X[rng.choice(len(X), K, replace=False)], 1.0) for _ in range(10)]
    picked = vendi_score(X[chosen], 1.0)
    assert picked > 1.2 * float(np.mean(random)), (picked, random)
    assert picked > float(np.mean(random)) + 3 * float(np.std(random))


def test_tables_and_reasons(built: tuple[Path, str]) -> None:
    out, stdout = built
    n = query(out, "SELECT count(*) FROM trajectories")[1][0][0]
    assert query(out, "SELECT count(*) FROM scores")[1][0][0] == n
    assert query(out, "SELECT count(DISTINCT view) FROM embeddings")[1][0][0] == 2  # user, calls
    ranks = [r[0] for r in query(out, "SELECT rank FROM selection WHERE selected ORDER BY rank")[1]]
    assert ranks == list(range(K))
    reasons = dict(query(out, "SELECT decision, any_value(reason) FROM selection GROUP BY 1")[1])
    assert set(reasons) == {"selected", "not_selected", "duplicate"}
    assert "near-duplicate of" in reasons["duplicate"] and "greedy pick" in reasons["selected"]
    nn = query(out, "SELECT min(nn_similarity), max(nn_similarity), count(nn_trajectory_id), "
                    "count(selection_gain) FROM scores")[1][0]
    assert -1 <= nn[0] <= nn[1] <= 1.0 + 1e-6 and nn[2] == n and nn[3] == n - query(
        out, "SELECT count(*) FROM selection WHERE decision = 'duplicate'")[1][0][0]
    per_stratum = query(out, "SELECT stratum, count(*) FILTER (WHERE selected) FROM selection GROUP BY 1")[1]
    assert per_stratum == [("retail", K)]  # default strata: the domain
    flat = " ".join(stdout.split())
    assert "Vendi by stratum" in flat and "random from" in flat, flat[-3000:]


def test_stratified_selection_follows_proportional_quotas(built: tuple[Path, str]) -> None:
    out, _ = built
    _build(out, "--select", str(K), "--dedup-threshold", "0.9", "--set", "diversity.embedder=hashed",
           "--set", "diversity.stratify_by=[domain,intent,complexity]")
    sel_id = selection_summaries(out)[-1]["selection_id"]
    rows = query(out, f"""SELECT stratum, count(*) FILTER (WHERE decision <> 'duplicate'),
                                 count(*) FILTER (WHERE selected)
                          FROM selection WHERE selection_id = '{sel_id}' GROUP BY 1""")[1]
    kept = sum(r[1] for r in rows)
    assert len(rows) > 10 and sum(r[2] for r in rows) == K
    for stratum, size, picked in rows:
        assert stratum.count("/") == 2
        assert abs(picked - K * size / kept) < 1.0 + 1e-9  # largest remainders: within one


def test_stats_shows_diversity(built: tuple[Path, str]) -> None:
    out, _ = built
    result = runner.invoke(app, ["stats", "--out", str(out)])
    assert result.exit_code == 0
    flat = " ".join(result.stdout.split())
    assert "Vendi by domain" in flat and "Vendi by stratum" in flat and "selected" in flat
    assert "copies removed" in flat and "retail/return_items/" in flat


def test_rerun_reuses_embeddings_and_decides_the_same(built: tuple[Path, str]) -> None:
    out, _ = built
    sql = "SELECT * FROM selection WHERE stratum = 'retail' ORDER BY trajectory_id"
    before = query(out, sql)[1]
    _build(out, "--select", str(K), "--dedup-threshold", "0.9", "--set", "diversity.embedder=hashed")
    assert selection_summaries(out)[-1]["embedder"]["reused"] is True
    assert query(out, sql)[1] == before


def test_default_build_runs_no_diversity_stage(tmp_path: Path) -> None:
    out = tmp_path / "plain"
    result = runner.invoke(app, ["build", "--out", str(out), "--n", "20", "--quiet"])
    assert result.exit_code == 0
    assert not (out / "embeddings").exists() and not (out / "selection").exists()
    assert query(out, "SELECT count(*) FROM selection")[1][0][0] == 0  # the view exists, empty


@pytest.mark.parametrize("args, field", [
    (["--dedup-threshold", "1.5"], "diversity.dedup_threshold"),
    (["--select", "0"], "diversity.select"),
    (["--select", "5", "--set", "diversity.view=everything"], "diversity.view"),
])
def test_bad_diversity_settings_exit_2_with_one_line(tmp_path: Path, args: list[str], field: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--out",
                           str(tmp_path / "x"), "--n", "5", *args], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_near_copies_with_the_packaged_minilm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The must-show with the default embedder (all-MiniLM-L6-v2 on the user turns), smaller."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "minilm"
    result = runner.invoke(app, ["build", "--out", str(out), "--n", "150", "--quiet",
                                 "--set", "generation.near_copy_share=0.3",
                                 "--set", "simulation.agents=[oracle]",
                                 "--select", "30", "--dedup-threshold", "0.9",
                                 "--set", "diversity.device=cpu"])
    assert result.exit_code == 0, f"{result.stderr}\n{result.exception!r}"
    summary = selection_summaries(out)[-1]
    assert summary["embedder"]["key"] == "st:minilm" and summary["embedder"]["dim"] == 384
    nc = summary["dedup"]["near_copies"]
    assert nc["copies_removed"] >= 0.9 and nc["originals_kept"] >= 0.95
    sel = summary["selection"]
    assert sel["vendi_selected"]["1"] > sel["random_from_candidates"]["1"]["mean"]
