"""Issue 19, item 5: the smaller ones. A bad option value is one line, not a usage box; an
error line stays short and does not echo a row's content; a failed export leaves no folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from trajforge.cli import MAX_ERROR_CHARS, app

runner = CliRunner()


def test_a_bad_option_value_is_one_line_exit_2(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--n", "many", "--out",
                             str(tmp_path / "data")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: Invalid value for '--n'") and "build --help)" in lines[0]
    assert not (tmp_path / "data").exists()


def test_a_query_error_is_one_short_line_without_the_rows_content(dataset) -> None:
    out, _ = dataset
    secret_ish = "x" * 5000
    result = runner.invoke(app, ["query", "--out", str(out), f"SELECT CAST('{secret_ish}' AS INTEGER)"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert len(lines[0]) <= MAX_ERROR_CHARS + len("error: ")
    assert secret_ish not in lines[0]


def test_a_failed_export_leaves_no_folder(dataset_copy) -> None:
    out, _ = dataset_copy()
    record = next((out / "runs").glob("*/invocations/*.parquet"))
    record.write_bytes(record.read_bytes()[:100])  # the card cannot read the runs view
    to = out.parent / "export"
    result = runner.invoke(app, ["export", "--out", str(out), "--to", str(to)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1].startswith("error: cannot read catalog")
    assert not to.exists()
