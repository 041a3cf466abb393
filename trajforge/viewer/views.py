"""Each page as HTML, from the dataset's current snapshot: what the server answers and what
the static site writes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from trajforge.viewer import plots, queries
from trajforge.viewer.filters import Filters
from trajforge.viewer.render import Pages, ServerLinks, StaticLinks
from trajforge.viewer.snapshot import CatalogStamp, Dataset, Snapshot

Links = ServerLinks | StaticLinks


class Viewer:
    """The pages of one dataset folder. Plots depend only on the snapshot, so they are drawn
    once per catalog and reused."""

    def __init__(self, out: Path, allow_damaged: bool = False) -> None:
        self.out = Path(out)
        self.dataset = Dataset(self.out, allow_damaged)
        self.pages = Pages()
        self._plots: dict[tuple[CatalogStamp, str], dict[str, str]] = {}
        self._plots_lock = threading.Lock()

    def warm(self) -> None:
        """Prepare the current catalog (its index and plots; imports matplotlib), so the first
        visitor does not wait for it."""
        with self._lease():
            pass

    def drop_plots(self) -> None:
        """Forget the drawn plots (a new catalog does this by itself)."""
        with self._plots_lock:
            self._plots = {}

    def _use(self, snap: Snapshot | None) -> Any:
        """The given snapshot (a caller holding a lease), or a lease on the current one."""
        return nullcontext(snap) if snap is not None else self._lease()

    @contextmanager
    def _lease(self) -> Iterator[Snapshot]:
        """A lease on the current snapshot, prepared: a new catalog gets its index (the
        snapshot) and its overview plots before any page is answered from it, so the per-catalog
        work is paid once, up front, and pages are queries and templates only."""
        with self.dataset.lease() as snap:
            self._cached_plots(snap, "overview", lambda: plots.overview_plots(queries.overview(snap)))
            yield snap

    def _common(self, snap: Snapshot) -> dict[str, Any]:
        return {"dataset_name": self.out.resolve().name, "dataset_path": str(self.out.resolve()),
                "footer": f"read-only view of {self.out.resolve()} · index of the catalog built in "
                          f"{snap.index_seconds:.2f} s"}

    def _cached_plots(self, snap: Snapshot, name: str, draw: Any) -> dict[str, str]:
        key = (snap.stamp, name)
        with self._plots_lock:
            found = self._plots.get(key)
        if found is None:
            found = draw()
            with self._plots_lock:
                self._plots = {k: v for k, v in self._plots.items() if k[0] == snap.stamp}
                self._plots[key] = found
        return found

    def overview(self, links: Links, snap: Snapshot | None = None) -> str:
        with self._use(snap) as s:
            o = queries.overview(s)
            drawn = self._cached_plots(s, "overview", lambda: plots.overview_plots(o))
            return self.pages.render("overview.html", links, o=o, plots=drawn, **self._common(s))

    def trajectories(self, links: Links, filters: Filters, snap: Snapshot | None = None, note: str = "",
                     subset: bool = False) -> str:
        with self._use(snap) as s:
            page = queries.list_page(s, filters, subset=subset)
            return self.pages.render("list.html", links, page=page, note=note, **self._common(s))

    def trajectory(self, links: Links, trajectory_id: str, snap: Snapshot | None = None) -> str | None:
        return self._one(links, snap, queries.trajectory_page, trajectory_id, "trajectory.html", "t")

    def compare(self, links: Links, trajectory_id: str, snap: Snapshot | None = None) -> str | None:
        return self._one(links, snap, queries.compare_page, trajectory_id, "compare.html", "c")

    def blueprint(self, links: Links, blueprint_id: str, snap: Snapshot | None = None) -> str | None:
        return self._one(links, snap, queries.blueprint_page, blueprint_id, "blueprint.html", "b")

    def _one(self, links: Links, snap: Snapshot | None, query: Callable[[Snapshot, str], Any | None], key: str,
             template: str, name: str) -> str | None:
        """The page of one thing (``None`` when the catalog has no such id), its record passed to
        the template as ``name``."""
        with self._use(snap) as s:
            page = query(s, key)
            if page is None:
                return None
            return self.pages.render(template, links, **{name: page}, **self._common(s))

    def runs(self, links: Links, snap: Snapshot | None = None) -> str:
        with self._use(snap) as s:
            page = queries.runs_page(s)
            drawn = self._cached_plots(s, "runs", lambda: plots.runs_plots(page))
            return self.pages.render("runs.html", links, p=page, plots=drawn, **self._common(s))

    def not_found(self, links: Links, message: str) -> str:
        with self._lease() as s:
            return self.pages.render("error.html", links, message=message, **self._common(s))
