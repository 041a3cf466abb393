"""``trajforge verify``: re-verifying a dataset's stored trajectories, and verifying openai-format
conversations from elsewhere against its blueprints. A real (small) default build, a real DuckDB
catalog, real Parquet and JSONL, the real CLI (typer's CliRunner in-process; bad input through a
subprocess, so the exit code and stderr are what a user sees)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.store import query
from trajforge.store.exports import openai_record
from trajforge.store.features import to_table
from trajforge.store.reverify import verdicts_path, verify_file

N = 30
runner = CliRunner()
Key = tuple[str, str]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A default build of N blueprints (oracle and faulty episodes), without Prefect."""
    from trajforge.config import load_config
    from trajforge.store.builds import run_build

    out = tmp_path_factory.mktemp("verify") / "dataset"
    run_build(load_config(None, {"store.out": str(out), "generation.n_blueprints": N}))
    return out


def _stored(out: Path) -> dict[Key, tuple[Any, ...]]:
    _, rows = query(out, 'SELECT trajectory_id, "check", passed, reason, evidence, trajectory_passed, '
                         "reward, verifier_version FROM verdicts")
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


def _from_file(path: Path) -> dict[Key, tuple[Any, ...]]:
    found = {}
    for line in path.read_text().splitlines():
        v = json.loads(line)
        found[v["trajectory_id"], v["check"]] = (v["passed"], v["reason"], v["evidence"],
                                                 v["trajectory_passed"], v["reward"], v["verifier_version"])
    return found


def _invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, f"{result.stderr}\n{result.stdout}\n{result.exception!r}"
    return result.stdout


def _trajectory_rows(out: Path) -> list[dict[str, Any]]:
    columns, rows = query(out, "SELECT * FROM trajectories ORDER BY id")
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


# --- the round trip: an export fed back gives the stored verdicts ------------------------------

def test_openai_export_fed_back_gives_the_stored_verdicts_exactly(dataset: Path, tmp_path: Path) -> None:
    to = tmp_path / "export"
    _invoke("export", "--out", str(dataset), "--to", str(to), "--format", "openai")
    stored = _stored(dataset)
    seen: dict[Key, tuple[Any, ...]] = {}
    for split in ("train", "validation", "test"):
        file = to / "openai" / f"{split}.jsonl"
        if not file.exists():
            continue
        text = " ".join(_invoke("verify", "--out", str(dataset), "--input", str(file)).split())
        rows = len(file.read_text().splitlines())
        assert f"{rows} row(s): {rows} verified, 0 malformed" in text
        assert f"0 of {rows * len({c for _, c in stored})} verdicts differ from the stored ones" in text
        assert verdicts_path(file) == file.with_name(f"{split}.verdicts.jsonl")
        seen.update(_from_file(verdicts_path(file)))
    _, exported = query(dataset, "SELECT DISTINCT trajectory_id FROM verdicts WHERE trajectory_passed")
    assert {t for t, _ in seen} == {r[0] for r in exported}  # the export holds the passing ones
    # same check, passed, reason, evidence, overall pass, reward and verifier version
    assert seen == {k: v for k, v in stored.items() if k in seen}


def test_every_stored_trajectory_round_trips_through_parquet(dataset: Path, tmp_path: Path) -> None:
    """Failing episodes too (wrong arguments, unknown tools, unconfirmed writes, early ends):
    their openai rows, as a Parquet file, replay to exactly the stored verdicts."""
    records = [r for r in map(openai_record, _trajectory_rows(dataset)) if r is not None]
    file = tmp_path / "all.parquet"
    pq.write_table(to_table("openai", records), file)
    report = verify_file(dataset, file)
    stored = _stored(dataset)
    assert report.malformed == [] and report.trajectories == len(records) == len({t for t, _ in stored})
    assert report.compared == len(stored) and report.changed == 0
    assert _from_file(verdicts_path(file)) == stored
    assert 0 < report.passed < report.trajectories  # both kinds were judged


# --- rows from elsewhere, malformed ones among them --------------------------------------------

def test_malformed_rows_are_reported_one_line_each_and_counted(dataset: Path, tmp_path: Path) -> None:
    good = next(openai_record(r) for r in _trajectory_rows(dataset) if r["agent"] == "scripted:oracle")
    assert good is not None
    blueprint_id = good["metadata"]["blueprint_id"]
    plain = {"messages": good["messages"], "tools": good["tools"], "blueprint_id": blueprint_id}
    bad_args = json.loads(json.dumps(plain))
    call = next(m for m in bad_args["messages"] if m.get("tool_calls"))["tool_calls"][0]
    call["function"]["arguments"] = '{"not json'
    lines = [
        json.dumps(plain),                                                   # 1 ok (no termination)
        "{not json",                                                         # 2
        json.dumps({"messages": good["messages"]}),                          # 3 no blueprint_id
        json.dumps({**plain, "blueprint_id": "bp_nope"}),                    # 4 unknown blueprint
        json.dumps({**plain, "messages": "hello"}),                          # 5 messages not a list
        json.dumps({**plain, "messages": [{"role": "robot", "content": "x"}]}),  # 6 bad message
        json.dumps({**plain, "messages": [{"role": "tool", "tool_call_id": "z", "content": "r"}]}),  # 7
        json.dumps(bad_args),                                                # 8 ok: the agent's error
        "",                                                                  # blank: not a row
    ]
    file = tmp_path / "harness.jsonl"
    file.write_text("\n".join(lines) + "\n")
    out = _invoke("verify", "--out", str(dataset), "--input", str(file))
    reported = [line for line in out.splitlines() if line.startswith("row ")]
    assert [line.split(":")[0] for line in reported] == [f"row {n}" for n in (2, 3, 4, 5, 6, 7)]
    for n, words in ((2, "not JSON"), (3, "no blueprint_id"), (4, "bp_nope"), (5, "messages is not a list"),
                     (6, "unknown role"), (7, "answers no earlier call")):
        assert words in next(line for line in reported if line.startswith(f"row {n}:"))
    assert "8 row(s): 2 verified, 6 malformed, 2 without a termination (taken as user_stop)" in " ".join(out.split())
    verdicts = [json.loads(x) for x in verdicts_path(file).read_text().splitlines()]
    by_row = {(v["row"], v["check"]): v for v in verdicts}
    assert {r for r, _ in by_row} == {1, 8}
    assert all(by_row[1, c]["passed"] for c in ("final_state", "termination", "tool_schema"))
    assert by_row[1, "final_state"]["run_id"] == "external"
    assert not by_row[8, "tool_schema"]["passed"]  # judged, not dropped
    assert by_row[1, "final_state"]["trajectory_id"] != good["metadata"]["trajectory_id"]


# --- re-verifying the stored trajectories -------------------------------------------------------

def test_reverify_stores_a_new_verdict_set_per_verifier_version_and_keeps_the_old(dataset: Path) -> None:
    before = _snapshot(dataset / "verdicts")
    stored = _stored(dataset)
    (build_version,) = {v[-1] for v in stored.values()}
    assert build_version and build_version.startswith("vf_")

    text = " ".join(_invoke("verify", "--out", str(dataset)).split())
    assert f"0 of {len(stored)} verdicts differ from the stored ones" in text
    assert build_version in text  # unchanged code and checks: the build's version

    text = " ".join(_invoke("verify", "--out", str(dataset), "--checks", "final_state,policy").split())
    _, sets = query(dataset, "SELECT verifier_version, count(*), count(DISTINCT \"check\") "
                             "FROM verifications GROUP BY 1 ORDER BY 2 DESC")
    assert len(sets) == 2
    (full, n_full, checks_full), (subset, n_subset, checks_subset) = sets
    assert full == build_version and n_full == len(stored) and checks_subset == 2 < checks_full
    assert subset != build_version and subset in text and n_subset == 2 * len({t for t, _ in stored})
    # the subset's overall pass and reward are its own; the build's verdicts are untouched
    assert _snapshot(dataset / "verdicts") == before and _stored(dataset) == stored
    _, same = query(dataset, "SELECT count(*) FROM verifications r JOIN verdicts v USING (trajectory_id, \"check\") "
                             f"WHERE r.verifier_version = '{build_version}' AND r.passed = v.passed "
                             "AND r.reason = v.reason AND r.evidence = v.evidence")
    assert same[0][0] == len(stored)

    # again with the same checks: the same set, replaced, not added
    _invoke("verify", "--out", str(dataset), "--checks", "final_state", "--checks", "policy")
    _, count = query(dataset, "SELECT count(DISTINCT verifier_version), count(*) FROM verifications")
    assert count[0] == (2, len(stored) + n_subset)


# --- bad input: one line on stderr, exit 2 -------------------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "trajforge.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _one_error_line(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr}\n{proc.stdout}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for word in words:
        assert word in lines[0], proc.stderr


def test_bad_input_is_one_line_and_exit_2(dataset: Path, tmp_path: Path) -> None:
    _one_error_line(_cli("verify", "--out", str(tmp_path / "nowhere"), cwd=tmp_path), "no catalog")
    _one_error_line(_cli("verify", "--out", str(dataset), "--input", str(tmp_path / "missing.jsonl"),
                         cwd=tmp_path), "missing.jsonl", "no such file")
    binary = tmp_path / "noise.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    _one_error_line(_cli("verify", "--out", str(dataset), "--input", str(binary), cwd=tmp_path), "noise.bin")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    _one_error_line(_cli("verify", "--out", str(dataset), "--input", str(broken), cwd=tmp_path), "broken.parquet")
    unusable = tmp_path / "unusable.jsonl"
    unusable.write_text('{"messages": []}\n[1, 2]\n')
    proc = _cli("verify", "--out", str(dataset), "--input", str(unusable), cwd=tmp_path)
    _one_error_line(proc, "no usable row")
    assert "row 1: no blueprint_id" in proc.stdout and "row 2: not a JSON object" in proc.stdout
    assert not verdicts_path(unusable).exists()
    _one_error_line(_cli("verify", "--out", str(dataset), "--checks", "vibes", cwd=tmp_path), "--checks", "vibes")
    _one_error_line(_cli("verify", "--out", str(dataset), "--run", "run_nope", cwd=tmp_path), "run_nope")
