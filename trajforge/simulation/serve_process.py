"""``trajforge serve-policy`` started in a subprocess on a free loopback port, for the tests and
benchmarks that need a real OpenAI-compatible endpoint (the scripted policies behind HTTP)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

_URL = re.compile(r"http://[\d.]+:(\d+)/v1")


class PolicyServerProcess:
    """Starts the server for ``config`` (extra CLI ``flags`` such as ``--latency-ms 100``) and
    waits for the line announcing its URL; ``url`` is the ``/v1`` base to give litellm.
    ``stop`` (or leaving a ``with`` block) terminates it."""

    def __init__(self, config: Path, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trajforge.cli", "serve-policy", "--config", str(config),
             "--port", "0", *flags], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        match = _URL.search(line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"serve-policy did not start: {line}{self.proc.stdout.read()}")
        self.url = f"http://127.0.0.1:{match.group(1)}/v1"

    def stats(self, timeline: bool = False) -> dict[str, Any]:
        """The server's ``/stats``: requests, counts by status, malformed and hung answers (and,
        with ``timeline``, when each request arrived and was answered: ``ServerStats.timeline``)."""
        query = "?timeline=1" if timeline else ""
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats" + query, timeout=30) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> PolicyServerProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
