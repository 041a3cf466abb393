"""Shared helpers for the benchmark scripts: machine description, timestamps, result files.

Imported by the scripts in this folder (``python benchmarks/<script>.py`` puts this folder on
``sys.path``); not part of the ``trajforge`` package.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
GIB = 1024 ** 3
MIB = 1024 ** 2


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def command_line() -> str:
    """The exact command that was run, as it could be pasted into a shell from the repo root."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(ROOT)
    except ValueError:
        pass
    exe = Path(sys.executable)
    try:
        exe_text = str(exe.relative_to(ROOT)) if exe.is_relative_to(ROOT) else str(exe)
    except ValueError:
        exe_text = str(exe)
    return shlex.join([exe_text, str(script), *sys.argv[1:]])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _total_memory() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except ImportError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def source_digest() -> str:
    """sha256 over trajforge/**/*.py (path + bytes): ties a result to the exact code measured,
    also when the working tree has uncommitted edits."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((ROOT / "trajforge").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def machine_info() -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    total = _total_memory()
    dirty = _git("status", "--porcelain", "--", "trajforge")
    return {
        "platform": platform.platform(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "memory_total_bytes": total,
        "memory_total_gib": round(total / GIB, 2) if total else None,
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "packages": {name: _version(name)
                     for name in ("trajforge", "pyarrow", "duckdb", "pydantic", "psutil")},
        "git_commit": _git("rev-parse", "HEAD") or "unknown",
        "trajforge_uncommitted_changes": bool(dirty),
        "trajforge_source_digest": source_digest(),
    }


def machine_markdown(info: dict[str, Any]) -> list[str]:
    pk = info["packages"]
    return [
        "| | |",
        "|---|---|",
        f"| Platform | {info['platform']} |",
        f"| CPU | {info['cpu_model']} |",
        f"| Cores | {info['cpu_count']} (usable: {info['cpus_usable']}) |",
        f"| Memory | {info['memory_total_gib']} GiB |",
        f"| Python | {info['python']} ({info['python_implementation']}) |",
        f"| Packages | trajforge {pk['trajforge']}, pyarrow {pk['pyarrow']}, duckdb {pk['duckdb']}, "
        f"pydantic {pk['pydantic']}, psutil {pk['psutil']} |",
        f"| Git commit | {info['git_commit']}"
        f"{' (trajforge/ has uncommitted changes)' if info['trajforge_uncommitted_changes'] else ''} |",
        f"| trajforge source digest | {info['trajforge_source_digest']} (sha256 of trajforge/**/*.py) |",
    ]


def write_results(stem: str, payload: dict[str, Any], markdown: str,
                  folder: Path = RESULTS) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"{stem}.json"
    md_path = folder / f"{stem}.md"
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")
    md_path.write_text(markdown if markdown.endswith("\n") else markdown + "\n")
    return md_path, json_path
