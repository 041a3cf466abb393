"""A loopback HTTP server speaking the few Hugging Face Hub endpoints ``huggingface_hub``'s
``create_repo``, ``create_branch``, ``list_repo_files`` and ``create_commit`` use, so the real
client (HTTP, auth headers, preupload, NDJSON commit payload) runs in tests with no network.

Every file is declared ``regular`` at preupload, so its bytes arrive base64-encoded inside the
commit payload and the server can keep them: ``files`` is the repo's content after the
commits, ``commits`` the commit payloads, ``auth`` the Authorization headers it saw.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse


@dataclass
class HubState:
    repos: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # "repo@branch" -> path -> bytes
    commits: list[dict[str, Any]] = field(default_factory=list)
    auth: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)


def _handler(state: HubState, base: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, code: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _record(self) -> list[str]:
            path = urlparse(self.path).path
            state.auth.add(self.headers.get("Authorization", ""))
            state.requests.append(f"{self.command} {path}"
                                  + ("" if self.headers.get("Authorization") else " (no auth)"))
            return [unquote(p) for p in path.strip("/").split("/")]

        def do_GET(self) -> None:  # noqa: N802
            parts = self._record()
            # /api/datasets/{org}/{name}/tree/{rev}
            if parts[:2] == ["api", "datasets"] and len(parts) >= 6 and parts[4] == "tree":
                key = f"{parts[2]}/{parts[3]}@{parts[5]}"
                listing = [{"type": "file", "path": p, "size": len(b), "oid": "0" * 40}
                           for p, b in sorted(state.files.get(key, {}).items())]
                return self._send(200, listing)
            self._send(404, {"error": f"not implemented: GET {self.path}"})

        def do_POST(self) -> None:  # noqa: N802
            parts = self._record()
            body = self._body()
            if parts == ["api", "repos", "create"]:
                payload = json.loads(body)
                repo = f"{payload['organization']}/{payload['name']}"
                if repo in state.repos:
                    return self._send(409, {"error": "You already created this dataset repo",
                                            "url": f"{base[0]}/datasets/{repo}"})
                state.repos[repo] = payload
                state.files[f"{repo}@main"] = {".gitattributes": b"*.parquet filter=lfs\n"}
                return self._send(200, {"url": f"{base[0]}/datasets/{repo}", "name": repo})
            if parts == ["api", "validate-yaml"]:
                return self._send(200, {"errors": [], "warnings": []})
            if parts[:2] != ["api", "datasets"] or len(parts) < 6:
                return self._send(404, {"error": f"not implemented: POST {self.path}"})
            repo, action, rev = f"{parts[2]}/{parts[3]}", parts[4], parts[5]
            if repo not in state.repos:
                return self._send(404, {"error": "Repository not found"})
            if action == "branch":
                key = f"{repo}@{rev}"
                if key in state.files:
                    return self._send(409, {"error": "Reference already exists"})
                state.files[key] = dict(state.files[f"{repo}@main"])
                return self._send(200, {})
            if action == "preupload":
                files = json.loads(body)["files"]
                return self._send(200, {"files": [{"path": f["path"], "uploadMode": "regular",
                                                   "shouldIgnore": False} for f in files]})
            if action == "commit":
                key = f"{repo}@{rev}"
                if key not in state.files:
                    return self._send(404, {"error": f"Invalid rev id: {rev}"})
                lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                tree = state.files[key]
                for item in lines:
                    if item["key"] == "file":
                        assert item["value"]["encoding"] == "base64"
                        tree[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                    elif item["key"] == "deletedFile":
                        tree.pop(item["value"]["path"], None)
                    elif item["key"] != "header":
                        return self._send(400, {"error": f"unsupported operation {item['key']}"})
                state.commits.append({"repo": repo, "revision": rev, "lines": lines})
                oid = f"{len(state.commits):040x}"
                return self._send(200, {"commitUrl": f"{base[0]}/datasets/{repo}/commit/{oid}",
                                        "commitOid": oid, "pullRequestUrl": None})
            self._send(404, {"error": f"not implemented: POST {self.path}"})

    return Handler


class LoopbackHub:
    """``with LoopbackHub() as hub: ... hub.url ... hub.state``: a server on 127.0.0.1."""

    def __init__(self) -> None:
        self.state = HubState()
        self._base: list[str] = [""]
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state, self._base))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._base[0] = self.url
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LoopbackHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
