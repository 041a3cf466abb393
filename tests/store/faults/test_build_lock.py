"""Issue 19, item 4: one build per output folder at a time.

A second build refuses with one line naming the holder's pid and start time, or waits with
``--wait``; a kill -9 releases the lock; temporaries are named per process, and a start-up never
removes a live process's temporaries.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from trajforge.cli import app
from trajforge.errors import FolderBusy
from trajforge.store.lock import build_lock
from trajforge.store.shards import RunStore, tmp_owner, write_parquet_atomic

runner = CliRunner()


def test_a_second_build_refuses_with_one_line_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "data"
    with build_lock(out):  # another open of the lock file conflicts even within one process
        result = runner.invoke(app, ["build", "--out", str(out), "--n", "4", "--quiet"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert f"pid {os.getpid()}" in lines[0] and "started 20" in lines[0] and "--wait" in lines[0]
    assert not (out / "runs").exists()  # refused before anything was written


def test_in_process_a_second_holder_is_refused(tmp_path: Path) -> None:
    with build_lock(tmp_path), pytest.raises(FolderBusy, match=f"pid {os.getpid()}"):
        with build_lock(tmp_path):
            pass
    with build_lock(tmp_path):  # released: free again
        pass


def test_wait_takes_the_lock_when_the_holder_ends(tmp_path: Path) -> None:
    taken: list[float] = []

    def second() -> None:
        with build_lock(tmp_path, wait=True):
            taken.append(time.monotonic())

    with build_lock(tmp_path):
        waiter = threading.Thread(target=second)
        waiter.start()
        time.sleep(0.5)
        assert not taken, "--wait did not wait"
        released = time.monotonic()
    waiter.join(timeout=30)
    assert taken and taken[0] >= released


def test_kill_9_releases_the_lock(tmp_path: Path) -> None:
    code = ("import sys, time; from trajforge.store.lock import build_lock\n"
            f"with build_lock({str(tmp_path)!r}):\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusy, match=f"pid {holder.pid}"):
            with build_lock(tmp_path):
                pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        with build_lock(tmp_path):
            pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_temporaries_are_named_per_process_and_prepare_spares_a_live_writer(tmp_path: Path) -> None:
    store = RunStore(tmp_path, "run_x")
    store.prepare()
    folder = store.table_dir("trajectories")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = folder / f"part-000000000-000000002.parquet.{sleeper.pid}-0a0b0c0d.tmp"
        live.write_bytes(b"being written")
        init_owned = folder / "part-000000002-000000004.parquet.1-00000000.tmp"  # pid 1 (init) is alive
        gone = folder / f"part-000000004-000000006.parquet.{_dead_pid()}-0badf00d.tmp"
        legacy = folder / "part-000000006-000000008.parquet.tmp"
        for path in (init_owned, gone, legacy):
            path.write_bytes(b"left behind")
        store.prepare()
        assert live.exists() and init_owned.exists(), "a live process's temporary was removed"
        assert not gone.exists() and not legacy.exists()
        assert tmp_owner(live) == sleeper.pid and tmp_owner(legacy) is None
    finally:
        sleeper.kill()
        sleeper.wait()
    store.prepare()
    assert not live.exists()
    # the name a write uses carries this process's pid, and no two writes share one
    write_parquet_atomic(tmp_path / "a.parquet", pa.table({"x": [1]}))
    assert [p.name for p in tmp_path.glob("a.parquet*")] == ["a.parquet"]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leftovers_of_killed_record_and_catalog_writes_are_removed(tmp_path: Path) -> None:
    """The issue's ``invocations/*.parquet.tmp`` that stayed forever, and a catalog copy a killed
    refresh left."""
    from trajforge.store.catalog import CATALOG_FILE, refresh_catalog

    store = RunStore(tmp_path, "run_x")
    store.prepare()
    record = store.run_dir / "invocations" / "20260101T000000Z-abc.parquet.tmp"
    record.parent.mkdir()
    record.write_bytes(b"half a record")
    copy = tmp_path / f"{CATALOG_FILE}.{_dead_pid()}-0a0b0c0d.tmp"
    copy.write_bytes(b"half a catalog")
    spill = tmp_path / f"{CATALOG_FILE}.tmp"  # DuckDB's own spill folder: not ours to remove
    spill.mkdir()
    store.prepare()
    refresh_catalog(tmp_path)
    assert not record.exists() and not copy.exists() and spill.is_dir()
