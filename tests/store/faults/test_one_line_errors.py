"""Issue 19, item 3: an error raised inside the Prefect flow reaches the terminal as one line,
naming the log file under the output folder that holds the traceback and Prefect's log;
``--verbose`` shows them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.store.faults.conftest import small_config


def _build(out: Path, api: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trajforge.cli", "build", "--out", str(out), "--n", "4",
                           "--shard-size", "2", "--quiet", *extra], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PREFECT_API_URL": api})


def _block_a_table_folder(out: Path) -> Path:
    """The run's trajectories folder is a file: the flow's first write there fails."""
    folder = out / "trajectories" / f"run={small_config(out).run_id()}"
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder")
    return folder


def test_an_error_inside_the_flow_is_one_line_naming_the_log(tmp_path: Path, prefect_api: str) -> None:
    out = tmp_path / "data"
    folder = _block_a_table_folder(out)
    result = _build(out, prefect_api)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: cannot create {folder}") and "(details: " in lines[0]
    log = Path(lines[0].rsplit("(details: ", 1)[1].rstrip(")"))
    assert log.parent == out.resolve() / "logs"
    text = log.read_text()
    assert "Traceback" in text and "StoreError" in text and "build-dataset" in text

    verbose = _build(out, prefect_api, "--verbose")
    assert verbose.returncode == 2
    assert "Traceback" in verbose.stderr and verbose.stderr.strip().splitlines()[-1].startswith("error: ")
