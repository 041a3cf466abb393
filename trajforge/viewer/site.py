"""``trajforge report``: the viewer's pages written as a static, self-contained site.

The same templates as the live viewer, with relative links: ``index.html`` (overview),
``runs.html``, ``list/<name>-<page>.html`` for all trajectories, the passed and the failed ones,
each failing check and each fault kind, ``t/<id>.html`` transcripts, ``compare/<id>.html`` (a
failing episode beside its passing twin), ``b/<id>.html`` blueprints, and ``static/style.css``.
No page loads anything from elsewhere, so the folder can be opened from disk or published.

A static site cannot filter or search; it holds the first ``limit`` trajectories in list order
(twins sit together there) plus the passing twins of the failing ones among them, and its
lists show those.

The site is written into a new folder beside ``to`` and renamed into place, so an interrupted
report leaves the previous one; a ``to`` that holds anything but a previous report is refused.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from trajforge.errors import ConfigError, StoreError
from trajforge.viewer import queries
from trajforge.viewer.filters import PAGE_SIZE, Filters
from trajforge.viewer.render import STATIC_FILES, StaticLinks, file_name, static_list_name
from trajforge.viewer.snapshot import Snapshot
from trajforge.viewer.views import Viewer

DEFAULT_LIMIT = 1000  # trajectories with a page of their own in a report
MARKER = ".trajforge-report"


@dataclass(frozen=True)
class SiteSummary:
    folder: Path
    pages: int
    trajectories: int  # with a transcript page
    of_total: int


def _check_target(to: Path) -> None:
    if to.exists() and (not to.is_dir() or (any(to.iterdir()) and not (to / MARKER).is_file())):
        raise ConfigError("--to", f"{to} exists and is not a trajforge report; choose an empty or new folder")


def write_site(out: Path, to: Path, limit: int = DEFAULT_LIMIT, allow_damaged: bool = False) -> SiteSummary:
    to = Path(to)
    _check_target(to)
    viewer = Viewer(out, allow_damaged)
    with viewer.dataset.lease() as snap:
        return _write(viewer, snap, Path(out), to, limit)


def _write(viewer: Viewer, snap: Snapshot, out: Path, to: Path, limit: int) -> SiteSummary:
    ids = [r[0] for r in snap.rows("SELECT id FROM viewer_index ORDER BY ord LIMIT ?", [limit])]
    (total,), = snap.rows("SELECT count(*) FROM viewer_index")
    chosen = set(ids)
    twins: dict[str, str] = {}
    for tid in ids:
        row = queries.index_row(snap, tid)
        twin = queries.twin_of(snap, row) if row is not None else None
        if twin is not None:
            twins[tid] = twin
            chosen.add(twin)
    snap.restrict(sorted(chosen))
    snap.prefetch()
    blueprints = {r[0] for r in snap.rows(
        "SELECT DISTINCT blueprint_id FROM viewer_index WHERE id IN (SELECT id FROM viewer_subset)")}
    top, down = (StaticLinks(depth=depth, trajectory_ids=frozenset(chosen), blueprint_ids=frozenset(blueprints),
                             compare_ids=frozenset(twins)) for depth in (0, 1))

    try:
        to.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{to.name}.", dir=to.parent))
    except OSError as exc:
        raise ConfigError("--to", f"cannot write {to}: {exc.strerror or exc}") from None
    try:
        pages = 0

        def write(rel: str, html: str) -> None:
            nonlocal pages
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(html, encoding="utf-8")
            pages += 1

        note = "" if len(chosen) == total else f"this report holds {len(chosen)} of {total} trajectories"
        write("index.html", viewer.overview(top, snap))
        write("runs.html", viewer.runs(top, snap))
        options = queries.filter_options(snap)
        variants = [Filters(), Filters(outcome="passed"), Filters(outcome="failed"),
                    *(Filters(check=c) for c in options["check"]), *(Filters(fault=k) for k in options["fault"])]
        for filters in variants:
            name = static_list_name(filters) or "all"  # every variant above has a name of its own
            first = queries.list_page(snap, filters, subset=True)
            for number in range(1, first.pages + 1):
                write(f"list/{name}-{number}.html",
                      viewer.trajectories(down, Filters(**{**filters.__dict__, "page": number}), snap,
                                          note=note, subset=True))
        for tid in sorted(chosen):
            html = viewer.trajectory(down, tid, snap)
            if html is not None:
                write(f"t/{file_name(tid)}.html", html)
        for tid in sorted(twins):
            html = viewer.compare(down, tid, snap)
            if html is not None:
                write(f"compare/{file_name(tid)}.html", html)
        for bid in sorted(blueprints):
            html = viewer.blueprint(down, bid, snap)
            if html is not None:
                write(f"b/{file_name(bid)}.html", html)
        for name in STATIC_FILES:
            target = work / "static" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(resources.files("trajforge.viewer").joinpath("static", name).read_bytes())
        (work / MARKER).write_text(f"written by trajforge report from {Path(out).resolve()}\n")
        if to.exists():
            shutil.rmtree(to)
        work.rename(to)
    except OSError as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise StoreError(f"cannot write report {to}: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return SiteSummary(folder=to, pages=pages, trajectories=len(chosen), of_total=total)


__all__ = ["DEFAULT_LIMIT", "PAGE_SIZE", "SiteSummary", "write_site"]
