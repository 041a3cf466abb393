"""HTML of every page: Jinja2 templates with autoescaping on, and the links between pages.

Nothing from the dataset is marked safe: messages, tool output, blueprint fields, check names
and plot labels all go through Jinja2's escaping (plots are ``data:`` URIs of SVGs matplotlib
escaped itself). Pages carry no script, and say so in their Content-Security-Policy.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import jinja2

from trajforge.viewer.filters import Filters

# No script, no outside request: styles and images from this site (and data: images) only.
CSP = ("default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
STATIC_FILES = ("style.css",)
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def file_name(key: str) -> str:
    """A file name for an id or value: itself when it is plain, else a digest of it."""
    return key if _SAFE_NAME.fullmatch(key) and key not in (".", "..") else \
        "h" + hashlib.sha256(key.encode()).hexdigest()[:24]


class ServerLinks:
    """Links of the live viewer (absolute paths on its loopback origin)."""

    static = False

    def overview(self) -> str:
        return "/"

    def runs(self) -> str:
        return "/runs"

    def stylesheet(self) -> str:
        return "/static/style.css"

    def trajectories(self, filters: Filters | None = None, **changes: Any) -> str | None:
        qs = (filters or Filters()).query_string(**changes)
        return "/trajectories" + (f"?{qs}" if qs else "")

    def trajectory(self, trajectory_id: str) -> str | None:
        return f"/t/{quote(trajectory_id, safe='')}"

    def compare(self, trajectory_id: str) -> str | None:
        return f"/compare/{quote(trajectory_id, safe='')}"

    def blueprint(self, blueprint_id: str) -> str | None:
        return f"/b/{quote(blueprint_id, safe='')}"


def static_list_name(filters: Filters) -> str | None:
    """The file stem of a pre-rendered list (``report``): all, passed, failed, one failing check
    or one fault kind; other filter combinations are not in a static site."""
    active = filters.active()
    if not active:
        return "all"
    if active == {"outcome": filters.outcome}:
        return str(filters.outcome)
    if filters.check is not None and active == {"check": filters.check}:
        return "check-" + file_name(filters.check)
    if filters.fault is not None and active == {"fault": filters.fault}:
        return "fault-" + file_name(filters.fault)
    return None


@dataclass
class StaticLinks:
    """Relative links inside a static site written by ``report``; a page ``depth`` folders down.
    Trajectories and blueprints not written have no link (``None``)."""

    depth: int
    trajectory_ids: frozenset[str]
    blueprint_ids: frozenset[str]
    compare_ids: frozenset[str]
    static = True

    @property
    def _up(self) -> str:
        return "../" * self.depth

    def overview(self) -> str:
        return self._up + "index.html"

    def runs(self) -> str:
        return self._up + "runs.html"

    def stylesheet(self) -> str:
        return self._up + "static/style.css"

    def trajectories(self, filters: Filters | None = None, **changes: Any) -> str | None:
        f = Filters(**{**(filters or Filters()).__dict__, **changes})
        name = static_list_name(Filters(**{**f.__dict__, "page": 1}))
        return None if name is None else f"{self._up}list/{name}-{f.page}.html"

    def trajectory(self, trajectory_id: str) -> str | None:
        return f"{self._up}t/{file_name(trajectory_id)}.html" if trajectory_id in self.trajectory_ids else None

    def compare(self, trajectory_id: str) -> str | None:
        return f"{self._up}compare/{file_name(trajectory_id)}.html" if trajectory_id in self.compare_ids else None

    def blueprint(self, blueprint_id: str) -> str | None:
        return f"{self._up}b/{file_name(blueprint_id)}.html" if blueprint_id in self.blueprint_ids else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("trajforge.viewer", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = _pct
    env.filters["num"] = _num
    return env


class Pages:
    """Renders the named template with the page's data and a link maker."""

    def __init__(self) -> None:
        self._env = environment()

    def render(self, template: str, links: ServerLinks | StaticLinks, **data: Any) -> str:
        return self._env.get_template(template).render(links=links, csp=CSP, **data)
