"""``trajforge view``: the pages served on loopback by Starlette under uvicorn.

Read-only by construction: only GET (and HEAD) routes exist, the catalog is opened read-only,
and nothing is written. Every answer carries a Content-Security-Policy that allows no script
and no request to another origin.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from trajforge.errors import ConfigError, StoreError
from trajforge.viewer.filters import Filters
from trajforge.viewer.render import CSP, ServerLinks
from trajforge.viewer.views import Viewer

HOST = "127.0.0.1"  # loopback only: the viewer has no authentication
DEFAULT_PORT = 8765
_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}


class _SecurityHeaders(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers.update(_HEADERS)
        return response


def build_app(viewer: Viewer) -> Starlette:
    links = ServerLinks()

    def page(html: str | None, what: str) -> Response:
        if html is None:
            return HTMLResponse(viewer.not_found(links, f"no {what} in {viewer.out}"), status_code=404)
        return HTMLResponse(html)

    def overview(request: Request) -> Response:
        return HTMLResponse(viewer.overview(links))

    def trajectories(request: Request) -> Response:
        return HTMLResponse(viewer.trajectories(links, Filters.parse(request.query_params)))

    def trajectory(request: Request) -> Response:
        tid = request.path_params["id"]
        return page(viewer.trajectory(links, tid), f"trajectory {tid!r}")

    def compare(request: Request) -> Response:
        tid = request.path_params["id"]
        return page(viewer.compare(links, tid), f"passing twin of trajectory {tid!r}")

    def blueprint(request: Request) -> Response:
        bid = request.path_params["id"]
        return page(viewer.blueprint(links, bid), f"blueprint {bid!r}")

    def runs(request: Request) -> Response:
        return HTMLResponse(viewer.runs(links))

    async def store_error(request: Request, exc: Exception) -> Response:
        message = " ".join(str(exc).split())
        return HTMLResponse(viewer.not_found(links, message), status_code=500)

    routes = [
        Route("/", overview), Route("/trajectories", trajectories), Route("/t/{id}", trajectory),
        Route("/compare/{id}", compare), Route("/b/{id}", blueprint), Route("/runs", runs),
        Mount("/static", StaticFiles(packages=[("trajforge.viewer", "static")]), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(_SecurityHeaders)],
                     exception_handlers={StoreError: store_error})


def serve(out: Path, port: int = DEFAULT_PORT, ready: Callable[[str], None] | None = None,
          allow_damaged: bool = False) -> None:
    """Index the dataset, listen on loopback ``port`` (0: any free one), call ``ready`` with
    the URL, and serve until interrupted; ``allow_damaged``: shards failing their checksums are
    left out (else the catalog's ``DamagedData`` stops it)."""
    import uvicorn

    viewer = Viewer(out, allow_damaged)  # a missing or unreadable catalog fails here, before anything listens
    viewer.warm()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ConfigError("--port", f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)  # connections made from here on wait for the server instead of failing
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    config = uvicorn.Config(build_app(viewer), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    if ready is not None:
        ready(url)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
